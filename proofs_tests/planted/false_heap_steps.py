"""False heap loops run through the induction of ``proofs_tests.proofs.engine_heap_loop``, so that their gate can show
each is refuted at its step.

As in ``false_steps``: a function named ``planted_*`` is the step where the planted loop breaks, which CrossHair must
refute with a counterexample; a function named ``passes_*`` is another step of the same induction where the planted
loop goes through, which CrossHair must confirm.  Each planted loop is the engine's own loop (``merge_long``'s body,
as ``engine_heap_loop.LOOP`` runs it) with one change, and is false on a real list too
(``proofs_tests/tests/proofs/test_crosshair_engine_induction.py``).
"""

from __future__ import annotations

from bpeproof.impl.merge_loop import merge_long
from bpeproof.proofs_tests.proofs.engine_heap_loop import NAMES, joins, leaves_the_state_of_x_merged, skips
from bpeproof.proofs_tests.proofs.engine_merge_step import while_parts
from bpeproof.proofs_tests.proofs.loop_machinery import body_of

#: ``merge_long`` that trusts every entry of an alive position with a next one (the mutant
#: ``impl-long-no-stale-check``): it never compares the entry's code with its pair's.
NO_STALE_CHECK_HEAP_LOOP = while_parts(
    body_of(merge_long).replace("if j >= n or code(units[i], units[j]) != best:", "if j >= n:"), NAMES)

#: ``merge_long`` that does not push the entry of the pair on the left of a join.
NO_LEFT_PUSH_HEAP_LOOP = while_parts(
    body_of(merge_long).replace("push(heap, (before, p))", "pass"), NAMES)


def planted_heap_loop_no_stale_check(n: int, a: int, r: int, is_alive: bool, j: int, code_now: int,
                                     is_ranked: bool) -> None:
    """The heap loop without the code check skips every stale entry: refuted at the stale step, on an alive
    position whose pair's code is no longer the entry's (it goes on to join that pair, reading past what a skip
    reads: ``NotCovered``).

    pre: 0 <= a < j <= n
    pre: not is_alive or j == n or not is_ranked or code_now != r
    post[]: skips(n, a, r, is_alive, j, code_now, is_ranked, NO_STALE_CHECK_HEAP_LOOP)
    """


def no_stale_check_joins(n: int, p: int, a: int, j: int, k: int, r: int, after: int, after_ranked: bool,
                         before: int, before_ranked: bool) -> bool:
    """One iteration of that loop on a live entry, as ``engine_heap_loop`` runs the loop's own, leaves the state of
    x'."""
    sides = joins(n, p, a, j, k, r, after, after_ranked, before, before_ranked, NO_STALE_CHECK_HEAP_LOOP)
    return leaves_the_state_of_x_merged(sides)


def passes_heap_loop_no_stale_check_at_the_join(n: int, p: int, a: int, j: int, k: int, r: int, after: int,
                                                after_ranked: bool, before: int, before_ranked: bool) -> None:
    """The same loop on a live entry: it holds (the check it lacks passes on a live entry), so only the stale step
    refutes it.

    pre: -1 <= p < a < j < k <= n
    pre: r >= 0
    post[]: no_stale_check_joins(n, p, a, j, k, r, after, after_ranked, before, before_ranked)
    """


def no_left_push_joins(n: int, p: int, a: int, j: int, k: int, r: int, after: int, after_ranked: bool,
                       before: int, before_ranked: bool) -> bool:
    """One iteration of the loop without the left push on a live entry leaves the state of x'."""
    sides = joins(n, p, a, j, k, r, after, after_ranked, before, before_ranked, NO_LEFT_PUSH_HEAP_LOOP)
    return leaves_the_state_of_x_merged(sides)


def planted_heap_loop_no_left_push(n: int, p: int, a: int, j: int, k: int, r: int, after: int, after_ranked: bool,
                                   before: int, before_ranked: bool) -> None:
    """The heap loop without the push of the pair on the left of a join leaves J for x': refuted at the join,
    where that pair (units[p], c_r) is ranked and its entry is in no heap.

    pre: -1 <= p < a < j < k <= n
    pre: r >= 0
    post[]: no_left_push_joins(n, p, a, j, k, r, after, after_ranked, before, before_ranked)
    """


def passes_heap_loop_no_left_push_at_a_stale_entry(n: int, a: int, r: int, is_alive: bool, j: int, code_now: int,
                                                   is_ranked: bool) -> None:
    """The same loop on a stale entry: it holds (nothing is pushed there).

    pre: 0 <= a < j <= n
    pre: not is_alive or j == n or not is_ranked or code_now != r
    post[]: skips(n, a, r, is_alive, j, code_now, is_ranked, NO_LEFT_PUSH_HEAP_LOOP)
    """
