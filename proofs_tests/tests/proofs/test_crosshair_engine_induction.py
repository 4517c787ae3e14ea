"""The engine's merge step and flat-list loop equal M_r for every length (``proofs_tests.proofs.engine_merge_step``,
``engine_merge_loop``): CrossHair must confirm every base case and step, and the machinery must compute on real
lists what the engine computes.

* Every condition of the two modules is "Confirmed over all paths" (the run ``induction.engine``, about 4 CPU s,
  started with the other induction runs); their planted false steps are checked with the others by
  ``test_crosshair_induction.py``.
* Without CrossHair (about 2 s): the quoted loops, run iteration by iteration by ``while_parts`` on real lists (the
  flat loop on ``Window``s holding the whole list), give what ``merge_list`` and ``merge_short`` give, which is
  M_r; and the planted loops of ``false_steps`` give something else on a real list.
"""

from __future__ import annotations

from itertools import pairwise
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof.impl.contracts import rank_code, rank_join
from bpeproof.impl.merge_loop import merge_short
from bpeproof.impl.trainer import apply_rule
from bpeproof.proofs_tests.checker.strategies import rules_and_tokens
from bpeproof.proofs_tests.planted import false_steps as planted
from bpeproof.proofs_tests.proofs import crosshair_runs as runs
from bpeproof.proofs_tests.proofs import engine_merge_loop, engine_merge_step, engine_rule_rank
from bpeproof.proofs_tests.proofs.engine_merge_loop import NONE, Window, engine_rank, rank_with
from bpeproof.proofs_tests.proofs.engine_merge_step import Loop
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
                                                 (runs.ENGINE_RULE_RANK, 5)])
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
