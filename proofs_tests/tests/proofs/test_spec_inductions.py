"""The machinery of the proofs of the direction of M_r, step 2's counts and steps 3–5 (``merge_direction``,
``pair_counts``, ``selection``) on real values, and their planted false claims false on real values.

CrossHair's verdicts on those modules are checked by ``test_crosshair_induction.py``; here, without CrossHair (about
1 s): the grouping body run on ``TableEnd`` gives the last entry the real ``count_pairs`` gives, the iteration of
``train_trace``'s loop (``while_body``) replays a real training run step by step, and each planted claim fails on a
real list where its refuted step says.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof.proofs_tests.proofs import pair_counts, selection
from bpeproof.spec.bpe import TraceStep, count_pairs, select_pair, train_trace
from bpeproof.spec.merge import Steps, cnt_tokens, merge
from bpeproof.spec.types import ALPHABET_SIZE, Rule

PAIRS = st.tuples(st.integers(0, 2), st.integers(0, 2))


@settings(max_examples=200)
@given(st.lists(PAIRS, max_size=12))
def test_grouping_body_on_table_end_gives_count_pairs_last_entries(items: list[tuple[int, int]]) -> None:
    """Over a sorted list, the body run on ``TableEnd`` keeps the last entry and size of the real table, and every
    entry moved before the last is the real table's entry there."""
    pairs = sorted(items)
    table = pair_counts.TableEnd(None, 0)
    moved: list[tuple[tuple[int, int], int]] = []
    for pair in pairs:
        pair_counts.GROUPING(pair=pair, table=table, steps=None)
        if table.moved is not None:
            moved.append(table.moved)
            table.moved = None
    real = count_pairs([[p, q] for p, q in pairs])  # one word per pair: the same list of pairs
    assert (moved + ([table.last] if table.last else [])) == real
    assert len(table) == len(real)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=6), min_size=1, max_size=4), st.integers(0, 4))
def test_iteration_replays_training(corpus: list[bytes], m: int) -> None:
    """``while_body`` of ``train_trace`` run with the real functions, iteration after iteration, gives the trace (the
    depth guard, no part of def-bpe, answered by a depth: words of 6 bytes make tokens at most 5 merges deep)."""
    xs: list[list[int]] = [list(word) for word in corpus]
    steps: list[TraceStep] = []
    state: dict[str, object] = {"j": 0, "xs": xs, "steps": steps, "depths": {}}
    while True:
        stopped, state = selection.ITERATION(
            bound=m, cost=Steps(), count_pairs=count_pairs, select_pair=select_pair, merge=merge,
            _checked_depth=lambda depths, rule, index: 1, Rule=Rule, ALPHABET_SIZE=ALPHABET_SIZE, TraceStep=TraceStep,
            **state)
        if stopped:
            break
    assert tuple(steps) == train_trace(corpus, m).steps


def test_planted_claims_are_false_on_real_lists() -> None:
    rule = Rule(5, 5, 256)
    # The occurrence after p = (5) is not the first in 5 5 5: M_r gives c 5, not 5 c.
    assert merge(rule, [5, 5, 5]) == [256, 5] != [5] + [256] + merge(rule, [])
    # A word counts a pair as often as it occurs: (5, 5) twice in 5 5 5.
    assert cnt_tokens([5, 5, 5], 5, 5) == 2
    # Ties go to the smallest pair.
    assert select_pair([((0, 1), 2), ((0, 2), 2)])[0] == (0, 1)
