"""The flat-list merge loop with the pair table of one rule equals M_r (def-merge) for token lists of every length: an
induction on the tokens after the part already merged, checked by CrossHair.

``impl.merge_loop.merge_short`` keeps the units and, in ``found``, the rank of each adjacent pair; each iteration
joins the leftmost pair of the lowest rank and refreshes the ranks of its two neighbours.  With the pair table of the
one rule r = (a, b ↦ c) (``impl.contracts.rank_code``/``rank_join`` of (r)), a pair's rank is 0 when it is (a, b)
and ``_NONE`` (above every rank) otherwise.  c ∉ V (def-merge), so c ≠ a and c ≠ b: no pair with a joined c in it is
ever (a, b).

The claim
---------
A state of the loop is (units, found) with J: |found| = |units| − 1 and found[j] is the rank of (units[j],
units[j+1]) for every j.  Write units = q · v.  K(v): for every state with J whose pairs at positions < |q| (those
inside q and the pair across q | v) are none of them (a, b), the loop returns q · M_r(v).  Induction on |v|:

* base |v| ≤ 1 (``lemma_flat_loop_base``): every pair is at a position < |q|, so every rank is ``_NONE``; the loop
  stops (``found`` empty) or leaves at once (its lowest rank is ``_NONE``), with the units untouched: q · v, and
  M_r(v) = v (the real definition);
* step v = t1 t2 u, (t1, t2) ≠ (a, b) (``lemma_flat_loop_step_skip``): the same state, split as q' = q · t1, v' =
  t2 u, satisfies the premise (the pair at |q| is not (a, b), so its rank is ``_NONE``), so by K(t2 u) the loop
  returns q · t1 · M_r(t2 u), which is q · M_r(t1 t2 u) by one unfolding of the real definition, its recursive call
  answered by the hypothesis on t2 u;
* step v = a b u, u of ANY length (``lemma_flat_loop_step_match``): the pair at |q| is the leftmost (a, b), so the
  lowest rank is 0 and ``found.index`` finds position |q|; one iteration of the loop's own body joins it into c and
  refreshes the neighbours' ranks.  The new state is q' = q · c, v' = u with J, and its pairs at positions < |q| + 1
  are none of them (a, b) (c is in neither side of the pair), so by K(u) the loop returns q · c · M_r(u) = q ·
  M_r(a b u) (one unfolding, the recursive call on u answered by the hypothesis).

Every step applies K to a shorter v (u or t2 u), so the induction is well founded.  ``merge_short`` itself returns
lists of fewer than 2 units as they are (M_r of them) and otherwise builds ``found`` by its comprehension (J by
definition) with q = ε: K gives M_r(units) for every list.

The abstraction (``Window``, for both lists): a list H · K · A whose items in H (of symbolic length) and A (of
symbolic length) the step never reads or writes, and K a list of known items.  Each operation the body uses —
``len``, truth, reading, writing and deleting an item of K, ``found.index`` and the lowest rank — means what it
means on the list, or raises ``NotCovered``.  The lowest rank and ``index`` use two facts of J and the premise, and
nothing else: every rank of H is ``_NONE`` (those pairs are at positions < |q|) and every rank is at least 0 (a
rank is 0 or ``_NONE``).  ``min`` is given the body as the function that, on a ``Window``, returns that lowest
value (and is Python's ``min`` on anything else).

What stays bounded: nothing of the engine's merge loops.  The same loop with the pair table of a rule list of several
rules (rank order, which equals the sequential application of enc_R) is proved equal to enc_R for every size by
``engine_rule_rank``, and the heap loop ``merge_long`` by ``engine_heap_loop``; the bounded equalities on runs of one
byte (``impl.contracts``, ``equivalence``) stay as a claim of their own.

The loop
--------
``merge_short`` is checked by its syntax tree to be written exactly as quoted below
(``lemma_flat_loop_is_quoted``); the steps run the quoted body, test and ``rank`` themselves (``while_parts``).

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.engine_merge_loop
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable, Iterable
from itertools import pairwise
from typing import cast

import bpeproof.impl.merge_loop

# The contracts below name these in their conditions: CrossHair evaluates a condition in this module's namespace.
from bpeproof.impl.contracts import rank_code, rank_join
from bpeproof.impl.merge_loop import merge_short
from bpeproof.proofs_tests.proofs.engine_merge_step import Loop, while_parts
from bpeproof.proofs_tests.proofs.induction_machinery import NotCovered, Recursion, Segment, as_list, merge_call
from bpeproof.proofs_tests.proofs.loop_machinery import written_as
from bpeproof.spec.merge import merge
from bpeproof.spec.types import Rule

#: The rank of a pair that does not merge, as the engine writes it.
NONE = bpeproof.impl.merge_loop._NONE

# ---------------------------------------------------------------------------
# The loop, as the proof needs it written
# ---------------------------------------------------------------------------

#: ``merge_short``: short lists as they are; else the ranks of the pairs, then join the leftmost lowest until none.
MERGE_SHORT = """
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
    i = found.index(best)
    units[i] = join(units[i], units[i + 1], int(best))
    del units[i + 1]
    del found[i]
    if i > 0:
        found[i - 1] = rank(units[i - 1], units[i])
    if i < len(found):
        found[i] = rank(units[i], units[i + 1])
