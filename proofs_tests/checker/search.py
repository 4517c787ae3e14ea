"""The one search loop behind both checkers: sources of examples in time slices, a budget, the first finding.

A check draws examples from several *sources* (the function checker's Hypothesis properties, the text → ids
checker's text generator) and runs them on the code under check until one is answered differently from the
reference, the time is up, or the examples are spent (the text → ids checker goes on after a difference:
``stop_at_first`` false, its source groups what it finds, ``groups``).  ``run`` gives the sources turns,
round-robin, each a time slice proportional to its weight that doubles every round: a cheap source finds a
shallow bug at once, and no source starves one that needs time.  The ``Search`` a source writes into holds the
budget, the counts per source and the first finding; ``isolate_state`` then tells a plain bug from one that needs
earlier inputs in the same process, the same way for both checkers.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

F = TypeVar("F")  # a finding
E = TypeVar("E")  # an input (a call, a text)

#: At most this many doublings of a source's slice: later rounds keep the length of the ninth.
MAX_DOUBLINGS = 8


@dataclass
class Search(Generic[F]):
    """The budget of a check (a deadline and, optionally, a number of examples), what ran, and the finding."""

    start: float
    deadline: float
    examples: int | None = None  # the most examples to draw; None: as many as time allows
    stop_at_first: bool = True  # end the search at the first finding (else: at the end of the budget)
    halted: str | None = None  # why the search cannot go on (the code under check no longer starts)
    counts: Counter[str] = field(default_factory=Counter)
    drawn: int = 0
    finding: F | None = None
    source: str | None = None  # the source that found it
    found_at: float | None = None

    def take(self, wanted: int) -> int:
        """How many of ``wanted`` more examples may be drawn (all of them when the count is not bounded)."""
        granted = wanted if self.examples is None else max(0, min(wanted, self.examples - self.drawn))
        self.drawn += granted
        return granted

    def spent(self) -> bool:
        """The deadline has passed, every example has been drawn, or the search was halted."""
        return (self.halted is not None or time.monotonic() >= self.deadline
                or (self.examples is not None and self.drawn >= self.examples))

    def over(self) -> bool:
        """The budget is spent, or a finding ends the search."""
        return self.spent() or (self.stop_at_first and self.finding is not None)

    def record(self, finding: F, source: str, replaces: Callable[[F, F], bool] | None = None) -> None:
        """Keep ``finding``: the first one, or a later one that ``replaces(new, old)`` prefers (a smaller one)."""
        if self.finding is None:
            self.found_at = time.monotonic()
            self.source = source
            self.finding = finding
        elif replaces is not None and replaces(finding, self.finding):
            self.finding = finding


class Source(Protocol[F]):
    """Examples of one kind: ``turn`` runs them until ``until`` (a monotonic time), a finding, or the budget's end."""

    @property
    def name(self) -> str: ...

    @property
    def weight(self) -> float: ...

    def turn(self, search: Search[F], until: float, round_no: int, index: int) -> None: ...


def run(search: Search[F], sources: Sequence[Source[F]], base_slice: float) -> None:
    """Give the sources turns until the search is over (see the module docstring)."""
    round_no = 0
    while not search.over():
        for index, source in enumerate(sources):
            if search.over():
                break
            now = time.monotonic()
            until = min(search.deadline, now + base_slice * source.weight * 2 ** min(round_no, MAX_DOUBLINGS))
            source.turn(search, until, round_no, index)
        round_no += 1


def isolate_state(replay: Callable[[Sequence[E]], F | None], earlier: Sequence[E],
                  until: float | None = None) -> tuple[F | None, list[E], str | None]:
    """Whether a wrong answer needs state from earlier inputs, each replay in a fresh process.

    ``replay(before)`` runs ``before`` and then the failing input in a fresh process and returns the finding if
    the answer is still wrong.  Tried alone first; then after each single earlier input, the latest first; then
    after all of them.  Returns the finding, the earlier inputs it needs, and ``None`` (wrong alone),
    ``"earlier-calls"`` (wrong after those inputs) or ``"process-state"`` (right in every fresh process: the state
    came from before), with the finding ``None`` in the last case.
    """
    alone = replay([])
    if alone is not None:
        return alone, [], None
    for single in reversed(earlier):
        if until is not None and time.monotonic() >= until:
            break
        again = replay([single])
        if again is not None:
            return again, [single], "earlier-calls"
    if len(earlier) > 1 and (until is None or time.monotonic() < until):
        again = replay(list(earlier))
        if again is not None:
            return again, list(earlier), "earlier-calls"
    return None, list(earlier), "process-state"
