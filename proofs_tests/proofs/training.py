"""prop-bpe-training-termination for every corpus, with no bound on m: the pair that training picks occurs, proved
for every size, and checked by CrossHair.

``bpeproof.proofs_tests.proofs.induction`` proves the variant: one merge applied to every word lowers
v = Σ_k (|x_k| − 1) by Σ_k rep_r(x_k), by at least 1 when N(a, b) = Σ_k cnt_{x_k}(a, b) ≥ 1, and keeps v ≥ 0;
so training stops after at most v_0 = N − K merges, provided that every merge it makes is of a pair that
occurs.  This module proves that link for corpora and words of every size, down the path of one iteration of
def-bpe in ``bpeproof.spec.bpe.train_trace``:

1. Step 3 goes on only when the table of ``count_pairs`` is not empty, and step 4 (``select_pair``) returns an
   entry's pair (a, b) with its count, which is ≥ 1: the first loop of ``select_pair`` makes ``best`` the largest
   count of the table, reached by some entry (``lemma_largest_count_step``); the second appends, in order, each
   pair whose count is ``best`` (``lemma_maxima_step``), so its first item is one.  Each step runs the loop's own
   body (``loop_machinery.loop_body``) on an abstraction of the list it builds.
2. Every entry of the table is (p, n) with n ≥ 1 and p an item of the list ``pairs`` that ``count_pairs`` groups
   (``lemma_grouping_step``: its loop's body keeps "the last entry is (p, n ≥ 1) with p the pair just read";
   the entries before it are the hypothesis' and are left alone).
3. Every item of ``pairs`` is (x_i, x_{i+1}) for a word x and 0 ≤ i < |x| − 1 (its comprehension), and such a
   pair is counted in x: cnt_x(x_i, x_{i+1}) ≥ 1, by induction on i for every x (``lemma_listed_pair_counted_at_start``:
   i = 0, x = x_0 x_1 u; ``lemma_listed_pair_counted_later``: the pair at i + 1 of x = t · y is the pair at i of
   y, counted in y by the hypothesis; cnt's recursive call answered by it, x and y of ANY length).
4. So N(a, b) = Σ_k cnt_{x_k}(a, b) ≥ 1: every term is ≥ 0 (lem-merge-step: 0 ≤ rep ≤ cnt, for every length)
   and one is ≥ 1 (induction over the words, ``lemma_corpus_count_step``).

With ``induction.lemma_corpus_step`` (the variant drops by Σ rep ≥ 1) and ``induction.lemma_training_iteration``
(v_j ≤ v_0 − j), training ends after m' ≤ N − K merges, for every corpus and with m unbounded.

The loops
---------
As in ``rule_lists``, each loop the proof goes through must be a fold, and is checked to be written exactly as
quoted below (``lemma_*_is_a_fold``): ``count_pairs`` (its comprehension and its grouping loop),
``select_pair`` (its two loops) and the loop of ``train_trace`` (one iteration counts, stops only when the
table is empty or j = m, selects, and applies the rule to every word).  The steps of 1. and 2. run the quoted
bodies themselves, so they run the specification's statements.

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.training
"""

from __future__ import annotations

from typing import cast

# The contracts below name these in their conditions: CrossHair evaluates a condition in this module's namespace.
from bpeproof.proofs_tests.proofs.induction_machinery import NotCovered, Recursion, Segment, as_list, cnt_call
from bpeproof.proofs_tests.proofs.loop_machinery import loop_body, written_as
from bpeproof.spec.bpe import Pair, count_pairs, select_pair, train_trace
from bpeproof.spec.merge import cnt_tokens

# ---------------------------------------------------------------------------
# The loops, as the proofs below need them written
# ---------------------------------------------------------------------------

#: def-bpe step 2: every adjacent pair inside every word, sorted, then grouped into (pair, count) entries.
COUNT_PAIRS = """
pairs = sorted((word[i], word[i + 1]) for word in words for i in range(len(word) - 1))
table: list[tuple[Pair, int]] = []
for pair in pairs:
    if steps is not None:
        steps.count += 1
    if table and table[-1][0] == pair:
        table[-1] = (pair, table[-1][1] + 1)
    else:
        table.append((pair, 1))
return table
"""

#: def-bpe step 4: the largest count, then the pairs that have it, in table order; the first is returned.
SELECT_PAIR = """
best = 0
for _, count in table:
    if steps is not None:
        steps.count += 1
    best = max(best, count)
maxima: list[Pair] = []
for pair, count in table:
    if steps is not None:
        steps.count += 1
    if count == best:
        maxima.append(pair)
return maxima[0], best, tuple(maxima[1:])
"""

