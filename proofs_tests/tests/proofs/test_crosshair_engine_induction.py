"""The engine's merge step and flat-list loop equal M_r for every length (``proofs_tests.proofs.engine_merge_step``,
``engine_merge_loop``), and both merge loops with a whole rule list equal enc_R (``engine_rule_rank``,
``engine_heap_loop``): CrossHair must confirm every base case and step, and the machinery must compute on real
lists what the engine computes.

* Every condition of the four modules is "Confirmed over all paths" (the run ``induction.engine``, about 6 CPU s,
  started with the other induction runs); their planted false steps are checked with the others by
  ``test_crosshair_induction.py``.
* Without CrossHair (about 3 s): the quoted loops, run iteration by iteration by ``while_parts`` on real lists (the
  flat loop on ``Window``s holding the whole list), give what ``merge_list``, ``merge_short`` and ``merge_long``
  give, which is M_r or enc_R; the heap loop's invariant J holds before every iteration, each popped entry is stale
  (the spelling kept) or RR's least (rank, position) (the spelling joined there); and the planted loops of
  ``false_steps`` and ``false_heap_steps`` give something else on a real list.
"""

from __future__ import annotations

import heapq
from itertools import pairwise
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof.impl.contracts import rank_code, rank_join, stale_rules
from bpeproof.impl.merge_loop import merge_long, merge_short
from bpeproof.impl.trainer import apply_rule
from bpeproof.proofs_tests.checker.strategies import rules_and_tokens
from bpeproof.proofs_tests.planted import false_heap_steps
from bpeproof.proofs_tests.planted import false_steps as planted
from bpeproof.proofs_tests.proofs import crosshair_runs as runs
from bpeproof.proofs_tests.proofs import engine_heap_loop, engine_merge_loop, engine_merge_step, engine_rule_rank
from bpeproof.proofs_tests.proofs.engine_merge_loop import NONE, Window, engine_rank, rank_with
from bpeproof.proofs_tests.proofs.engine_merge_step import Loop
from bpeproof.proofs_tests.proofs.rule_rank import first_rule_of_pair
from bpeproof.spec.bpe import enc_tokens
from bpeproof.spec.merge import merge
from bpeproof.spec.types import Rule
from bpeproof.spec.variants import merge_by_rule_rank

TIMEOUT = runs.RUN_TIMEOUT + 60

TOKENS = st.integers(0, 3)
#: Rules over {0, 1, 2} with the new id 3 (c ∉ {a, b}), a = b included: runs and overlaps.
RULES = st.builds(Rule, st.integers(0, 2), st.integers(0, 2), st.just(3))


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize(("module", "at_least"), [(runs.ENGINE_MERGE_STEP, 5), (runs.ENGINE_MERGE_LOOP, 6),
                                                 (runs.ENGINE_RULE_RANK, 5), (runs.ENGINE_HEAP_LOOP, 4)])
def test_every_engine_induction_condition_confirmed(module: str, at_least: int) -> None:
    path = runs.module_file(module)
    done = runs.result("induction.engine")
    expected = runs.condition_lines(path)
    assert len(expected) >= at_least, f"{module} lost conditions"
    found = runs.verdicts(done.output, path)
    not_confirmed = {
        line: found.get(line, "no verdict") for line in sorted(expected) if found.get(line) != runs.CONFIRMED
    }
    assert not not_confirmed, f"engine induction conditions not confirmed: {not_confirmed}\n{done.output}"
    assert done.returncode == 0, done.output


def run_merge_list(rule: Rule, tokens: list[int], loop: Loop = engine_merge_step.LOOP) -> list[int]:
    """The quoted ``merge_list`` loop run to its end on a real list, one iteration at a time."""
    test, body = loop
    state: dict[str, object] = {"out": [], "i": 0, "tokens": tokens, "n": len(tokens), "a": rule.a, "b": rule.b,
                                "c": rule.c}
    while test(**state):
        after = body(**state)
        assert after.pop("break") is False
        state.update(after)
    return state["out"]  # type: ignore[return-value]


