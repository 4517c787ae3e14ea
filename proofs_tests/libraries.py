"""The third-party tokenizer libraries the checker and the audit compare with: one adapter per library.

A vocabulary file's own library is the independent side of both comparisons: tiktoken for rank files (and for a
tekken file's live ranks, as mistral-common's ``Tekkenizer`` builds it, and GPT-2's ``encoder.json``), Hugging
Face ``tokenizers`` for ``tokenizer.json`` and GPT-2's files, sentencepiece for its models.  Each adapter runs the
library as its users do and offers the same methods:

``encode_word``  the ids of one pre-token, straight to the model (None when the library cannot take it);
``encode_text``  the ids of a whole text, special tokens' names read as special tokens or as text;
``count_tokens`` how many ids ``encode_text`` gives (``tokenizers`` in pieces, see its ``count_tokens``);
``pretokenize``  the pre-tokens the library cuts a text into;
``decode``       the text of ids, as the library decodes them (it raises on ids it refuses).

``name``, ``version`` and ``surrogates`` (what the library does with a lone surrogate: tiktoken replaces it with
U+FFFD through UTF-16, the others refuse it) say which library answers.  A library that is not installed raises
``LibraryMissingError`` naming the extra to install (``bpeproof.impl.optional_libraries.require``); one that
refuses the file raises its own error, which ``refusal`` words as one line naming the library and the problem.
The checker (``bpeproof.proofs_tests.checker.library``) and the audit (``bpeproof.audit.libraries``) both build
their libraries here; this module imports only the engine, so that the audit may use it.
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Mapping
from itertools import pairwise
from pathlib import Path
from typing import Any

import regex

from bpeproof.impl.formats import GPT2_PATTERN, Vocab, bytes_to_unicode
from bpeproof.impl.io.files import read_bytes
from bpeproof.impl.optional_libraries import require
from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins

__all__ = [
    "CHUNK_CHARS",
    "SentencepieceLibrary",
    "TiktokenLibrary",
    "TokenizersLibrary",
    "line_chunks",
    "refusal",
    "version_of",
]

#: ``tokenizers`` encodes long texts in pieces of about this many characters (see ``count_tokens``), each cut
#: checked on CUT_WINDOW characters either side.
CHUNK_CHARS = 1 << 19
CUT_WINDOW = 256
_LINE_START = regex.compile(r"\n(?=\S)")


def version_of(package: str) -> str:
    """The installed version of ``package``, or "unknown"."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def refusal(library: str, error: BaseException) -> str:
    """One line naming the library and why it refused the file."""
    return f"{library} refused the file: {type(error).__name__}: {str(error)[:200]}"


