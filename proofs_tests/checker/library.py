"""The two answers a text → ids check compares against: the reference and the vocabulary file's own library.

The reference is the project's ``Tokenizer`` for the file (``bpeproof.impl.pipelines.registry.load_tokenizer``),
with the file's own semantics; it decides.  Where the file's own library is installed (tiktoken for rank files,
``tokenizers`` for ``tokenizer.json``, sentencepiece for its models) its answer is shown beside the reference's
and the implementation's, so that a difference can be attributed to one side.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bpeproof.impl.optional_libraries import LibraryMissingError, require
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

