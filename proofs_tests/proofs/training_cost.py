"""prop-bpe-training-cost for every corpus and every m: N ≤ cost ≤ (4m' + 2)·N, proved for every size and checked by
CrossHair.

``bpeproof.spec.bpe.train_trace`` counts its steps in the code that does the work (``Steps``): one per symbol
written at the start, then, in each count, one per pair listed (``count_pairs``); in each selection one per table
entry read by each of its two loops (``select_pair``); in each application one per case of def-merge evaluated
(``merge``).  The bound, for every size:

1. The start writes each symbol once: its inner loop's body adds one step per symbol
   (``lemma_initialisation_step``), so cost = N = Σ_k |w_k| after it.
2. A count adds one step per item of ``pairs`` and its table gets at most one entry per item
   (``lemma_grouping_cost_step``, the grouping loop's own body); ``pairs`` has one item per position
   i < |x_k| − 1 of each word (its comprehension), Σ_k (|x_k| − 1) ≤ T_j items, and T_j ≤ N (the variant never
   grows, ``induction.lemma_corpus_step``).
3. A selection adds one step per entry in each of its two loops (``lemma_selection_cost_step``): 2·|table| ≤ 2N.
4. M_r on a word x ≠ ε evaluates at most |x| cases: strong induction on |x|, the real ``merge`` counting its
   steps, the steps of its recursive call answered by the hypothesis (``lemma_merge_cost_base``,
   ``lemma_merge_cost_match``, ``lemma_merge_cost_skip``); over the words, at most T_j ≤ N
   (``lemma_merge_cost_corpus_step``).
5. Over the iterations (``lemma_cost_iteration``): before the (j + 1)-th count cost ≤ b_j = N + 4jN; an iteration
   that merges adds at most N + 2N + N; the count that finds the table empty, if training stops there, at most N
   (``lemma_cost_end``).  So N ≤ cost ≤ N + 4m'N + N = (4m' + 2)·N.

The loops are those that ``training`` checks to be written as it quotes them, and the start's loop
(``lemma_initialisation_is_a_fold``); the steps of 1.–3. run their quoted bodies.

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.training_cost
"""

from __future__ import annotations

from typing import cast

# The contracts below name these in their conditions: CrossHair evaluates a condition in this module's namespace.
from bpeproof.proofs_tests.proofs.induction_machinery import IllFounded, NotCovered, Segment, as_list
from bpeproof.proofs_tests.proofs.loop_machinery import loop_body, written_as
from bpeproof.proofs_tests.proofs.training import GROUPING, LARGEST_COUNT, MAXIMA, LastEntry, Maxima
from bpeproof.spec.bpe import train_trace
from bpeproof.spec.merge import MergeCall, Steps, merge
from bpeproof.spec.types import Rule

#: The start of def-bpe (step 1): every symbol of every word written once, one step each.
INITIALISATION = """
for word in words:
    x: list[int] = []
    for symbol in word:
        x.append(symbol)
        cost.count += 1
    xs.append(x)
"""

#: One iteration of the inner loop of the start, as quoted.
WRITE_SYMBOL = loop_body(INITIALISATION, ("x", "cost"), 1)


def lemma_initialisation_is_a_fold() -> None:
    """The start of ``train_trace`` is written as quoted in ``INITIALISATION``.

    post[]: written_as(train_trace, INITIALISATION)
    """


class Written:
    """The word being written, of unknown length: appending to it is all the start does."""

    def append(self, symbol: int) -> None:
        pass


def counted(count: int) -> Steps:
    """A step counter at ``count``."""
    steps = Steps()
    steps.count = count
    return steps


def after_symbol(symbol: int, count: int) -> int:
    """The steps after one iteration of the start's inner loop."""
    cost = counted(count)
    WRITE_SYMBOL(symbol=symbol, x=Written(), cost=cost)
    return cost.count


def lemma_initialisation_step(symbol: int, count: int) -> None:
    """Writing one symbol adds one step.

    post[]: after_symbol(symbol, count) == count + 1
    """


def after_pair(la: int, lb: int, n: int, has_last: bool, size: int, qa: int, qb: int, count: int) -> tuple[int, int]:
    """(steps, table entries) after one iteration of the grouping loop on the pair (qa, qb)."""
    table, steps = LastEntry(((la, lb), n) if has_last else None, size), counted(count)
    GROUPING(pair=(qa, qb), table=table, steps=steps)
    return steps.count, table.size


def lemma_grouping_cost_step(la: int, lb: int, n: int, has_last: bool, size: int, qa: int, qb: int, count: int) -> None:
    """Grouping one pair of ``pairs`` adds one step and at most one entry to the table.

    pre: has_last == (size >= 1)
    post[]: after_pair(la, lb, n, has_last, size, qa, qb, count)[0] == count + 1
    post: after_pair(la, lb, n, has_last, size, qa, qb, count)[1] <= size + 1
    """


