"""The two answers a text → ids check compares against: the reference and the vocabulary file's own library.

The reference is the project's ``Tokenizer`` for the file (``bpeproof.impl.pipelines.registry.load_tokenizer``),
with the file's own semantics; it decides.  A tiktoken rank file states no special tokens: when it is one of
tiktoken's published encodings (``KNOWN_ENCODINGS``, recognised by its number of tokens and then the digest of its
ranks) the reference gets that encoding's special tokens, and ``--special NAME=ID`` states them for any file
(``with_special_tokens``).  Where the file's own library is installed (tiktoken for rank files,
``tokenizers`` for ``tokenizer.json``, sentencepiece for its models) its answer is shown beside the reference's
and the implementation's, so that a difference can be attributed to one side.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bpeproof.impl.optional_libraries import LibraryMissingError, require
from bpeproof.proofs_tests.checker.variants import token_table
from bpeproof.proofs_tests.checker.worker import TargetError


def load_reference(vocab: str, pattern: str | None) -> Any:
    from bpeproof.impl.io.errors import FormatError
    from bpeproof.impl.pipelines.registry import load_tokenizer

    try:
        return load_tokenizer(vocab, pattern)
    except FormatError as error:  # its message names the file and what is wrong with it
        raise TargetError(str(error)) from None
    except Exception as error:  # a file that is not a vocabulary
        raise TargetError(f"{vocab}: not a vocabulary file this project reads: {type(error).__name__}: {error}"
                          ) from None


@dataclass(frozen=True)
class KnownEncoding:
    """One of tiktoken's published encodings: its name, its number of ranks, the SHA-256 of its rank file
    (tiktoken's ``expected_hash``: the lines ``base64(token) rank``, by rank), and its special tokens."""

    name: str
    size: int
    digest: str
    special_tokens: dict[str, int]


KNOWN_ENCODINGS = (
    KnownEncoding("r50k_base", 50256, "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
                  {"<|endoftext|>": 50256}),
    KnownEncoding("p50k_base", 50280, "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
                  {"<|endoftext|>": 50256}),
    KnownEncoding("cl100k_base", 100256, "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                  {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                   "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}),
    KnownEncoding("o200k_base", 199998, "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                  {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
)


def rank_digest(table: dict[int, bytes]) -> str:
    """The SHA-256 of a rank table written as a tiktoken rank file (``base64(token) rank`` lines, by rank)."""
    digest = hashlib.sha256()
    for rank, token in sorted(table.items()):
        digest.update(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
    return digest.hexdigest()


def known_encoding(reference: Any) -> tuple[KnownEncoding | None, str | None]:
    """The published encoding a tiktoken reference's ranks are, if any; else (None, why it is not one when its
    size says it might be)."""
    if getattr(reference, "semantics", None) != "tiktoken" or reference.special_tokens:
        return None, None
    table = token_table(reference)
    for known in KNOWN_ENCODINGS:
        if len(table) == known.size:
            if rank_digest(table) == known.digest:
                return known, None
            return None, (f"the file has {known.name}'s number of tokens but other ranks, so its special tokens"
                          " are not assumed")
    return None, None


def with_special_tokens(reference: Any, given: dict[str, int] | None) -> tuple[Any, str]:
    """The reference with the special tokens of its known encoding and the ``given`` ones (``--special``), and
    where they come from, for the report."""
    from bpeproof.impl.tokenizer import Tokenizer

    known, why = known_encoding(reference)
    specials = dict(known.special_tokens) if known is not None else {}
    origin = f"{known.name}'s, recognised by the file's ranks" if known is not None else why or ""
    if given:
        if reference.pipeline is not None:
            raise TargetError("--special: this file's own pipeline states its special tokens")
        table = token_table(reference)
        for name, token in given.items():
            if not name:
                raise TargetError("--special: a special token needs a name (NAME=ID)")
            if token in table:
                raise TargetError(f"--special {name}={token}: id {token} is the vocabulary's token {table[token]!r}")
        specials.update(given)
        origin = "given with --special" + (f" and {origin}" if known is not None else "")
    elif reference.special_tokens:
        return reference, "the file's own"
    if not specials:
        return reference, origin
    clash = {token for token in specials.values() if list(specials.values()).count(token) > 1}
    if clash:
        raise TargetError(f"--special: two special tokens share the id {min(clash)}")
    merged = {**reference.special_tokens, **specials}
    return Tokenizer.from_model(reference.model, reference.pattern, merged, pretokenizer=reference.pretokenizer), origin


class Library:
    """The vocabulary file's own library (tiktoken, tokenizers, sentencepiece), when it is installed."""

    def __init__(self, vocab: str, reference: Any) -> None:
        self.name: str | None = None
        self.note: str | None = None
        self._encode: Callable[[str, bool], list[int]] | None = None
        with contextlib.suppress(Exception):
            self._setup(vocab, reference)

    def _setup(self, vocab: str, reference: Any) -> None:
        from bpeproof.impl import formats

        kind = formats.load(Path(vocab)).kind
        if kind == "tiktoken":
            try:
                tiktoken = require("tiktoken", "comparing with the file's own library")
            except LibraryMissingError as error:
                self.note = str(error)
                return
            from bpeproof.impl.formats.tiktoken_file import load_tiktoken_ranks

            if reference.pretokenizer is not None:
                return
            encoding = tiktoken.Encoding("checked", pat_str=reference.pattern,
                                         mergeable_ranks=load_tiktoken_ranks(vocab),
                                         special_tokens=reference.special_tokens)
            self.name = f"tiktoken {getattr(tiktoken, '__version__', '')}".strip()

            def encode_tiktoken(text: str, special: bool) -> list[int]:
                return list(encoding.encode(text, allowed_special="all" if special else set(), disallowed_special=()))

            self._encode = encode_tiktoken
        elif kind == "hf-bpe":
            try:
                tokenizers = require("tokenizers", "comparing with the file's own library")
            except LibraryMissingError as error:
                self.note = str(error)
                return
            from bpeproof.impl.io.files import read_bytes

            hf = tokenizers.Tokenizer.from_str(read_bytes(vocab).decode("utf-8"))
            self.name = f"tokenizers {tokenizers.__version__}"

            def encode_hf(text: str, special: bool) -> list[int]:
                return list(hf.encode(text, add_special_tokens=False).ids)

            self._encode = encode_hf
        elif kind == "sentencepiece-bpe":
            try:
                sentencepiece = require("sentencepiece", "comparing with the file's own library")
            except LibraryMissingError as error:
                self.note = str(error)
                return
            from bpeproof.impl.io.files import read_bytes

            processor = sentencepiece.SentencePieceProcessor(model_proto=read_bytes(vocab))
            self.name = f"sentencepiece {getattr(sentencepiece, '__version__', '')}".strip()

            def encode_sentencepiece(text: str, special: bool) -> list[int]:
                return list(processor.encode(text))

            self._encode = encode_sentencepiece

    def encode(self, text: str, special: bool = False) -> list[int] | str | None:
        if self._encode is None:
            return None
        try:
            return self._encode(text, special)
        except Exception as error:
            return f"raised {type(error).__name__}: {error}"

