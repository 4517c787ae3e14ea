"""Variant (ii), the earliest rule's pair merged first, equals def-bpe's enc_R on every valid rule list and every
token list: an induction on the length of the list along the recursion of ``spec.variants.merge_by_rule_rank``,
checked by CrossHair.

Write RR(x) for ``merge_by_rule_rank(R, x)`` and F(t, t') for ``_first_rule_of_pair(R, t, t')``, the index of the
first rule of R joining (t, t'), None if none; the rank of the pair at position s of x is F(x_s, x_{s+1}).  One
call of RR scans every position and keeps, in ``best``, the least rank and the first position with it; with no
ranked pair it returns x, else, with best = (i, q), it recurses on x' = x[:q] · c_i · x[q+2:], one token shorter.
enc_R is the loop ``for rule in rules: tokens = merge(rule, tokens)`` (``rule_lists.ENC_LOOP``, checked there).

The claim, and its induction
----------------------------
For every valid rule list R (def-merge: rule r_j, at index j from 0, joins two ids of V_j and makes c_j ∉ V_j, so
c_i ≠ a_j, b_j for j ≤ i) and every token list x: RR(x) = enc_R(x).  Strong induction on |x|, along RR's recursion:

1. The scan of the rules (``_first_rule_of_pair``, checked to be the quoted loop, ``lemma_first_rule_is_quoted``):
   over no rule it returns None (``lemma_first_rule_base``); an iteration at index k returns k exactly when r_k
   joins (t, t') and goes on otherwise (``lemma_first_rule_step``).  By induction over the rules, F(t, t') is the
   least index of a rule joining (t, t'): so F(a_j, b_j) ≤ j, and F(t, t') = i means (t, t') = (a_i, b_i).
2. The scan of the positions (``merge_by_rule_rank`` checked to be the quoted text, ``lemma_rule_rank_is_quoted``:
   ``best`` starts as None and the loop visits positions 0 … |x| − 2 in order, carrying only ``best``): one
   iteration of the code's own body at position p, ``tokens`` of ANY length of which only the items at p and p + 1
   can be read, turns the least (rank, position) of the ranked positions before p into the least of those up to p
   (``lemma_rank_scan_step``; the order on pairs is Python's, so "least rank, then first position" is the minimum
   of (rank, position)).  So after the loop best = (i, q) means: F = i at q, every rank before q is above i or
   None, every rank after q is at least i or None; best = None means no position is ranked.
3. The end of a call (``lemma_rule_rank_tail``, the code's own statements after the loop run on x = p · t t' · v,
   |p| = q and |v| of ANY size): with best = None it returns x itself; with best = (i, q) it makes one recursive
   call, on p · c_i · v, which is one token shorter, and returns its value: the hypothesis enc_R(p · c_i · v).
4. enc_R(x) = enc_R(x') when best = (i, q), and enc_R(x) = x when best = None: induction over the rules through
   the loop of enc_R (checked to be a fold, ``rule_lists.lemma_enc_loop_is_a_fold``; over no rule it leaves the
   tokens, ``rule_lists.lemma_enc_base``), run on x and on x' side by side, with the invariant "both are still
   x and x' before rule i, equal from rule i on".  Each iteration runs the loop's own body with M_r answered by
   the lemmas of ``merge_direction``, proved for every length: M_r y = y when (a, b) occurs nowhere in y;
   M_r(p a b v) = p c M_r(v) when (a, b) occurs nowhere in p · a; M_r(p · y) = p · M_r(y) when (a, b) occurs
   nowhere in p · y_1 (the step ``lemma_first_later`` along p).  Whether (a, b) may occur in a part of x is read
   off 2.: a pair there with rank above i (or at least i) cannot be (a, b) when F(a, b) ≤ i (or < i); a pair
   with c_i in it cannot be (a, b) when c_i ∉ {a, b}.  Any other call is not covered.

   * r_j, j < i (``lemma_enc_before_the_rank``): F(a_j, b_j) ≤ j < i, and c_i ∉ {a_j, b_j}: (a_j, b_j) occurs
     in neither list, which the iteration leaves;
   * r_i (``lemma_enc_at_the_rank``): its pair first occurs in x at q, so x becomes p · c_i · M(v); in x' it
     occurs in neither p nor the two pairs with c_i (c_i ∉ {a_i, b_i}), so x' becomes p · c_i · M(v) too;
   * r_j, j > i (``lemma_enc_after_the_rank``): the iteration's result depends on the rule and the tokens only,
     so equal lists stay equal;
   * best = None (``lemma_enc_without_ranked_pair``): no pair of x is ranked, and F(a_j, b_j) is an index, so no
     rule's pair occurs in x and every iteration leaves it.

So RR(x) = x = enc_R(x) when no pair is ranked, else RR(x) = RR(x') = enc_R(x') = enc_R(x), with the
hypothesis on x', shorter than x.

The abstractions
----------------
Each implements only what the code it is given uses, with its meaning on the list, or raises ``NotCovered``:
``Around`` is a token list of symbolic length of which the step reads the items at p and p + 1; ``Split`` is x =
p · t t' · v, of which the end of a call takes the length and the slices before q and from q + 2 on (``Piece``,
parts never read); ``Chain`` is a list made of such parts and known items, two chains with the same parts being
the same list; ``OneRule`` is a rule list of which only r_i can be read.  The rank of a pair is a free value, the
hypothesis of 1. and 2. constraining it; M_r of a part is a ``Merged`` part.

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.rule_rank
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import bpeproof.spec.variants

# The contracts below name these in their conditions: CrossHair evaluates a condition in this module's namespace.
from bpeproof.proofs_tests.proofs.induction_machinery import NotCovered
from bpeproof.proofs_tests.proofs.loop_machinery import (
    after_loop,
    body_of,
    loop_body,
    written_as,  # noqa: F401 (named by a condition)
)
from bpeproof.spec.bpe import enc_tokens
from bpeproof.spec.types import Rule
from bpeproof.spec.variants import merge_by_rule_rank

#: F(t, t'), the scan of the rules for the first that joins a pair.
first_rule_of_pair = bpeproof.spec.variants._first_rule_of_pair

# ---------------------------------------------------------------------------
# The code, as the proof needs it written
# ---------------------------------------------------------------------------

#: F(a, b): the rules in order, the first that joins (a, b); None after the last.
FIRST_RULE = """
for index, rule in enumerate(rules):
    if (rule.a, rule.b) == (a, b):
        return index
