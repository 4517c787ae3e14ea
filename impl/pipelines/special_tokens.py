"""Special tokens in a text: which of a tokenizer's special tokens one call allows, and the expression that finds
them.

A special token's name in a text stands for the token only where the call allows it (``allowed_special`` of
``Tokenizer.encode``: "all", a collection of names, or None for none, the default, under which the names are
encoded as ordinary text).  The text is cut at every allowed name, the longest winning where several start at
the leftmost occurrence, and the pieces between them are encoded as ordinary text (def-utf8).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal

from bpeproof.spec.types import BPETypeError, BPEValueError

__all__ = ["AllowedSpecial", "allowed_names", "names_finder"]

#: What ``encode`` may treat as special tokens: all of them, the named ones, or none (None / empty).
AllowedSpecial = Literal["all"] | Collection[str] | None


def allowed_names(specials: Collection[str], allowed_special: AllowedSpecial) -> frozenset[str] | None:
    """The names of ``specials`` that ``allowed_special`` allows, checked: "all", or a collection of known names;
    None for none."""
    if allowed_special is None:
        return None
    if allowed_special == "all":
        return frozenset(specials) or None
    if isinstance(allowed_special, str):
        raise BPETypeError('allowed_special must be "all", a collection of special token names, or None')
    names = frozenset(allowed_special)
    unknown = sorted(name for name in names if name not in specials)
    if unknown:
        raise BPEValueError(f"allowed_special names unknown special tokens: {unknown!r}")
    return names or None


def names_finder(names: Collection[str]) -> Any:
    """A compiled ``regex`` expression that matches any of ``names``, the longest where several start at one
    position."""
    import regex

    # Alternatives longest first: at the leftmost match position the longest name wins.
    ordered = sorted(names, key=lambda name: (-len(name), name))
    return regex.compile("|".join(regex.escape(name) for name in ordered))
