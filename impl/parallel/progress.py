"""Progress of a run: what counts the bytes read, and the bar that shows them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["Progress", "bytes_bar"]


Progress = Callable[[int], None] | None


def bytes_bar(total: int, progress: bool | None, description: str) -> Any:
    """A tqdm bar of bytes when ``progress`` is True; with None, one that appears after a second on a terminal."""
    if progress is None:
        progress, delay = sys.stderr.isatty(), 1.0
    else:
        delay = 0.0
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=description, leave=False,
                delay=delay)
