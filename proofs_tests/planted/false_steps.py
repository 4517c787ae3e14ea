"""False claims run through the induction of ``proofs_tests.proofs.induction`` (its cases, and the machinery of
``proofs_tests.proofs.induction_machinery``), so that its gate can show each is refuted at its step.

Each planted claim is checked at every case of the induction with the same machinery, hypothesis and budget as
the true ones.  A function named ``planted_*`` is the case where the claim breaks: CrossHair must refute it with a
counterexample.  A function named ``passes_*`` is another case of the same false claim, where its step does go
through: CrossHair must confirm it.  Together they show that a refutation points at the step that fails, not
merely at the claim.  ``proofs_tests/tests/proofs/test_crosshair_induction.py`` checks each planted claim on a real
list as well.
"""

from __future__ import annotations

from bpeproof.proofs_tests.proofs.induction import (
    Corpus,
    base_empty,
    base_single,
    corpus_holds,
    corpus_step,
    step_match,
    step_skip,
    word_facts,
)
from bpeproof.proofs_tests.proofs.induction_machinery import (
    Facts,
    Recursion,
    Segment,
    as_list,
    keeps_bytes,
    lemma_holds,
    merge_call,
    spelling,
    tail,
    unfold,
)
from bpeproof.spec.merge import MergeCall
from bpeproof.spec.types import Rule


def rep_equals_cnt(rule: Rule, f: Facts) -> bool:
    """lem-merge-step (4) without its premise a ≠ b: rep_r(y) = cnt_y(a, b).  False on (a, a, a): 1 ≠ 2."""
    return f.rep == f.cnt


def shortens_by_cnt(rule: Rule, f: Facts) -> bool:
    """A wrong length claim: |M_r y| = |y| − cnt_y(a, b).  False on (a, a, a): 2 ≠ 1."""
    return len(f.merged) == f.length - f.cnt


def always_shortens(rule: Rule, f: Facts) -> bool:
    """A wrong length claim: every merge shortens a non-empty list, |y| ≥ 1 ⇒ |M_r y| ≤ |y| − 1.  False on (t1)."""
    return f.length == 0 or len(f.merged) <= f.length - 1


def planted_rep_equals_cnt_at_match(
    a: int, b: int, c: int, u: list[int], mu: list[int], ru: int, cu: int, du: int, dmu: int, sa: int, sb: int
) -> None:
    """rep = cnt without a ≠ b, case (t1, t2) = (a, b): refuted for a = b and u starting with a.

    pre: a != c and b != c
    pre: lemma_holds(Rule(a, b, c), tail(len(u), mu, ru, cu, du, dmu))
    pre: rep_equals_cnt(Rule(a, b, c), tail(len(u), mu, ru, cu, du, dmu))
    post[]: rep_equals_cnt(Rule(a, b, c), step_match(a, b, c, u, mu, ru, cu, du, dmu, sa, sb))
    """


def passes_rep_equals_cnt_at_skip(
    a: int, b: int, c: int, t1: int, t2: int, u: list[int],
    my: list[int], ry: int, cy: int, dy: int, dmy: int, sa: int, sb: int, s1: int,
) -> None:
    """rep = cnt without a ≠ b, case (t1, t2) ≠ (a, b): this step holds (rep and cnt both pass to t2 u).

    pre: a != c and b != c
    pre: (t1, t2) != (a, b)
    pre: lemma_holds(Rule(a, b, c), tail(1 + len(u), my, ry, cy, dy, dmy))
    pre: rep_equals_cnt(Rule(a, b, c), tail(1 + len(u), my, ry, cy, dy, dmy))
    post[]: rep_equals_cnt(Rule(a, b, c), step_skip(a, b, c, t1, t2, u, my, ry, cy, dy, dmy, sa, sb, s1))
    """


