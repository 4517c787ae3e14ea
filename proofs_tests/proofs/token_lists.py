"""dec(xy) = dec(x) dec(y) (def-alphabet-vocab) and exr-run-length for token lists of every length: inductions on the
length, checked by CrossHair on the machinery of ``bpeproof.proofs_tests.proofs.induction_machinery``.

dec(xy) = dec(x) dec(y): induction on |x|, for every y
-----------------------------------------------------
Let Q(x) be "for every token list y, dec(x · y) = dec(x) · dec(y)".

* base x = ε (``lemma_concatenation_base``): ε · y is y (Python's ``+`` on lists, run on a y of any length) and
  dec(ε) = ε (the real ``dec_over``), so dec(ε · y) = dec(y) = ε · dec(y);
* step x = t · x' (``lemma_concatenation_step``): x · y = t · (x' · y), so dec(x · y) is ⟨⟨t⟩⟩ · dec(x' · y) by one
  unfolding of dec, and dec(x' · y) = dec(x') · dec(y) by the hypothesis Q(x') (x' is shorter than x); dec(x) is
  ⟨⟨t⟩⟩ · dec(x') by one unfolding.  Both lists have ANY length.

The abstraction: x · y = t · (x' · y) is the associativity of list concatenation, and x' · y is one symbolic list
of any length (``rest``), on which dec's recursive call is answered by the hypothesis; dec is evaluated in the
free monoid of atoms (dec(x') and dec(y) one atom each), which is sound for every vocabulary as explained in
``induction_machinery``.

exr-run-length: (a, a ↦ c) on a^ℓ, induction on ℓ in steps of 2
----------------------------------------------------------------
Claim R(ℓ): M_r(a^ℓ) = c^⌊ℓ/2⌋ a^(ℓ mod 2), rep_r(a^ℓ) = ⌊ℓ/2⌋ and cnt_{a^ℓ}(a, a) = ℓ − 1 (0 for ℓ = 0).

* bases ℓ = 0 and ℓ = 1 (``lemma_run_base``): the real definitions, no recursive call allowed;
* step ℓ → ℓ + 2 (``lemma_run_step``): a^(ℓ+2) = a a a^ℓ starts with the pair (a, a), so M_r and rep_r recurse
  on a^ℓ, answered by R(ℓ); cnt recurses on a^(ℓ+1), unfolded once more down to a^ℓ, as in the article.

a^ℓ of any length ℓ is a ``Segment`` over a ``Uniform`` list (every item a, its length symbolic); M_r(a^ℓ) of the
hypothesis is a ``Runs`` value c^q a^p, to which ``[c] + ·`` adds one c.  Both implement only what the
definitions use, with its meaning on the list, or raise ``NotCovered``.  Every ℓ ≥ 0 is 0, 1 or ℓ' + 2 with ℓ' < ℓ,
so the bases and the step cover all of them; every recursive call is on a shorter list (``Recursion`` refuses
any other, ``IllFounded``).

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.token_lists
"""

from __future__ import annotations

from dataclasses import dataclass

# The contracts below name these in their conditions: CrossHair evaluates a condition in this module's namespace.
from bpeproof.proofs_tests.proofs.induction_machinery import (
    EMPTY,
    NotCovered,
    Recursion,
    Segment,
    Spelling,
    Word,
    as_list,
    cnt_call,
    cnt_unfold,
    dec_call,
    merge_call,
    rep_call,
)
from bpeproof.spec.merge import cnt_tokens, dec_over, merge, rep_tokens
from bpeproof.spec.types import Rule

# ---------------------------------------------------------------------------
# def-alphabet-vocab: dec(xy) = dec(x) dec(y)
# ---------------------------------------------------------------------------


def one_token(t: int, st: int) -> Spelling:
    """⟨⟨t⟩⟩ = (st,): the only token a step spells; spelling another is not covered."""

    def spell(token: int) -> Word:
        if token == t:
            return (st,)
        raise NotCovered("a token the step does not spell")

    return spell


def concatenation_base(y: list[int], dy: int) -> tuple[Word, Word]:
    """(dec(ε · y), dec(ε) · dec(y)) for y of any length: ε · y by Python's ``+``; dec on the list y is (dy,), and
    on any other list it is not covered."""
    whole = as_list(Segment([], y))
    joined = [] + whole
    if not joined == whole:
        raise NotCovered("ε · y is not the list y")
    return (dy,), dec_over(one_token(0, 0), [], EMPTY) + (dy,)


def concatenation_step(t: int, xs: list[int], rest: list[int], st: int, dx: int, dy: int) -> tuple[Word, Word]:
    """(dec(x · y), dec(x) · dec(y)) for x = t · x' (x' = ``xs``) and x · y = t · (x' · y) (x' · y = ``rest``), each by
    one unfolding of dec: dec(x' · y) answered by the hypothesis dec(x') · dec(y) = (dx, dy), dec(x') by (dx,)."""
    spell = one_token(t, st)
    x, x_rest = as_list(Segment([t], xs)), as_list(Segment([], xs))
    xy, xy_rest = as_list(Segment([t], rest)), as_list(Segment([], rest))
    dec_x = dec_over(spell, x, EMPTY, rec=dec_call(spell, Recursion(len(x), [(x_rest, (dx,))])))
    dec_xy = dec_over(spell, xy, EMPTY, rec=dec_call(spell, Recursion(len(xy), [(xy_rest, (dx, dy))])))
    return dec_xy, dec_x + (dy,)


def sides_equal(sides: tuple[Word, Word]) -> bool:
    """dec(x · y) = dec(x) · dec(y), given both sides."""
    return sides[0] == sides[1]


