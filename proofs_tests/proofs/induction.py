"""lem-merge-step and what follows from it, proved for every length: the article's induction, checked by CrossHair.

The contracts of ``bpeproof.spec.contracts`` bound their inputs (|x| ≤ 4) so that CrossHair can explore every path; they
say nothing about longer lists.  This module proves the same claims for lists of every length, the way the
article does: by induction, with each base case and each inductive step a contract that ``crosshair check``
confirms over all paths.

The induction principle
-----------------------
Strong induction on n = |x| (the proof of lem-merge-step): let P(x) be the claim about the token list x.  If

* P(ε) and P((t1)) hold (the base cases, ``lemma_base_empty``, ``lemma_base_single``), and
* for every x = t1 t2 u with u of any length, P(y) implies P(x), where y is the list def-merge recurses on:
  y = u when (t1, t2) = (a, b) (``lemma_step_match``) and y = t2 u otherwise (``lemma_step_skip``),

then P(x) holds for every x.  The principle is sound because it is well founded: every recursive call of
``merge``, ``rep_tokens``, ``cnt_tokens`` and ``dec_over`` is on a strictly shorter list.  That is itself
checked for lists of every length (``lemma_recursion_is_on_shorter_lists``) and again inside every step, where a
recursive call on a list that is not shorter raises ``IllFounded``.  P is the conjunction of the claims in
``LEMMA``, proved simultaneously as in the article, one postcondition per claim and case: (1) dec(M_r x) = dec x,
(2) |M_r x| = |x| − rep_r x, rep_r x ≥ 0, (3) rep_r x ≤ cnt_x(a, b) and cnt ≥ 1 ⇒ rep ≥ 1, (4) a ≠ b ⇒ rep =
cnt, and prop-bpe-length-monotone (1): |M_r x| ≤ |x|, and |x| ≥ 1 ⇒ |M_r x| ≥ 1.

How a step is checked
---------------------
Each base case and each step runs the real definitions of ``bpeproof.spec.merge`` on x, a list of any length (a
``Segment``), with their recursive calls answered by the induction hypothesis on the shorter list y (a
``Recursion``), and compares the quantities it gets (``Facts``) by the claims of ``LEMMA``.  That machinery is
``bpeproof.proofs_tests.proofs.induction_machinery``, whose docstring says how a step is checked, what its
abstractions assume and why they are sound; this module states the cases as contracts, and what follows.

The consequences
----------------
* thm-bpe-roundtrip: enc_R is the loop ``for r in R: x = M_r(x)`` (``bpeproof.spec.bpe.enc_tokens``).  Its invariant
  dec(x) = s holds at the start, dec(s as byte tokens) = s (``lemma_bytes_base``, ``lemma_bytes_step``, for
  every |s|), and each iteration keeps it by (1), proved for every length; so it holds for every R.  Each M_r
  terminates because its recursion is well founded, so enc_R is total.  The induction over the rule list, with
  the spellings over V_m that (1) needs, is ``bpeproof.proofs_tests.proofs.rule_lists``.
* prop-bpe-length-monotone (2): the same loop keeps |x| ≤ |s| and |x| ≥ 1 (for s ≠ ε) by the two claims of
  prop-bpe-length-monotone (1) in ``LEMMA`` (``rule_lists`` too).
* prop-bpe-training-termination: one merge applied to K words (def-bpe step 5) lowers the variant
  v = Σ_k (|x_k| − 1) by Σ_k rep_r(x_k), which is ≥ 1 when the chosen pair occurs (N_j ≥ 1), and keeps v ≥ 0
  (every word stays non-empty): by induction on K (``lemma_corpus_empty``, ``lemma_corpus_step``), each word's
  part by ``LEMMA``.  By induction on the number j of merges, v_j ≤ v_0 − j and v_j ≥ 0, so training stops after
  m' ≤ v_0 = N − K merges (``lemma_training_iteration``).  These two inductions are arithmetic on the
  quantities: the sums over the words are written out in ``with_word`` (``spec.bpe.train_trace`` takes them with
  ``sum``) and the loop over the merges is its ``while`` loop.  That the chosen pair occurs (N_j ≥ 1 whenever
  step 3 lets training go on) is proved for every size in ``bpeproof.proofs_tests.proofs.training``.

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.induction
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

# The claims and checks that the contracts below name in their conditions are imported for them: CrossHair
# evaluates a condition in this module's namespace.
from bpeproof.proofs_tests.proofs.induction_machinery import (
    EMPTY,
    Facts,
    IllFounded,
    NotCovered,
    Recursion,
    Segment,
    Word,
    as_list,
    cnt_recurses_on_shorter,
    dec_call,
    dec_recurses_on_shorter,
    keeps_bytes,
    lemma_holds,
    merge_recurses_on_shorter,
    never_lengthens,
    rep_at_most_cnt,
    rep_equals_cnt_if_distinct,
    rep_nonnegative,
    rep_positive_if_cnt_positive,
    rep_recurses_on_shorter,
    shortens_by_rep,
    spelling,
    stays_nonempty,
    tail,
    unfold,
)
from bpeproof.spec.merge import dec_over, symbols
from bpeproof.spec.types import Rule

# ---------------------------------------------------------------------------
# lem-merge-step and prop-bpe-length-monotone (1): base cases and inductive steps
# ---------------------------------------------------------------------------


def base_empty(a: int, b: int, c: int, sa: int, sb: int) -> Facts:
    """The quantities of x = ε, with no recursive call allowed."""
    rule = Rule(a, b, c)
    return unfold(rule, [], spelling(rule, [(a, sa), (b, sb)]), [])


def base_single(a: int, b: int, c: int, t1: int, sa: int, sb: int, s1: int) -> Facts:
    """The quantities of x = (t1), with no recursive call allowed."""
    rule = Rule(a, b, c)
    return unfold(rule, [t1], spelling(rule, [(a, sa), (b, sb), (t1, s1)]), [])


def step_match(
    a: int, b: int, c: int, u: list[int], mu: list[int], ru: int, cu: int, du: int, dmu: int, sa: int, sb: int
) -> Facts:
    """The quantities of x = a b u, the recursive calls on u answered by (M_r u, rep u, cnt u, dec u, dec M_r u)."""
    rule = Rule(a, b, c)
    x, y = as_list(Segment([a, b], u)), as_list(Segment([], u))
    known = [(y, tail(len(u), as_list(Segment([], mu)), ru, cu, du, dmu))]
    return unfold(rule, x, spelling(rule, [(a, sa), (b, sb)]), known)


def step_skip(
    a: int, b: int, c: int, t1: int, t2: int, u: list[int],
    my: list[int], ry: int, cy: int, dy: int, dmy: int, sa: int, sb: int, s1: int,
) -> Facts:
    """The quantities of x = t1 t2 u, the recursive calls on y = t2 u answered by its quantities."""
    rule = Rule(a, b, c)
    x, y = as_list(Segment([t1, t2], u)), as_list(Segment([t2], u))
    known = [(y, tail(len(y), as_list(Segment([], my)), ry, cy, dy, dmy))]
    return unfold(rule, x, spelling(rule, [(a, sa), (b, sb), (t1, s1)]), known)


def lemma_base_empty(a: int, b: int, c: int, sa: int, sb: int) -> None:
    """P(ε) for any rule r = (a, b ↦ c) and any spelling of a and b (``sa``, ``sb``).

    pre: a != c and b != c
    post[]: keeps_bytes(Rule(a, b, c), base_empty(a, b, c, sa, sb))
    post: shortens_by_rep(Rule(a, b, c), base_empty(a, b, c, sa, sb))
    post: rep_nonnegative(Rule(a, b, c), base_empty(a, b, c, sa, sb))
    post: rep_at_most_cnt(Rule(a, b, c), base_empty(a, b, c, sa, sb))
    post: rep_positive_if_cnt_positive(Rule(a, b, c), base_empty(a, b, c, sa, sb))
    post: rep_equals_cnt_if_distinct(Rule(a, b, c), base_empty(a, b, c, sa, sb))
    post: never_lengthens(Rule(a, b, c), base_empty(a, b, c, sa, sb))
    post: stays_nonempty(Rule(a, b, c), base_empty(a, b, c, sa, sb))
    """


def lemma_base_single(a: int, b: int, c: int, t1: int, sa: int, sb: int, s1: int) -> None:
    """P((t1)) for any rule, any token t1 (c included) and any spelling (``s1`` spells t1 unless it is a, b or c).

    pre: a != c and b != c
    post[]: keeps_bytes(Rule(a, b, c), base_single(a, b, c, t1, sa, sb, s1))
    post: shortens_by_rep(Rule(a, b, c), base_single(a, b, c, t1, sa, sb, s1))
    post: rep_nonnegative(Rule(a, b, c), base_single(a, b, c, t1, sa, sb, s1))
    post: rep_at_most_cnt(Rule(a, b, c), base_single(a, b, c, t1, sa, sb, s1))
    post: rep_positive_if_cnt_positive(Rule(a, b, c), base_single(a, b, c, t1, sa, sb, s1))
    post: rep_equals_cnt_if_distinct(Rule(a, b, c), base_single(a, b, c, t1, sa, sb, s1))
    post: never_lengthens(Rule(a, b, c), base_single(a, b, c, t1, sa, sb, s1))
    post: stays_nonempty(Rule(a, b, c), base_single(a, b, c, t1, sa, sb, s1))
    """


def lemma_step_match(
    a: int, b: int, c: int, u: list[int], mu: list[int], ru: int, cu: int, du: int, dmu: int, sa: int, sb: int
) -> None:
    """P(u) ⇒ P(a b u), u of ANY length: the case (t1, t2) = (a, b) of def-merge, where M_r recurses on u.

    ``mu``, ``ru``, ``cu`` are M_r u, rep_r u, cnt_u(a, b); ``du``, ``dmu`` the atoms of dec u and dec M_r u;
    ``sa``, ``sb`` the atoms of ⟨⟨a⟩⟩, ⟨⟨b⟩⟩.  The precondition is the induction hypothesis, nothing else.

    pre: a != c and b != c
    pre: lemma_holds(Rule(a, b, c), tail(len(u), mu, ru, cu, du, dmu))
    post[]: keeps_bytes(Rule(a, b, c), step_match(a, b, c, u, mu, ru, cu, du, dmu, sa, sb))
    post: shortens_by_rep(Rule(a, b, c), step_match(a, b, c, u, mu, ru, cu, du, dmu, sa, sb))
    post: rep_nonnegative(Rule(a, b, c), step_match(a, b, c, u, mu, ru, cu, du, dmu, sa, sb))
    post: rep_at_most_cnt(Rule(a, b, c), step_match(a, b, c, u, mu, ru, cu, du, dmu, sa, sb))
    post: rep_positive_if_cnt_positive(Rule(a, b, c), step_match(a, b, c, u, mu, ru, cu, du, dmu, sa, sb))
    post: rep_equals_cnt_if_distinct(Rule(a, b, c), step_match(a, b, c, u, mu, ru, cu, du, dmu, sa, sb))
    post: never_lengthens(Rule(a, b, c), step_match(a, b, c, u, mu, ru, cu, du, dmu, sa, sb))
    post: stays_nonempty(Rule(a, b, c), step_match(a, b, c, u, mu, ru, cu, du, dmu, sa, sb))
    """


def lemma_step_skip(
    a: int, b: int, c: int, t1: int, t2: int, u: list[int],
    my: list[int], ry: int, cy: int, dy: int, dmy: int, sa: int, sb: int, s1: int,
) -> None:
    """P(t2 u) ⇒ P(t1 t2 u), u of ANY length: the case (t1, t2) ≠ (a, b) of def-merge, where M_r recurses on t2 u.

    ``my``, ``ry``, ``cy``, ``dy``, ``dmy`` are the quantities of y = t2 u; ``s1`` is the atom of ⟨⟨t1⟩⟩ (unless
    t1 is a, b or c).  The precondition is the induction hypothesis, nothing else.

    pre: a != c and b != c
    pre: (t1, t2) != (a, b)
    pre: lemma_holds(Rule(a, b, c), tail(1 + len(u), my, ry, cy, dy, dmy))
    post[]: keeps_bytes(Rule(a, b, c), step_skip(a, b, c, t1, t2, u, my, ry, cy, dy, dmy, sa, sb, s1))
    post: shortens_by_rep(Rule(a, b, c), step_skip(a, b, c, t1, t2, u, my, ry, cy, dy, dmy, sa, sb, s1))
    post: rep_nonnegative(Rule(a, b, c), step_skip(a, b, c, t1, t2, u, my, ry, cy, dy, dmy, sa, sb, s1))
    post: rep_at_most_cnt(Rule(a, b, c), step_skip(a, b, c, t1, t2, u, my, ry, cy, dy, dmy, sa, sb, s1))
    post: rep_positive_if_cnt_positive(Rule(a, b, c), step_skip(a, b, c, t1, t2, u, my, ry, cy, dy, dmy, sa, sb, s1))
    post: rep_equals_cnt_if_distinct(Rule(a, b, c), step_skip(a, b, c, t1, t2, u, my, ry, cy, dy, dmy, sa, sb, s1))
    post: never_lengthens(Rule(a, b, c), step_skip(a, b, c, t1, t2, u, my, ry, cy, dy, dmy, sa, sb, s1))
    post: stays_nonempty(Rule(a, b, c), step_skip(a, b, c, t1, t2, u, my, ry, cy, dy, dmy, sa, sb, s1))
    """


# ---------------------------------------------------------------------------
# Well-foundedness: every recursive call is on a strictly shorter list, for lists of every length
# ---------------------------------------------------------------------------


def lemma_recursion_is_on_shorter_lists(a: int, b: int, c: int, x: list[int]) -> None:
    """The induction is well founded: on x of ANY length, each definition recurses only on shorter lists.

    post[]: merge_recurses_on_shorter(Rule(a, b, c), x)
    post: rep_recurses_on_shorter(Rule(a, b, c), x)
    post: cnt_recurses_on_shorter(Rule(a, b, c), x)
    post: dec_recurses_on_shorter(x)
    """


# ---------------------------------------------------------------------------
# thm-bpe-roundtrip: the loop invariant's start, dec(s as byte tokens) = s, for every |s|
# ---------------------------------------------------------------------------


def byte_spelling(token: int) -> Word:
    """⟨⟨β⟩⟩ = β on V0 = Σ (def-alphabet-vocab), each byte its own atom."""
    if not 0 <= token < 256:
        raise NotCovered("a token that is not a byte")
    return (token,)


def bytes_base() -> Word:
    """dec(ε) over V0."""
    return dec_over(byte_spelling, [], EMPTY, rec=dec_call(byte_spelling, Recursion(0, [])))


def bytes_step(beta: int, u: list[int], du: int) -> Word:
    """dec(β u) over V0 by one unfolding, dec(u) answered by the atom ``du``."""
    known = [(as_list(Segment([], u)), (du,))]
    return dec_over(byte_spelling, as_list(Segment([beta], u)), EMPTY,
                    rec=dec_call(byte_spelling, Recursion(1 + len(u), known)))


def lemma_bytes_base(beta: int) -> None:
    """dec(ε) = ε over V0: the round trip's loop invariant holds for s = ε.

    post[]: bytes_base() == EMPTY
    """


def lemma_bytes_step(beta: int, u: list[int], du: int, su: int) -> None:
    """dec(u) = u ⇒ dec(β u) = β u over V0, u of ANY length: with ``su`` the atom of the bytes of u.

    The bytes of β u are β followed by those of u, so in the free monoid they are (β, su).

    pre: 0 <= beta < 256
    pre: du == su
    post[]: bytes_step(beta, u, du) == (beta, su)
    """


# ---------------------------------------------------------------------------
# def-merge for spec.symbols: ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩ over the rules before (a, b ↦ c), for rule lists of every length
# ---------------------------------------------------------------------------


class Unread:
    """A rule list R of length ``n`` (any n ≥ 0) whose rules are never read: reading one raises ``NotCovered``."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int | slice) -> Rule:
        raise NotCovered("a rule of R")


