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
The recursive definitions of ``bpeproof.spec.merge`` are open: their recursive call is the keyword argument ``rec``, and
the real functions are the same code with ``rec`` left out (so it is the function itself).  A step contract takes
t1, t2 and the rest u as a symbolic list of ANY length (no precondition bounds len(u)), and the values of the
definitions on y (M_r y, rep_r y, cnt_y, dec y, dec M_r y) as free symbolic values constrained only by the
induction hypothesis P(y).  It runs the real definitions on x = t1 t2 u (a ``Segment``) with ``rec`` answered by
a ``Recursion``: the hypothesis' value on y itself, one more unfolding of the same definition on a list between x
and y (the article does this for cnt and dec on t2 u in the first case), and an error (``NotCovered``) on any
other list, so a definition that recursed elsewhere is refuted, never assumed.  The step only looks at t1, t2 and
the first token of u, which is why CrossHair can explore all its paths although u has no length bound.

What the abstraction assumes, and why it is sound
-------------------------------------------------
* A list of unknown length is a ``Segment`` (known items, then a symbolic list from a known position on), whose
  every operation means what it means on the list or raises ``NotCovered``; the real code run on it computes what
  it computes on the list (``proofs_tests/tests/proofs/test_crosshair_induction.py`` compares the two on real lists).
* The values on y are arbitrary values satisfying P(y), a superset of the real ones: a step confirmed for all of
  them holds for the real ones.  (The converse does not hold, so a refuted step could in principle be refuted by
  values no real y has; every planted false step of ``bpeproof.proofs_tests.planted.false_steps`` is false on a
  real list too, as its test shows.)
* dec is evaluated in the free monoid of tuples of atoms (``dec_over`` is generic in its monoid), because
  CrossHair compares byte strings element by element, which never ends on strings of unknown length.  ⟨⟨t⟩⟩ of
  each token the step spells is one symbolic atom, ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩ ⟨⟨b⟩⟩ as def-merge defines it, and dec on y
  is one atom.  Every real instance maps onto such an instance (one atom per string), and the map that replaces
  each atom by its string turns ``+`` of tuples into ``+`` of bytes, so equal tuples give equal strings: (1) holds
  for every vocabulary (V, ⟨⟨·⟩⟩) and rule r = (a, b ↦ c) with c ∉ V and ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩.
* That ``spec.symbols`` is such a vocabulary (⟨⟨c_j⟩⟩ = ⟨⟨a_j⟩⟩⟨⟨b_j⟩⟩ for every rule of a valid list, ⟨⟨β⟩⟩ = β
  for a byte) is a fact about the rule list, not about the length of x: ``lemma_symbols_new_id`` proves its
  recursive case, ⟨⟨c⟩⟩ over R · (a, b ↦ c) = ⟨⟨a⟩⟩⟨⟨b⟩⟩ over R, for R of every length; that later rules leave
  earlier spellings unchanged is ``symbols``' loop over the rule list, checked by the bounded contracts of
  ``bpeproof.spec.contracts`` and by Hypothesis only.

The consequences
----------------
* thm-bpe-roundtrip: enc_R is the loop ``for r in R: x = M_r(x)`` (``bpeproof.spec.bpe.enc_tokens``).  Its invariant
  dec(x) = s holds at the start, dec(s as byte tokens) = s (``lemma_bytes_base``, ``lemma_bytes_step``, for
  every |s|), and each iteration keeps it by (1), proved for every length; so it holds for every R.  Each M_r
  terminates because its recursion is well founded, so enc_R is total.
* prop-bpe-length-monotone (2): the same loop keeps |x| ≤ |s| and |x| ≥ 1 (for s ≠ ε) by the two claims of
  prop-bpe-length-monotone (1) in ``LEMMA``.
* prop-bpe-training-termination: one merge applied to K words (def-bpe step 5) lowers the variant
  v = Σ_k (|x_k| − 1) by Σ_k rep_r(x_k), which is ≥ 1 when the chosen pair occurs (N_j ≥ 1), and keeps v ≥ 0
  (every word stays non-empty): by induction on K (``lemma_corpus_empty``, ``lemma_corpus_step``), each word's
  part by ``LEMMA``.  By induction on the number j of merges, v_j ≤ v_0 − j and v_j ≥ 0, so training stops after
  m' ≤ v_0 = N − K merges (``lemma_training_iteration``).  These two inductions are arithmetic on the
  quantities: the sums over the words are written out in ``with_word`` (``spec.bpe.train_trace`` takes them with
  ``sum``) and the loop over the merges is its ``while`` loop.  That the chosen pair occurs (N_j ≥ 1 whenever
  step 3 lets training go on) is def-bpe's counting, checked by the bounded contracts of ``bpeproof.spec.contracts``.

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.induction
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from bpeproof.spec.merge import (
    CntCall,
    DecCall,
    MergeCall,
    RepCall,
    Steps,
    cnt_tokens,
    dec_over,
    merge,
    rep_tokens,
    symbols,
)
from bpeproof.spec.types import Rule