return units
"""


def lemma_flat_loop_is_quoted() -> None:
    """``merge_short`` is written as quoted in ``MERGE_SHORT``.

    post[]: written_as(merge_short, MERGE_SHORT)
    """


class Window:
    """A list H · K · A: ``hidden`` items never read, the ``known`` items, then ``after`` items never read.

    ``floor`` is a value no item is below and ``hidden_item`` the value of every item of H (None: not known).
    """

    def __init__(self, hidden: int, known: list[float], after: int, hidden_item: float | None = None,
                 floor: float | None = None) -> None:
        self.hidden = hidden
        self.known = known
        self.after = after
        self.hidden_item = hidden_item
        self.floor = floor

    def __len__(self) -> int:
        return self.hidden + len(self.known) + self.after

    def __bool__(self) -> bool:
        if len(self) > 0:  # noqa: SIM103 (a bool, where CrossHair's comparison gives a symbolic one)
            return True
        return False

    def _at(self, index: int) -> int:
        if not isinstance(index, int) or not self.hidden <= index < self.hidden + len(self.known):
            raise NotCovered("an item outside the known items")
        return index - self.hidden

    def __getitem__(self, index: int) -> float:
        return self.known[self._at(index)]

    def __setitem__(self, index: int, value: float) -> None:
        self.known[self._at(index)] = value

    def __delitem__(self, index: int) -> None:
        del self.known[self._at(index)]

    def index(self, value: float) -> int:
        """The first position holding ``value``: in K, when no item of H holds it."""
        if self.hidden > 0 and (self.hidden_item is None or self.hidden_item == value):
            raise NotCovered("a value an unread item may hold")
        for position, item in enumerate(self.known):
            if item == value:
                return self.hidden + position
        raise NotCovered("a value that is not among the known items")

    def lowest(self) -> float:
        """The least item: ``floor`` when a known item is ``floor``; the known and H's least when A is empty."""
        if self.floor is not None and any(item == self.floor for item in self.known):
            return self.floor
        if self.after > 0 or (self.hidden > 0 and self.hidden_item is None) or len(self) == 0:
            raise NotCovered("the least of items that are not known")
        hidden = [self.hidden_item] if self.hidden > 0 and self.hidden_item is not None else []
        return min([*hidden, *self.known])


def lowest(items: Iterable[float]) -> float:
    """``min`` as the loop's body sees it: a ``Window``'s least item, Python's ``min`` on anything else."""
    if isinstance(items, Window):
        return items.lowest()
    return min(items)


NAMES = ("units", "found", "rank", "join")
LOOP: Loop = while_parts(MERGE_SHORT, NAMES, {"_NONE": NONE, "min": lowest})


def rank_with(code: Callable[[int, int], object]) -> Callable[[int, int], float]:
    """``rank`` of ``merge_short`` (its quoted text, run) with the pair table ``code``."""
    tree = ast.parse(textwrap.dedent(MERGE_SHORT))
    definition = next(node for node in tree.body if isinstance(node, ast.FunctionDef))
    namespace: dict[str, object] = {"code": code, "_NONE": NONE, "Unit": int}
    exec(compile(ast.unparse(definition), "<rank>", "exec"), namespace)  # the quoted (checked) text, nothing else
    return cast(Callable[[int, int], float], namespace["rank"])


def engine_rank(a: int, b: int, c: int) -> Callable[[int, int], float]:
    """``rank`` of ``merge_short`` with the pair table of the one rule (a, b ↦ c)."""
    return rank_with(rank_code([Rule(a, b, c)]))


# ---------------------------------------------------------------------------
# K(v) by induction on |v|
# ---------------------------------------------------------------------------


def base_returns_units(a: int, b: int, c: int, k: int, v: list[int], loop: Loop = LOOP) -> bool:
    """K(v) for |v| ≤ 1, |q| = k: every rank is ``_NONE``; the loop ends, the units untouched: q · v = q · M_r(v)."""
    units = Window(k, list(v), 0)
    found = Window(max(len(units) - 1, 0), [], 0, hidden_item=NONE, floor=0)
    test, body = loop
    state = {"units": units, "found": found, "rank": engine_rank(a, b, c), "join": rank_join([Rule(a, b, c)])}
    if test(**state):
        after = body(**state)
        if not after["break"]:
            return False
    return units.known == v and units.hidden == k and merge(Rule(a, b, c), v) == v


