"""The one shrinker behind both checkers: make a failing input smaller while it still fails.

Hypothesis shrinks the function checker's short structured examples itself; everything else is shrunk here:
the function checker's long inputs and its rule lists, the text → ids checker's texts and the earlier text a
stateful bug needs.  Two strategies, over any sequence (``bytes``, ``str``, ``list``):

- ``greedy``: try smaller candidates in order and move to the first that still fails, until none does.  The
  candidates come from ``deletions`` (chunks cut out, halves first), ``simpler_characters`` (a character replaced
  by ``a``, a space or ``0``) or ``each_dropped`` (one item left out, the last first);
- ``cut_ends``: cut from the end, then from the start, halving the cut each time it no longer fails: about
  2·log n tries, for long inputs whose every try costs (the specification judges each one).

An ``attempt`` runs candidates on the code under check and returns the first that still fails with its finding;
it decides how to batch them (one request for many texts, or one fresh process per candidate) and stops at its
own time limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T", bound=Sequence[object])
F = TypeVar("F")

#: Tries ``candidates`` in order: the first that still fails, with its finding; None when none does.
Attempt = Callable[[Sequence[T]], "tuple[T, F] | None"]


def greedy(value: T, finding: F, candidates: Callable[[T], list[T]], attempt: Attempt[T, F], until: float
           ) -> tuple[T, F]:
    """Move to the first candidate that still fails, again and again, until none does or ``until`` passes."""
    while time.monotonic() < until:
        found = attempt(candidates(value))
        if found is None:
            break
        value, finding = found
    return value, finding


def cut_ends(value: T, finding: F, attempt: Attempt[T, F], until: float) -> tuple[T, F]:
    """Cut from the end, then from the start, halving the cut each time the shorter input no longer fails."""
    for from_end in (True, False):
        step = len(value) // 2
        while step >= 1 and time.monotonic() < until:
            candidate = value[: len(value) - step] if from_end else value[step:]
            found = attempt([candidate]) if len(candidate) else None  # type: ignore[list-item]
            if found is None:
                step //= 2
            else:
                value, finding = found
    return value, finding


def deletions(value: T) -> list[T]:
    """``value`` with one chunk cut out, chunks of half its length first, then of a quarter, down to one item."""
    out: list[T] = []
    n = len(value)
    size = n // 2
    while size >= 1:
        out += [value[:i] + value[i + size :] for i in range(0, n, size)]  # type: ignore[operator]
        size //= 2
    return [candidate for candidate in dict.fromkeys(out) if candidate != value]


def each_dropped(value: T) -> list[T]:
    """``value`` with one item left out, the last item first."""
    return [value[:i] + value[i + 1 :] for i in reversed(range(len(value)))]  # type: ignore[operator]


def simpler_characters(text: str) -> list[str]:
    """``text`` with one character replaced by a simpler one of its kind: ``a``, a space or ``0``."""
    out: list[str] = []
    for i, char in enumerate(text):
        for simple in ("a", " ", "0"):
            if char != simple and (char.isalpha() == simple.isalpha() or not char.isascii()):
                out.append(text[:i] + simple + text[i + 1 :])
    return out