class TiktokenLibrary:
    """tiktoken, built from token bytes → rank (the rank being the id), a pattern and special tokens."""

    name = "tiktoken"
    surrogates = "replace"

    def __init__(self, ranks: Mapping[bytes, int], pattern: str, special_tokens: Mapping[str, int] | None = None,
                 *, label: str = "bpeproof", purpose: str = "comparing with the file's own library") -> None:
        tiktoken = require("tiktoken", purpose)

        self.version = version_of("tiktoken")
        self._encoding = tiktoken.Encoding(label, pat_str=pattern, mergeable_ranks=dict(ranks),
                                           special_tokens=dict(special_tokens or {}))
        self._regex = regex.compile(pattern)

    @classmethod
    def from_vocab(cls, vocab: Vocab, pattern: str) -> TiktokenLibrary:
        """tiktoken on a rank file's tokens and ``pattern``, without special tokens (the audit)."""
        ranks = {data: token for token, data in vocab.tokens.items()}
        return cls(ranks, pattern, label=Path(vocab.source).name or "audit", purpose="the audit of a tiktoken file")

    def encode_word(self, word: bytes) -> list[int] | None:
        return list(self._encoding._encode_single_piece(word))

    def encode_text(self, text: str, special: bool = True) -> list[int]:
        """The ids of ``text``; ``special``: whether the special tokens' names in it are read as special tokens
        (without, ``encode_ordinary``: tiktoken's ``encode`` with ``disallowed_special=()``)."""
        if special and self._encoding.special_tokens_set:
            return list(self._encoding.encode(text, allowed_special="all", disallowed_special=()))
        return list(self._encoding.encode_ordinary(text))

    def count_tokens(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def pretokenize(self, text: str) -> list[bytes]:
        pinned = stand_ins(text)  # tiktoken's engine classifies by Unicode 16.0 (pre_tokenizers.unicode_classes)
        return [text[match.start() : match.end()].encode("utf-8") for match in self._regex.finditer(pinned)]

    def decode(self, ids: list[int]) -> str:
        return str(self._encoding.decode(ids, errors="strict"))


def _has_byte_level(step: Any) -> bool:
    """Whether a tokenizer.json pre-tokenizer (or a ``Sequence`` of them) has a ``ByteLevel`` step."""
    if not isinstance(step, dict):
        return False
    return step.get("type") == "ByteLevel" or any(_has_byte_level(inner) for inner in step.get("pretokenizers", ()))


class TokenizersLibrary:
    """Hugging Face ``tokenizers``: a tokenizer.json as the library reads it, or a BPE model built from GPT-2's
    files with a byte-level pre-tokenizer.  Words go straight to the model (``model.tokenize``), spelt in the
    byte-level alphabet when the pre-tokenizer is byte-level, else as their text."""

    name = "tokenizers"
    surrogates = "refuse"  # "TextInputSequence must be str"

    def __init__(self, tokenizer: Any, byte_level: bool) -> None:
        self.version = version_of("tokenizers")
        self._tokenizer = tokenizer
        self._model = tokenizer.model
        self._byte_level = byte_level
        self._table = bytes_to_unicode()
        self._reverse = {char: byte for byte, char in self._table.items()}

    @classmethod
    def from_json(cls, text: str, purpose: str = "comparing with the file's own library",
                  byte_level: bool | None = None) -> TokenizersLibrary:
        """The library on a tokenizer.json's text; ``byte_level`` None: whether its pre-tokenizer, as the library
        read it, has a ``ByteLevel`` step."""
        tokenizers = require("tokenizers", purpose)
        tokenizer = tokenizers.Tokenizer.from_str(text)
        if byte_level is None:
            pre = tokenizer.pre_tokenizer
            byte_level = pre is not None and _has_byte_level(json.loads(pre.__getstate__()))
        return cls(tokenizer, byte_level)

    @classmethod
    def from_vocab(cls, vocab: Vocab, pattern: str | None = None) -> TokenizersLibrary:
        """The library on a tokenizer.json, or on GPT-2's files with ``pattern`` (the audit)."""
        purpose = "the audit of a tokenizer.json or GPT-2 file"
        if vocab.kind == "hf-bpe":
            byte_level = any(step.type == "ByteLevel" for step in vocab.pre_tokenizers)
            return cls.from_json(read_bytes(vocab.source).decode("utf-8"), purpose, byte_level)
        tokenizers = require("tokenizers", purpose)
        table = bytes_to_unicode()

        def spell(data: bytes) -> str:
            return "".join(table[byte] for byte in data)

        strings = {spell(data): token for token, data in vocab.tokens.items()}
        merges = [(spell(vocab.tokens[a]), spell(vocab.tokens[b])) for a, b, _ in vocab.merges]
        tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE(vocab=strings, merges=merges))
        if pattern is None or pattern == GPT2_PATTERN:
            tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        else:
            tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Sequence([
                tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated"),
                tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ])
        tokenizer.decoder = tokenizers.decoders.ByteLevel()
        return cls(tokenizer, byte_level=True)

    def _spell(self, word: bytes) -> str | None:
        if self._byte_level:
            return "".join(self._table[byte] for byte in word)
        try:
            return word.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def encode_word(self, word: bytes) -> list[int] | None:
        spelled = self._spell(word)
        if spelled is None:
            return None
        return [token.id for token in self._model.tokenize(spelled)]

    def encode_text(self, text: str, special: bool = True) -> list[int]:
        """The ids of ``text``; ``special``: whether added tokens' names in it are read as those tokens (the
        library reads every added token unless told to leave the special ones as text)."""
        self._tokenizer.encode_special_tokens = not special
        return list(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_tokens(self, text: str) -> int:
        """The token count of ``text``, encoded in pieces of about ``CHUNK_CHARS`` characters, two at a time.

        ``tokenizers`` keeps offsets and strings for every token: a 10 MB text in one call takes gigabytes.
        The text is cut just after a newline that a non-space character follows, and only when, at every
        cut, the library's pre-tokenizer cuts the text around it the same way as the two sides apart (so no
        pre-token spans a cut); otherwise the text is encoded whole.
        """
        chunks = line_chunks(text, CHUNK_CHARS)
        if len(chunks) == 1 or not all(self._same_cut(left, right) for left, right in pairwise(chunks)):
            return len(self.encode_text(text))
        self._tokenizer.encode_special_tokens = False
        total = 0
        for start in range(0, len(chunks), 2):
            batch = self._tokenizer.encode_batch(chunks[start : start + 2], add_special_tokens=False)
            total += sum(len(encoding.ids) for encoding in batch)
        return total

    def _same_cut(self, left: str, right: str) -> bool:
        tail, head = left[-CUT_WINDOW:], right[:CUT_WINDOW]
        return self.pretokenize(tail + head) == self.pretokenize(tail) + self.pretokenize(head)

    def pretokenize(self, text: str) -> list[bytes]:
        pre = self._tokenizer.pre_tokenizer
        if pre is None:
            return [text.encode("utf-8")] if text else []
        pieces = [piece for piece, _ in pre.pre_tokenize_str(text)]
        if self._byte_level:
            reverse = self._reverse
            return [bytes(reverse[char] for char in piece) for piece in pieces]
        return [piece.encode("utf-8") for piece in pieces]

    def decode(self, ids: list[int]) -> str:
        return str(self._tokenizer.decode(ids, skip_special_tokens=False))


class SentencepieceLibrary:
    """sentencepiece on a model file's bytes: words are given as text; the library adds its dummy prefix and writes
    spaces as ▁.  It parses no special tokens."""

    name = "sentencepiece"
    surrogates = "refuse"  # "Unable to cast"

    def __init__(self, model: bytes, purpose: str = "comparing with the file's own library") -> None:
        sentencepiece = require("sentencepiece", purpose)

        self.version = version_of("sentencepiece")
        # The model as bytes (a gzip file decompressed), which the library takes as well as a path.
        self._processor = sentencepiece.SentencePieceProcessor(model_proto=model)

    @classmethod
    def from_vocab(cls, vocab: Vocab) -> SentencepieceLibrary:
        return cls(read_bytes(vocab.source), "the audit of a sentencepiece model")

    def normalized(self, word: bytes) -> bytes | None:
        """The bytes the model's pieces are matched against: the normalized text with ▁ read as a space."""
        try:
            text = word.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return str(self._processor.normalize(text)).replace("\u2581", " ").encode("utf-8")

    def encode_word(self, word: bytes) -> list[int] | None:
        try:
            text = word.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return list(self._processor.encode(text))

    def encode_text(self, text: str, special: bool = True) -> list[int]:
        """The ids of ``text`` (``special`` changes nothing: the library parses no special tokens)."""
        return list(self._processor.encode(text))

    def count_tokens(self, text: str) -> int:
        return len(self._processor.encode(text))

    def pretokenize(self, text: str) -> list[bytes]:
        return [piece.encode("utf-8") for piece in text.split()]

    def decode(self, ids: list[int]) -> str:
        return str(self._processor.decode(ids))


def line_chunks(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of about ``size`` characters, each cut just after a newline followed by a
    character that is not white space; pieces join back to ``text``."""
    cuts = [0]
    finder = _LINE_START
    while len(text) - cuts[-1] > size:
        match = finder.search(text, cuts[-1] + size)
        if match is None:
            break
        cuts.append(match.start() + 1)
    cuts.append(len(text))
    return [text[start:end] for start, end in pairwise(cuts) if end > start]
