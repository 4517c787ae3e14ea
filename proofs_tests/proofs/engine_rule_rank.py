"""The engine's flat-list merge loop with the pair table of a whole valid rule list equals enc_R, for rule lists and
token lists of every length: it makes the joins of variant (ii), which ``rule_rank`` proves equal to enc_R.

``impl.merge_loop.merge_short`` keeps the units and, in ``found``, the rank of each adjacent pair; each iteration
joins the leftmost pair of the lowest rank and refreshes the ranks of its two neighbours.  The pair table is the
encoder's for R (``impl.contracts.rank_code``, ``rank_join``): the rank of (x, y) is the index of the first rule
joining it (None, ``_NONE`` in ``found``, when none does), and a pair of rank k becomes c_k.

The claim
---------
A state of the loop is (units, found) with J: |found| = |units| − 1 and found[s] is the rank of (units[s],
units[s+1]) for every s.  K(x): from every state with J and units = x, the loop returns RR(x)
(``spec.variants.merge_by_rule_rank``).  Strong induction on |x|:

* the table is F (``lemma_rank_code_is_a_scan``, ``lemma_rank_code_base``, ``lemma_rank_code_step``: the same
  scan as ``_first_rule_of_pair``, so by the same induction over the rules the rank of a pair is the index of the
  first rule joining it), so found holds F of each pair, or ``_NONE``;
* no pair ranked (``lemma_flat_loop_stops``, x of ANY length): every rank is ``_NONE``, and the loop leaves at once
  (or never starts) with the units untouched: x, which is RR(x) when no position is ranked
  (``rule_rank.lemma_rule_rank_tail``);
* the least (rank, position) of the ranked positions is (i, q) (``lemma_flat_loop_joins_the_least``, x and q of
  ANY length): the ranks before q are above i or none, the rank at q is i, those after q at least i or none, so
  ``min(found)`` is i and ``found.index(i)`` is q.  One iteration of the loop's own body joins x_q x_{q+1} into
  rules[i].c = c_i and refreshes the ranks of the pairs on both sides of it, leaving the state of x' = x[:q] · c_i ·
  x[q+2:] with J, so by K(x') (x' is one shorter) the loop returns RR(x'), which is RR(x): RR's scan finds the
  same (i, q) (``rule_rank.lemma_rank_scan_step``) and its call recurses on that x' (``lemma_rule_rank_tail``).

``merge_short`` returns lists of fewer than 2 units as they are (RR of them), and otherwise builds ``found`` by its
comprehension (J by definition): K gives RR(units) = enc_R(units) (``rule_rank``) for every list.  The loop is
checked to be the quoted one (``engine_merge_loop.lemma_flat_loop_is_quoted``), and the steps run its body and
test as they are and its quoted ``rank`` (``while_parts``).

The abstractions are those of ``engine_merge_loop`` (``Window``: H · K · A, of which only the known items K are
read or written), with one fact more for ``found``: every rank of H is above i or none (``Ranks``), so its first
rank i is in K.  The table's value on a pair the join makes is a free value (``code`` answers ("F", x, y)): J of
x' needs only that ``found`` holds the table's value for each new pair, whatever it is.

What stays bounded: nothing of the engine's merge loops.  The heap loop ``merge_long`` with the same table is proved
equal to enc_R for every size by ``engine_heap_loop``, through the same variant (ii); the bounded equalities on runs
of one byte (``impl: merge loops on runs = enc_R``) stay as a claim of their own.

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.engine_rule_rank
"""

from __future__ import annotations

from itertools import pairwise
from typing import cast

# The contracts below name these in their conditions: CrossHair evaluates a condition in this module's namespace.
from bpeproof.impl.contracts import rank_code, rank_join
from bpeproof.impl.merge_loop import merge_short
from bpeproof.proofs_tests.proofs.engine_merge_loop import NAMES, NONE, Window, lowest, rank_with
from bpeproof.proofs_tests.proofs.engine_merge_step import Loop, while_parts
from bpeproof.proofs_tests.proofs.induction_machinery import NotCovered
from bpeproof.proofs_tests.proofs.loop_machinery import (
    body_of,
    loop_body,
    written_as,  # noqa: F401 (named by a condition)
)
from bpeproof.proofs_tests.proofs.rule_rank import OneRule
from bpeproof.spec.types import Rule

#: The pair table of a rule list: the rules in order, the index of the first that joins (x, y); None after the last.
RANK_CODE = """
for rank, rule in enumerate(rules):
    if rule.a == x and rule.b == y:
        return rank
return None
"""

#: One iteration of the table's scan and the test and body of the merge loop, compiled from the code itself: the
#: quoted texts are what the code must be for the loops to be folds (``written_as``), and the steps run the code, so
#: that a change inside a step is refuted there too.
RANK_CODE_STEP = loop_body(body_of(rank_code), ("x", "y"))
LOOP: Loop = while_parts(body_of(merge_short), NAMES, {"_NONE": NONE, "min": lowest})


def lemma_rank_code_is_a_scan() -> None:
    """The pair table ``rank_code`` is the scan quoted in ``RANK_CODE``.

    post[]: written_as(rank_code, RANK_CODE)
    """


def lemma_rank_code_base(x: int, y: int) -> None:
    """With no rule, no pair has a rank.

    post[]: rank_code([])(x, y) is None
    """


def code_step(k: int, ra: int, rb: int, rc: int, x: int, y: int) -> object:
    """One iteration of the table's scan at index k, on the rule (ra, rb ↦ rc): k when it returns, "on" otherwise."""
    got = RANK_CODE_STEP(rank=k, rule=Rule(ra, rb, rc), x=x, y=y)
    return "on" if isinstance(got, dict) else got


