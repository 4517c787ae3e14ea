"""The tokenizer's word cache: word → token ids, computed on a miss, bounded.

A text repeats its words, so ``Tokenizer`` encodes each distinct word once and looks the others up.  The cache is
a ``dict`` whose ``__missing__`` computes the ids, so that a hit is one look-up in C (the C word loop of
``impl/_c/_fastenc.c`` reads and fills the same dict); when it is full, the older half goes, in insertion order
(``drop_older_half``, which the encoder's own word cache uses too; the C caches follow the same rule,
``older_half`` in ``impl/_c/_fastenc_cache.h``).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice
from typing import Any

__all__ = ["WordCache", "drop_older_half"]


def drop_older_half(cache: dict[Any, Any]) -> None:
    """Drop the older half of ``cache`` (at least one entry), in insertion order: amortised O(1) per word when
    called as the cache fills."""
    for key in list(islice(cache, max(1, len(cache) // 2))):
        cache.pop(key, None)


class WordCache(dict[str, tuple[int, ...]]):
    """word → token ids, computed on a miss by ``dict.__missing__`` so that hits stay in C; bounded."""

    __slots__ = ("_compute", "_limit")

    def __init__(self, compute: Callable[[str], tuple[int, ...]], limit: int) -> None:
        super().__init__()
        self._compute = compute
        self._limit = limit

    def __missing__(self, piece: str) -> tuple[int, ...]:
        value = self._compute(piece)
        if self._limit:
            if len(self) >= self._limit:
                drop_older_half(self)
            self[piece] = value
        return value
