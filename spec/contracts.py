"""The article's claims as contracts that CrossHair checks (PEP 316 docstrings).

Each ``lemma_*`` function takes the claim's free variables as arguments, and
its ``post[]:`` conditions state the claim through the typed predicates of
``bpeproof.spec.claims`` (the training lemmas through ``training_claims``, which
checks all of them on one run of training).  The ``pre:`` conditions bound the input sizes, so that
``crosshair check`` explores every path and answers "Confirmed over all
paths" (with no bound it can only answer "not confirmed").  Run::

    crosshair check --report_all --per_condition_timeout=60 bpeproof.spec.contracts

The bounds are what CrossHair proves in CI time; the Hypothesis properties in
``proofs_tests`` check the same predicates on larger inputs.

``crosshair watch spec impl`` checks every contract here as you edit, so each one must end quickly on any input,
even with a bug planted in a definition: every lemma's recursion or loop is bounded by its preconditions (the
training lemma by m ≤ 2 merges).  Training with no bound on the merges is in
``bpeproof.proofs_tests.proofs.unbounded_training``, out of watch's reach: a bug that keeps the chosen pair from
being merged makes that training run forever, and no CrossHair limit ends such a path (see that module).
"""

from __future__ import annotations

# The contracts in the docstrings below and ``training_claims`` use these names.
from bpeproof.spec.bpe import count_pairs, train_trace
from bpeproof.spec.claims import (
    decode_concatenates,
    encoding_length_bounded,
    merge_keeps_bytes,
    merge_leftmost_first,
    merge_never_lengthens,
    merge_shortens_by_rep,
    pairs_counted_inside_words,
    rep_at_most_cnt,
    rep_equals_cnt_if_distinct,
    rep_positive_if_cnt_positive,
    roundtrip,
    rule_rank_is_sequential,
    run_length,
    run_pair_count,
    run_replacements,
    training_cost_bounded,
    training_new_ids,
    training_picks_largest_smallest,
    training_stops_only_when_done,
    training_variant_decreases,
    training_within_bound,
    vocabulary_size,
)
from bpeproof.spec.types import ALPHABET_SIZE, Rule

#: The new id of the one-rule lemmas: the first id after the byte alphabet.
C = ALPHABET_SIZE


def _in_v1(tokens: list[int]) -> bool:
    """Every token is in V_1 = Σ ∪ {256}."""
    return all(0 <= t <= C for t in tokens)


def _is_byte(value: int) -> bool:
    return 0 <= value < ALPHABET_SIZE


def lemma_merge_step(a: int, b: int, x: list[int]) -> None:
    """lem-merge-step (1)–(4) and prop-bpe-length-monotone (1) for r = (a, b ↦ 256) on x ∈ V_1*.

    pre: _is_byte(a) and _is_byte(b)
    pre: len(x) <= 4
    pre: _in_v1(x)
    post[]: merge_keeps_bytes([], Rule(a, b, C), x)
    post: merge_shortens_by_rep(Rule(a, b, C), x)
    post: rep_at_most_cnt(Rule(a, b, C), x)
    post: rep_positive_if_cnt_positive(Rule(a, b, C), x)
    post: rep_equals_cnt_if_distinct(Rule(a, b, C), x)
    post: merge_never_lengthens(Rule(a, b, C), x)
    post: merge_leftmost_first(Rule(a, b, C), x)
    """


def lemma_merge_step_v2(a1: int, b1: int, a: int, b: int, x: list[int]) -> None:
    """lem-merge-step (1)–(4) for the second rule r = (a, b ↦ 257) after (a1, b1 ↦ 256): a and b may be merged tokens.

    pre: _is_byte(a1) and _is_byte(b1)
    pre: 0 <= a <= C and 0 <= b <= C
    pre: len(x) <= 3
    pre: _in_v1(x)
    post[]: merge_keeps_bytes([Rule(a1, b1, C)], Rule(a, b, C + 1), x)
    post: merge_shortens_by_rep(Rule(a, b, C + 1), x)
    post: rep_at_most_cnt(Rule(a, b, C + 1), x)
    post: rep_positive_if_cnt_positive(Rule(a, b, C + 1), x)
    post: rep_equals_cnt_if_distinct(Rule(a, b, C + 1), x)
    post: merge_leftmost_first(Rule(a, b, C + 1), x)
    """


def lemma_run_length(a: int, length: int) -> None:
    """exr-run-length and the direction of M_r: (a, a ↦ 256) on a^ℓ leaves its odd a at the right end, after ⌊ℓ/2⌋
    replacements, of the ℓ − 1 occurrences of (a, a).

    pre: _is_byte(a)
    pre: 0 <= length <= 7
    post[]: run_length(Rule(a, a, C), length)
    post: run_replacements(Rule(a, a, C), length)
    post: run_pair_count(a, length)
    """


