"""The two answers a text → ids check compares against: the reference and the vocabulary file's own library.

The reference is the project's ``Tokenizer`` for the file (``Tokenizer.load``),
with the file's own semantics; it decides.  A tiktoken rank file states no special tokens: when it is one of
tiktoken's published encodings (``KNOWN_ENCODINGS``, recognised by its number of tokens and then the digest of its
ranks) the reference gets that encoding's special tokens, and ``--special NAME=ID`` states them for any file
(``with_special_tokens``).  Where the file's own library is installed (tiktoken for rank files,
``tokenizers`` for ``tokenizer.json``, sentencepiece for its models) its answer is shown beside the reference's
and the implementation's, so that a difference can be attributed to one side.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bpeproof.impl.io.files import read_bytes
from bpeproof.impl.optional_libraries import LibraryMissingError
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.proofs_tests.checker.reruns import token_table
from bpeproof.proofs_tests.checker.worker import TargetError
from bpeproof.proofs_tests.libraries import SentencepieceLibrary, TiktokenLibrary, TokenizersLibrary, refusal

#: A text every pre-tokenization pattern must cut whole (letters, digits, punctuation, spaces, a line break).
PATTERN_PROBE = "Hello, world! It's 2024.\n  x"


def load_reference(vocab: str, pattern: str | None) -> Any:
    from bpeproof.impl.io.errors import FormatError
    from bpeproof.impl.tokenizer import Tokenizer

    try:
        reference = Tokenizer.load(vocab, pattern)
    except FormatError as error:  # its message names the file and what is wrong with it
        raise TargetError(str(error)) from None
    except Exception as error:
        prefix = f"invalid pre-tokenization pattern {pattern!r}: "
        if pattern is not None and str(error).startswith(prefix):  # the file is fine: the pattern given is not
            raise TargetError(f"--pattern {pattern}: not a regular expression the reference runs:"
                              f" {str(error).removeprefix(prefix)}") from None
        raise TargetError(f"{vocab}: not a vocabulary file this project reads: {type(error).__name__}: {error}"
                          ) from None
    if pattern is not None:
        try:  # a pattern that does not cover every text is refused now, not on the first text checked
            reference.encode(PATTERN_PROBE)
        except ValueError as error:
            raise TargetError(f"--pattern {pattern}: {error} (the named patterns: {', '.join(PATTERNS)})"
                              ) from None
    return reference


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
    from bpeproof.impl.pipelines.text_pipeline import PatternPipeline, SplitStepsPipeline
    from bpeproof.impl.tokenizer import Tokenizer

    known, why = known_encoding(reference)
    specials = dict(known.special_tokens) if known is not None else {}
    origin = f"{known.name}'s, recognised by the file's ranks" if known is not None else why or ""
    if given:
        if not isinstance(reference.pipeline, (PatternPipeline, SplitStepsPipeline)):
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


#: The file's own library, as the checker runs it: an adapter of ``bpeproof.proofs_tests.libraries``.
Adapter = TiktokenLibrary | TokenizersLibrary | SentencepieceLibrary


def _tiktoken_of(vocab: str, reference: Any) -> Adapter:
    """tiktoken on the reference's ranks (a rank file's, a tekken file's live ranks shifted by its special
    tokens, GPT-2's ``encoder.json``: tiktoken's own ``gpt2`` encoding is built from it) and pattern."""
    from bpeproof.impl.pipelines.text_pipeline import PatternPipeline

    if not isinstance(reference.pipeline, PatternPipeline):
        raise LibraryMissingError("the reference cuts its text by steps that tiktoken has no pattern for")
    specials = reference.special_tokens
    ranks = {data: token for token, data in token_table(reference).items() if token not in specials.values()}
    return TiktokenLibrary(ranks, reference.pattern, specials, label="checked")


def _tokenizers_of(vocab: str, reference: Any) -> Adapter:
    """The ``tokenizers`` library on the ``tokenizer.json`` itself."""
    return TokenizersLibrary.from_json(read_bytes(vocab).decode("utf-8"))


def _sentencepiece_of(vocab: str, reference: Any) -> Adapter:
    """sentencepiece on the model file itself."""
    return SentencepieceLibrary(read_bytes(vocab))


#: The file's own library for each kind of file (``formats.loader.sniff``'s kinds), and its adapter.
_LIBRARIES: dict[str, tuple[type[Adapter], Callable[[str, Any], Adapter]]] = {
    "tiktoken": (TiktokenLibrary, _tiktoken_of),
    "tekken": (TiktokenLibrary, _tiktoken_of),  # as mistral-common's Tekkenizer builds it: the live ranks, shifted
    "gpt2": (TiktokenLibrary, _tiktoken_of),
    "hf-bpe": (TokenizersLibrary, _tokenizers_of),
    "sentencepiece-bpe": (SentencepieceLibrary, _sentencepiece_of),
}
#: Why there is none to compare with, for the other kinds.
_NO_LIBRARY = {
    "bpeproof": "the project's own file: its library is the reference",
    "clip": "CLIP's tokenizer is not a library installed here",
    "gguf": "llama.cpp is not a Python library installed here",
}


class Library:
    """The vocabulary file's own library (tiktoken, tokenizers, sentencepiece), when it is installed: its encode
    is shown beside each difference, and its decode is what a program's decode must give.  ``name`` says which,
    with its version; ``note`` why there is none.  It is built when first asked (a tiktoken of 130,000 ranks
    takes seconds to build, which a check whose decode always gives the text back never needs)."""

    def __init__(self, vocab: str, reference: Any) -> None:
        self.name: str | None = None
        self.note: str | None = None
        self.surrogates = "refuse"  # what the library does with a lone surrogate: "replace" or "refuse"
        self._vocab, self._reference = vocab, reference
        self._build: Callable[[str, Any], Adapter] | None = None
        self._library: Adapter | None = None
        from bpeproof.impl.formats.loader import sniff
        from bpeproof.impl.io.errors import FormatError

        try:
            kind, _data = sniff(vocab)
        except (FormatError, OSError) as error:
            self.note = f"none: {error}"
            return
        if kind not in _LIBRARIES:
            self.note = f"none: {_NO_LIBRARY.get(kind, f'no library reads {kind} files')}"
            return
        adapter, self._build = _LIBRARIES[kind]
        self.surrogates = adapter.surrogates
        try:
            self.name = f"{adapter.name} {importlib.metadata.version(adapter.name)}"
        except importlib.metadata.PackageNotFoundError:
            self.note = f"none: {adapter.name} is not installed (pip install 'bpeproof[compare]')"
            self._build = None

    def _built(self) -> bool:
        if self._build is not None:
            build, self._build = self._build, None
            try:
                self._library = build(self._vocab, self._reference)
            except Exception as error:  # the library refuses the file: said in one line, never hidden
                self.note = f"none: {refusal(self.name or 'the library', error)}"
                self.name = None
            else:
                self.name = f"{self._library.name} {self._library.version}"
        return self._library is not None

    @property
    def shown(self) -> str:
        """The library for the report: its name and version, else why there is none."""
        return self.name or self.note or "none"

    def encode(self, text: str, special: bool = False) -> list[int] | str | None:
        """The library's ids of ``text`` (``special``: special tokens' names read as special tokens); what it raised,
        in one line, when it refuses the text; None when there is no library here."""
        if not self._built() or self._library is None:
            return None
        try:
            return self._library.encode_text(text, special)
        except Exception as error:  # the library's answer to this text, shown beside the implementation's
            return f"raised {type(error).__name__}: {error}"

    def decode(self, ids: list[int]) -> str | None:
        """The library's decode of ``ids``; None when it has none here or refuses them (ids that split a
        character, for tiktoken's strict decode): then the text itself is what a decode must give."""
        if not self._built() or self._library is None:
            return None
        try:
            return self._library.decode(ids)
        except Exception:  # a refusal is an answer here: the caller falls back on the text (text_search.decoded)
            return None
