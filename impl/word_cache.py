"""The tokenizer's word cache: word → token ids, computed on a miss, bounded.

A text repeats its words, so ``Tokenizer`` encodes each distinct word once and looks the others up.  The cache is
a ``dict`` whose ``__missing__`` computes the ids, so that a hit is one look-up in C (the C word loop of
``impl/_c/_fastenc.c`` reads and fills the same dict); when it is full, the older half goes, in insertion order.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice

__all__ = ["WordCache"]


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
                # Insertion order: drop the older half; amortised O(1) per word.
                for key in list(islice(self, max(1, len(self) // 2))):
                    self.pop(key, None)
            self[piece] = value
        return value
