"""The report's ``project`` section: the project's own tokenizer for the file against the file's library.

The tokenizer is the one ``bpeproof.impl.pipelines.registry`` gives for the file (the file's own library's
semantics); both encode a sample of the text and the vocabulary's own tokens as texts.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from bpeproof.audit.corpus_tasks import EngineCorpus
from bpeproof.audit.file_view import FileView
from bpeproof.audit.libraries import Library
from bpeproof.audit.sampling import sample_corpus
from bpeproof.impl.formats import Vocab
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.tokenizer import load_tokenizer

__all__ = ["PROJECT_TEXT_CHARS", "TOKEN_TEXTS", "project_section"]

#: Text taken from the corpora for the project's comparison, in characters (shared out among them).
PROJECT_TEXT_CHARS = 1 << 17
#: How many of the vocabulary's own tokens the audit encodes, as texts, with both the project and the library.
TOKEN_TEXTS = 4000


def project_section(view: FileView, library: Library | None, corpora: Sequence[tuple[str, str | EngineCorpus]],
                    pattern: str | None, rng: random.Random) -> dict[str, Any]:
    """The ``project`` section: not compared without a library; else on a sample of the corpora (``pattern``, the
    audit's pattern, is given to the project's tokenizer for the files whose pattern is not their own)."""
    if library is None:
        return _not_compared("the library did not run")
    texts = [sample_corpus(text, PROJECT_TEXT_CHARS // len(corpora), rng) for _, text in corpora]
    own_pattern = pattern if view.vocab.kind in ("tiktoken", "gpt2") else None
    return _project_against_library(view, library, texts, own_pattern)


def _not_compared(reason: str) -> dict[str, Any]:
    return {"compared": False, "reason": reason, "semantics": None, "bytes": 0, "library_tokens": None,
            "project_tokens": None, "token_texts": 0, "token_texts_differing": 0, "lines_left_out": 0,
            "agree": None, "first_difference": None}


def _token_texts(vocab: Vocab, limit: int = TOKEN_TEXTS) -> list[str]:
    """Texts made of the vocabulary's own tokens: the tokens no merge makes first, then an even spread of the rest."""
    specials = set(vocab.specials.values())
    chosen: list[int] = [token for token in vocab.unsplit if token not in specials]
    others = [token for token in vocab.tokens if token not in specials and token not in set(chosen)]
    step = max(1, len(others) // max(1, limit - len(chosen)))
    chosen += others[::step]
    texts: list[str] = []
    for token in chosen[:limit]:
        try:
            texts.append(vocab.tokens[token].decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return [text for text in texts if text]


def _project_against_library(
    view: FileView, library: Library, texts: Sequence[str], pattern: str | None
) -> dict[str, Any]:
    """The project's tokenizer for the file (``registry``: its own semantics) against the library, on the
    sample text and on the vocabulary's own tokens as texts (whole-piece-only tokens among them)."""
    try:
        tokenizer = load_tokenizer(view.vocab.source, pattern)
    except (FormatError, ValueError) as error:
        return _not_compared(f"the project refuses the file: {getattr(error, 'problem', error)}")
    # A byte the vocabulary has no token for cannot be encoded by either (tiktoken panics on it): such lines and
    # token texts are left out of the comparison, and counted.
    missing = frozenset(view.missing_byte_ids)

    def encodable(piece: str) -> bool:
        return missing.isdisjoint(piece.encode("utf-8"))

    lines = "".join(texts).splitlines(keepends=True)
    text = "".join(line for line in lines if encodable(line))
    left_out = len(lines) - sum(1 for line in lines if encodable(line))
    expected = library.encode_text(text)
    got = tokenizer.encode(text)
    first: dict[str, Any] | None = None
    if got != expected:
        at = next((i for i, (x, y) in enumerate(zip(got, expected, strict=False)) if x != y),
                  min(len(got), len(expected)))
        first = {"index": at, "library": expected[at : at + 5], "project": got[at : at + 5]}
    token_texts = [piece for piece in _token_texts(view.vocab) if encodable(piece)]
    differing = [piece for piece in token_texts if tokenizer.encode(piece) != library.encode_text(piece)]
    if first is None and differing:
        piece = differing[0]
        first = {"index": 0, "text": piece, "library": library.encode_text(piece), "project": tokenizer.encode(piece)}
    return {
        "compared": True,
        "reason": f"the project's tokenizer ({tokenizer.semantics} semantics)",
        "semantics": tokenizer.semantics,
        "bytes": len(text.encode("utf-8")),
        "library_tokens": len(expected),
        "project_tokens": len(got),
        "token_texts": len(token_texts),
        "token_texts_differing": len(differing),
        "lines_left_out": left_out,
        "agree": got == expected and not differing,
        "first_difference": first,
    }
