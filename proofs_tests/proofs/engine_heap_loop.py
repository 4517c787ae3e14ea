"""The engine's heap merge loop with the pair table of a whole valid rule list equals enc_R, for rule lists and token
lists of every length: each entry it pops is skipped or makes the join of variant (ii), which ``rule_rank`` proves
equal to enc_R.

``impl.merge_loop.merge_long`` keeps the units at their first positions, ``alive[s]`` false once position s has been
joined into its left neighbour, ``nxt``/``prv`` linking the alive positions, and a heap of entries (code, position);
each iteration pops the least entry and skips it when it is stale, else joins the pair and pushes the entries of the
two pairs the join makes.  The pair table is the encoder's for R (``impl.contracts.rank_code``, ``rank_join``),
proved to be F, the index of the first rule joining a pair, by ``engine_rule_rank.lemma_rank_code_*``.

The claim
---------
A state of the loop is (units, alive, nxt, prv, heap) with J:

* x is the spelling of the state, the units at the alive positions in order: ``[unit for unit, kept in zip(units,
  alive) if kept]``, the very expression ``merge_long`` returns;
* for every alive position s, nxt[s] is the next alive position (n after the last) and prv[s] the previous one (−1
  before the first);
* for every alive position s with an alive next position t whose pair is ranked, code(units[s], units[t]) = c, the
  entry (c, s) is in the heap (it is the *live* entry of that pair); every other entry is *stale*: its position is
  dead, or last, or its pair's code is another;
* the heap is a heap in heapq's sense.

K(x, h): from every state with J whose spelling is x and whose heap holds h entries, the loop returns RR(x)
(``spec.variants.merge_by_rule_rank``).  Induction on (|x|, h), lexicographically:

* h = 0 (``lemma_heap_loop_stops``): the loop leaves, and returns the spelling, x.  No entry means no alive pair
  is ranked, so RR's scan finds no ranked position and RR(x) = x (``rule_rank.lemma_rank_scan_step``,
  ``lemma_rule_rank_tail``).
* the popped entry (r, a) is stale (``lemma_heap_loop_skips_a_stale_entry``, the positions and n of ANY size):
  position a is dead, or its next position is n, or the code of its pair is not r; one iteration of the loop's own
  body reads only what tells it so and goes on, writing nothing: the same state with the heap less that entry.  A
  stale entry is no pair's live entry, so J holds with h − 1 entries, and K(x, h − 1) gives RR(x).
* the popped entry (r, a) is live (``lemma_heap_loop_joins_the_least``, the positions and n of ANY size): a is
  alive, j = nxt[a] is alive and code(units[a], units[j]) = r.  heappop returns the least entry, and the heap holds
  the live entry of every ranked pair, so (r, a) is the least (code, position) of the ranked pairs of x.  Positions
  keep their order in x (a position left of another has the smaller alive index), so with q the alive index of a,
  (r, q) is the least (rank, index) of x's ranked pairs: RR's (i, q) (``rule_rank``, 2.).  One iteration of the
  loop's own body joins the pair into rules[r].c = c_r, kills j, links a to k = nxt[j] both ways, and pushes the
  entries of the two pairs the join makes, (code(c_r, units[k]), a) and (code(units[p], c_r), p) with p = prv[a],
  each when the pair exists and is ranked; it writes nothing else.  The state spells x' = x[:q] · c_r · x[q+2:]: the
  alive positions keep their units but a's (now c_r) and lose j, and only a and k had j as a neighbour.  Its ranked
  pairs other than those at p and a are pairs of x at the same positions, whose live entries were in the heap and
  are not the popped one (the pair at a is the only one with position a); the two new pairs have theirs pushed.
  So J holds for x', one shorter, and K(x', ·) gives RR(x'), which is RR(x): RR's call recurses on that very x'
  (``rule_rank.lemma_rule_rank_tail``).

``merge_long`` returns lists of fewer than 2 units as they are (RR of them), and otherwise starts in a state with J
by its construction: every position alive, nxt[s] = s + 1 and prv[s] = s − 1, the heap the entries (code, s) of the
ranked pairs (its comprehension: exactly the live entries), made a heap by ``heapify``.  K gives RR(units) =
enc_R(units) (``rule_rank``) for every list.  The function is checked to be the quoted one
(``lemma_heap_loop_is_quoted``: in particular ``pop`` is ``heapq.heappop`` and ``push`` is ``heapq.heappush``), and
the steps run its loop's test and body as they are (``while_parts``), with ``on_join`` None, as the encoders call
it (``merge_traced`` passes a recorder of the joins, which the steps do not cover).  The loop carries nothing from
one iteration to the next but its state: the body's other names are assigned before they are read, which running
it as a function of the state's names checks (a name read first would be unbound), and it rebinds none of those.

What is assumed: heapq's guarantees, taken as axioms (they are heapq's documented invariant, and the module is C):
``heapify`` makes a list a heap, ``heappop`` on a heap returns its least item (Python's order on tuples: least code,
then least position) and leaves a heap of the others, ``heappush`` leaves a heap of the items and the new one.  The
steps model the heap as the multiset of its entries (``Entries``): popping returns its least entry, pushing adds one.

The abstractions
----------------
``Sparse`` is a list of unknown length of which the step knows the items at a few positions (symbolic, ordered);
reading or writing any other item is ``NotCovered``.  Positions are sparse here (dead positions lie between alive
ones), which is why the flat loop's ``Window`` (a run of known items between two unread runs) does not fit.  Every
item the step does not write keeps its value, so J of the unread positions is J of the state before.  The units are
atoms (``Atom``): the body never compares units, it only passes them to the pair table and to ``join`` and stores
them, so a step checked for distinct atoms and any values of the table on their pairs holds for every real list,
whatever units coincide.  The table's values on the pairs the step reads are free arguments (a code or None), its
value on any other pair ``NotCovered``; ``join`` is ``rank_join`` of a rule list of which only r_r can be read.

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.engine_heap_loop
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

# The contracts below name these in their conditions: CrossHair evaluates a condition in this module's namespace.
from bpeproof.impl.contracts import rank_join
from bpeproof.impl.merge_loop import merge_long
from bpeproof.proofs_tests.proofs.engine_merge_step import Loop, while_parts
from bpeproof.proofs_tests.proofs.induction_machinery import NotCovered
from bpeproof.proofs_tests.proofs.loop_machinery import (
    body_of,
    written_as,  # noqa: F401 (named by a condition)
)
from bpeproof.proofs_tests.proofs.rule_rank import OneRule
from bpeproof.spec.types import Rule

# ---------------------------------------------------------------------------
# The loop, as the proof needs it written
# ---------------------------------------------------------------------------

#: ``merge_long`` after its docstring: short lists as they are; else every position alive and linked, the entries of
#: the ranked pairs made a heap; pop the least entry, skip it when stale, else join and push the two new pairs'
#: entries; the alive units.
MERGE_LONG = """
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
"""

#: What the loop reads and writes: its state, the heap's two operations (locals of ``merge_long``), the table.
NAMES = ("units", "alive", "nxt", "prv", "heap", "pop", "push", "code", "join", "on_join", "n")
#: The test and body of ``merge_long``'s loop, compiled from the code itself (a change inside a step is refuted there).
LOOP: Loop = while_parts(body_of(merge_long), NAMES)


def lemma_heap_loop_is_quoted() -> None:
    """``merge_long`` is written as quoted in ``MERGE_LONG``.

    post[]: written_as(merge_long, MERGE_LONG)
    """


# ---------------------------------------------------------------------------
# The abstractions
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Atom:
    """A unit the step only stores and passes on: p, a, b, s (the units at p, a, j, k) and c (the joined one)."""

    name: str


P, A, B, S, C = (Atom(name) for name in ("p", "a", "b", "s", "c"))
#: No item at that position in that array: the step never reads it.
UNREAD = Atom("unread")

Item = tuple[int, object]


class Sparse:
    """A list of unknown length whose items at the ``known`` positions (distinct, symbolic) alone can be read or
    written, in place; any other item is ``NotCovered``."""

    def __init__(self, known: list[Item]) -> None:
        self.known = known

    def _slot(self, index: int) -> int:
        if not isinstance(index, int):
            raise NotCovered("an index other than an int")
        for slot, (position, _) in enumerate(self.known):
            if index == position:
                return slot
        raise NotCovered("an item at a position the step does not know")

    def __getitem__(self, index: int) -> object:
        return self.known[self._slot(index)][1]

    def __setitem__(self, index: int, value: object) -> None:
        slot = self._slot(index)
        self.known[slot] = (self.known[slot][0], value)


class Entries:
    """The heap as the multiset of its entries: ``least`` (None: no entry) and the others, never read; and the
    entries pushed since.  ``pop_least`` and ``push_entry`` are heappop and heappush on it, by heapq's guarantees."""

    def __init__(self, least: tuple[int, int] | None) -> None:
        self.least = least
        self.popped = False
        self.pushed: list[tuple[object, object]] = []

    def __bool__(self) -> bool:
        return self.least is not None


