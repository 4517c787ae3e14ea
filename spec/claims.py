"""The article's claims as typed predicates: each returns True exactly when the claim holds on its arguments.

The Hypothesis properties in ``proofs_tests`` and the CrossHair contracts in
``spec.contracts`` both call these, so that a claim is written once.  Every
predicate names its article id.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from spec.bpe import Trace, enc_tokens
from spec.merge import cnt_tokens, dec_tokens, merge, rep_tokens, vocabulary
from spec.types import ALPHABET_SIZE, Rule
from spec.variants import merge_by_rule_rank


def decode_concatenates(rules: Sequence[Rule], x: list[int], y: list[int]) -> bool:
    """dec(xy) = dec(x) dec(y) (def-alphabet-vocab, exr-concatenation)."""
    return dec_tokens(rules, x + y) == dec_tokens(rules, x) + dec_tokens(rules, y)


def merge_keeps_bytes(rules: Sequence[Rule], rule: Rule, x: list[int]) -> bool:
    """lem-merge-step (1): dec(M_r x) = dec(x), in the vocabulary of ``rules`` followed by ``rule``."""
    extended = [*rules, rule]
    return dec_tokens(extended, merge(rule, x)) == dec_tokens(extended, x)


def merge_shortens_by_rep(rule: Rule, x: list[int]) -> bool:
    """lem-merge-step (2): |M_r x| = |x| − rep_r(x)."""
    return len(merge(rule, x)) == len(x) - rep_tokens(rule, x)


def rep_at_most_cnt(rule: Rule, x: list[int]) -> bool:
    """lem-merge-step (3), first half: rep_r(x) ≤ cnt_x(a, b)."""
    return rep_tokens(rule, x) <= cnt_tokens(x, rule.a, rule.b)


def rep_positive_if_cnt_positive(rule: Rule, x: list[int]) -> bool:
    """lem-merge-step (3), second half: cnt_x(a, b) ≥ 1 ⇒ rep_r(x) ≥ 1."""
    return cnt_tokens(x, rule.a, rule.b) < 1 or rep_tokens(rule, x) >= 1


def rep_equals_cnt_if_distinct(rule: Rule, x: list[int]) -> bool:
    """lem-merge-step (4): a ≠ b ⇒ rep_r(x) = cnt_x(a, b)."""
    return rule.a == rule.b or rep_tokens(rule, x) == cnt_tokens(x, rule.a, rule.b)


def merge_never_lengthens(rule: Rule, x: list[int]) -> bool:
    """prop-bpe-length-monotone (1): |M_r x| ≤ |x|."""
    return len(merge(rule, x)) <= len(x)


def roundtrip(rules: Sequence[Rule], data: bytes) -> bool:
    """thm-bpe-roundtrip: dec(enc_R s) = s for any valid rule list R."""
    return dec_tokens(rules, enc_tokens(rules, list(data))) == data


def encoding_length_bounded(rules: Sequence[Rule], data: bytes) -> bool:
    """prop-bpe-length-monotone (2): |enc_R s| ≤ |s|, and s ≠ ε ⇒ |enc_R s| ≥ 1."""
    length = len(enc_tokens(rules, list(data)))
    return length <= len(data) and (len(data) == 0 or length >= 1)


def vocabulary_size(rules: Sequence[Rule]) -> bool:
    """prop-bpe-vocab-size: |V_m| = |Σ| + m, for a valid rule list (every new id is fresh)."""
    return len(set(vocabulary(rules))) == ALPHABET_SIZE + len(rules)


def training_within_bound(trace: Trace) -> bool:
    """prop-bpe-training-termination: m' ≤ N − K."""
    return len(trace.steps) <= trace.corpus_symbols - trace.corpus_words


def training_variant_decreases(trace: Trace) -> bool:
    """prop-bpe-training-termination, the proof's variant: T_j − K ≥ 0 and it strictly decreases."""
    variants = [total - trace.corpus_words for total in trace.totals]
    return all(v >= 0 for v in variants) and all(later < earlier for earlier, later in pairwise(variants))


def training_totals_drop_by_count_when_distinct(trace: Trace) -> bool:
    """ex-training-trace / prop-bpe-length-monotone (1): T_{j+1} = T_j − N_j(a, b) whenever a ≠ b."""
    return all(
        step.rule.a == step.rule.b or after == before - step.count
        for (before, after), step in zip(pairwise(trace.totals), trace.steps, strict=True)
    )


def training_cost_bounded(trace: Trace) -> bool:
    """prop-bpe-training-cost: at most N + (m' + 1)·2N + m'·N = (3m' + 3)·N steps, i.e. O(mN).

    Initialisation writes N symbols; each count adds at most T_j − K ≤ N pairs and
    selecting reads at most N table entries (m' + 1 counts, the last finding nothing
    or stopping at m); each of the m' applications scans T_j ≤ N tokens.
    """
    merges = len(trace.steps)
    return trace.cost <= (3 * merges + 3) * trace.corpus_symbols


def rule_rank_is_sequential(rules: Sequence[Rule], data: bytes) -> bool:
    """spec.variants (i) = (ii): merging the earliest rule's pair first replays the rules in order."""
    return merge_by_rule_rank(rules, list(data)) == enc_tokens(rules, list(data))