return None
"""

#: RR(x): the least rank and the first position with it, kept in ``best`` over the positions in order; then x
#: itself, or RR of x with that pair merged.
RULE_RANK = """
best: tuple[int, int] | None = None
for position in range(len(tokens) - 1):
    index = _first_rule_of_pair(rules, tokens[position], tokens[position + 1])
    if index is not None and (best is None or index < best[0]):
        best = (index, position)
if best is None:
    return tokens
index, position = best
return merge_by_rule_rank(rules, tokens[:position] + [rules[index].c] + tokens[position + 2 :])
"""

#: One iteration of each loop, and the statements after the scan of the positions, compiled from the code itself:
#: the quoted text above is what the code must be for the loops to be folds (``written_as``), and the steps run the
#: code, so that a change inside a step is refuted there too.
FIRST_RULE_STEP = loop_body(body_of(first_rule_of_pair), ("a", "b"))
RANK_SCAN_STEP = loop_body(body_of(merge_by_rule_rank), ("best", "tokens", "rules", "_first_rule_of_pair"))
RULE_RANK_TAIL = after_loop(body_of(merge_by_rule_rank), ("best", "tokens", "rules", "merge_by_rule_rank"))
ENC_STEP = loop_body(body_of(enc_tokens), ("tokens", "merge"))


def lemma_first_rule_is_quoted() -> None:
    """``_first_rule_of_pair`` is the scan quoted in ``FIRST_RULE``.

    post[]: written_as(first_rule_of_pair, FIRST_RULE)
    """


def lemma_rule_rank_is_quoted() -> None:
    """``merge_by_rule_rank`` is written as quoted in ``RULE_RANK``: its loop carries only ``best``.

    post[]: written_as(merge_by_rule_rank, RULE_RANK)
    """


# ---------------------------------------------------------------------------
# 1. F(t, t'): the least index of a rule joining (t, t')
# ---------------------------------------------------------------------------


def first_rule_step(k: int, ra: int, rb: int, rc: int, a: int, b: int) -> object:
    """One iteration of the scan at index k, on the rule (ra, rb ↦ rc): k when it returns there, "on" otherwise."""
    got = FIRST_RULE_STEP(index=k, rule=Rule(ra, rb, rc), a=a, b=b)
    return "on" if isinstance(got, dict) else got


def lemma_first_rule_base(a: int, b: int) -> None:
    """Over no rule, no rule joins (a, b).

    post[]: first_rule_of_pair([], a, b) is None
    """


def lemma_first_rule_step(k: int, ra: int, rb: int, rc: int, a: int, b: int) -> None:
    """The scan of the rules before k went on (none joins (a, b)): at index k, any k, it returns k exactly when
    r_k joins (a, b).

    pre: k >= 0
    post[]: first_rule_step(k, ra, rb, rc, a, b) == (k if (ra, rb) == (a, b) else "on")
    """


# ---------------------------------------------------------------------------
# 2. The scan of the positions: the least (rank, position)
# ---------------------------------------------------------------------------


class Opaque:
    """A value the step only passes on (the rule list, to F): comparing it or looking into it is not covered."""

    def __eq__(self, other: object) -> bool:
        raise NotCovered("an opaque value compared")

    __hash__ = None  # type: ignore[assignment]


class Around:
    """A token list of ``length`` items of which only those at ``position`` and ``position + 1`` can be read."""

    def __init__(self, length: int, position: int, pair: tuple[int, int]) -> None:
        self.length = length
        self.position = position
        self.pair = pair

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> int:
        if not isinstance(index, int):
            raise NotCovered("a slice of the list being scanned")
        if index == self.position:
            return self.pair[0]
        if index == self.position + 1:
            return self.pair[1]
        raise NotCovered("an item away from the pair being scanned")


def scan_step(length: int, position: int, t1: int, t2: int, rank: int, has_best: bool, i: int, q: int,
              step: Callable[..., dict[str, object]] = RANK_SCAN_STEP) -> object:
    """``best`` after one iteration (``step``) at ``position`` of the list (of ``length`` items, (t1, t2) at
    ``position``), from ``best`` = (i, q) (or None) and F(t1, t2) = ``rank`` (None when negative); and whether F was
    asked about (t1, t2), once, and nothing else."""
    rules = Opaque()
    asked: list[tuple[int, int]] = []

    def first_rule(given: object, x: int, y: int) -> int | None:
        if given is not rules:
            raise NotCovered("F over another rule list")
        asked.append((x, y))
        return None if rank < 0 else rank

    after = step(position=position, best=(i, q) if has_best else None, tokens=Around(length, position, (t1, t2)),
                 rules=rules, _first_rule_of_pair=first_rule)
    return (len(asked) == 1 and asked[0] == (t1, t2)), after["best"]


def least_ranked(has_best: bool, i: int, q: int, position: int, rank: int) -> tuple[int, int] | None:
    """The least (rank, position) of the ranked positions up to ``position``: (i, q) the least of those before it
    (the hypothesis; None if none), and (rank, position) if F ranks that position."""
    ranked = ([(i, q)] if has_best else []) + ([(rank, position)] if rank >= 0 else [])
    return min(ranked) if ranked else None


def keeps_least_ranked(length: int, position: int, t1: int, t2: int, rank: int, has_best: bool, i: int, q: int,
                       step: Callable[..., dict[str, object]] = RANK_SCAN_STEP) -> bool:
    """F was asked about the pair at ``position`` only, and ``best`` is the least (rank, position) up to it."""
    got = scan_step(length, position, t1, t2, rank, has_best, i, q, step)
    return got == (True, least_ranked(has_best, i, q, position, rank))


def lemma_rank_scan_step(length: int, position: int, t1: int, t2: int, rank: int, has_best: bool, i: int,
                         q: int) -> None:
    """One iteration at ``position`` keeps "``best`` is the least (rank, position) of the ranked positions
    scanned", the list of ANY length (the loop runs while position + 1 < |x|).

    pre: 0 <= position and position + 1 < length
    pre: not has_best or (0 <= q < position and i >= 0)
    post[]: keeps_least_ranked(length, position, t1, t2, rank, has_best, i, q)
    """


# ---------------------------------------------------------------------------
# 3. The end of a call: x, or the recursive call on p · c_i · v
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """A part of a token list that no step reads: its name and its length."""

    name: str
    length: int


@dataclass(frozen=True)
class Merged:
    """M_r of a part: a list of unknown length, the same for the same rule and part."""

    rule: Rule
    part: Piece


Part = Piece | Merged | tuple[int, ...]


class Chain:
    """A token list made of ``parts`` in order: pieces, M_r of pieces, runs of known items.  Two chains with the
    same parts are the same list (the converse is not needed: equal parts are what the steps must show)."""

    def __init__(self, parts: tuple[Part, ...]) -> None:
        self.parts = parts

    def __len__(self) -> int:
        total = 0
        for part in self.parts:
            if isinstance(part, Merged):
                raise NotCovered("the length of M_r of a part")
            total += part.length if isinstance(part, Piece) else len(part)
        return total

    def __add__(self, other: object) -> Chain:
        if isinstance(other, Chain):
            return Chain(self.parts + other.parts)
        if isinstance(other, list):
            return Chain((*self.parts, tuple(other)))
        raise NotCovered("a chain added to something else")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Chain) and other.parts == self.parts

    __hash__ = None  # type: ignore[assignment]


#: p and v in 4., where no step takes a length.
P = Piece("p", 0)
V = Piece("v", 0)


class Split:
    """x = p · t t' · v, |p| = q and |v| = n: the length, x[:q] and x[q + 2:] can be taken, nothing else."""

    def __init__(self, q: int, n: int) -> None:
        self.before = Piece("p", q)
        self.after = Piece("v", n)

    def __len__(self) -> int:
        return self.before.length + 2 + self.after.length

    def __getitem__(self, index: slice) -> Chain:
        if isinstance(index, slice) and index.step is None:
            if index.start is None and index.stop is not None and index.stop == self.before.length:
                return Chain((self.before,))
            if index.stop is None and index.start is not None and index.start == self.before.length + 2:
                return Chain((self.after,))
        raise NotCovered("an item or a slice of x other than x[:q] and x[q + 2:]")


