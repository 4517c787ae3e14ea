"""What a merge model reports of one pre-token, for ``bpeproof explain`` and ``bpeproof trace --vocab``: the units
it starts from, every join in the order the model makes it with the place in the file's order that chose it, and
the ids it ends with.

Every model of ``impl.models`` offers two reports of a word (``StepReporter``):

* ``merge_steps(word)``: the file's own semantics, as ``encode_word`` computes it — the one merge loop replayed
  with its pair table (``traced_steps`` over ``impl.merge_loop.merge_traced``), or the rules in list order for
  the article's model; the whole-piece look-up (tiktoken, Hugging Face's ``ignore_merges``) is reported in
  ``whole`` when it gives the word one token, and what the model does after merging (byte fallback, an unknown
  token, a part without a token spelt as its bytes) in ``notes``;
* ``article_steps(word)``: the article's definitions on the same units — enc_R of def-bpe (``replay``: each rule
  in list order replaces every occurrence of its pair, left to right) on the merge list recovered from the file:
  the file's own list where it has one (Hugging Face, llama.cpp's BPE), else, for files of ranked tokens
  (tiktoken, sentencepiece, llama.cpp's SPM), the rule that makes each token from the two parts its own merge
  of it with the lower-ranked tokens ends in (``impl.formats.derive.last_split``), in rank order.  Only the rules
  whose token is a part of the word can apply to it, so only those are recovered (``substrings``).  None when
  the units are not all tokens (a byte or character without one): def-bpe starts from the tokens of the word's
  units.

These reports are for looking into a tokenizer: they run in Python, beside the engine's loops, which they do not
change; their ``ids`` are ``encode_word``'s, so the report never tells another result than the encoder gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol, TypeVar, runtime_checkable

from bpeproof.impl.merge_loop import merge_traced

__all__ = ["Join", "Part", "PieceSteps", "StepReporter", "replay", "replay_steps", "show", "substrings",
           "traced_steps"]

Unit = TypeVar("Unit")


def show(data: bytes) -> str:
    """A token's bytes as readable text: UTF-8 where valid, \\x escapes elsewhere, ␣ for a space."""
    return data.decode("utf-8", errors="backslashreplace").replace(" ", "␣").replace("\n", "\\n")


@dataclass(frozen=True)
class Part:
    """A unit of a word while it is merged: its id (None when it is no token of the model) and how it reads (its
    bytes shown, or the library's own string for models of strings)."""

    token: int | None
    text: str


@dataclass(frozen=True)
class Join:
    """One join: the left part's position before it, the place in the file's order that chose it (a rule's index,
    a token's rank, a merge line, a score's place: lower first), how the file names that place ("r5", "rank 300",
    "merge 12", "score -3.5"), the short mark the merge tree shows, and the joined part."""

    position: int
    priority: int
    label: str
    mark: str
    part: Part


@dataclass(frozen=True)
class PieceSteps:
    """One word under one semantics: its starting units, the joins in order, the ids it ends with, the part a
    whole-piece look-up gave it (None when merging decided), and what else decided its ids."""

    units: tuple[Part, ...]
    joins: tuple[Join, ...]
    ids: tuple[int, ...]
    whole: Part | None = None
    notes: tuple[str, ...] = ()

    def parts(self) -> list[Part]:
        """The parts after every join (before a whole-piece look-up)."""
        parts = list(self.units)
        for join in self.joins:
            parts[join.position : join.position + 2] = [join.part]
        return parts


@runtime_checkable
class StepReporter(Protocol):
    """A merge model that reports its steps for one word (every model of ``impl.models``)."""

    def merge_steps(self, word: bytes) -> PieceSteps: ...

    def article_steps(self, word: bytes) -> PieceSteps | None: ...


def traced_steps(units: Sequence[Unit], code: Callable[[Unit, Unit], int | None],
                 join: Callable[[Unit, Unit, int], Unit], part: Callable[[Unit], Part],
                 label: Callable[[int, Unit], tuple[int, str, str]]) -> tuple[tuple[Part, ...], tuple[Join, ...]]:
    """The starting parts and the joins of the one merge loop on ``units`` with ``code`` and ``join``
    (``impl.merge_loop``); ``part`` reads a unit, ``label(code, joined)`` gives a join's priority, label and mark."""
    _, joins = merge_traced(list(units), code, join)
    return tuple(map(part, units)), tuple(Join(position, *label(value, joined), part(joined))
                                          for position, value, joined in joins)


def replay(units: Sequence[int], rules: Mapping[tuple[int, int], Sequence[tuple[int, int]]]
           ) -> list[tuple[int, int, int]]:
    """def-bpe's enc_R on ``units``, for any rule list: the joins (position before the join, rule index, new id).

    ``rules`` maps a pair (a, b) to its rules ``(index, c)`` in increasing index.  The rules apply one after
    another in list order, each replacing every occurrence of its pair left to right (def-merge); a rule whose
    pair does not occur changes nothing, so the next rule to apply is the first, after the last one applied, whose
    pair occurs: found among the pairs present, whatever the length of the list."""
    ids = list(units)
    joins: list[tuple[int, int, int]] = []
    applied = -1
    while len(ids) > 1:
        best: tuple[int, int, int, int] | None = None
        for a, b in pairwise(ids):
            for index, c in rules.get((a, b), ()):
                if index > applied:
                    if best is None or index < best[0]:
                        best = (index, a, b, c)
                    break
        if best is None:
            break
        applied, a, b, c = best
        i = 0
        while i + 1 < len(ids):
            if ids[i] == a and ids[i + 1] == b:
                ids[i : i + 2] = [c]
                joins.append((i, applied, c))
            i += 1
    return joins


def replay_steps(units: Sequence[int], rules: Mapping[tuple[int, int], Sequence[tuple[int, int]]],
                 part: Callable[[int], Part], label: Callable[[int], tuple[str, str]]) -> PieceSteps:
    """``replay`` as a report: ``part`` reads an id, ``label(index)`` names a rule and its tree mark."""
    joins = tuple(Join(position, index, *label(index), part(c)) for position, index, c in replay(units, rules))
    steps = PieceSteps(tuple(map(part, units)), joins, ())
    return PieceSteps(steps.units, joins, tuple(p.token for p in steps.parts() if p.token is not None))


def substrings(word: Sequence[Unit] | bytes | str, longest: int) -> Iterable[tuple[int, int]]:
    """The (start, stop) of every part of ``word`` of two to ``longest`` units: where a token of the word can be."""
    size = len(word)
    for start in range(size):
        for stop in range(start + 2, min(size, start + longest) + 1):
            yield start, stop
