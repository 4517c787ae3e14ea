"""The libraries the audit runs a file with: the file's own library encodes words and texts.

``open_library`` picks the library of a file's kind: tiktoken for rank files, Hugging Face ``tokenizers`` for
``tokenizer.json`` and GPT-2's files, sentencepiece for its models (the adapters the checker uses too,
``bpeproof.proofs_tests.libraries``), and for the project's own file its ``Tokenizer`` (``ProjectLibrary``).  Each
follows the ``Library`` protocol: ``encode_word`` (one pre-token, straight to the model), ``encode_text`` (as the
library's users get ids), ``count_tokens`` and ``pretokenize``.
"""

from __future__ import annotations

from typing import Protocol

from bpeproof.impl.formats import Vocab
from bpeproof.impl.io.files import read_bytes
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.proofs_tests.libraries import SentencepieceLibrary, TiktokenLibrary, TokenizersLibrary, version_of
from bpeproof.spec.types import ALPHABET_SIZE

__all__ = ["Library", "ProjectLibrary", "open_library"]


class Library(Protocol):
    """A file's reference library, as the audit runs it."""

    name: str
    version: str

    def encode_word(self, word: bytes) -> list[int] | None:
        """The ids of one pre-token, without pre-tokenization; None when the library cannot take it."""

    def encode_text(self, text: str) -> list[int]:
        """The ids of a whole text, as the library's users get them by default."""

    def count_tokens(self, text: str) -> int:
        """How many tokens ``encode_text`` gives for ``text`` (perhaps without holding them all at once)."""

    def pretokenize(self, text: str) -> list[bytes]:
        """The pre-tokens of a text, as the library cuts it."""


class ProjectLibrary:
    """The project's own ``Tokenizer``, read from the project's file (plain or gzip); words go to its encoder."""

    name = "bpeproof"

    def __init__(self, vocab: Vocab, pattern: str | None = None) -> None:
        self.version = version_of("bpeproof")
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


def open_library(vocab: Vocab, pattern: str | None) -> Library:
    """The file's reference library; ``LibraryMissingError`` (an ImportError naming the extra) when it is not
    installed."""
    if vocab.kind == "tiktoken":
        return TiktokenLibrary.from_vocab(vocab, pattern or PATTERNS["o200k"])
    if vocab.kind in ("hf-bpe", "gpt2"):
        return TokenizersLibrary.from_vocab(vocab, pattern)
    if vocab.kind == "bpeproof":
        return ProjectLibrary(vocab, pattern)
    return SentencepieceLibrary.from_vocab(vocab)