class OneRule:
    """A rule list of unknown length of which only the rule at ``index`` can be read."""

    def __init__(self, index: int, rule: Rule) -> None:
        self.index = index
        self.rule = rule

    def __getitem__(self, index: int) -> Rule:
        if not isinstance(index, int) or index != self.index:
            raise NotCovered("a rule other than the one the scan ranked first")
        return self.rule


#: RR of the shorter list, as the hypothesis gives it.
HYPOTHESIS = Piece("enc_R(x')", 0)


def tail_outcome(q: int, n: int, has_best: bool, i: int, ai: int, bi: int, ci: int) -> tuple[object, ...]:
    """What the end of a call on x = p · t t' · v (|p| = q, |v| = n) does after the scan left best = (i, q) (or
    None): ("x",) when it returns x itself; ("recursion", the list, shorter than x) when it returns the value
    of its one recursive call, answered by the hypothesis; ("other",) otherwise."""
    tokens = Split(q, n)
    rules = OneRule(i, Rule(ai, bi, ci))
    calls: list[tuple[object, object]] = []

    def recursion(given: object, shorter: object) -> object:
        calls.append((given, shorter))
        return HYPOTHESIS

    got = RULE_RANK_TAIL(best=(i, q) if has_best else None, tokens=tokens, rules=rules,
                         merge_by_rule_rank=recursion)
    if got is tokens and not calls:
        return ("x",)
    if got is HYPOTHESIS and len(calls) == 1 and calls[0][0] is rules and isinstance(calls[0][1], Chain):
        shorter = calls[0][1]
        return ("recursion", shorter.parts, len(shorter) < len(tokens))
    return ("other",)