def run_flat_loop(rule: Rule, units: list[int], loop: Loop = engine_merge_loop.LOOP) -> list[int]:
    """The quoted ``merge_short`` loop run on ``Window``s that hold the whole lists (nothing hidden)."""
    if len(units) < 2:
        return units
    rank = engine_rank(*rule)
    window = Window(0, list(units), 0)
    found = Window(0, [rank(x, y) for x, y in pairwise(units)], 0, hidden_item=NONE, floor=0)
    state: dict[str, object] = {"units": window, "found": found, "rank": rank, "join": rank_join([rule])}
    test, body = loop
    while test(**state):
        if body(**state)["break"]:
            break
    return window.known  # type: ignore[return-value]


@settings(max_examples=300)
@given(RULES, st.lists(TOKENS, max_size=10))
def test_the_quoted_loops_are_the_engine_on_real_lists(rule: Rule, tokens: list[int]) -> None:
    want = merge(rule, tokens)
    assert run_merge_list(rule, tokens) == apply_rule(rule, tokens) == want
    assert run_flat_loop(rule, tokens) == merge_short(list(tokens), rank_code([rule]), rank_join([rule])) == want


def run_flat_loop_with(rules: list[Rule], tokens: list[int], loop: Loop = engine_rule_rank.LOOP) -> list[int]:
    """``merge_short``'s loop (its own body and test, or ``loop``) with the pair table of a whole rule list, on
    ``Window``s that hold the whole lists."""
    units = list(tokens)
    if len(units) >= 2:
        rank = rank_with(rank_code(rules))
        window = Window(0, cast(list[float], units), 0)
        ranks = Window(0, [rank(x, y) for x, y in pairwise(units)], 0, hidden_item=NONE, floor=0)
        state: dict[str, object] = {"units": window, "found": ranks, "rank": rank, "join": rank_join(rules)}
        test, body = loop
        while test(**state):
            if body(**state)["break"]:
                break
    return units


@settings(max_examples=150)
@given(rules_and_tokens(max_rules=5, max_size=10))
def test_the_loop_with_a_rule_list_is_variant_ii_on_real_lists(rules_tokens: tuple[list[Rule], list[int]]) -> None:
    """``merge_short``'s own body and test (``engine_rule_rank.LOOP``) with the table of a whole rule list, on
    ``Window``s holding the whole lists, and the table's scan step by step, give the engine's result, RR and enc_R."""
    rules, tokens = rules_tokens
    code = rank_code(rules)
    for x, y in [(rule.a, rule.b) for rule in rules] + list(pairwise(tokens)):
        found: object = "on"
        for index, rule in enumerate(rules):
            found = engine_rule_rank.code_step(index, rule.a, rule.b, rule.c, x, y)
            if found != "on":
                break
        assert (None if found == "on" else found) == code(x, y)
    want = enc_tokens(rules, tokens)
    got = run_flat_loop_with(rules, tokens)
    assert got == merge_short(list(tokens), code, rank_join(rules)) == merge_by_rule_rank(rules, tokens) == want


def test_planted_engine_loops_are_false_on_a_real_list() -> None:
    rule = Rule(0, 0, 3)
    assert merge(rule, [0, 0, 0]) == [3, 0]
    assert run_merge_list(rule, [0, 0, 0], planted.OVERLAPPING_MERGE_LIST) == [3, 3, 0]
    assert run_flat_loop(rule, [0, 0, 0], planted.STALE_RIGHT_FLAT_LOOP) == [3]
    # With (1, 2 ↦ 256), (0, 256 ↦ 257), 0 1 2 is 0 256, then 257: the pair left of the first join gets a rank.
    rules = [Rule(1, 2, 256), Rule(0, 256, 257)]
    assert enc_tokens(rules, [0, 1, 2]) == run_flat_loop_with(rules, [0, 1, 2]) == [257]
    assert run_flat_loop_with(rules, [0, 1, 2], planted.STALE_LEFT_FLAT_LOOP) == [0, 256]
    assert run_flat_loop(Rule(1, 2, 3), [0, 1, 2], planted.STALE_LEFT_FLAT_LOOP) == [0, 3]  # one rule: no harm