#: def-bpe steps 2–5, one iteration per merge: stop at j = m or when the table is empty, else select and merge.
TRAINING_LOOP = """
while True:
    if bound is not None and j == bound:
        break
    table = count_pairs(xs, cost)
    if not table:
        break
    (a, b), count, tied = select_pair(table, cost)
    rule = Rule(a, b, ALPHABET_SIZE + j)
    depths[rule.c] = _checked_depth(depths, rule, j)
    xs = [merge(rule, x, cost) for x in xs]
    steps.append(
        TraceStep(
            rule=rule,
            count=count,
            tied=tied,
            total_tokens=sum(len(x) for x in xs),
            words=tuple(tuple(x) for x in xs),
        )
    )
    j += 1
"""


def lemma_count_pairs_is_a_fold() -> None:
    """``count_pairs`` is written as quoted in ``COUNT_PAIRS``.

    post[]: written_as(count_pairs, COUNT_PAIRS)
    """


def lemma_select_pair_is_a_fold() -> None:
    """``select_pair`` is written as quoted in ``SELECT_PAIR``.

    post[]: written_as(select_pair, SELECT_PAIR)
    """


def lemma_training_loop_is_a_fold() -> None:
    """The loop of ``train_trace`` is written as quoted in ``TRAINING_LOOP``.

    post[]: written_as(train_trace, TRAINING_LOOP)
    """


# ---------------------------------------------------------------------------
# 1. select_pair returns an entry's pair, with the largest count
# ---------------------------------------------------------------------------

#: One iteration of each loop of ``select_pair``, as quoted.
LARGEST_COUNT = loop_body(SELECT_PAIR, ("best", "steps"), 0)
MAXIMA = loop_body(SELECT_PAIR, ("maxima", "best", "steps"), 1)


class Maxima:
    """The list ``maxima`` of unknown length, of which the first item is known (None while it is empty)."""

    def __init__(self, first: Pair | None) -> None:
        self.first = first

    def append(self, pair: Pair) -> None:
        if self.first is None:
            self.first = pair


def largest_after(pa: int, pb: int, count: int, best: int) -> int:
    """``best`` after one iteration of the first loop on the entry ((pa, pb), count)."""
    return cast(int, LARGEST_COUNT(_=(pa, pb), count=count, best=best, steps=None)["best"])


def first_maximum_after(pa: int, pb: int, count: int, best: int, first: Pair | None) -> Pair | None:
    """The first item of ``maxima`` after one iteration of the second loop on the entry ((pa, pb), count)."""
    maxima = Maxima(first)
    MAXIMA(pair=(pa, pb), count=count, maxima=maxima, best=best, steps=None)
    return maxima.first


def keeps_first_maximum(pa: int, pb: int, count: int, best: int, fa: int, fb: int, has_first: bool) -> bool:
    """After the iteration, ``maxima`` starts with its old first item, or, if it was empty, with (pa, pb) when its
    count is ``best`` (and is empty otherwise)."""
    first = (fa, fb) if has_first else None
    expected = first if first is not None else ((pa, pb) if count == best else None)
    return first_maximum_after(pa, pb, count, best, first) == expected


def lemma_largest_count_step(pa: int, pb: int, count: int, best: int) -> None:
    """The first loop keeps "``best`` is the largest count read, reached by an entry read (0 before any)": the new
    ``best`` is at least the old one and the new count, and is one of them.  Counts are ≥ 1 (2. below).

    pre: count >= 1 and best >= 0
    post[]: largest_after(pa, pb, count, best) >= best
    post: largest_after(pa, pb, count, best) >= count
    post: largest_after(pa, pb, count, best) in (best, count)
    """


def lemma_maxima_step(pa: int, pb: int, count: int, best: int, fa: int, fb: int, has_first: bool) -> None:
    """The second loop keeps "the first item of ``maxima`` is the first pair read whose count is ``best``": so after
    the loop, since ``best`` is reached, ``maxima[0]`` is an entry's pair and its count is ``best`` ≥ 1.

    pre: count >= 1
    post[]: keeps_first_maximum(pa, pb, count, best, fa, fb, has_first)
    """


# ---------------------------------------------------------------------------
# 2. every entry of the table has a count ≥ 1 and a pair of the list ``pairs``
# ---------------------------------------------------------------------------

#: One iteration of the grouping loop of ``count_pairs``, as quoted.
GROUPING = loop_body(COUNT_PAIRS, ("table", "steps"), 0)


class LastEntry:
    """The table of unknown length that ``count_pairs`` builds, of which the last entry is known (None: empty).

    Its entries before the last satisfy the hypothesis and cannot be read; appending makes the last entry one of
    them.  ``bool``, reading and replacing ``table[-1]``, and ``append`` are what the grouping loop does to it.
    """

    def __init__(self, last: tuple[Pair, int] | None, size: int = 0) -> None:
        self.last = last
        self.size = size  # how many entries it has (for prop-bpe-training-cost)

    def __bool__(self) -> bool:
        return self.last is not None

    def __getitem__(self, index: int) -> tuple[Pair, int]:
        if index != -1 or self.last is None:
            raise NotCovered("an entry of the table other than its last")
        return self.last

    def __setitem__(self, index: int, entry: tuple[Pair, int]) -> None:
        if index != -1 or self.last is None:
            raise NotCovered("an entry of the table other than its last")
        self.last = entry

    def append(self, entry: tuple[Pair, int]) -> None:
        self.last = entry
        self.size += 1


