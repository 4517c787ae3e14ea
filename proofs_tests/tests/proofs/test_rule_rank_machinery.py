"""The steps of the proof that variant (ii) equals enc_R (``proofs_tests/proofs/rule_rank.py``) on real lists.

CrossHair's verdicts on that module are checked by ``test_crosshair_induction.py``; here, without CrossHair (about
5 s), on valid rule lists over a tiny alphabet: the loops' bodies run iteration after iteration replay the code
(F, the scan of the positions, the end of a call), the least (rank, position) is what the scan keeps, and the facts
of M_r that the steps of enc_R's loop are answered with hold on the real lists x and x'.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from hypothesis import given, settings

from bpeproof.proofs_tests.checker.strategies import rules_and_tokens
from bpeproof.proofs_tests.planted import false_steps as planted
from bpeproof.proofs_tests.proofs import rule_rank
from bpeproof.spec.bpe import enc_tokens
from bpeproof.spec.merge import merge
from bpeproof.spec.types import Rule
from bpeproof.spec.variants import merge_by_rule_rank

#: Valid rule lists over a small alphabet (pairs repeated, ids with gaps) and token lists over their vocabulary.
RULES_AND_TOKENS = rules_and_tokens(max_rules=5, max_size=10)


def scanned(rules: list[Rule], tokens: list[int], step: Callable[..., dict[str, object]] = rule_rank.RANK_SCAN_STEP
            ) -> tuple[int, int] | None:
    """``best`` after the scan of the positions, by its body (``step``) run once per position with the real F."""
    best: object = None
    for position in range(len(tokens) - 1):
        best = step(position=position, best=best, tokens=tokens, rules=rules,
                    _first_rule_of_pair=rule_rank.first_rule_of_pair)["best"]
    return cast("tuple[int, int] | None", best)


@settings(max_examples=100)
@given(RULES_AND_TOKENS)
def test_first_rule_steps_replay_the_scan(rules_tokens: tuple[list[Rule], list[int]]) -> None:
    rules, tokens = rules_tokens
    for a, b in [(rule.a, rule.b) for rule in rules] + list(zip(tokens, tokens[1:] + tokens[:1], strict=True)):
        found: object = "on"
        for index, rule in enumerate(rules):
            found = rule_rank.first_rule_step(index, rule.a, rule.b, rule.c, a, b)
            if found != "on":
                break
        want = rule_rank.first_rule_of_pair(rules, a, b)
        assert (None if found == "on" else found) == want
        assert want is None or (rules[want].a, rules[want].b) == (a, b)


@settings(max_examples=100)
@given(RULES_AND_TOKENS)
def test_scan_keeps_the_least_rank_and_position(rules_tokens: tuple[list[Rule], list[int]]) -> None:
    rules, tokens = rules_tokens
    ranked = [(rank, position) for position in range(len(tokens) - 1)
              if (rank := rule_rank.first_rule_of_pair(rules, tokens[position], tokens[position + 1])) is not None]
    assert scanned(rules, tokens) == (min(ranked) if ranked else None)


@settings(max_examples=200)
@given(RULES_AND_TOKENS)
def test_tail_replays_a_call_and_merge_facts_hold(rules_tokens: tuple[list[Rule], list[int]]) -> None:
    """The end of a call gives RR(x); the facts M_r is answered with in the steps of enc_R's loop hold."""
    rules, x = rules_tokens
    best = scanned(rules, x)
    assert rule_rank.RULE_RANK_TAIL(best=best, tokens=x, rules=rules, merge_by_rule_rank=merge_by_rule_rank) == \
        merge_by_rule_rank(rules, x)
    if best is None:
        assert all(merge(rule, x) == x for rule in rules)
        assert enc_tokens(rules, x) == x
        return
    i, q = best
    rule = rules[i]
    merged = x[:q] + [rule.c] + x[q + 2 :]
    assert (x[q], x[q + 1]) == (rule.a, rule.b)
    assert all(merge(r, x) == x and merge(r, merged) == merged for r in rules[:i])
    assert merge(rule, x) == merge(rule, merged) == x[:q] + [rule.c] + merge(rule, x[q + 2 :])
    assert enc_tokens(rules, x) == enc_tokens(rules, merged)


def test_planted_scan_is_false_on_a_real_list() -> None:
    """The scan keeping the last of equal ranks picks the overlapping pair at 1 in a a a, where RR merges at 0."""
    rules = [Rule(0, 0, 256)]
    assert scanned(rules, [0, 0, 0]) == (0, 0)
    assert scanned(rules, [0, 0, 0], planted.LAST_OF_EQUALS_SCAN) == (0, 1)
    assert merge_by_rule_rank(rules, [0, 0, 0]) == enc_tokens(rules, [0, 0, 0]) == [256, 0]
