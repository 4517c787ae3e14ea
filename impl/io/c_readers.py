"""The loaders' bulk readers in C (``impl/_c/_fastload.c``): one pass over a file's bytes where the Python
readers take a Python step per token (rank files, GGUF string arrays, sentencepiece pieces, the cache's blobs).

Each reader gives exactly what its Python path gives, and stays optional: ``c_readers()`` is None when the
extension is not built or ``USE_C_READERS`` is false, and every caller then runs its Python path (the tests set it
false to compare both on generated input).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from itertools import pairwise
from typing import Any, TypeVar

try:
    from bpeproof.impl._c import _fastload  # type: ignore[attr-defined]
except ImportError:  # the C extension is optional: the Python readers give the same values
    _fastload = None

__all__ = ["USE_C_READERS", "c_readers", "cut_at"]

_Blob = TypeVar("_Blob", bytes, str)

#: Whether the loaders use the C readers when they are built (read when a file is read).
USE_C_READERS = True


def c_readers() -> Any:
    """The C readers' module, or None for the Python paths."""
    return _fastload if USE_C_READERS else None


def cut_at(blob: _Blob, offsets: Iterable[int]) -> list[_Blob]:
    """``blob`` cut into its items, given the offsets where they start and, last, its length (in bytes, or in
    code points for a string); ``ValueError`` for offsets that do not fit it."""
    numbers = array("q", offsets)
    fast = c_readers()
    if fast is not None:
        items: list[_Blob] = fast.cut(blob, numbers.tobytes(), numbers.itemsize)
        return items
    if not numbers or numbers[0] != 0 or numbers[-1] != len(blob) or any(map(int.__gt__, numbers, numbers[1:])):
        raise ValueError("offsets that do not fit their blob")
    return [blob[start:end] for start, end in pairwise(numbers)]
