"""def-merge, the direction of M_r, for lists of every length: the leftmost occurrence of (a, b) is merged first.

The claim (``spec.claims.merge_leftmost_first``, bounded in ``spec.contracts``): if the first occurrence of (a, b)
in x is at position i, then M_r x = x_1 … x_i · c · M_r(x_{i+3} …); with no occurrence, M_r x = x.  So a a a with
r = (a, a ↦ c) gives c a, not a c: the occurrence at 1 overlaps the one at 0, which wins.

Two inductions, on the real ``spec.merge.merge`` run on lists of ANY length (``Segment``) with its recursive call
answered by the hypothesis (``Recursion``, which refuses any other call and any call on a list not shorter):

1. The first occurrence: x = p · a · b · v, where (a, b) occurs nowhere in p · a (so the one after p is the
   first).  Claim: M_r x = p · c · M_r(v).  Induction on |p|, for v of any length:

   * p = ε (``lemma_first_at_start``): M_r(a b v) = c · M_r(v), the match case, M_r(v) answered by ``mv``;
   * p = t · p' (``lemma_first_later``): y = p' · a · b · v satisfies the premise (its prefix p' · a lies inside
     p · a), so the hypothesis gives M_r(y) = p' · c · M_r(v), a list of any length (``my``).  x = t · y, and
     (t, y_1) ≠ (a, b), since y_1 is the first item of p' · a and (t, y_1) is a pair of p · a.  The step: M_r(t · y)
     = t · M_r(y) = (t · p') · c · M_r(v), the skip case, its recursive call on y answered by ``my``.

2. No occurrence: cnt_x(a, b) = 0 ⇒ M_r x = x, by strong induction on |x|: the bases ε and (t1) run the real code
   (``lemma_none_bases``); x = t1 t2 u with (t1, t2) ≠ (a, b) and no occurrence in t2 u, where the hypothesis
   gives M_r(t2 u) = t2 u: the skip case makes x itself (``lemma_none_step``).

The premise of the step in 1. is exactly what excludes overlaps: with p = (a) and a = b, the pair (t, y_1) = (a, a)
is the occurrence at 0, which comes first; ``proofs_tests/planted/false_steps.py`` plants the claim without it
(M_r(p a b v) = p c M_r(v) for every p), refuted at this step on a a a.

A step is proved only if the real code goes through on the abstraction: a recursive call the hypothesis does not
cover, an operation a ``Segment`` does not have (reading from the end, say) or a call on a list as long is a failed
step (``merged`` returns None), never an assumption.  The abstractions are those of ``induction_machinery`` (a
Segment behaves as the list it stands for; the values of M_r on shorter lists are free lists of any length
constrained only by the hypothesis, a superset of the real ones).  List equality is compared as a ``Segment``
compares it: the same symbolic rest and the same known items in front.

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.merge_direction
"""

from __future__ import annotations

from collections.abc import Sequence

# The contracts below name these in their conditions: CrossHair evaluates a condition in this module's namespace.
from bpeproof.proofs_tests.proofs.induction_machinery import (
    IllFounded,
    NotCovered,
    Recursion,
    Segment,
    as_list,
    merge_call,
)
from bpeproof.spec.merge import merge
from bpeproof.spec.types import Rule


def merged(rule: Rule, x: list[int], known: Sequence[tuple[list[int], list[int]]]) -> list[int] | None:
    """M_r x by one unfolding of the real ``merge``, its recursive call answered by ``known`` (the hypothesis);
    None when the step cannot be justified (a call the hypothesis does not cover, or on a list not shorter)."""
    try:
        return merge(rule, x, rec=merge_call(rule, Recursion(len(x), known)))
    except (NotCovered, IllFounded):
        return None


def same_list(got: list[int] | None, want: Segment) -> bool:
    """``got`` is the list ``want`` stands for: the same known items in front of the same symbolic rest."""
    return isinstance(got, Segment) and got.rest is want.rest and got.start == want.start and got.prefix == want.prefix


def first_at_start(a: int, b: int, c: int, v: list[int], mv: list[int]) -> bool:
    """M_r(a b v) = c · M_r(v), M_r(v) answered by ``mv``."""
    rule = Rule(a, b, c)
    x, rest = as_list(Segment([a, b], v)), as_list(Segment([], v))
    return same_list(merged(rule, x, [(rest, as_list(Segment([], mv)))]), Segment([c], mv))


def first_later(a: int, b: int, c: int, t: int, y1: int, ys: list[int], my: list[int]) -> bool:
    """M_r(t · y) = t · M_r(y) for y = y1 · ys, M_r(y) answered by ``my`` (= p' · c · M_r(v) by the hypothesis)."""
    rule = Rule(a, b, c)
    x, y = as_list(Segment([t, y1], ys)), as_list(Segment([y1], ys))
    return same_list(merged(rule, x, [(y, as_list(Segment([], my)))]), Segment([t], my))


def none_step(a: int, b: int, c: int, t1: int, t2: int, u: list[int]) -> bool:
    """M_r(t1 t2 u) = t1 t2 u, M_r(t2 u) answered by t2 u itself (the hypothesis: no occurrence, kept)."""
    rule = Rule(a, b, c)
    x, y = as_list(Segment([t1, t2], u)), as_list(Segment([t2], u))
    return same_list(merged(rule, x, [(y, y)]), Segment([t1, t2], u))


def lemma_first_at_start(a: int, b: int, c: int, v: list[int], mv: list[int]) -> None:
    """p = ε: the first occurrence is at position 0 and is merged, v of ANY length.

    pre: a != c and b != c
    post[]: first_at_start(a, b, c, v, mv)
    """


def lemma_first_later(a: int, b: int, c: int, t: int, y1: int, ys: list[int], my: list[int]) -> None:
    """p = t · p': (t, y_1) is a pair of p · a, so it is not (a, b); M_r(t · y) = t · M_r(y), ys of ANY length.

    pre: a != c and b != c
    pre: (t, y1) != (a, b)
    post[]: first_later(a, b, c, t, y1, ys, my)
    """


def lemma_none_bases(a: int, b: int, c: int, t1: int) -> None:
    """No occurrence in ε or (t1): M_r leaves them as they are (the real code).

    pre: a != c and b != c
    post[]: merge(Rule(a, b, c), []) == []
    post: merge(Rule(a, b, c), [t1]) == [t1]
    """


def lemma_none_step(a: int, b: int, c: int, t1: int, t2: int, u: list[int]) -> None:
    """No occurrence in t1 t2 u: (t1, t2) ≠ (a, b), and by the hypothesis M_r(t2 u) = t2 u; so M_r x = x.

    pre: a != c and b != c
    pre: (t1, t2) != (a, b)
    post[]: none_step(a, b, c, t1, t2, u)
    """