def tail_expected(q: int, n: int, has_best: bool, ci: int) -> tuple[object, ...]:
    """x when no position is ranked; else one recursive call, on p · c_i · v, shorter than x."""
    if not has_best:
        return ("x",)
    return ("recursion", (Piece("p", q), (ci,), Piece("v", n)), True)


def lemma_rule_rank_tail(q: int, n: int, has_best: bool, i: int, ai: int, bi: int, ci: int) -> None:
    """The end of a call, p and v of ANY length: x itself with no ranked pair, else RR(p · c_i · v) (the
    hypothesis: p · c_i · v is shorter).  r_i = (a_i, b_i ↦ c_i) is the rule F ranked first.

    pre: q >= 0 and n >= 0 and i >= 0
    post[]: tail_outcome(q, n, has_best, i, ai, bi, ci) == tail_expected(q, n, has_best, ci)
    """


# ---------------------------------------------------------------------------
# 4. enc_R(x) = enc_R(x'): one iteration of enc_R's loop on both lists
# ---------------------------------------------------------------------------

#: x = p · a_i b_i · v, x' = p · c_i · v, and x_0, a list none of whose pairs is ranked.
X0 = Chain((Piece("x_0", 0),))


def x_list(ai: int, bi: int) -> Chain:
    return Chain((P, (ai, bi), V))


def x_merged(ci: int) -> Chain:
    return Chain((P, (ci,), V))


MergeCall = Callable[[Rule, Chain], Chain]