#: A value of the free monoid dec is evaluated in here: a tuple of atoms, each standing for a byte string.
Word = tuple[int, ...]

#: ε in the free monoid.
EMPTY: Word = ()

#: ⟨⟨·⟩⟩ in the free monoid.
Spelling = Callable[[int], Word]

V = TypeVar("V")


class IllFounded(Exception):
    """A recursive call on a list that is not shorter than the list being defined: the induction would be circular."""


class NotCovered(Exception):
    """A recursive call (or a spelling) the induction hypothesis does not cover: the step cannot be justified."""


class Segment:
    """A token list p · u[k:]: a prefix ``p`` of known length, then the list ``u`` from position ``k`` on.

    ``u`` is a symbolic list of any length; ``p`` and ``k`` are concrete, their items symbolic.  A Segment
    implements exactly the list operations the definitions of ``bpeproof.spec.merge`` use, each with the meaning it has
    on the list p · u[k:]: ``len``, truth, reading the item at a non-negative position, slicing from a
    non-negative position to the end, ``list + Segment`` and ``==``; anything else raises ``NotCovered``
    rather than give another answer.  So the real code run on a Segment computes what it computes on the list.
    (CrossHair's own lists of unknown length fix that length when a list with two known items in front is
    sliced from position 1, which would leave infinitely many paths.)
    """

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, prefix: list[int], rest: list[int], start: int = 0) -> None:
        if start < 0 or not start <= len(rest):
            raise NotCovered("a Segment past the end of its list")
        self.prefix = prefix
        self.rest = rest
        self.start = start

    def __len__(self) -> int:
        return len(self.prefix) + len(self.rest) - self.start

    def __bool__(self) -> bool:
        if len(self) > 0:  # noqa: SIM103 (a bool, where CrossHair's comparison gives a symbolic one)
            return True
        return False

    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            if index.stop is not None or index.step is not None or not isinstance(index.start, int):
                raise NotCovered("a slice other than [k:]")
            k = index.start
            if k < 0:
                raise NotCovered("a slice from a negative position")
            if k <= len(self.prefix):
                return as_list(Segment(self.prefix[k:], self.rest, self.start))
            return as_list(Segment([], self.rest, self.start + k - len(self.prefix)))
        if not isinstance(index, int) or index < 0:
            raise NotCovered("an index other than a non-negative int")
        if index < len(self.prefix):
            return self.prefix[index]
        return self.rest[self.start + index - len(self.prefix)]

    def __radd__(self, other: object) -> list[int]:
        if not isinstance(other, list):
            raise NotCovered("a Segment added to something other than a list")
        return as_list(Segment(other + self.prefix, self.rest, self.start))

    def __add__(self, other: object) -> list[int]:
        if isinstance(other, list) and len(other) == 0:
            return as_list(self)
        raise NotCovered("items added after a list of unknown length")

    def __iter__(self) -> Iterator[int]:
        raise NotCovered("iterating over a list of unknown length")

    def to_list(self) -> list[int]:
        """The list itself (on concrete values only: it reads every item)."""
        return self.prefix + list(self.rest[self.start :])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Segment) and other.rest is self.rest and other.start == self.start:
            return other.prefix == self.prefix
        if isinstance(other, (Segment, list)) and len(other) != len(self):
            return False
        raise NotCovered("two lists of unknown length that may be equal")


def as_list(segment: Segment) -> list[int]:
    """A Segment where the definitions expect a list: it behaves as one for every operation they use."""
    return cast("list[int]", segment)


class Recursion(Generic[V]):
    """The recursive call of one definition inside an inductive step, answered by the induction hypothesis.

    ``whole`` is the length of the list being defined: every call must be on a shorter list.  ``known`` holds
    the lists the hypothesis covers with the definition's value on each.  A call on another list is unfolded
    once more with ``unfold`` (the same open definition) while ``depth`` allows, and is an error otherwise.
    """

    def __init__(
        self,
        whole: int,
        known: Sequence[tuple[list[int], V]],
        unfold: Callable[[list[int], Recursion[V]], V] | None = None,
        depth: int = 0,
    ) -> None:
        self.whole = whole
        self.known = known
        self.unfold = unfold
        self.depth = depth

    def __call__(self, tokens: list[int]) -> V:
        if not len(tokens) < self.whole:
            raise IllFounded("a recursive call on a list that is not shorter")
        for key, value in self.known:
            if len(tokens) == len(key) and tokens == key:
                return value
        if self.unfold is not None and self.depth > 0:
            return self.unfold(tokens, Recursion(len(tokens), self.known, self.unfold, self.depth - 1))
        raise NotCovered("a recursive call on a list the induction hypothesis does not cover")