def lemma_rank_code_step(k: int, ra: int, rb: int, rc: int, x: int, y: int) -> None:
    """No rule before k joins (x, y): at index k, any k, the scan returns k exactly when r_k does.

    pre: k >= 0
    post[]: code_step(k, ra, rb, rc, x, y) == (k if (ra, rb) == (x, y) else "on")
    """


# ---------------------------------------------------------------------------
# The loop on a state with J
# ---------------------------------------------------------------------------


class Ranks(Window):
    """``found`` as H · K · A where every item of H is above ``above`` (a rank above it, or ``_NONE``)."""

    def __init__(self, hidden: int, known: list[float], after: int, above: float, floor: float) -> None:
        super().__init__(hidden, known, after, None, floor)
        self.above = above

    def index(self, value: float) -> int:
        """The first position holding ``value``: in K, when ``value`` is not above ``above`` (so no item of H)."""
        if self.hidden > 0 and not value <= self.above:
            raise NotCovered("a value a rank before the known ones may hold")
        for position, item in enumerate(self.known):
            if item == value:
                return self.hidden + position
        raise NotCovered("a value that is not among the known items")


def opaque_code(x: int, y: int) -> object:
    """The table's value on a pair the step makes: free (the rank of that pair, whatever it is)."""
    return ("F", x, y)


def stops(n: int, loop: Loop = LOOP) -> bool:
    """K(x) with no pair ranked, |x| = n ≥ 2: the loop leaves, the units (never read) untouched."""
    units = Window(0, [], n)
    found = Window(n - 1, [], 0, hidden_item=NONE, floor=0)
    state = {"units": units, "found": found, "rank": rank_with(opaque_code), "join": lambda x, y, k: None}
    test, body = loop
    if test(**state):
        after = body(**state)
        if not after["break"] or after["units"] is not units:
            return False
    return units.known == [] and units.hidden == 0 and units.after == n


def lemma_flat_loop_stops(n: int) -> None:
    """No pair of x ranked, x of ANY length n ≥ 2: the loop returns x.

    pre: n >= 2
    post[]: stops(n)
    """


def joins_the_least(q: int, n: int, p: int, prev: int, prev_ranked: bool, s: int, nxt: int, next_ranked: bool,
                    i: int, ai: int, bi: int, ci: int, loop: Loop = LOOP) -> tuple[object, ...]:
    """One iteration on x = … p · a_i b_i · s …, |x| = n, a_i at q, ranks (p, a_i) = ``prev`` (when q ≥ 1) and
    (b_i, s) = ``nxt`` (when q + 2 < n), ``_NONE`` when not ranked: whether it went on, the units and ``found``
    it leaves, and those of x' with J, as (hidden, known, after)."""
    rank = rank_with(opaque_code)
    join = rank_join(cast(list[Rule], OneRule(i, Rule(ai, bi, ci))))
    has_prev, has_next = q >= 1, q + 2 < n
    left, right = [p] if has_prev else [], [s] if has_next else []
    hidden, after = max(q - 1, 0), n - q - 2 - len(right)
    units = Window(hidden, [*left, ai, bi, *right], after)
    ranks: list[float] = [*([prev if prev_ranked else NONE] if has_prev else []), i,
                          *([nxt if next_ranked else NONE] if has_next else [])]
    found = Ranks(hidden, ranks, after, above=i, floor=i)
    state = {"units": units, "found": found, "rank": rank, "join": join}
    test, body = loop
    if not test(**state):
        return ("stopped",)
    got = body(**state)
    known_after = [*left, ci, *right]
    expected_ranks = [rank(x, y) for x, y in pairwise(known_after)]
    got_units, got_found = cast(Window, got["units"]), cast(Window, got["found"])
    return (got["break"], (got_units.hidden, got_units.known, got_units.after), (hidden, known_after, after),
            (got_found.hidden, got_found.known, got_found.after), (hidden, expected_ranks, after))


def leaves_the_state_of_x_merged(sides: tuple[object, ...]) -> bool:
    """The loop went on, and left the units and ``found`` of x' with J."""
    if len(sides) != 5:
        return False
    left_loop, got_units, expected_units, got_found, expected_found = sides
    return left_loop is False and got_units == expected_units and got_found == expected_found


def joins_into_x_merged(q: int, n: int, p: int, prev: int, prev_ranked: bool, s: int, nxt: int, next_ranked: bool,
                        i: int, ai: int, bi: int, ci: int) -> bool:
    """The iteration on x went on and left the state of x' with J."""
    return leaves_the_state_of_x_merged(joins_the_least(q, n, p, prev, prev_ranked, s, nxt, next_ranked, i, ai, bi,
                                                        ci))


def lemma_flat_loop_joins_the_least(q: int, n: int, p: int, prev: int, prev_ranked: bool, s: int, nxt: int,
                                    next_ranked: bool, i: int, ai: int, bi: int, ci: int) -> None:
    """The least (rank, position) of x is (i, q), x and q of ANY length: one iteration joins x_q x_{q+1} into c_i
    and leaves the state of x' = x[:q] · c_i · x[q+2:] with J.

    The ranks before q are above i or none, those after q at least i or none (the scan's least (rank, position)).

    pre: 0 <= q and q + 2 <= n and i >= 0
    pre: not prev_ranked or prev > i
    pre: not next_ranked or nxt >= i
    post[]: joins_into_x_merged(q, n, p, prev, prev_ranked, s, nxt, next_ranked, i, ai, bi, ci)
    """