class Extended:
    """The rule list R · r for a list R of any length: only its length and its last rule can be read.

    Like ``Segment`` for token lists: each operation means what it means on the list R · r, and reading
    anything of R (which the recursive case of ``symbols`` never needs) raises ``NotCovered``.
    """

    def __init__(self, earlier: Unread, last: Rule) -> None:
        self.earlier = earlier
        self.last = last

    def __len__(self) -> int:
        return len(self.earlier) + 1

    def __getitem__(self, index: int | slice) -> Rule:
        if isinstance(index, int) and index == len(self.earlier):
            return self.last
        raise NotCovered("a rule of R")


def symbols_of_new_id(n: int, a: int, b: int, c: int, sa: int, sb: int) -> Word:
    """⟨⟨c⟩⟩ over R · (a, b ↦ c), |R| = n, by one unfolding of ``symbols``, ⟨⟨a⟩⟩, ⟨⟨b⟩⟩ over R answered by atoms."""
    earlier = Unread(n)
    rules = cast("list[Rule]", Extended(earlier, Rule(a, b, c)))
    known = [(a, (sa,)), (b, (sb,))]

    def call(other: Sequence[Rule], token: int, before: int) -> bytes:
        if not before < len(rules):
            raise IllFounded("symbols called on a vocabulary that is not smaller")
        if cast(object, other) is not rules or before != len(earlier):
            raise NotCovered("symbols called on a vocabulary other than R's")
        for known_token, word in known:
            if token == known_token:
                return cast(bytes, word)  # an atom where a byte string stands (see induction_machinery)
        raise NotCovered("symbols called on another token")

    return cast(Word, symbols(rules, c, rec=call))