def holds_j(state: dict[str, object], rules: list[Rule]) -> list[int]:
    """Assert J of ``engine_heap_loop`` on a real state (links, the live entry of every ranked pair in the heap, a
    heap), and return its spelling x."""
    units, alive = cast(list[int], state["units"]), cast(list[bool], state["alive"])
    nxt, prv, heap, n = cast(list[int], state["nxt"]), cast(list[int], state["prv"]), state["heap"], len(units)
    assert isinstance(heap, list)
    positions = [s for s in range(n) if alive[s]]
    for index, s in enumerate(positions):
        assert nxt[s] == (positions[index + 1] if index + 1 < len(positions) else n)
        assert prv[s] == (positions[index - 1] if index else -1)
    code = rank_code(rules)
    for s, t in pairwise(positions):
        if (c := code(units[s], units[t])) is not None:
            assert (c, s) in heap
    assert all(heap[(at - 1) // 2] <= heap[at] for at in range(1, len(heap)))
    return [units[s] for s in positions]


def run_heap_loop(rules: list[Rule], tokens: list[int], loop: Loop = engine_heap_loop.LOOP,
                  check: bool = False) -> list[int]:
    """``merge_long`` started as it starts (its quoted text), then its loop's own test and body (or ``loop``) with
    heapq's pop and push, on real lists; with ``check``, J before every iteration and the spelling after it: the
    same for a stale entry, x with RR's least (rank, position) joined for a live one."""
    units = list(tokens)
    n = len(units)
    if n < 2:
        return units
    code, join = rank_code(rules), rank_join(rules)
    heap = [(c, i) for i, (x, y) in enumerate(pairwise(units)) if (c := code(x, y)) is not None]
    heapq.heapify(heap)
    alive = [True] * n
    state: dict[str, object] = {"units": units, "alive": alive, "nxt": list(range(1, n + 1)),
                                "prv": list(range(-1, n - 1)), "heap": heap, "pop": heapq.heappop,
                                "push": heapq.heappush, "code": code, "join": join, "on_join": None, "n": n}
    test, body = loop
    while test(**state):
        if check:
            x = holds_j(state, rules)
            r, a = heap[0]
            nxt = cast(list[int], state["nxt"])
            if alive[a] and nxt[a] < n and code(units[a], units[nxt[a]]) == r:
                q = [s for s in range(n) if alive[s]].index(a)
                ranks = [(rank, t) for t, pair in enumerate(pairwise(x))
                         if (rank := first_rule_of_pair(rules, *pair)) is not None]
                assert (r, q) == min(ranks)
                expected = x[:q] + [rules[r].c] + x[q + 2:]
            else:
                expected = x
        assert body(**state)["break"] is False
        if check:
            assert [unit for unit, kept in zip(units, alive, strict=True) if kept] == expected
    if check:
        holds_j(state, rules)
    return [unit for unit, kept in zip(units, alive, strict=True) if kept]


@settings(max_examples=150)
@given(rules_and_tokens(max_rules=5, max_size=12))
def test_the_heap_loop_keeps_j_and_joins_rr_s_pair_on_real_lists(rules_tokens: tuple[list[Rule], list[int]]) -> None:
    """``merge_long``'s own loop with the table of a whole rule list, on real lists and heapq: J before every
    iteration, each pop stale or RR's least (rank, position), and the result the engine's, RR and enc_R."""
    rules, tokens = rules_tokens
    want = enc_tokens(rules, tokens)
    got = run_heap_loop(rules, tokens, check=True)
    assert got == merge_long(list(tokens), rank_code(rules), rank_join(rules)) == merge_by_rule_rank(rules, tokens)
    assert got == want


def test_the_heap_loop_skips_a_stale_entry_on_a_real_list() -> None:
    """On a a a a with ``stale_rules``, the entry (1, 0) of (256, a) is stale when popped: 256 256 became the pair."""
    rules = stale_rules(0)
    assert run_heap_loop(rules, [0, 0, 0, 0], check=True) == enc_tokens(rules, [0, 0, 0, 0]) == [258]


def test_planted_heap_loops_are_false_on_a_real_list() -> None:
    rules = stale_rules(0)
    assert run_heap_loop(rules, [0, 0, 0, 0], false_heap_steps.NO_STALE_CHECK_HEAP_LOOP) == [257]
    rules = [Rule(1, 2, 256), Rule(0, 256, 257)]
    assert run_heap_loop(rules, [0, 1, 2]) == enc_tokens(rules, [0, 1, 2]) == [257]
    assert run_heap_loop(rules, [0, 1, 2], false_heap_steps.NO_LEFT_PUSH_HEAP_LOOP) == [0, 256]