def after_entry(pa: int, pb: int, n: int, best: int, count: int) -> int:
    """The steps after one iteration of each loop of ``select_pair`` on the entry ((pa, pb), n)."""
    steps = counted(count)
    best = cast(int, LARGEST_COUNT(_=(pa, pb), count=n, best=best, steps=steps)["best"])
    MAXIMA(pair=(pa, pb), count=n, maxima=Maxima(None), best=best, steps=steps)
    return steps.count


def lemma_selection_cost_step(pa: int, pb: int, n: int, best: int, count: int) -> None:
    """An entry of the table costs one step in each of the two loops of ``select_pair``.

    post[]: after_entry(pa, pb, n, best, count) == count + 2
    """


# ---------------------------------------------------------------------------
# 4. M_r on x ≠ ε evaluates at most |x| cases
# ---------------------------------------------------------------------------


def merge_cost(rule: Rule, x: list[int], y: list[int] | None, steps_y: int) -> int:
    """The steps ``merge`` counts on x, its recursive call allowed on y only (not at all when None) and counted as
    ``steps_y`` steps (the hypothesis)."""
    steps = Steps()

    def call(other: Rule, tokens: list[int], counter: Steps | None) -> list[int]:
        if other != rule or counter is not steps:
            raise NotCovered("M_r called with another rule or another counter")
        if not len(tokens) < len(x):
            raise IllFounded("a recursive call on a list that is not shorter")
        if y is None or not (len(tokens) == len(y) and tokens == y):
            raise NotCovered("a recursive call the hypothesis does not cover")
        steps.count += steps_y
        return as_list(Segment([], []))  # its value does not matter to the count

    merge(rule, x, steps, rec=cast(MergeCall, call))
    return steps.count


def lemma_merge_cost_base(a: int, b: int, c: int, t1: int, single: bool) -> None:
    """ε and (t1): one case, one step.

    post[]: merge_cost(Rule(a, b, c), [t1] if single else [], None, 0) == 1
    """


def lemma_merge_cost_match(a: int, b: int, c: int, u: list[int], su: int) -> None:
    """x = a b u, u of ANY length: one step, then M_r on u, which takes ``su`` ≤ max(|u|, 1) steps (hypothesis).

    pre: 0 <= su <= max(len(u), 1)
    post[]: merge_cost(Rule(a, b, c), as_list(Segment([a, b], u)), as_list(Segment([], u)), su) <= 2 + len(u)
    """


def lemma_merge_cost_skip(a: int, b: int, c: int, t1: int, t2: int, u: list[int], sy: int) -> None:
    """x = t1 t2 u, (t1, t2) ≠ (a, b), u of ANY length: one step, then M_r on t2 u, ``sy`` ≤ 1 + |u| steps.

    pre: (t1, t2) != (a, b)
    pre: 0 <= sy <= 1 + len(u)
    post[]: merge_cost(Rule(a, b, c), as_list(Segment([t1, t2], u)), as_list(Segment([t2], u)), sy) <= 2 + len(u)
    """


def lemma_merge_cost_corpus_step(length: int, steps_x: int, total_ws: int, steps_ws: int) -> None:
    """Over the words: M_r on x · ws takes at most |x| + T(ws) steps, ws ANY number of words (each word ≠ ε).

    pre: length >= 1 and 0 <= steps_x <= length
    pre: 0 <= steps_ws <= total_ws
    post[]: steps_x + steps_ws <= length + total_ws
    """


# ---------------------------------------------------------------------------
# 5. over the iterations
# ---------------------------------------------------------------------------


def lemma_cost_iteration(n: int, bound: int, cost: int, pairs: int, table: int, merged: int, total: int) -> None:
    """An iteration that merges adds at most 4N: cost ≤ b_j ⇒ cost' ≤ b_{j+1} = b_j + 4N, and cost' ≥ cost.

    ``pairs``, ``table`` and ``merged`` are the steps of its count, the entries of its table and the steps of its
    application; ``total`` is T_j.

    pre: n >= 1 and n <= cost <= bound
    pre: 0 <= pairs <= total and 0 <= table <= pairs and 0 <= merged <= total and total <= n
    post[]: n <= cost + pairs + 2 * table + merged <= bound + 4 * n
    """


def lemma_cost_end(n: int, bound: int, cost: int, pairs: int, total: int) -> None:
    """The count that finds the table empty (if training stops there rather than at j = m) adds at most N.

    pre: n >= 1 and n <= cost <= bound
    pre: 0 <= pairs <= total and total <= n
    post[]: n <= cost + pairs <= bound + n
    """
