"""Claims that are false on purpose, so that the CrossHair gate can show it is live.

The CI gate runs one ``crosshair check`` over ``bpeproof.spec.contracts`` and this module:
the spec's conditions must be confirmed and every condition here must be refuted
in the same run.  A gate that confirmed these would be confirming nothing.
"""

from __future__ import annotations

from bpeproof.spec.bpe import train_trace
from bpeproof.spec.merge import cnt_tokens, rep_tokens
from bpeproof.spec.types import ALPHABET_SIZE, Rule


def planted_rep_equals_cnt(a: int, b: int, x: list[int]) -> None:
    """lem-merge-step (4) without its premise a ≠ b: false for (a, a ↦ c) on a a a (rep 1, cnt 2).

    pre: 0 <= a < 256 and 0 <= b < 256
    pre: len(x) <= 4
    post[]: rep_tokens(Rule(a, b, ALPHABET_SIZE), x) == cnt_tokens(x, a, b)
    """


def planted_training_bound_off_by_one(w1: bytes, w2: bytes) -> None:
    """prop-bpe-training-termination with N − K − 1 in place of N − K: exr-bound-attained refutes it.

    Both words have at least two bytes, so N − K − 1 ≥ 1 and the bound is not negative: the claim fails
    only where training reaches N − K, for two words of distinct bytes with no pair in common.

    pre: 2 <= len(w1) <= 3 and 2 <= len(w2) <= 3
    post[]: len(train_trace([w1, w2], None).steps) <= len(w1) + len(w2) - 2 - 1
    """


def planted_ties_to_the_largest(w1: bytes, w2: bytes) -> None:
    """def-bpe step 4 with ties broken to the largest pair: false for any corpus with two pairs of equal count.

    pre: 1 <= len(w1) <= 3 and 1 <= len(w2) <= 3
    post[]: all(max([step.rule[:2], *step.tied]) == step.rule[:2] for step in train_trace([w1, w2], 1).steps)
    """


def planted_cost_linear(w1: bytes, w2: bytes) -> None:
    """prop-bpe-training-cost with N steps in place of (4m' + 2)·N: one merge already costs more than N.

    pre: 1 <= len(w1) <= 3 and 1 <= len(w2) <= 3
    post[]: train_trace([w1, w2], None).cost <= len(w1) + len(w2)
    """