def lemma_count_pairs(w1: list[int], w2: list[int]) -> None:
    """def-bpe step 2: N_j(a, b) = Σ_k cnt_{x_k}(a, b), pairs counted inside each word only.

    pre: 1 <= len(w1) <= 3 and 1 <= len(w2) <= 2
    pre: _in_v1(w1) and _in_v1(w2)
    post[]: pairs_counted_inside_words([w1, w2], count_pairs([w1, w2]))
    """


def lemma_decode_concatenates(a: int, b: int, x: list[int], y: list[int]) -> None:
    """def-alphabet-vocab: dec(xy) = dec(x) dec(y) over V_1 = Σ ∪ {256 = ab}.

    pre: _is_byte(a) and _is_byte(b)
    pre: len(x) <= 2 and len(y) <= 2
    pre: _in_v1(x) and _in_v1(y)
    post[]: decode_concatenates([Rule(a, b, C)], x, y)
    """


def lemma_roundtrip(a1: int, b1: int, a2: int, b2: int, data: bytes) -> None:
    """thm-bpe-roundtrip and prop-bpe-length-monotone (2) for R = ((a1, b1 ↦ 256), (a2, b2 ↦ 257)).

    The second rule may use the first one's new id: a2, b2 ∈ V_1.

    pre: _is_byte(a1) and _is_byte(b1)
    pre: 0 <= a2 <= C and 0 <= b2 <= C
    pre: len(data) <= 4
    post[]: roundtrip([Rule(a1, b1, C), Rule(a2, b2, C + 1)], data)
    post: encoding_length_bounded([Rule(a1, b1, C), Rule(a2, b2, C + 1)], data)
    """


def lemma_vocabulary_size(a1: int, b1: int, c1: int, a2: int, b2: int, c2: int) -> None:
    """prop-bpe-vocab-size: two valid rules with any fresh ids give |V_2| = 256 + 2.

    pre: _is_byte(a1) and _is_byte(b1) and c1 >= ALPHABET_SIZE
    pre: (_is_byte(a2) or a2 == c1) and (_is_byte(b2) or b2 == c1)
    pre: c2 >= ALPHABET_SIZE and c2 != c1
    post[]: vocabulary_size([Rule(a1, b1, c1), Rule(a2, b2, c2)])
    """


def training_claims(corpus: list[bytes], num_merges: int | None) -> bool:
    """Every claim about one run of training, in one condition; a false one raises ``AssertionError`` naming it.

    One condition, not one per claim: CrossHair explores the paths of a condition on its own, so six conditions
    would walk every path of training six times (94 CPU seconds for ``lemma_training`` against 23 in one).  The
    claims are checked in order on the same trace, and CrossHair reports a false one with its input ("Error while
    evaluating post condition: AssertionError: def-bpe step 4 … when calling lemma_training(…)").
    """
    trace = train_trace(corpus, num_merges)
    claims = (
        (training_within_bound(trace), "prop-bpe-training-termination: at most N − K merges"),
        (training_variant_decreases(trace), "prop-bpe-training-termination: the variant T_j − K ≥ 0 decreases"),
        (training_cost_bounded(trace), "prop-bpe-training-cost: at most (4m' + 2)·N steps"),
        (training_stops_only_when_done(corpus, num_merges, trace), "def-bpe step 3: stops at m or when no pair is"
         " left"),
        (training_picks_largest_smallest(corpus, trace), "def-bpe step 4: the largest count, then the smallest pair"),
        (training_new_ids(trace), "def-bpe step 5: rule j makes the new id 256 + j − 1"),
    )
    for holds, claim in claims:
        if not holds:
            raise AssertionError(claim)
    return True


def lemma_training(w1: bytes, w2: bytes, num_merges: int) -> None:
    """def-bpe steps 3–5, prop-bpe-training-termination and prop-bpe-training-cost on the corpus (w1, w2), m ≤ 2.

    pre: 1 <= len(w1) <= 3 and 1 <= len(w2) <= 3
    pre: 0 <= num_merges <= 2
    post[]: training_claims([w1, w2], num_merges)
    """


def lemma_rule_rank_is_sequential(a1: int, b1: int, a2: int, b2: int, data: bytes) -> None:
    """spec.variants: variant (ii), lowest rule first, equals the article's (i) on R = ((a1, b1 ↦ 256), (a2, b2 ↦ 257)).

    pre: _is_byte(a1) and _is_byte(b1)
    pre: 0 <= a2 <= C and 0 <= b2 <= C
    pre: len(data) <= 4
    post[]: rule_rank_is_sequential([Rule(a1, b1, C), Rule(a2, b2, C + 1)], data)
    """
