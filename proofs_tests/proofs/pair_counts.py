"""def-bpe step 2 for every corpus: ``count_pairs`` lists every pair (a, b) that occurs inside a word with the count
N_j(a, b) = Σ_k cnt_{x_k}(a, b), in increasing order of pairs; a pair it does not list has N_j = 0.

``training`` proves that every listed pair occurs (which termination needs); this module proves the counts, down the
text of ``count_pairs`` (checked by ``training.lemma_count_pairs_is_a_fold`` to be as ``training.COUNT_PAIRS``
quotes it):

1. The comprehension ``(word[i], word[i + 1]) for word in words for i in range(len(word) - 1)`` lists, word after
   word, the pair at each position i < |x| − 1 of each word x.  So the number of its items equal to q is
   Σ_k C(x_k, q), with C(x, q) = #{i < |x| − 1 : (x_i, x_{i+1}) = q}, the article's set form of cnt_x(q).  That C
   is the specification's recursive ``cnt_tokens`` is proved by induction on |x|, for x of ANY length:
   ``lemma_word_bases`` (|x| ≤ 1: no position, and cnt = 0, the real code) and ``lemma_word_step`` (x = t · y,
   y = y_1 · ys: x has one position more than y, its first pair is (t, y_1), and its pair at i + 1 is y's at i, so
   C(x, q) = [(t, y_1) = q] + C(y, q); cnt by one unfolding of the real code, its recursive call on y answered by
   the hypothesis C(y, q), gives the same).
2. ``sorted`` returns a permutation of its argument in non-decreasing order (Python's documented semantics, not
   proved here): it keeps the number of items equal to q, and puts equal items next to each other.
3. The grouping loop, by induction over the sorted list (its prefix P read so far), keeps: the entries' pairs are
   strictly increasing; an entry (q, n) has n = the number of items of P equal to q; the last entry's pair is the
   last item of P (so every item of P has an entry).  ``lemma_grouping_counts_step`` runs the loop's own body
   (compiled from the source of ``count_pairs``) on ``TableEnd``, a table of which the last entry and the number of
   entries are known and an entry moved before it is recorded: reading q ≥ l (sorted), with the last entry (l, n),
   the new last entry is (q, n + 1) if q = l, and (q, 1) otherwise, the old last (l, n) kept before it with
   l < q.  The number of items of P equal to q is n when q = l (the hypothesis) and 0 when q > l (every item of P
   is ≤ l, the sorted list's order); the entries before the last are not touched, and their pairs are < l < q, so
   their counts stay right.  Before the loop the table is empty (``table: list[...] = []`` in the text
   ``training.COUNT_PAIRS`` quotes), P = ε.
4. So after the loop, every entry (q, n) has n = the number of items of ``pairs`` equal to q = Σ_k cnt_{x_k}(q)
   (1. and 2.), entries in increasing order; a pair with Σ_k cnt ≥ 1 is an item of ``pairs`` and has an entry; a
   pair without an entry counts 0.

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.pair_counts
"""

from __future__ import annotations

import inspect

# The contracts below name these in their conditions: CrossHair evaluates a condition in this module's namespace.
from bpeproof.proofs_tests.proofs.induction_machinery import (
    IllFounded,
    NotCovered,
    Recursion,
    Segment,
    as_list,
    cnt_call,
)
from bpeproof.proofs_tests.proofs.loop_machinery import loop_body
from bpeproof.proofs_tests.proofs.training import LastEntry, pair_at  # noqa: F401 (pair_at: named by the conditions)
from bpeproof.spec.bpe import Pair, count_pairs
from bpeproof.spec.merge import cnt_tokens

# ---------------------------------------------------------------------------
# 1. the comprehension's items of one word equal to q number cnt_x(q): induction on |x|
# ---------------------------------------------------------------------------


def cnt_of(t: int, y1: int, ys: list[int], qa: int, qb: int, cy: int) -> int | None:
    """cnt_x(q) for x = t · y1 · ys by one unfolding of the real code, cnt on y = y1 · ys answered by ``cy``; None
    when the step cannot be justified."""
    x, y = as_list(Segment([t, y1], ys)), as_list(Segment([y1], ys))
    try:
        return cnt_tokens(x, qa, qb, rec=cnt_call(qa, qb, Recursion(len(x), [(y, cy)])))
    except (NotCovered, IllFounded):
        return None


def positions(x: list[int]) -> int:
    """How many positions i the comprehension reads in the word x: ``len(range(len(x) - 1))``."""
    return len(range(len(x) - 1))