def lemma_symbols_new_id(n: int, a: int, b: int, c: int, sa: int, sb: int) -> None:
    """⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩ for the last rule (a, b ↦ c) of R · (a, b ↦ c), R of ANY length n (def-merge).

    ``sa`` and ``sb`` are the atoms of ⟨⟨a⟩⟩ and ⟨⟨b⟩⟩ over R (the same when a = b).  No rule of R is read.

    pre: n >= 0
    pre: a != b or sa == sb
    post[]: symbols_of_new_id(n, a, b, c, sa, sb) == (sa, sb)
    """


# ---------------------------------------------------------------------------
# prop-bpe-training-termination: the variant over K words, and over the merges
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    """The quantities of one merge r applied to every word of x_1 … x_K (def-bpe step 5)."""

    words: int  # K
    total: int  # T = Σ_k |x_k|
    merged_total: int  # T' = Σ_k |M_r x_k|
    rep: int  # Σ_k rep_r(x_k)
    cnt: int  # N(a, b) = Σ_k cnt_{x_k}(a, b)
    nonempty: bool  # every x_k ≠ ε


#: No words: every sum is 0.
NO_WORDS = Corpus(0, 0, 0, 0, 0, True)


def with_word(word: Facts, rest: Corpus) -> Corpus:
    """The quantities of x · ws from those of the word x and of the words ws: each sum is x's term plus the rest."""
    return Corpus(
        1 + rest.words, word.length + rest.total, len(word.merged) + rest.merged_total,
        word.rep + rest.rep, word.cnt + rest.cnt, word.length >= 1 and rest.nonempty,
    )


