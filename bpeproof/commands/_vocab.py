"""The command line's vocabulary loader (``Tokenizer.load``) and its parsers of token ids and of special tokens
(``--special NAME=ID``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bpeproof.commands import UsageError

if TYPE_CHECKING:
    from bpeproof.impl.formats.vocab import Vocab
    from bpeproof.impl.tokenizer import Tokenizer

__all__ = ["guess_pattern", "load_tokenizer", "parse_ids", "parse_specials"]


def load_tokenizer(path: str, pattern: str | None = None, *, decode_only: bool = False) -> Tokenizer:
    """``Tokenizer.load``, imported when a command loads a vocabulary (the engine, which a command that loads none
    does not need)."""
    from bpeproof.impl.tokenizer import Tokenizer

    return Tokenizer.load(path, pattern, decode_only=decode_only)


def guess_pattern(vocab: Vocab) -> str | None:
    """``bpeproof.impl.pipelines.registry.guess_pattern``, imported when used."""
    from bpeproof.impl.pipelines.registry import guess_pattern as guess

    return guess(vocab)


_INTEGER = re.compile(r"[0-9]{1,20}")


def parse_ids(words: list[str], source: str) -> list[int]:
    """Token ids from text: integers separated by spaces or commas, or a JSON list of integers.

    Only integers are ids: ``1e400``, ``104.9``, ``true`` and nested lists are refused, each named.
    """
    text = " ".join(words).strip()
    if text.startswith("["):
        inner = text[1:-1] if text.endswith("]") else None
        if inner is None or "[" in inner or "]" in inner:
            raise UsageError(f"{source}: not a JSON list of ids (integers between one '[' and ']')")
        items = [item.strip() for item in inner.split(",")] if inner.strip() else []
        if "" in items:
            raise UsageError(f"{source}: not a JSON list of ids (an empty item between commas)")
    else:
        items = text.replace(",", " ").split()
    ids: list[int] = []
    for item in items:
        if not _INTEGER.fullmatch(item):
            raise UsageError(f"{source}: {item[:40]!r} is not a token id (ids are non-negative integers)")
        ids.append(int(item))
    return ids


def parse_specials(items: list[str]) -> dict[str, int]:
    """Special tokens from ``--special NAME=ID`` options (the last ``=`` separates: a name may hold one)."""
    specials: dict[str, int] = {}
    for item in items:
        name, _, value = item.rpartition("=")
        if not name or not value.isdigit():
            raise UsageError(f"--special {item!r}: expected NAME=ID, e.g. '<|endoftext|>=100000'")
        specials[name] = int(value)
    return specials