def lemma_concatenation_base(y: list[int], dy: int) -> None:
    """Q(ε): dec(ε · y) = dec(ε) · dec(y), y of ANY length.

    post[]: sides_equal(concatenation_base(y, dy))
    """


def lemma_concatenation_step(t: int, xs: list[int], rest: list[int], st: int, dx: int, dy: int) -> None:
    """Q(x') ⇒ Q(t · x'): x' and y of ANY length; the hypothesis gives dec(x' · y) = (dx, dy) and dec(x') = (dx,).

    post[]: sides_equal(concatenation_step(t, xs, rest, st, dx, dy))
    """


# ---------------------------------------------------------------------------
# exr-run-length
# ---------------------------------------------------------------------------


class Uniform:
    """The list a^n for a symbolic n ≥ 0: its length, and its items (each a); anything else is not covered."""

    def __init__(self, a: int, n: int) -> None:
        self.a = a
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int) -> int:
        if not isinstance(index, int) or not 0 <= index < self.n:
            raise NotCovered("an item of a^n other than its items")
        return self.a


@dataclass(frozen=True)
class Runs:
    """The list c^q a^p, q and p symbolic: as M_r(a^ℓ) of the hypothesis, where ``[c] + ·`` is all M_r does to it."""

    c: int
    q: int
    a: int
    p: int

    def __len__(self) -> int:
        return self.q + self.p

    def __radd__(self, other: object) -> Runs:
        if isinstance(other, list) and len(other) == 1 and other[0] == self.c:
            return Runs(self.c, self.q + 1, self.a, self.p)
        raise NotCovered("a list other than [c] put before c^q a^p")


@dataclass(frozen=True)
class RunFacts:
    """The quantities of a^ℓ that exr-run-length states."""

    length: int  # ℓ
    merged: object  # M_r(a^ℓ): a list, or a Runs
    rep: int  # rep_r(a^ℓ)
    cnt: int  # cnt_{a^ℓ}(a, a)


def run_of(a: int, length: int) -> list[int]:
    """a^ℓ, ℓ symbolic."""
    return as_list(Segment([], as_list(Uniform(a, length))))  # type: ignore[arg-type]


def run_unfold(a: int, c: int, x: list[int], known: list[tuple[list[int], RunFacts]]) -> RunFacts:
    """The quantities of x = a^ℓ by one unfolding of each definition (cnt twice), the recursive calls on the lists
    of ``known`` answered by their quantities, any other refused."""
    rule, length = Rule(a, a, c), len(x)
    merged = merge(rule, x, rec=merge_call(rule, Recursion(length, [(y, f.merged) for y, f in known])))  # type: ignore[misc]
    rep = rep_tokens(rule, x, rec=rep_call(rule, Recursion(length, [(y, f.rep) for y, f in known])))
    cnt_known = [(y, f.cnt) for y, f in known]
    cnt = cnt_tokens(x, a, a, rec=cnt_call(a, a, Recursion(length, cnt_known, cnt_unfold(a, a), 1)))
    return RunFacts(length, merged, rep, cnt)


def run_base(a: int, c: int, length: int) -> RunFacts:
    """The quantities of a^0 or a^1, with no recursive call allowed."""
    return run_unfold(a, c, run_of(a, length), [])


def run_claim(a: int, c: int, length: int) -> RunFacts:
    """What R(ℓ) says the quantities of a^ℓ are."""
    return RunFacts(length, Runs(c, length // 2, a, length % 2), length // 2, max(length - 1, 0))


def run_step(a: int, c: int, length: int, hypothesis: RunFacts | None = None) -> RunFacts:
    """The quantities of a^(ℓ+2) (ℓ = ``length``), the recursive calls on a^ℓ answered by R(ℓ) (or by
    ``hypothesis``, for a planted claim)."""
    whole = run_of(a, length + 2)
    return run_unfold(a, c, whole, [(whole[2:], hypothesis or run_claim(a, c, length))])


def merged_is_runs(f: RunFacts, c: int, a: int) -> bool:
    """M_r(a^ℓ) = c^⌊ℓ/2⌋ a^(ℓ mod 2): the odd a is left at the right end."""
    q, p = f.length // 2, f.length % 2
    if isinstance(f.merged, Runs):
        return f.merged == Runs(c, q, a, p)
    return f.merged == [c] * q + [a] * p


def rep_is_half(f: RunFacts) -> bool:
    """rep_r(a^ℓ) = ⌊ℓ/2⌋."""
    return f.rep == f.length // 2


def cnt_is_length_less_one(f: RunFacts) -> bool:
    """cnt_{a^ℓ}(a, a) = ℓ − 1 (and 0 for ℓ = 0)."""
    return f.cnt == max(f.length - 1, 0)


def lemma_run_base(a: int, c: int, length: int) -> None:
    """R(0) and R(1): a^0 = ε and a^1 = (a), for any rule (a, a ↦ c), c ∉ V (so c ≠ a).

    pre: a != c
    pre: 0 <= length <= 1
    post[]: merged_is_runs(run_base(a, c, length), c, a)
    post: rep_is_half(run_base(a, c, length))
    post: cnt_is_length_less_one(run_base(a, c, length))
    """


def lemma_run_step(a: int, c: int, length: int) -> None:
    """R(ℓ) ⇒ R(ℓ + 2), ℓ of ANY size: a^(ℓ+2) = a a a^ℓ, the recursion on a^ℓ answered by R(ℓ).

    pre: a != c
    pre: length >= 0
    post[]: merged_is_runs(run_step(a, c, length), c, a)
    post: rep_is_half(run_step(a, c, length))
    post: cnt_is_length_less_one(run_step(a, c, length))
    """
