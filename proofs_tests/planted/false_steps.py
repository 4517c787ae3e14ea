"""False claims run through the inductions of ``proofs_tests.proofs`` (the cases of ``induction``, ``rule_lists`` and
``token_lists``, on the machinery of ``induction_machinery`` and ``loop_machinery``), so that their gate can show
each is refuted at its step.

Each planted claim is checked at every case of the induction with the same machinery, hypothesis and budget as
the true ones.  A function named ``planted_*`` is the case where the claim breaks: CrossHair must refute it with a
counterexample.  A function named ``passes_*`` is another case of the same false claim, where its step does go
through: CrossHair must confirm it.  Together they show that a refutation points at the step that fails, not
merely at the claim.  ``proofs_tests/tests/proofs/test_crosshair_induction.py`` checks each planted claim on a real
list as well.
"""

from __future__ import annotations

from bpeproof.proofs_tests.proofs.engine_merge_loop import (
    MERGE_SHORT,
    NONE,
    base_returns_units,
    lowest,
    match_step,
    match_step_holds,
)
from bpeproof.proofs_tests.proofs.engine_merge_loop import NAMES as FLAT_LOOP_NAMES
from bpeproof.proofs_tests.proofs.engine_merge_step import (
    MERGE_LIST,
    NAMES,
    last_token,
    step_holds,
    step_sides,
    while_parts,
)
from bpeproof.proofs_tests.proofs.engine_rule_rank import joins_the_least, leaves_the_state_of_x_merged
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
    Word,
    as_list,
    keeps_bytes,
    lemma_holds,
    merge_call,
    spelling,
    tail,
    unfold,
)
from bpeproof.proofs_tests.proofs.loop_machinery import Frontier, body_of, loop_body, scan_outcome
from bpeproof.proofs_tests.proofs.merge_direction import first_at_start, first_later
from bpeproof.proofs_tests.proofs.pair_counts import cnt_of
from bpeproof.proofs_tests.proofs.rule_lists import distinct_after, spelled_over_next
from bpeproof.proofs_tests.proofs.rule_rank import keeps_least_ranked
from bpeproof.proofs_tests.proofs.token_lists import (
    RunFacts,
    concatenation_base,
    concatenation_step,
    run_base,
    run_claim,
    run_step,
)
from bpeproof.proofs_tests.proofs.training import counted_at_start, counted_later, first_maximum_after
from bpeproof.proofs_tests.proofs.training_cost import merge_cost
from bpeproof.spec.bpe import enc_tokens
from bpeproof.spec.merge import MergeCall, cnt_tokens
from bpeproof.spec.types import ALPHABET_SIZE, Rule
from bpeproof.spec.variants import merge_by_rule_rank


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


# ---------------------------------------------------------------------------
# Over the rule list (proofs_tests.proofs.rule_lists)
# ---------------------------------------------------------------------------


def planted_spelling_kept_by_its_own_rule(k: int, a: int, b: int, c: int, t: int, w: int) -> None:
    """S_{k+1}(t) = S_k(t) for every token t, c_{k+1} included (no fresh new id): refuted for t = c, which r_{k+1}
    spells as its two parts.

    pre: k >= 1
    post[]: spelled_over_next(k, a, b, c, t, w) == ("spelled", (w,))
    """


def passes_spelling_kept_by_its_own_rule_at_first_rule(a: int, b: int, c: int, t: int) -> None:
    """The same claim at the first rule, for bytes: it holds, since c_1 ∉ Σ.

    pre: c >= ALPHABET_SIZE
    pre: 0 <= t < ALPHABET_SIZE
    post[]: scan_outcome(Frontier(0, Rule(a, b, c)), t, 1) == scan_outcome(Frontier(0, Rule(a, b, c)), t, 0)
    """


def planted_every_rule_shortens(
    a: int, b: int, c: int, length: int, merged: list[int], rep: int, cnt: int, d: int, dm: int, n: int, j: int
) -> None:
    """|enc_R s| ≤ |s| − |R| (every rule shortens), as the loop invariant |x_j| ≤ |s| − j: refuted at the step by a
    rule whose pair does not occur (rep = 0).

    pre: a != c and b != c
    pre: lemma_holds(Rule(a, b, c), tail(length, merged, rep, cnt, d, dm))
    pre: j >= 0 and length <= n - j
    post[]: len(merged) <= n - (j + 1)
    """


def passes_every_rule_shortens_at_base(u: list[int]) -> None:
    """The same invariant before the loop (j = 0): the loop over no rule leaves |x_0| = |s|.

    post[]: len(enc_tokens([], as_list(Segment([], u)))) <= len(u) - 0
    """