def lemma_word_bases(t: int, qa: int, qb: int) -> None:
    """|x| ≤ 1: the comprehension reads no position (C(x, q) = 0) and cnt_x(q) = 0, the real code.

    post[]: positions([]) == 0 and cnt_tokens([], qa, qb) == 0
    post: positions([t]) == 0 and cnt_tokens([t], qa, qb) == 0
    """


def lemma_word_step(t: int, y1: int, ys: list[int], qa: int, qb: int, cy: int) -> None:
    """x = t · y, y = y1 · ys of ANY length: C(x, q) = [(t, y1) = q] + C(y, q), and cnt_x(q) is the same given
    cnt_y(q) = C(y, q) (``cy``, the hypothesis).

    pre: cy >= 0
    post[]: positions(as_list(Segment([t, y1], ys))) == positions(as_list(Segment([y1], ys))) + 1
    post: pair_at(as_list(Segment([t, y1], ys)), 0) == (t, y1)
    post: cnt_of(t, y1, ys, qa, qb, cy) == (1 if (t, y1) == (qa, qb) else 0) + cy
    """


def lemma_word_shift(t: int, y1: int, ys: list[int], i: int) -> None:
    """The pair of x = t · y at position i + 1 is the pair of y at position i, for every position of y (ys of ANY
    length): the items of x after its first are y's, in order.

    pre: 0 <= i < len(ys)
    post[]: pair_at(as_list(Segment([t, y1], ys)), i + 1) == pair_at(as_list(Segment([y1], ys)), i)
    """


# ---------------------------------------------------------------------------
# 3. the grouping loop over the sorted pairs counts each pair's items: induction over the list
# ---------------------------------------------------------------------------


#: One iteration of the grouping loop of ``count_pairs``, compiled from its source as it is (the text
#: ``training.lemma_count_pairs_is_a_fold`` checks): a change to the loop is run by the step, not only quoted.
GROUPING = loop_body(inspect.getsource(count_pairs), ("table", "steps"), 0)


class TableEnd(LastEntry):
    """``training.LastEntry`` (the table the grouping loop builds, of unknown length, its last entry known) that
    also records the entry an ``append`` moved before the last (``moved``) and counts its entries.  The entries
    before the last satisfy the hypothesis and cannot be read: reading or replacing any entry but ``table[-1]`` is
    ``NotCovered``."""

    def __init__(self, last: tuple[Pair, int] | None, size: int) -> None:
        super().__init__(last, size)
        self.moved: tuple[Pair, int] | None = None

    def __len__(self) -> int:
        return self.size

    def append(self, entry: tuple[Pair, int]) -> None:
        self.moved = self.last
        self.last = entry
        self.size += 1


def items_before(la: int, lb: int, n: int, has_last: bool, qa: int, qb: int) -> int:
    """How many items of the sorted prefix P equal q: n when q is the last entry's pair (the hypothesis), 0 when
    q is larger (every item of P is at most the last one)."""
    return n if has_last and (la, lb) == (qa, qb) else 0


def grouping_counts(la: int, lb: int, n: int, has_last: bool, qa: int, qb: int, size: int) -> bool:
    """After one iteration of the grouping loop on q: the last entry is (q, its items in P · q), and an entry moved
    before it is the old last, with a smaller pair; otherwise no entry before the last was touched."""
    table = TableEnd(((la, lb), n) if has_last else None, size)
    try:
        GROUPING(pair=(qa, qb), table=table, steps=None)
    except (NotCovered, TypeError, IndexError):  # an operation the abstraction does not have: no step
        return False
    counted = table.last == ((qa, qb), items_before(la, lb, n, has_last, qa, qb) + 1)
    if has_last and (la, lb) != (qa, qb):
        return counted and table.moved == ((la, lb), n) and (la, lb) < (qa, qb)
    return counted and table.moved is None


def lemma_grouping_counts_step(la: int, lb: int, n: int, has_last: bool, qa: int, qb: int, size: int) -> None:
    """One iteration of the grouping loop on the next item q = (qa, qb) of the sorted ``pairs``, q ≥ the last entry's
    pair l = (la, lb); the hypothesis: n ≥ 1 items of P equal l, every item of P is ≤ l, the entries before the
    last have pairs < l; the table has ``size`` entries.

    pre: not has_last or (n >= 1 and (la, lb) <= (qa, qb))
    pre: size >= 1 if has_last else size == 0
    post[]: grouping_counts(la, lb, n, has_last, qa, qb, size)
    """