def proved_merge(i: int, ai: int, bi: int, ci: int, rank: int) -> MergeCall:
    """M_r on x, x' and x_0, answered by the lemmas of ``merge_direction`` (proved for every length), for a rule
    r = (a, b ↦ c) whose pair F ranks ``rank``; any call they do not answer is not covered.

    What 2. says of the pairs of x, with best = (i, q): those of p · a_i (positions before q) have a rank above i
    or none, (a_i, b_i) at q has rank i, those of b_i · v (after q) have a rank of at least i or none.  So (a, b),
    whose rank is ``rank``, may be a pair of p · a_i only if rank > i, of b_i · v only if rank ≥ i.  The pairs of
    x' are those of p and of v, and two with c_i in them.  No pair of x_0 is ranked.
    """

    def merge(rule: Rule, tokens: Chain) -> Chain:
        pair = (rule.a, rule.b)
        if tokens == X0:
            if rank < 0:
                raise NotCovered("a rule's pair that F does not rank")
            return tokens  # a ranked pair is no pair of x_0: no occurrence, M_r x_0 = x_0
        if tokens == x_list(ai, bi):
            in_before, at_q, in_after = rank > i, pair == (ai, bi), rank >= i
            if not (in_before or at_q or in_after):
                return tokens  # no occurrence
            if at_q and not in_before:
                return Chain((P, (rule.c,), Merged(rule, V)))  # the first occurrence is at q
            raise NotCovered("(a, b) may occur in x before q")
        if tokens == x_merged(ci):
            in_p, with_c, in_v = rank > i, ci in pair, rank >= i
            if not (in_p or with_c or in_v):
                return tokens  # no occurrence
            if not in_p and not with_c:
                # No occurrence in p · c_i, nor at (c_i, v_1): M_r(p · c_i · v) = p · c_i · M_r(v).
                return Chain((P, (ci,), Merged(rule, V)))
            raise NotCovered("(a, b) may occur in p or next to c_i")
        raise NotCovered("M_r of another list")

    return merge


def enc_iteration(rule: Rule, tokens: Chain, merge: MergeCall) -> object:
    """The tokens after one iteration of enc_R's loop (its quoted body) on ``rule``."""
    return ENC_STEP(rule=rule, tokens=tokens, merge=merge)["tokens"]


def before_the_rank(j: int, i: int, a: int, b: int, c: int, rank: int, ai: int, bi: int, ci: int) -> bool:
    """r_j = (a, b ↦ c), j < i, leaves x and x' as they are."""
    merge = proved_merge(i, ai, bi, ci, rank)
    rule = Rule(a, b, c)
    return enc_iteration(rule, x_list(ai, bi), merge) == x_list(ai, bi) and \
        enc_iteration(rule, x_merged(ci), merge) == x_merged(ci)


def at_the_rank(i: int, ai: int, bi: int, ci: int) -> bool:
    """r_i turns x and x' into the same list."""
    merge = proved_merge(i, ai, bi, ci, i)
    rule = Rule(ai, bi, ci)
    return enc_iteration(rule, x_list(ai, bi), merge) == enc_iteration(rule, x_merged(ci), merge)


def after_the_rank(a: int, b: int, c: int) -> bool:
    """On a list, whatever it is, the iteration gives M_r of it for its rule: equal lists stay equal."""
    state = Chain((Piece("x_j", 0),))
    rule = Rule(a, b, c)
    return enc_iteration(rule, state, lambda given, tokens: Chain((Merged(given, cast(Piece, tokens.parts[0])),))) \
        == Chain((Merged(rule, cast(Piece, state.parts[0])),))


def lemma_enc_before_the_rank(j: int, i: int, a: int, b: int, c: int, rank: int, ai: int, bi: int, ci: int) -> None:
    """r_j, j < i of ANY size, leaves x and x': F(a_j, b_j) ≤ j (1.), F(a_i, b_i) = i, and c_i ∉ V_j ∋ a_j, b_j.

    pre: 0 <= rank <= j < i
    pre: (a, b) != (ai, bi) or rank == i
    pre: ci != a and ci != b
    post[]: before_the_rank(j, i, a, b, c, rank, ai, bi, ci)
    """


def lemma_enc_at_the_rank(i: int, ai: int, bi: int, ci: int) -> None:
    """r_i, i of ANY size, turns x and x' into the same list: F(a_i, b_i) = i and c_i ∉ {a_i, b_i} (def-merge).

    pre: i >= 0
    pre: ci != ai and ci != bi
    post[]: at_the_rank(i, ai, bi, ci)
    """


def lemma_enc_after_the_rank(a: int, b: int, c: int) -> None:
    """r_j, j > i: the iteration reads the rule and the tokens only.

    post[]: after_the_rank(a, b, c)
    """


def lemma_enc_without_ranked_pair(j: int, a: int, b: int, c: int, rank: int) -> None:
    """r_j leaves x_0, none of whose pairs is ranked: F(a_j, b_j) ≤ j is an index, so (a_j, b_j) is no pair of x_0.

    pre: 0 <= rank <= j
    post[]: enc_iteration(Rule(a, b, c), X0, proved_merge(0, 0, 0, 0, rank)) == X0
    """
