"""The machinery of the induction proofs of ``bpeproof.proofs_tests.proofs.induction``: token lists of unknown
length, recursive calls answered by the induction hypothesis, and the claim P the induction proves.

``induction`` states each base case and inductive step of lem-merge-step as a CrossHair contract; this module holds
what those contracts run and compare: ``Segment`` (a list of any length), ``Recursion`` (a recursive call answered
by the hypothesis), the ``*_call`` and ``*_unfold`` adapters for each definition of ``bpeproof.spec.merge``,
``spelling`` (⟨⟨·⟩⟩ in the free monoid), ``Facts`` with the claims of P (``LEMMA``), ``unfold`` (one unfolding of
the real definitions) and the checks that every definition recurses on a shorter list.  It has no contracts of its
own: ``crosshair check`` of ``induction`` runs this code inside that module's contracts.

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
  for a byte) is a fact about the rule list, not about the length of x: ``induction.lemma_symbols_new_id`` proves its
  recursive case, ⟨⟨c⟩⟩ over R · (a, b ↦ c) = ⟨⟨a⟩⟩⟨⟨b⟩⟩ over R, for R of every length; that later rules leave
  earlier spellings unchanged, so that every rule of R satisfies def-merge over the whole V_m, is the induction
  over the vocabularies V_k of ``bpeproof.proofs_tests.proofs.rule_lists``.
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