def pop_least(heap: Entries) -> tuple[int, int]:
    """heappop: the least entry, once (the step runs one iteration)."""
    if not isinstance(heap, Entries) or heap.least is None or heap.popped:
        raise NotCovered("a pop the step does not make")
    heap.popped = True
    return heap.least


def push_entry(heap: Entries, entry: tuple[object, object]) -> None:
    """heappush: one entry more."""
    if not isinstance(heap, Entries):
        raise NotCovered("a push onto another list")
    heap.pushed.append(entry)


def table(pairs: list[tuple[Atom, Atom, int | None]]) -> Callable[[object, object], int | None]:
    """The pair table on the pairs the step may read: their codes (None: no rule joins the pair); any other pair is
    ``NotCovered``."""

    def code(x: object, y: object) -> int | None:
        for first, second, value in pairs:
            if x is first and y is second:
                return value
        raise NotCovered("the code of a pair the step does not know")

    return code


def ranked(value: int, is_ranked: bool) -> int | None:
    return value if is_ranked else None


def joining(r: int) -> Callable[..., object]:
    """``rank_join`` (the real code) of a rule list of which only r_r, joining into c, can be read."""
    return rank_join(cast(list[Rule], OneRule(r, Rule(0, 0, cast(int, C)))))


def state(units: Sparse, alive: Sparse, nxt: Sparse, prv: Sparse, heap: Entries, code: Callable[..., object],
          join: Callable[..., object], n: int) -> dict[str, object]:
    return {"units": units, "alive": alive, "nxt": nxt, "prv": prv, "heap": heap, "pop": pop_least,
            "push": push_entry, "code": code, "join": join, "on_join": None, "n": n}


