"""The reference libraries the audit runs, one adapter each: a file's own library encodes words and texts.

``open_library`` picks the library of a file's kind: tiktoken for rank files, Hugging Face ``tokenizers`` for
``tokenizer.json`` and GPT-2's files, sentencepiece for its models, and for the project's own file its
``Tokenizer``.  Each adapter follows the ``Library`` protocol: ``encode_word`` (one pre-token, straight to the
model), ``encode_text`` (as the library's users get ids), ``count_tokens`` and ``pretokenize``.
"""

from __future__ import annotations

import importlib.metadata
from itertools import pairwise
from pathlib import Path
from typing import Protocol

import regex

from bpeproof.impl.formats import GPT2_PATTERN, Vocab, bytes_to_unicode
from bpeproof.impl.io.files import read_bytes
from bpeproof.impl.optional_libraries import require
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.spec.types import ALPHABET_SIZE

__all__ = [
    "CHUNK_CHARS",
    "Library",
    "ProjectLibrary",
    "SentencepieceLibrary",
    "TiktokenLibrary",
    "TokenizersLibrary",
    "line_chunks",
    "open_library",
]

#: ``tokenizers`` encodes long texts in pieces of about this many characters (see ``count_tokens``), each cut
#: checked on CUT_WINDOW characters either side.
CHUNK_CHARS = 1 << 19
CUT_WINDOW = 256
_LINE_START = regex.compile(r"\n(?=\S)")


class Library(Protocol):
    """A file's reference library, as the audit runs it."""

    name: str
    version: str

    def encode_word(self, word: bytes) -> list[int] | None:
        """The ids of one pre-token, without pre-tokenization; None when the library cannot take it."""

    def encode_text(self, text: str) -> list[int]:
        """The ids of a whole text, as the library's users get them (no special tokens)."""

    def count_tokens(self, text: str) -> int:
        """How many tokens ``encode_text`` gives for ``text`` (perhaps without holding them all at once)."""

    def pretokenize(self, text: str) -> list[bytes]:
        """The pre-tokens of a text, as the library cuts it."""


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class TiktokenLibrary:
    """tiktoken, built from the rank file's tokens and the pattern (no special tokens)."""

    name = "tiktoken"

    def __init__(self, vocab: Vocab, pattern: str) -> None:
        tiktoken = require("tiktoken", "the audit of a tiktoken file")

        self.version = _version("tiktoken")
        ranks = {data: token for token, data in vocab.tokens.items()}
        self._encoding = tiktoken.Encoding(
            name=Path(vocab.source).name or "audit", pat_str=pattern, mergeable_ranks=ranks, special_tokens={}
        )
        self._regex = regex.compile(pattern)

    def encode_word(self, word: bytes) -> list[int] | None:
        return list(self._encoding._encode_single_piece(word))

    def encode_text(self, text: str) -> list[int]:
        return list(self._encoding.encode_ordinary(text))

    def count_tokens(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def pretokenize(self, text: str) -> list[bytes]:
        pinned = stand_ins(text)  # tiktoken's engine classifies by Unicode 16.0 (pre_tokenizers.unicode_classes)
        return [text[match.start() : match.end()].encode("utf-8") for match in self._regex.finditer(pinned)]


class TokenizersLibrary:
    """Hugging Face ``tokenizers``: the tokenizer.json as the library reads it, or a BPE model built from GPT-2's
    files with a byte-level pre-tokenizer.  Words go straight to the model (``model.tokenize``)."""

    name = "tokenizers"

    def __init__(self, vocab: Vocab, pattern: str | None = None) -> None:
        tokenizers = require("tokenizers", "the audit of a tokenizer.json or GPT-2 file")

        self.version = _version("tokenizers")
        table = bytes_to_unicode()
        self._table = table
        if vocab.kind == "hf-bpe":
            self._tokenizer = tokenizers.Tokenizer.from_str(read_bytes(vocab.source).decode("utf-8"))
        else:
            def spell(data: bytes) -> str:
                return "".join(table[byte] for byte in data)

            strings = {spell(data): token for token, data in vocab.tokens.items()}
            merges = [(spell(vocab.tokens[a]), spell(vocab.tokens[b])) for a, b, _ in vocab.merges]
            model = tokenizers.models.BPE(vocab=strings, merges=merges)
            tokenizer = tokenizers.Tokenizer(model)
            if pattern is None or pattern == GPT2_PATTERN:
                tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
            else:
                tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Sequence([
                    tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="isolated"),
                    tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
                ])
            tokenizer.decoder = tokenizers.decoders.ByteLevel()
            self._tokenizer = tokenizer
        self._model = self._tokenizer.model
        self._byte_level = vocab.kind == "gpt2" or any(step.type == "ByteLevel" for step in vocab.pre_tokenizers)
        self._reverse = {char: byte for byte, char in table.items()}

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

    def encode_text(self, text: str) -> list[int]:
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


class SentencepieceLibrary:
    """sentencepiece: words are given as text; the library adds its dummy prefix and writes spaces as ▁."""

    name = "sentencepiece"

    def __init__(self, vocab: Vocab) -> None:
        sentencepiece = require("sentencepiece", "the audit of a sentencepiece model")

        self.version = _version("sentencepiece")
        # The model as bytes (a gzip file decompressed), which the library takes as well as a path.
        self._processor = sentencepiece.SentencePieceProcessor(model_proto=read_bytes(vocab.source))

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

    def encode_text(self, text: str) -> list[int]:
        return list(self._processor.encode(text))

    def count_tokens(self, text: str) -> int:
        return len(self._processor.encode(text))

    def pretokenize(self, text: str) -> list[bytes]:
        return [piece.encode("utf-8") for piece in text.split()]


class ProjectLibrary:
    """The project's own ``Tokenizer``, read from the project's file (plain or gzip); words go to its encoder."""

    name = "bpeproof"

    def __init__(self, vocab: Vocab, pattern: str | None = None) -> None:
        self.version = _version("bpeproof")
        tokenizer = Tokenizer.from_json(read_bytes(vocab.source), vocab.source)
        if pattern is not None and pattern != tokenizer.pattern:
            tokenizer = Tokenizer(tokenizer.rules, pattern, tokenizer.special_tokens, byte_ids=tokenizer.byte_ids)
        self._tokenizer = tokenizer
        self._byte_ids = tokenizer.byte_ids

    def encode_word(self, word: bytes) -> list[int] | None:
        byte_ids = self._byte_ids
        return [byte_ids[t] if t < ALPHABET_SIZE else t for t in self._tokenizer.encoder.encode_word(word)]

    def encode_text(self, text: str) -> list[int]:
        return list(self._tokenizer.encode_ordinary(text))

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer.encode_ordinary(text))

    def pretokenize(self, text: str) -> list[bytes]:
        return [piece.encode("utf-8", "surrogateescape") for piece in self._tokenizer.pre_tokenize(text)]


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


def open_library(vocab: Vocab, pattern: str | None) -> Library:
    """The file's reference library; ``LibraryMissingError`` (an ImportError naming the extra) when it is not
    installed."""
    if vocab.kind == "tiktoken":
        return TiktokenLibrary(vocab, pattern or PATTERNS["o200k"])
    if vocab.kind in ("hf-bpe", "gpt2"):
        return TokenizersLibrary(vocab, pattern)
    if vocab.kind == "bpeproof":
        return ProjectLibrary(vocab, pattern)
    return SentencepieceLibrary(vocab)