def planted_vocabulary_without_fresh_ids(a: int, b: int, c: int, m: int, size: int, fresh: bool) -> None:
    """|V_m| = 256 + m for rule lists whose new ids may already be in the vocabulary: refuted at the step (c ∈ V_R).

    pre: m >= 0 and size == ALPHABET_SIZE + m
    post[]: distinct_after(size, fresh) == ALPHABET_SIZE + (m + 1)
    """


# ---------------------------------------------------------------------------
# On token lists (proofs_tests.proofs.token_lists)
# ---------------------------------------------------------------------------


def reversed_sides(sides: tuple[Word, Word], dy: int, dx_word: Word) -> bool:
    """dec(x · y) = dec(y) · dec(x), given dec(x · y), dec(y) = (dy,) and dec(x)."""
    return sides[0] == (dy,) + dx_word


def reversed_step(t: int, xs: list[int], rest: list[int], st: int, dx: int, dy: int) -> bool:
    """dec(x · y) = dec(y) · dec(x) at the step x = t · x', the hypothesis being the same reversed claim on x'."""
    dec_xy, _ = concatenation_step(t, xs, rest, st, dy, dx)  # dec(x' · y) answered by the reversed (dy, dx)
    return dec_xy == (dy, st, dx)


def planted_concatenation_reversed(t: int, xs: list[int], rest: list[int], st: int, dx: int, dy: int) -> None:
    """dec(x · y) = dec(y) · dec(x): refuted at the step (x = t · x' puts ⟨⟨t⟩⟩ first).

    pre: st != dy
    post[]: reversed_step(t, xs, rest, st, dx, dy)
    """


def passes_concatenation_reversed_at_base(y: list[int], dy: int) -> None:
    """dec(ε · y) = dec(y) · dec(ε): holds.

    post[]: reversed_sides(concatenation_base(y, dy), dy, ())
    """


def rep_rounds_up(f: RunFacts) -> bool:
    """A wrong run length: rep_r(a^ℓ) = ⌈ℓ/2⌉."""
    return f.rep == (f.length + 1) // 2