def passes_rep_equals_cnt_at_base(a: int, b: int, c: int, t1: int, sa: int, sb: int, s1: int) -> None:
    """rep = cnt without a ≠ b on ε and (t1): both are 0.

    pre: a != c and b != c
    post[]: rep_equals_cnt(Rule(a, b, c), base_empty(a, b, c, sa, sb))
    post: rep_equals_cnt(Rule(a, b, c), base_single(a, b, c, t1, sa, sb, s1))
    """


def planted_shortens_by_cnt_at_match(
    a: int, b: int, c: int, u: list[int], mu: list[int], ru: int, cu: int, du: int, dmu: int, sa: int, sb: int
) -> None:
    """|M_r x| = |x| − cnt, case (t1, t2) = (a, b): refuted for a = b and u starting with a.

    pre: a != c and b != c
    pre: lemma_holds(Rule(a, b, c), tail(len(u), mu, ru, cu, du, dmu))
    pre: shortens_by_cnt(Rule(a, b, c), tail(len(u), mu, ru, cu, du, dmu))
    post[]: shortens_by_cnt(Rule(a, b, c), step_match(a, b, c, u, mu, ru, cu, du, dmu, sa, sb))
    """


def passes_shortens_by_cnt_at_skip(
    a: int, b: int, c: int, t1: int, t2: int, u: list[int],
    my: list[int], ry: int, cy: int, dy: int, dmy: int, sa: int, sb: int, s1: int,
) -> None:
    """|M_r x| = |x| − cnt, case (t1, t2) ≠ (a, b): this step holds.

    pre: a != c and b != c
    pre: (t1, t2) != (a, b)
    pre: lemma_holds(Rule(a, b, c), tail(1 + len(u), my, ry, cy, dy, dmy))
    pre: shortens_by_cnt(Rule(a, b, c), tail(1 + len(u), my, ry, cy, dy, dmy))
    post[]: shortens_by_cnt(Rule(a, b, c), step_skip(a, b, c, t1, t2, u, my, ry, cy, dy, dmy, sa, sb, s1))
    """


def planted_always_shortens_at_base(a: int, b: int, c: int, t1: int, sa: int, sb: int, s1: int) -> None:
    """|x| ≥ 1 ⇒ |M_r x| ≤ |x| − 1 on (t1): refuted, M_r (t1) = (t1).

    pre: a != c and b != c
    post[]: always_shortens(Rule(a, b, c), base_single(a, b, c, t1, sa, sb, s1))
    """


def passes_always_shortens_at_match(
    a: int, b: int, c: int, u: list[int], mu: list[int], ru: int, cu: int, du: int, dmu: int, sa: int, sb: int
) -> None:
    """|x| ≥ 1 ⇒ |M_r x| ≤ |x| − 1, case (t1, t2) = (a, b): this step holds (the first two tokens become one).

    pre: a != c and b != c
    pre: lemma_holds(Rule(a, b, c), tail(len(u), mu, ru, cu, du, dmu))
    pre: always_shortens(Rule(a, b, c), tail(len(u), mu, ru, cu, du, dmu))
    post[]: always_shortens(Rule(a, b, c), step_match(a, b, c, u, mu, ru, cu, du, dmu, sa, sb))
    """


def passes_always_shortens_at_skip(
    a: int, b: int, c: int, t1: int, t2: int, u: list[int],
    my: list[int], ry: int, cy: int, dy: int, dmy: int, sa: int, sb: int, s1: int,
) -> None:
    """|x| ≥ 1 ⇒ |M_r x| ≤ |x| − 1, case (t1, t2) ≠ (a, b): this step holds given the claim on t2 u.

    pre: a != c and b != c
    pre: (t1, t2) != (a, b)
    pre: lemma_holds(Rule(a, b, c), tail(1 + len(u), my, ry, cy, dy, dmy))
    pre: always_shortens(Rule(a, b, c), tail(1 + len(u), my, ry, cy, dy, dmy))
    post[]: always_shortens(Rule(a, b, c), step_skip(a, b, c, t1, t2, u, my, ry, cy, dy, dmy, sa, sb, s1))
    """