# ---------------------------------------------------------------------------
# The recursive calls of bpeproof.spec.merge's definitions, answered by a Recursion
# ---------------------------------------------------------------------------


def merge_call(rule: Rule, recursion: Recursion[list[int]]) -> MergeCall:
    """M_r(·) answered by ``recursion``, for the same rule only."""

    def call(other: Rule, tokens: list[int], steps: Steps | None) -> list[int]:
        if other != rule:
            raise NotCovered("M_r called with another rule")
        return recursion(tokens)

    return call


def rep_call(rule: Rule, recursion: Recursion[int]) -> RepCall:
    """rep_r(·) answered by ``recursion``, for the same rule only."""

    def call(other: Rule, tokens: list[int]) -> int:
        if other != rule:
            raise NotCovered("rep_r called with another rule")
        return recursion(tokens)

    return call


def cnt_call(a: int, b: int, recursion: Recursion[int]) -> CntCall:
    """cnt_·(a, b) answered by ``recursion``, for the same pair only."""

    def call(tokens: list[int], other_a: int, other_b: int) -> int:
        if (other_a, other_b) != (a, b):
            raise NotCovered("cnt called with another pair")
        return recursion(tokens)

    return call


def dec_call(spell: Spelling, recursion: Recursion[Word]) -> DecCall[Word]:
    """dec(·) answered by ``recursion``, over the same vocabulary only."""

    def call(other: Spelling, tokens: list[int], empty: Word) -> Word:
        if other is not spell or empty != EMPTY:
            raise NotCovered("dec called over another vocabulary")
        return recursion(tokens)

    return call


def cnt_unfold(a: int, b: int) -> Callable[[list[int], Recursion[int]], int]:
    """One more unfolding of cnt (def-merge), its recursive call answered by the given Recursion."""
    return lambda tokens, recursion: cnt_tokens(tokens, a, b, rec=cnt_call(a, b, recursion))


def dec_unfold(spell: Spelling) -> Callable[[list[int], Recursion[Word]], Word]:
    """One more unfolding of dec (def-alphabet-vocab), its recursive call answered by the given Recursion."""
    return lambda tokens, recursion: dec_over(spell, tokens, EMPTY, rec=dec_call(spell, recursion))


def spelling(rule: Rule, atoms: Sequence[tuple[int, int]]) -> Spelling:
    """⟨⟨·⟩⟩ over V' = V ∪ {c} (def-merge) in the free monoid: ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩, ⟨⟨t⟩⟩ = (atom,) for the others.

    ``atoms`` pairs each token of V the step spells with its atom; the first pair for a token wins, so equal
    tokens are spelled alike.  Spelling a token not listed is an error.  Needs a ≠ c and b ≠ c (c ∉ V).
    """

    def spell(token: int) -> Word:
        if token == rule.c:
            return spell(rule.a) + spell(rule.b)
        for known, atom in atoms:
            if token == known:
                return (atom,)
        raise NotCovered("a token the step does not spell")

    return spell


# ---------------------------------------------------------------------------
# The claim P, as relations between the quantities of one token list
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Facts:
    """The quantities of one token list y that lem-merge-step relates."""

    length: int  # |y|
    merged: list[int]  # M_r(y)
    rep: int  # rep_r(y)
    cnt: int  # cnt_y(a, b)
    dec: Word  # dec(y)
    dec_merged: Word  # dec(M_r(y))


def keeps_bytes(rule: Rule, f: Facts) -> bool:
    """lem-merge-step (1): dec(M_r y) = dec(y)."""
    return f.dec_merged == f.dec


def shortens_by_rep(rule: Rule, f: Facts) -> bool:
    """lem-merge-step (2): |M_r y| = |y| − rep_r(y)."""
    return len(f.merged) == f.length - f.rep


def rep_nonnegative(rule: Rule, f: Facts) -> bool:
    """rep_r(y) ≥ 0, used by (3) and by prop-bpe-length-monotone (1)."""
    return f.rep >= 0


def rep_at_most_cnt(rule: Rule, f: Facts) -> bool:
    """lem-merge-step (3), first half: rep_r(y) ≤ cnt_y(a, b)."""
    return f.rep <= f.cnt


def rep_positive_if_cnt_positive(rule: Rule, f: Facts) -> bool:
    """lem-merge-step (3), second half: cnt_y(a, b) ≥ 1 ⇒ rep_r(y) ≥ 1."""
    return f.cnt < 1 or f.rep >= 1


def rep_equals_cnt_if_distinct(rule: Rule, f: Facts) -> bool:
    """lem-merge-step (4): a ≠ b ⇒ rep_r(y) = cnt_y(a, b)."""
    return rule.a == rule.b or f.rep == f.cnt


