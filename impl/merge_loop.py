"""The one merge loop of the engine: join the adjacent pair of lowest rank, leftmost among equals, until none is left.

Every BPE semantics the engine runs is this loop with its own pair table:

* the article's enc_R (def-bpe) on a valid rule list: the pair (a_j, b_j) of rule j has rank j and becomes c_j
  (``bpeproof.impl.encoder``; rank order equals the sequential application there, see its docstring);
* tiktoken: the pair of parts (x, y) has the rank of the token whose bytes are ⟨⟨x⟩⟩⟨⟨y⟩⟩, for any rank file
  (``bpeproof.impl.models.tiktoken.TiktokenModel``);
* Hugging Face BPE models: the pair of a merge line has the line's number as rank and becomes the vocabulary id of
  the joined string (``bpeproof.impl.models.hugging_face.HuggingFaceModel``);
* sentencepiece BPE models: the pair of parts whose joined text is a piece has the rank of that piece's score,
  highest first, and becomes the joined text (``bpeproof.impl.models.sentencepiece.SentencePieceModel``).

A *code* orders as the rank does and carries the result: ``code(x, y)`` is None when (x, y) is no pair of the
table, else a number whose order is the rank order; ``join(x, y, code)`` is the unit that replaces x, y.  Ties
are broken by position alone: the leftmost pair of the lowest rank is merged first, exactly as tiktoken's
``byte_pair_merge``, Hugging Face's ``Word::merge_all``, sentencepiece's queue of pairs (equal scores, the
leftmost first) and the rank order of ``impl.encoder`` do.  Only sentencepiece gives one rank to pairs that join
into different units (pieces of equal score); elsewhere pairs of one rank join into the same unit (tiktoken: two
splits of one token).

Short sequences are merged in a flat list (``min``/``index`` in C); long ones with a heap of (code, position)
over a linked list of positions, each entry checked when popped (lazy invalidation): O(n log n) for any table.
The optional C loop (``impl/_c/_fastenc_merge.h``, part of the ``_fastenc`` extension) implements the same two
methods over dense int ids.  ``merge_traced`` runs the heap method and records every join, for the explanations
of ``bpeproof.impl.models.steps``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from itertools import pairwise
from typing import TypeVar

__all__ = ["SHORT_WORD", "merge", "merge_long", "merge_short", "merge_traced"]

#: Sequences of at most this many units are merged with the flat-list method; longer ones with the heap.
SHORT_WORD = 40

_NONE = float("inf")  # the rank of a pair that does not merge, above every code

Unit = TypeVar("Unit")

#: ``code(x, y)``: None when x, y do not merge, else a number ordered as the pair's rank.
Code = Callable[[Unit, Unit], "int | None"]
#: ``join(x, y, code)``: the unit that replaces the pair.
Join = Callable[[Unit, Unit, int], Unit]


def merge_short(units: list[Unit], code: Code[Unit], join: Join[Unit]) -> list[Unit]:
    """Merge the lowest-code pair, leftmost first, until none is left (in place; returns ``units``)."""
    if len(units) < 2:
        return units
    def rank(x: Unit, y: Unit) -> float:
        value = code(x, y)
        return _NONE if value is None else value

    found = [rank(x, y) for x, y in pairwise(units)]
    while found:
        best = min(found)
        if best == _NONE:
            break
        i = found.index(best)  # the leftmost pair of the lowest rank
        units[i] = join(units[i], units[i + 1], int(best))
        del units[i + 1]
        del found[i]
        if i > 0:
            found[i - 1] = rank(units[i - 1], units[i])
        if i < len(found):
            found[i] = rank(units[i], units[i + 1])
    return units


def merge_long(units: list[Unit], code: Code[Unit], join: Join[Unit],
               on_join: Callable[[int, int, int, Unit], None] | None = None) -> list[Unit]:
    """The same result as ``merge_short`` in O(n log n): a heap of (code, position) over a linked list.

    Position i holds a unit until it is merged into its left neighbour (``alive[i]`` false).  An entry
    (c, i) stands for the pair starting at i and is skipped when popped if that pair's code is no longer c.
    Positions keep their order in the list, so among equal codes the heap pops the leftmost pair first.
    ``on_join(i, j, code, joined)`` hears of every join, in order (the original positions of the two units).
    """
    n = len(units)
    if n < 2:
        return units
    alive = [True] * n
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    heap = [(c, i) for i, (x, y) in enumerate(pairwise(units)) if (c := code(x, y)) is not None]
    heapq.heapify(heap)
    pop = heapq.heappop
    push = heapq.heappush
    while heap:
        best, i = pop(heap)
        if not alive[i]:
            continue
        j = nxt[i]
        if j >= n or code(units[i], units[j]) != best:
            continue
        units[i] = joined = join(units[i], units[j], best)
        alive[j] = False
        if on_join is not None:
            on_join(i, j, best, joined)
        k = nxt[j]
        nxt[i] = k
        if k < n:
            prv[k] = i
            after = code(joined, units[k])
            if after is not None:
                push(heap, (after, i))
        p = prv[i]
        if p >= 0:
            before = code(units[p], joined)
            if before is not None:
                push(heap, (before, p))
    return [unit for unit, kept in zip(units, alive, strict=True) if kept]


def merge(units: list[Unit], code: Code[Unit], join: Join[Unit]) -> list[Unit]:
    """Merge by rank, leftmost first: ``merge_short`` for short sequences, ``merge_long`` for long ones."""
    if len(units) <= SHORT_WORD:
        return merge_short(units, code, join)
    return merge_long(units, code, join)


def merge_traced(
    units: list[Unit], code: Code[Unit], join: Join[Unit]
) -> tuple[list[Unit], list[tuple[int, int, Unit]]]:
    """``merge``'s result and its joins in order: (position of the left unit in the sequence before the join, its
    code, the joined unit).  ``merge_long`` itself, in O(n log n) for any length (a sentencepiece text is one long
    word), hearing of each join; the alive positions are counted in a Fenwick tree to give each join's position in
    the sequence as it then is."""
    n = len(units)
    tree = [0] * (n + 1)  # Fenwick tree over the alive positions: tree sums of ones
    for index in range(1, n + 1):
        tree[index] += 1
        parent = index + (index & -index)
        if parent <= n:
            tree[parent] += tree[index]
    joins: list[tuple[int, int, Unit]] = []

    def record(i: int, j: int, best: int, joined: Unit) -> None:
        position, at = 0, i  # alive positions before i
        while at > 0:
            position += tree[at]
            at -= at & -at
        joins.append((position, best, joined))
        at = j + 1  # j is no longer alive
        while at <= n:
            tree[at] -= 1
            at += at & -at

    return merge_long(list(units), code, join, record), joins