def unchanged(got: dict[str, object], given: dict[str, object]) -> bool:
    """The body rebound none of the names of the state (it writes into the arrays and the heap, and keeps n, the
    table and the heap's operations): the next iteration starts from what it left."""
    return all(got[name] is given[name] for name in NAMES)


# ---------------------------------------------------------------------------
# K(x, h) by induction on (|x|, h)
# ---------------------------------------------------------------------------


def stops(n: int, loop: Loop = LOOP) -> bool:
    """h = 0: the loop's test fails, so the loop leaves with the state (never read) as it is."""
    test, _ = loop
    given = state(Sparse([]), Sparse([]), Sparse([]), Sparse([]), Entries(None), table([]), joining(0), n)
    return not test(**given)


def lemma_heap_loop_stops(n: int) -> None:
    """No entry, n of ANY size: the loop leaves.

    pre: n >= 2
    post[]: stops(n)
    """


def skips(n: int, a: int, r: int, is_alive: bool, j: int, code_now: int, is_ranked: bool, loop: Loop = LOOP) -> bool:
    """One iteration on the popped entry (r, a), stale: a dead (``is_alive`` false), or its next position j is n, or
    the code of its pair (``code_now``, None unless ``is_ranked``) is not r.  It goes on, writing nothing."""
    # An alive a has its next position j and its unit; j < n has its unit; nothing else is known.
    at_a: list[Item] = [(a, j)] if is_alive else []
    pair: list[Item] = [(a, A), *([(j, B)] if j < n else [])] if is_alive else []
    alive, nxt, units, prv = Sparse([(a, is_alive)]), Sparse(at_a), Sparse(pair), Sparse([])
    heap = Entries((r, a))
    given = state(units, alive, nxt, prv, heap, table([(A, B, ranked(code_now, is_ranked))]), joining(r), n)
    before = [list(array.known) for array in (units, alive, nxt, prv)]
    test, body = loop
    if not test(**given):
        return False
    got = body(**given)
    return (got["break"] is False and unchanged(got, given) and heap.popped and heap.pushed == []
            and [array.known for array in (units, alive, nxt, prv)] == before)


