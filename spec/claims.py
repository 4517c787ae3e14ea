"""The article's claims as typed predicates: each returns True exactly when the claim holds on its arguments.

The Hypothesis properties in ``proofs_tests`` and the CrossHair contracts in
``bpeproof.spec.contracts`` both call these, so that a claim is written once.  Every
predicate names its article id.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from bpeproof.spec.bpe import Pair, Trace, enc_tokens
from bpeproof.spec.merge import cnt_tokens, dec_tokens, merge, rep_tokens, vocabulary
from bpeproof.spec.types import ALPHABET_SIZE, Rule
from bpeproof.spec.variants import merge_by_rule_rank


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
    """prop-bpe-training-cost: the steps the trainer counted are at most N + (m' + 1)·N + m'·(2N + N) = (4m' + 2)·N.

    The counts come from the code that does the work (see ``bpeproof.spec.bpe.train_trace``):
    N to write the symbols; each of the at most m' + 1 counts adds one step per
    adjacent pair, Σ_k (|x_k| − 1) ≤ N; each of the m' selections reads the table
    twice (α = 2, at most N entries); each of the m' applications evaluates at most
    |x_k| cases of def-merge per word (β = 1), Σ_k |x_k| ≤ N.
    """
    merges = len(trace.steps)
    return trace.corpus_symbols <= trace.cost <= (4 * merges + 2) * trace.corpus_symbols


def segmentations(corpus: Sequence[bytes], trace: Trace) -> list[list[list[int]]]:
    """x^(0), x^(1), …, x^(m'): every word's tokens before the first merge and after each one (def-bpe)."""
    return [[list(word) for word in corpus]] + [[list(x) for x in step.words] for step in trace.steps]


def _pair_total(words: list[list[int]], a: int, b: int) -> int:
    """N_j(a, b) = Σ_k cnt_{x_k}(a, b), from def-merge's cnt."""
    return sum(cnt_tokens(x, a, b) for x in words)


def pairs_counted_inside_words(words: list[list[int]], table: Sequence[tuple[Pair, int]]) -> bool:
    """def-bpe step 2: the table holds N_j(a, b) = Σ_k cnt_{x_k}(a, b) ≥ 1 for exactly the pairs inside some word.

    Its counts add up to Σ_k (|x_k| − 1), the adjacent pairs inside the words, so no
    pair across two words is counted; its pairs are distinct and in increasing order.
    """
    inside = [(x[i], x[i + 1]) for x in words for i in range(len(x) - 1)]
    return (
        all(count == _pair_total(words, a, b) and count >= 1 for (a, b), count in table)
        and sum(count for _, count in table) == len(inside)
        and all(pair in [p for p, _ in table] for pair in inside)
        and all(earlier[0] < later[0] for earlier, later in pairwise(table))
    )


def training_stops_only_when_done(corpus: Sequence[bytes], num_merges: int | None, trace: Trace) -> bool:
    """def-bpe step 3: training stops after m merges, or earlier only when no word has an adjacent pair left."""
    last = segmentations(corpus, trace)[-1]
    if num_merges is not None and len(trace.steps) > num_merges:
        return False
    return (num_merges is not None and len(trace.steps) == num_merges) or all(len(x) <= 1 for x in last)


def training_picks_largest_smallest(corpus: Sequence[bytes], trace: Trace) -> bool:
    """def-bpe step 4: each chosen pair has the largest N_j, and is the smallest pair among those with that count.

    The counts are recomputed from def-merge's cnt on the words before the step, and
    the words after it are M_r of the words before (step 5).
    """
    rounds = segmentations(corpus, trace)
    for j, step in enumerate(trace.steps):
        words = rounds[j]
        a, b = step.rule.a, step.rule.b
        if step.count != _pair_total(words, a, b) or step.count < 1:
            return False
        for x in words:
            for i in range(len(x) - 1):
                p, q = x[i], x[i + 1]
                other = _pair_total(words, p, q)
                if other > step.count or (other == step.count and (p, q) < (a, b)):
                    return False
        if rounds[j + 1] != [merge(step.rule, x) for x in words]:
            return False
    return True


def training_new_ids(trace: Trace) -> bool:
    """def-bpe step 5: rule j joins two ids of V_{j−1} and its new id is 256 + j − 1, larger than all of them."""
    return all(
        step.rule.c == ALPHABET_SIZE + j and 0 <= step.rule.a < step.rule.c and 0 <= step.rule.b < step.rule.c
        for j, step in enumerate(trace.steps)
    )


def merge_leftmost_first(rule: Rule, x: list[int]) -> bool:
    """def-merge, the direction of M_r: it replaces the leftmost occurrence of (a, b) first, then merges the rest.

    If (a, b) first occurs at position i, M_r x = x_1 … x_{i−1} · c · M_r(x_{i+2} …);
    with no occurrence, M_r x = x.
    """
    for i in range(len(x) - 1):
        if (x[i], x[i + 1]) == (rule.a, rule.b):
            return merge(rule, x) == x[:i] + [rule.c] + merge(rule, x[i + 2 :])
    return merge(rule, x) == x


def run_length(rule: Rule, length: int) -> bool:
    """exr-run-length: (a, a ↦ c) on a^ℓ gives c^⌊ℓ/2⌋ followed by a^(ℓ mod 2), the leftover at the right end."""
    x = [rule.a] * length
    return rule.a != rule.b or merge(rule, x) == [rule.c] * (length // 2) + [rule.a] * (length % 2)


def run_replacements(rule: Rule, length: int) -> bool:
    """exr-run-length: (a, a ↦ c) makes ⌊ℓ/2⌋ replacements in a^ℓ (rep_r goes on after the pair it joined)."""
    return rule.a != rule.b or rep_tokens(rule, [rule.a] * length) == length // 2


def run_pair_count(a: int, length: int) -> bool:
    """exr-run-length: a^ℓ holds ℓ − 1 occurrences of (a, a), overlapping ones included (none when ℓ = 0)."""
    return cnt_tokens([a] * length, a, a) == max(length - 1, 0)


def rule_rank_is_sequential(rules: Sequence[Rule], data: bytes) -> bool:
    """bpeproof.spec.variants (i) = (ii): merging the earliest rule's pair first replays the rules in order."""
    return merge_by_rule_rank(rules, list(data)) == enc_tokens(rules, list(data))