def swapped_step_match(
    a: int, b: int, c: int, u: list[int], mu: list[int], ru: int, cu: int, du: int, dmu: int, sa: int, sb: int
) -> Facts:
    """The quantities of a b u over a vocabulary where ⟨⟨c⟩⟩ = ⟨⟨b⟩⟩⟨⟨a⟩⟩ instead of def-merge's ⟨⟨a⟩⟩⟨⟨b⟩⟩."""
    rule = Rule(a, b, c)
    right = spelling(rule, [(a, sa), (b, sb)])

    def spell(token: int) -> tuple[int, ...]:
        return right(b) + right(a) if token == c else right(token)

    x, y = as_list(Segment([a, b], u)), as_list(Segment([], u))
    return unfold(rule, x, spell, [(y, tail(len(u), as_list(Segment([], mu)), ru, cu, du, dmu))])


def planted_swapped_spelling_at_match(
    a: int, b: int, c: int, u: list[int], mu: list[int], ru: int, cu: int, du: int, dmu: int, sa: int, sb: int
) -> None:
    """lem-merge-step (1) over a vocabulary with ⟨⟨c⟩⟩ = ⟨⟨b⟩⟩⟨⟨a⟩⟩: refuted wherever ⟨⟨a⟩⟩ ≠ ⟨⟨b⟩⟩.

    pre: a != c and b != c
    pre: lemma_holds(Rule(a, b, c), tail(len(u), mu, ru, cu, du, dmu))
    post[]: keeps_bytes(Rule(a, b, c), swapped_step_match(a, b, c, u, mu, ru, cu, du, dmu, sa, sb))
    """


def drops_by_two(w: Corpus) -> bool:
    """A wrong N − K bound: N(a, b) ≥ 1 ⇒ v' ≤ v − 2."""
    return w.cnt < 1 or w.merged_total <= w.total - 2


def planted_variant_drops_by_two(
    a: int, b: int, c: int, n: int, m: list[int], r: int, k: int, w: int, t: int, mt: int, rr: int, rk: int, ne: bool
) -> None:
    """A wrong N − K bound: a merge whose pair occurs lowers the variant by 2.  Refuted by one occurrence in one word.

    pre: n >= 0 and w >= 0
    pre: lemma_holds(Rule(a, b, c), word_facts(n, m, r, k))
    pre: corpus_holds(Corpus(w, t, mt, rr, rk, ne))
    pre: drops_by_two(Corpus(w, t, mt, rr, rk, ne))
    post[]: drops_by_two(corpus_step(a, b, c, n, m, r, k, w, t, mt, rr, rk, ne))
    """


def circular_merge(rule: Rule, tokens: list[int], rec: MergeCall) -> list[int]:
    """Not a definition: M(t1 t2 u) = M(t2 t1 u), a recursive call on a list just as long."""
    return rec(rule, [tokens[1], tokens[0]] + tokens[2:], None)


def circular_step(a: int, b: int, c: int, t1: int, t2: int, u: list[int]) -> list[int]:
    """``circular_merge`` on t1 t2 u, its recursive call answered from a "hypothesis" on t2 t1 u."""
    rule = Rule(a, b, c)
    x, y = as_list(Segment([t1, t2], u)), as_list(Segment([t2, t1], u))
    return circular_merge(rule, x, merge_call(rule, Recursion(len(x), [(y, y)])))


def planted_circular_recursion(a: int, b: int, c: int, t1: int, t2: int, u: list[int]) -> None:
    """An induction over a recursion that does not shorten its list is circular: refuted (IllFounded).

    Answering the recursive call from a hypothesis on a list as long as x would "prove" |M x| ≤ |x| here; the
    ``Recursion`` refuses every call on a list that is not shorter.

    post[]: len(circular_step(a, b, c, t1, t2, u)) <= 2 + len(u)
    """