def variant_drops_by_rep(w: Corpus) -> bool:
    """v' = v − Σ_k rep_r(x_k), where v = T − K = Σ_k (|x_k| − 1) and v' = T' − K."""
    return w.merged_total - w.words == (w.total - w.words) - w.rep


def variant_drops_if_pair_occurs(w: Corpus) -> bool:
    """N(a, b) ≥ 1 ⇒ v' ≤ v − 1: a merge whose pair occurs lowers the variant."""
    return w.cnt < 1 or w.merged_total - w.words <= w.total - w.words - 1


def variant_never_grows(w: Corpus) -> bool:
    """v' ≤ v."""
    return w.merged_total - w.words <= w.total - w.words


def variant_stays_nonnegative(w: Corpus) -> bool:
    """Every word non-empty ⇒ v' ≥ 0 (so v ≥ 0 before the next merge too)."""
    return not w.nonempty or w.merged_total - w.words >= 0


def corpus_holds(w: Corpus) -> bool:
    """The variant claims together; as a precondition, the induction hypothesis on the words after the first."""
    return (variant_drops_by_rep(w) and variant_drops_if_pair_occurs(w) and variant_never_grows(w)
            and variant_stays_nonnegative(w) and w.rep >= 0)


def word_facts(length: int, merged: list[int], rep: int, cnt: int) -> Facts:
    """The quantities of one word that the variant uses (dec does not matter here)."""
    return Facts(length, as_list(Segment([], merged)), rep, cnt, EMPTY, EMPTY)