def lemma_heap_loop_skips_a_stale_entry(n: int, a: int, r: int, is_alive: bool, j: int, code_now: int,
                                        is_ranked: bool) -> None:
    """The popped entry (r, a) is stale, a, j and n of ANY size: one iteration goes on with the state as it was,
    the heap less that entry.

    pre: 0 <= a < j <= n
    pre: not is_alive or j == n or not is_ranked or code_now != r
    post[]: skips(n, a, r, is_alive, j, code_now, is_ranked)
    """


def joins(n: int, p: int, a: int, j: int, k: int, r: int, after: int, after_ranked: bool, before: int,
          before_ranked: bool, loop: Loop = LOOP) -> tuple[object, ...]:
    """One iteration on the popped entry (r, a), live: p = prv[a] (−1: a is the first alive position), j = nxt[a],
    k = nxt[j] (n: j is the last), code(units[a], units[j]) = r; the new pairs (c, s) and (p, c) have the codes
    ``after`` and ``before`` (None unless ranked).  Whether it went on, its arrays and pushes, and those that give J
    for x' = x[:q] · c · x[q+2:]."""
    has_before, has_after = p >= 0, k < n

    def around(at_p: object, at_a: object, at_j: object, at_k: object) -> list[Item]:
        """Items at p, a, j, k; none at p or k where there is no such alive position, nor where given ``UNREAD``."""
        return [(position, item) for position, item, there in ((p, at_p, has_before), (a, at_a, True),
                                                                (j, at_j, True), (k, at_k, has_after))
                if there and item is not UNREAD]

    units, alive = Sparse(around(P, A, B, S)), Sparse(around(True, True, True, True))
    nxt, prv = Sparse(around(a, j, k, UNREAD)), Sparse(around(UNREAD, p, a, j))
    heap = Entries((r, a))
    code = table([(A, B, r), (C, S, ranked(after, after_ranked)), (P, C, ranked(before, before_ranked))])
    given = state(units, alive, nxt, prv, heap, code, joining(r), n)
    test, body = loop
    if not test(**given):
        return ("stopped",)
    got = body(**given)
    pushed = [*([(after, a)] if has_after and after_ranked else []),
              *([(before, p)] if has_before and before_ranked else [])]
    expected = (around(P, C, B, S), around(True, True, False, True), around(a, k, k, UNREAD),
                around(UNREAD, p, a, a), pushed)
    arrays = (units.known, alive.known, nxt.known, prv.known, heap.pushed)
    return (got["break"], unchanged(got, given) and heap.popped, arrays, expected)


def leaves_the_state_of_x_merged(sides: tuple[object, ...]) -> bool:
    """The loop went on, popped the entry and left the arrays and pushes that give J for x'."""
    if len(sides) != 4:
        return False
    left_loop, kept, arrays, expected = sides
    return left_loop is False and kept is True and arrays == expected


def joins_into_x_merged(n: int, p: int, a: int, j: int, k: int, r: int, after: int, after_ranked: bool,
                        before: int, before_ranked: bool) -> bool:
    """The iteration on the live entry went on and left the state of x' with J."""
    return leaves_the_state_of_x_merged(joins(n, p, a, j, k, r, after, after_ranked, before, before_ranked))


def lemma_heap_loop_joins_the_least(n: int, p: int, a: int, j: int, k: int, r: int, after: int, after_ranked: bool,
                                    before: int, before_ranked: bool) -> None:
    """The popped entry (r, a) is live, the positions and n of ANY size: one iteration joins the pair at a into c_r,
    links a to k both ways, kills j, and pushes the entries of the ranked pairs among (c_r, units[k]) at a and
    (units[p], c_r) at p, nothing else: the state of x' = x[:q] · c_r · x[q+2:] with J.

    pre: -1 <= p < a < j < k <= n
    pre: r >= 0
    post[]: joins_into_x_merged(n, p, a, j, k, r, after, after_ranked, before, before_ranked)
    """