def grouped(la: int, lb: int, n: int, has_last: bool, qa: int, qb: int) -> tuple[Pair, int] | None:
    """The last entry of the table after one iteration of the grouping loop on the pair (qa, qb)."""
    table = LastEntry(((la, lb), n) if has_last else None)
    GROUPING(pair=(qa, qb), table=table, steps=None)
    return table.last


def entry_of(entry: tuple[Pair, int] | None, qa: int, qb: int) -> bool:
    """The last entry is (q, n) with q the pair just read and n ≥ 1."""
    return entry is not None and entry[0] == (qa, qb) and entry[1] >= 1


def lemma_grouping_step(la: int, lb: int, n: int, has_last: bool, qa: int, qb: int) -> None:
    """One iteration of the grouping loop on the pair q = (qa, qb) of ``pairs``: the last entry is then (q, n' ≥ 1).

    The hypothesis: every entry so far has a count ≥ 1 and a pair of ``pairs``, the last one (``la``, ``lb``, ``n``)
    included; an entry the iteration moves before the last is the old last one.

    pre: not has_last or n >= 1
    post[]: entry_of(grouped(la, lb, n, has_last, qa, qb), qa, qb)
    """


# ---------------------------------------------------------------------------
# 3. a pair at a position of a word is counted in it: cnt_x(x_i, x_{i+1}) ≥ 1, induction on i
# ---------------------------------------------------------------------------


def counted_at_start(p0: int, p1: int, u: list[int], cu: int) -> int:
    """cnt_x(p0, p1) for x = p0 p1 u, by one unfolding; cnt on p1 u answered by ``cu``."""
    x, y = as_list(Segment([p0, p1], u)), as_list(Segment([p1], u))
    return cnt_tokens(x, p0, p1, rec=cnt_call(p0, p1, Recursion(len(x), [(y, cu)])))


def pair_at(x: list[int], i: int) -> Pair:
    """The item of ``count_pairs``'s comprehension for position i of the word x."""
    return (x[i], x[i + 1])


def counted_later(t: int, ys: list[int], i: int, cy: int) -> int:
    """cnt_x(y_i, y_{i+1}) for x = t · y, by one unfolding; cnt on y answered by ``cy``."""
    x, y = as_list(Segment([t], ys)), as_list(Segment([], ys))
    a, b = pair_at(y, i)
    return cnt_tokens(x, a, b, rec=cnt_call(a, b, Recursion(len(x), [(y, cy)])))


def lemma_listed_pair_counted_at_start(p0: int, p1: int, u: list[int], cu: int) -> None:
    """i = 0: x = p0 p1 u, u of ANY length, counts its first pair: cnt_x(x_0, x_1) ≥ 1.

    ``cu`` is cnt on p1 u, ≥ 0 by lem-merge-step (0 ≤ rep ≤ cnt, proved for every length).

    pre: cu >= 0
    post[]: pair_at(as_list(Segment([p0, p1], u)), 0) == (p0, p1)
    post: counted_at_start(p0, p1, u, cu) >= 1
    """


def lemma_listed_pair_counted_later(t: int, ys: list[int], i: int, cy: int) -> None:
    """i ⇒ i + 1: the pair at position i + 1 of x = t · y is the pair at position i of y, and cnt_y of it ≥ 1 (the
    hypothesis, ``cy``) gives cnt_x of it ≥ 1; y of ANY length.

    pre: 0 <= i and i + 1 < len(ys)
    pre: cy >= 1
    post[]: pair_at(as_list(Segment([t], ys)), i + 1) == pair_at(as_list(Segment([], ys)), i)
    post: counted_later(t, ys, i, cy) >= 1
    """


# ---------------------------------------------------------------------------
# 4. N(a, b) = Σ_k cnt_{x_k}(a, b) ≥ 1 when one word counts the pair: induction over the words
# ---------------------------------------------------------------------------


def counted_in_corpus(total: int, occurs: bool) -> bool:
    """N ≥ 0, and N ≥ 1 when the pair occurs in some word."""
    return total >= 0 and (not occurs or total >= 1)


def lemma_corpus_count_empty() -> None:
    """No words: N = 0 and the pair occurs in none.

    post[]: counted_in_corpus(0, False)
    """


def lemma_corpus_count_step(cnt_x: int, in_x: bool, n_ws: int, in_ws: bool) -> None:
    """N(x · ws) = cnt_x + N(ws) (def-bpe step 2's sum over the words), ws of ANY number of words.

    ``cnt_x`` ≥ 0 by lem-merge-step, ≥ 1 when the pair is at a position of x (3.); ``n_ws`` and ``in_ws`` are the
    hypothesis on ws.

    pre: cnt_x >= 0 and (not in_x or cnt_x >= 1)
    pre: counted_in_corpus(n_ws, in_ws)
    post[]: counted_in_corpus(cnt_x + n_ws, in_x or in_ws)
    """