def lemma_corpus_empty(a: int, b: int, c: int) -> None:
    """The variant claims for K = 0 words.

    post[]: corpus_holds(NO_WORDS)
    """


def corpus_step(
    a: int, b: int, c: int, n: int, m: list[int], r: int, k: int, w: int, t: int, mt: int, rr: int, rk: int, ne: bool
) -> Corpus:
    """The quantities of x · ws: ``n``, ``m``, ``r``, ``k`` are |x|, M_r x, rep_r x, cnt_x(a, b), the rest ws's."""
    return with_word(word_facts(n, m, r, k), Corpus(w, t, mt, rr, rk, ne))


def lemma_corpus_step(
    a: int, b: int, c: int, n: int, m: list[int], r: int, k: int, w: int, t: int, mt: int, rr: int, rk: int, ne: bool
) -> None:
    """The variant claims for x · ws, with ws ANY number of words of any length: P(x) and the claims for ws.

    P(x) is ``LEMMA``, proved above for every length; (``w``, ``t``, ``mt``, ``rr``, ``rk``, ``ne``) are the
    quantities of ws (see ``Corpus``), constrained only by the induction hypothesis on ws.

    pre: n >= 0 and w >= 0
    pre: lemma_holds(Rule(a, b, c), word_facts(n, m, r, k))
    pre: corpus_holds(Corpus(w, t, mt, rr, rk, ne))
    post[]: variant_drops_by_rep(corpus_step(a, b, c, n, m, r, k, w, t, mt, rr, rk, ne))
    post: variant_drops_if_pair_occurs(corpus_step(a, b, c, n, m, r, k, w, t, mt, rr, rk, ne))
    post: variant_never_grows(corpus_step(a, b, c, n, m, r, k, w, t, mt, rr, rk, ne))
    post: variant_stays_nonnegative(corpus_step(a, b, c, n, m, r, k, w, t, mt, rr, rk, ne))
    post: corpus_step(a, b, c, n, m, r, k, w, t, mt, rr, rk, ne).rep >= 0
    """


def lemma_training_iteration(v0: int, j: int, v: int, v_next: int) -> None:
    """After j merges v_j ≤ v_0 − j and v_j ≥ 0; merge j + 1 keeps both, so m' ≤ v_0 = N − K (induction on j).

    ``v`` and ``v_next`` are v_j and v_{j+1}.  The base case is j = 0, v = v_0 ≥ 0 (every word of a corpus is
    non-empty); the second precondition is what ``lemma_corpus_step`` proves for a merge whose pair occurs.

    pre: j >= 0 and 0 <= v <= v0 - j
    pre: v_next <= v - 1 and v_next >= 0
    post[]: 0 <= v_next <= v0 - (j + 1)
    post: j + 1 <= v0
    """