def never_lengthens(rule: Rule, f: Facts) -> bool:
    """prop-bpe-length-monotone (1): |M_r y| ≤ |y|."""
    return len(f.merged) <= f.length


def stays_nonempty(rule: Rule, f: Facts) -> bool:
    """|y| ≥ 1 ⇒ |M_r y| ≥ 1: used by prop-bpe-length-monotone (2) and the variant's lower bound."""
    return f.length == 0 or len(f.merged) >= 1


#: P, the claims proved together by induction on |x|.
LEMMA: tuple[Callable[[Rule, Facts], bool], ...] = (
    keeps_bytes,
    shortens_by_rep,
    rep_nonnegative,
    rep_at_most_cnt,
    rep_positive_if_cnt_positive,
    rep_equals_cnt_if_distinct,
    never_lengthens,
    stays_nonempty,
)


def lemma_holds(rule: Rule, f: Facts) -> bool:
    """P(y): every claim of ``LEMMA``; as a precondition, the induction hypothesis."""
    return all(claim(rule, f) for claim in LEMMA)


def facts_of(rule: Rule, y: list[int], spell: Spelling) -> Facts:
    """The quantities of y computed by the definitions themselves (each recursing on itself)."""
    merged = merge(rule, y)
    return Facts(len(y), merged, rep_tokens(rule, y), cnt_tokens(y, rule.a, rule.b), dec_over(spell, y, EMPTY),
                 dec_over(spell, merged, EMPTY))


def tail(length: int, merged: list[int], rep: int, cnt: int, dec: int, dec_merged: int) -> Facts:
    """The quantities of the shorter list y as the step receives them: dec y and dec M_r y are one atom each."""
    return Facts(length, merged, rep, cnt, (dec,), (dec_merged,))


def unfold(rule: Rule, x: list[int], spell: Spelling, known: Sequence[tuple[list[int], Facts]]) -> Facts:
    """The quantities of x by one unfolding of each definition of ``bpeproof.spec.merge``, run as the real code.

    Their recursive calls on a list y of ``known`` are answered by its quantities, cnt and dec may unfold once
    more (they recurse on t2 u where M_r recurses on u), and any other recursive call is an error.
    """
    a, b, n = rule.a, rule.b, len(x)
    merged = merge(rule, x, rec=merge_call(rule, Recursion(n, [(y, f.merged) for y, f in known])))
    rep = rep_tokens(rule, x, rec=rep_call(rule, Recursion(n, [(y, f.rep) for y, f in known])))
    cnt_known = [(y, f.cnt) for y, f in known]
    cnt = cnt_tokens(x, a, b, rec=cnt_call(a, b, Recursion(n, cnt_known, cnt_unfold(a, b), 1)))
    dec_known = [(y, f.dec) for y, f in known]
    dec = dec_over(spell, x, EMPTY, rec=dec_call(spell, Recursion(n, dec_known, dec_unfold(spell), 1)))
    merged_known = [(f.merged, f.dec_merged) for _, f in known]
    recursion = Recursion(len(merged), merged_known, dec_unfold(spell), 1)
    dec_merged = dec_over(spell, merged, EMPTY, rec=dec_call(spell, recursion))
    return Facts(n, merged, rep, cnt, dec, dec_merged)


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


def _any_shorter(whole: int, value: V) -> Recursion[V]:
    """A recursive call answered by ``value`` on any list shorter than ``whole`` (and refused on any other)."""
    return Recursion(whole, [], lambda tokens, recursion: value, 1)


def merge_recurses_on_shorter(rule: Rule, x: list[int]) -> bool:
    """M_r's recursive call is on a list shorter than x (``IllFounded`` otherwise)."""
    merge(rule, x, rec=merge_call(rule, _any_shorter(len(x), as_list(Segment([], [])))))
    return True


def rep_recurses_on_shorter(rule: Rule, x: list[int]) -> bool:
    """rep_r's recursive call is on a list shorter than x."""
    rep_tokens(rule, x, rec=rep_call(rule, _any_shorter(len(x), 0)))
    return True


def cnt_recurses_on_shorter(rule: Rule, x: list[int]) -> bool:
    """cnt's recursive call is on a list shorter than x."""
    cnt_tokens(x, rule.a, rule.b, rec=cnt_call(rule.a, rule.b, _any_shorter(len(x), 0)))
    return True


def dec_recurses_on_shorter(x: list[int]) -> bool:
    """dec's recursive call is on a list shorter than x (over any spelling; here every token is its own atom)."""
    spell: Spelling = lambda token: (token,)  # noqa: E731
    dec_over(spell, x, EMPTY, rec=dec_call(spell, _any_shorter(len(x), EMPTY)))
    return True


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
                return cast(bytes, word)  # an atom where a byte string stands (see the module docstring)
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