def skip_sides(a: int, b: int, c: int, t1: int, t2: int, u: list[int], rest: list[int]) -> tuple[object, ...]:
    """(the rank of (t1, t2), q · t1 · M_r(t2 u) with M_r(t2 u) = ``rest``, q · M_r(t1 t2 u) by one unfolding whose
    recursive call on t2 u is answered by ``rest``), q left out of both."""
    rule, v = Rule(a, b, c), as_list(Segment([t1, t2], u))
    hypothesis = as_list(Segment([], rest))
    spec = merge(rule, v, rec=merge_call(rule, Recursion(len(v), [(v[1:], hypothesis)])))
    return engine_rank(a, b, c)(t1, t2), [t1] + hypothesis, spec


def match_step(a: int, b: int, c: int, k: int, p: int, u: list[int], loop: Loop = LOOP) -> tuple[object, ...]:
    """One iteration on units = q · a b u, |q| = k, q's last unit p (when k ≥ 1): the state it leaves, and the state
    K(u) needs, both as (units' hidden, known, after; found's hidden, known, after, hidden rank), and whether the loop
    went on."""
    rank, join = engine_rank(a, b, c), rank_join([Rule(a, b, c)])
    left = [p] if k >= 1 else []
    nxt = [u[0]] if len(u) >= 1 else []
    known = [*left, a, b, *nxt]
    units = Window(max(k - 1, 0), list(known), max(len(u) - 1, 0))
    ranks = [rank(x, y) for x, y in pairwise(known)]
    found = Window(max(k - 1, 0), ranks, max(len(u) - 1, 0), hidden_item=NONE, floor=0)
    state = {"units": units, "found": found, "rank": rank, "join": join}
    test, body = loop
    if not test(**state):
        return ("stopped",)
    after = body(**state)
    left_after = [p] if k >= 1 else []
    known_after = [*left_after, c, *nxt]
    expected_units = (max(k - 1, 0), known_after, max(len(u) - 1, 0))
    expected_ranks = [rank(x, y) for x, y in pairwise(known_after)]
    expected_found = (max(k - 1, 0), expected_ranks, max(len(u) - 1, 0), NONE)
    got_units, got_found = cast(Window, after["units"]), cast(Window, after["found"])
    return (after["break"], (got_units.hidden, got_units.known, got_units.after), expected_units,
            (got_found.hidden, got_found.known, got_found.after, got_found.hidden_item), expected_found,
            all(r == NONE for r in expected_ranks))


def match_step_holds(sides: tuple[object, ...]) -> bool:
    """The loop went on without leaving, left the state K(u) needs (J, and no (a, b) before q · c ends)."""
    if len(sides) != 6:
        return False
    left_loop, got_units, expected_units, got_found, expected_found, premise = sides
    return left_loop is False and got_units == expected_units and got_found == expected_found and premise is True


def match_value(a: int, b: int, c: int, u: list[int], rest: list[int]) -> bool:
    """q · c · M_r(u) = q · M_r(a b u): one unfolding, its recursive call on u answered by the hypothesis ``rest``."""
    rule, v = Rule(a, b, c), as_list(Segment([a, b], u))
    hypothesis = as_list(Segment([], rest))
    spec = merge(rule, v, rec=merge_call(rule, Recursion(len(v), [(v[2:], hypothesis)])))
    return spec == [c] + hypothesis


def lemma_flat_loop_base(a: int, b: int, c: int, k: int, v: list[int]) -> None:
    """K(v) for |v| ≤ 1, q of ANY length k.

    pre: a != c and b != c
    pre: k >= 0 and len(v) <= 1
    post[]: base_returns_units(a, b, c, k, v)
    """


def lemma_flat_loop_step_skip(a: int, b: int, c: int, t1: int, t2: int, u: list[int], rest: list[int]) -> None:
    """K(t2 u) ⇒ K(t1 t2 u) for (t1, t2) ≠ (a, b), u of ANY length: the same state, split one token further.

    pre: a != c and b != c
    pre: (t1, t2) != (a, b)
    post[]: skip_sides(a, b, c, t1, t2, u, rest)[0] == NONE
    post: skip_sides(a, b, c, t1, t2, u, rest)[1] == skip_sides(a, b, c, t1, t2, u, rest)[2]
    """


def lemma_flat_loop_step_match(a: int, b: int, c: int, k: int, p: int, u: list[int], rest: list[int]) -> None:
    """K(u) ⇒ K(a b u), q of ANY length k and u of ANY length: one iteration joins the pair at |q|.

    ``p`` is q's last unit; the premise says the pair (p, a) across q | v is not (a, b).

    pre: a != c and b != c
    pre: k >= 0
    pre: k == 0 or (p, a) != (a, b)
    post[]: match_step_holds(match_step(a, b, c, k, p, u))
    post: match_value(a, b, c, u, rest)
    """