def rounded_up(a: int, c: int, length: int) -> RunFacts:
    """The hypothesis of the wrong claim on a^ℓ: R(ℓ) with rep_r(a^ℓ) = ⌈ℓ/2⌉."""
    true = run_claim(a, c, length)
    return RunFacts(true.length, true.merged, (length + 1) // 2, true.cnt)


def planted_run_rep_rounds_up_at_base(a: int, c: int, length: int) -> None:
    """rep_r(a^ℓ) = ⌈ℓ/2⌉ on a^0 and a^1: refuted on (a), where M_r finds no pair.

    pre: a != c
    pre: 0 <= length <= 1
    post[]: rep_rounds_up(run_base(a, c, length))
    """


def passes_run_rep_rounds_up_at_step(a: int, c: int, length: int) -> None:
    """rep_r(a^ℓ) = ⌈ℓ/2⌉ ⇒ rep_r(a^(ℓ+2)) = ⌈(ℓ+2)/2⌉: this step holds (one more pair, one more replacement).

    pre: a != c
    pre: length >= 0
    post[]: rep_rounds_up(run_step(a, c, length, rounded_up(a, c, length)))
    """


# ---------------------------------------------------------------------------
# Training (proofs_tests.proofs.training)
# ---------------------------------------------------------------------------


def planted_listed_pair_counted_twice_at_start(p0: int, p1: int, u: list[int], cu: int) -> None:
    """A pair at a position of a word is counted at least twice: refuted at i = 0 (x = p0 p1 u, the pair nowhere in
    p1 u).

    pre: cu >= 0
    post[]: counted_at_start(p0, p1, u, cu) >= 2
    """


def passes_listed_pair_counted_twice_later(t: int, ys: list[int], i: int, cy: int) -> None:
    """The same claim at the step i ⇒ i + 1: it holds, given the claim on y.

    pre: 0 <= i and i + 1 < len(ys)
    pre: cy >= 2
    post[]: counted_later(t, ys, i, cy) >= 2
    """


def planted_merge_cost_one_less_at_match(a: int, b: int, c: int, u: list[int], su: int) -> None:
    """M_r on x evaluates at most max(|x| − 1, 1) cases: refuted at the match step (x = a b: two cases).

    pre: 0 <= su <= max(len(u) - 1, 1)
    post[]: merge_cost(Rule(a, b, c), as_list(Segment([a, b], u)), as_list(Segment([], u)), su) <= 1 + len(u)
    """


# ---------------------------------------------------------------------------
# The direction of M_r, step 2's counts, steps 3–5 (merge_direction, pair_counts, selection)
# ---------------------------------------------------------------------------


def planted_leftmost_after_any_prefix_at_step(a: int, b: int, c: int, t: int, y1: int, ys: list[int],
                                              my: list[int]) -> None:
    """M_r(p a b v) = p c M_r(v) for every prefix p, the occurrence after p not required to be the first: refuted
    at the step p = t·p' when (t, y1) = (a, b), an occurrence inside p · a (as in a a a with r = (a, a ↦ c), whose
    occurrence at 0 overlaps the one at 1 and comes first).

    pre: a != c and b != c
    post[]: first_later(a, b, c, t, y1, ys, my)
    """


def passes_leftmost_after_any_prefix_at_start(a: int, b: int, c: int, v: list[int], mv: list[int]) -> None:
    """The same claim at p = ε: it holds.

    pre: a != c and b != c
    post[]: first_at_start(a, b, c, v, mv)
    """


def counted_at_most_once(t: int, y1: int, ys: list[int], qa: int, qb: int, cy: int) -> bool:
    """cnt_x(q) ≤ 1 for x = t y1 ys, by one unfolding (a pair counted once per word, as if N_j counted words)."""
    counted = cnt_of(t, y1, ys, qa, qb, cy)
    return counted is not None and counted <= 1


def planted_pair_counted_once_per_word_at_step(t: int, y1: int, ys: list[int], qa: int, qb: int, cy: int) -> None:
    """A word counts a pair at most once: refuted at the step x = t·y, (t, y1) = q counted in y once already.

    pre: 0 <= cy <= 1
    post[]: counted_at_most_once(t, y1, ys, qa, qb, cy)
    """


def passes_pair_counted_once_per_word_at_bases(t: int, qa: int, qb: int) -> None:
    """The same claim on words of at most one token: it holds.

    post[]: cnt_tokens([], qa, qb) <= 1 and cnt_tokens([t], qa, qb) <= 1
    """


def largest_maximum(pa: int, pb: int, count: int, best: int, fa: int, fb: int, has_first: bool) -> bool:
    """Ties to the largest pair: the first item of ``maxima`` is the largest pair read with the count ``best``."""
    first = (fa, fb) if has_first else None
    read = ([first] if first is not None else []) + ([(pa, pb)] if count == best else [])
    return first_maximum_after(pa, pb, count, best, first) == (max(read) if read else None)


def planted_ties_to_largest_at_step(pa: int, pb: int, count: int, best: int, fa: int, fb: int,
                                    has_first: bool) -> None:
    """Step 4 breaks ties to the largest pair: refuted at an entry with the count ``best`` read after another.

    pre: count >= 1
    pre: not has_first or (fa, fb) < (pa, pb)
    post[]: largest_maximum(pa, pb, count, best, fa, fb, has_first)
    """


def passes_ties_to_largest_at_first_maximum(pa: int, pb: int, count: int, best: int) -> None:
    """The same claim while no pair with the count ``best`` has been read: it holds.

    pre: count >= 1
    post[]: largest_maximum(pa, pb, count, best, 0, 0, False)
    """


# ---------------------------------------------------------------------------
# The engine's merge step and flat-list loop (proofs_tests.proofs.engine_merge_step, engine_merge_loop)
# ---------------------------------------------------------------------------

#: ``merge_list`` going on at the second token of the pair it joined (the mutant ``impl-apply-rule-skip``).
OVERLAPPING_MERGE_LIST = while_parts(
    MERGE_LIST.replace("        out.append(c)\n        i += 2\n", "        out.append(c)\n        i += 1\n"), NAMES)


def planted_merge_list_overlapping_step(
    a: int, b: int, c: int, i: int, t1: int, t2: int, u: list[int], rest: list[int]
) -> None:
    """``merge_list`` stepping over one token after a join equals M_r: refuted at the step t1 t2 u with (t1, t2) =
    (a, b), where M_r recurses on u and the loop goes on at t2 u.

    pre: i >= 0
    post[]: step_holds(step_sides(a, b, c, i, t1, t2, u, rest, OVERLAPPING_MERGE_LIST))
    """


def passes_merge_list_overlapping_at_last(a: int, b: int, c: int, i: int, t1: int) -> None:
    """The same loop at the step of one token left: it holds (no pair to join).

    pre: i >= 0
    post[]: last_token(a, b, c, i, t1, OVERLAPPING_MERGE_LIST)
    """


#: ``merge_short`` that does not refresh the rank of the pair on the right of a join.
STALE_RIGHT_FLAT_LOOP = while_parts(
    MERGE_SHORT.replace("    if i < len(found):\n        found[i] = rank(units[i], units[i + 1])\n", ""),
    FLAT_LOOP_NAMES, {"_NONE": NONE, "min": lowest})


def planted_flat_loop_stale_right_rank(a: int, b: int, c: int, k: int, p: int, u: list[int]) -> None:
    """The flat-list loop without the right neighbour's refresh leaves the state K(u) needs: refuted at the match
    step for a = b and u starting with a (the rank of (b, a) was 0; that of (c, a) is ``_NONE``).

    pre: a != c and b != c
    pre: k >= 0
    pre: k == 0 or (p, a) != (a, b)
    post[]: match_step_holds(match_step(a, b, c, k, p, u, STALE_RIGHT_FLAT_LOOP))
    """


def passes_flat_loop_stale_right_rank_at_base(a: int, b: int, c: int, k: int, v: list[int]) -> None:
    """The same loop at the base |v| ≤ 1: it holds (the loop leaves before it joins anything).

    pre: a != c and b != c
    pre: k >= 0 and len(v) <= 1
    post[]: base_returns_units(a, b, c, k, v, STALE_RIGHT_FLAT_LOOP)
    """


# ---------------------------------------------------------------------------
# Variant (ii) and the flat loop with a whole rule list (rule_rank, engine_rule_rank)
# ---------------------------------------------------------------------------

#: The scan of positions of variant (ii) keeping the last position of the least rank.
LAST_OF_EQUALS_SCAN = loop_body(body_of(merge_by_rule_rank).replace("index < best[0]", "index <= best[0]"),
                                ("best", "tokens", "rules", "_first_rule_of_pair"))


def planted_rank_scan_last_of_equals(length: int, position: int, t1: int, t2: int, rank: int, has_best: bool,
                                     i: int, q: int) -> None:
    """The scan keeping the last of equal ranks keeps the least (rank, position): refuted at a position whose
    rank equals the least one before it.

    pre: 0 <= position and position + 1 < length
    pre: not has_best or (0 <= q < position and i >= 0)
    post[]: keeps_least_ranked(length, position, t1, t2, rank, has_best, i, q, LAST_OF_EQUALS_SCAN)
    """


def passes_rank_scan_last_of_equals_at_the_first_ranked(length: int, position: int, t1: int, t2: int,
                                                         rank: int) -> None:
    """The same scan before any ranked position: it holds (there is no equal rank to prefer).

    pre: 0 <= position and position + 1 < length
    post[]: keeps_least_ranked(length, position, t1, t2, rank, False, 0, 0, LAST_OF_EQUALS_SCAN)
    """


#: ``merge_short`` that does not refresh the rank of the pair on the left of a join.
STALE_LEFT_FLAT_LOOP = while_parts(
    MERGE_SHORT.replace("    if i > 0:\n        found[i - 1] = rank(units[i - 1], units[i])\n", ""),
    FLAT_LOOP_NAMES, {"_NONE": NONE, "min": lowest})


def stale_left_leaves_x_merged(q: int, n: int, p: int, prev: int, prev_ranked: bool, s: int, nxt: int,
                               next_ranked: bool, i: int, ai: int, bi: int, ci: int) -> bool:
    """One iteration of that loop on x, as ``engine_rule_rank`` runs the loop's own, leaves the state of x'."""
    sides = joins_the_least(q, n, p, prev, prev_ranked, s, nxt, next_ranked, i, ai, bi, ci, STALE_LEFT_FLAT_LOOP)
    return leaves_the_state_of_x_merged(sides)


def planted_flat_loop_stale_left_rank(q: int, n: int, p: int, prev: int, prev_ranked: bool, s: int, nxt: int,
                                      next_ranked: bool, i: int, ai: int, bi: int, ci: int) -> None:
    """The flat-list loop without the left neighbour's refresh, with a whole rule list, leaves the state of x':
    refuted at the join (the rank of (p, c_i), which a later rule may join, is left as that of (p, a_i)).

    pre: 0 <= q and q + 2 <= n and i >= 0
    pre: not prev_ranked or prev > i
    pre: not next_ranked or nxt >= i
    post[]: stale_left_leaves_x_merged(q, n, p, prev, prev_ranked, s, nxt, next_ranked, i, ai, bi, ci)
    """


def passes_flat_loop_stale_left_rank_with_one_rule(a: int, b: int, c: int, k: int, p: int, u: list[int]) -> None:
    """The same loop at the match step of the proof with one rule: it holds (the pair on the left of a join has no
    rank before it nor after: c is in no pair of the rule), so only a whole rule list refutes it.

    pre: a != c and b != c
    pre: k >= 0
    pre: k == 0 or (p, a) != (a, b)
    post[]: match_step_holds(match_step(a, b, c, k, p, u, STALE_LEFT_FLAT_LOOP))
    """
