"""Every claim of the article as a Hypothesis property of the specification.

The predicates come from ``bpeproof.spec.claims`` (the same ones CrossHair proves on
small inputs); here they run on larger generated inputs that reach the hard
cases: tiny alphabets, long runs, a = b rules, fresh non-contiguous ids,
repeated pairs, tie-heavy corpora and unbounded training.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof import spec
from bpeproof.proofs_tests.checker.strategies import (
    corpora,
    data_bytes,
    rule_lists,
    rules_and_data,
    rules_and_tokens,
    runs_over,
    single_rule_and_tokens,
    texts,
)
from bpeproof.spec import claims
from bpeproof.spec.types import ALPHABET_SIZE, Rule

# --- def-alphabet-vocab ------------------------------------------------------------------------------------------


@given(rules_and_tokens(), st.data())
def test_decode_concatenates(rules_tokens: tuple[list[Rule], list[int]], data: st.DataObject) -> None:
    rules, tokens = rules_tokens
    cut = data.draw(st.integers(0, len(tokens)))
    assert claims.decode_concatenates(rules, tokens[:cut], tokens[cut:])


@given(rule_lists())
def test_token_stands_for_its_parts(rules: list[Rule]) -> None:
    """def-merge: ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩, and ⟨⟨a⟩⟩ = a on V0."""
    for rule in rules:
        assert spec.symbols(rules, rule.c) == spec.symbols(rules, rule.a) + spec.symbols(rules, rule.b)
    assert all(spec.symbols(rules, byte) == bytes([byte]) for byte in range(ALPHABET_SIZE))


# --- lem-merge-step, prop-bpe-length-monotone (1) ----------------------------------------------------------------


@given(single_rule_and_tokens())
def test_merge_step_lemma(rule_tokens: tuple[Rule, list[int]]) -> None:
    rule, x = rule_tokens
    assert claims.merge_keeps_bytes([], rule, x)
    assert claims.merge_shortens_by_rep(rule, x)
    assert claims.rep_at_most_cnt(rule, x)
    assert claims.rep_positive_if_cnt_positive(rule, x)
    assert claims.rep_equals_cnt_if_distinct(rule, x)
    assert claims.merge_never_lengthens(rule, x)


@given(rules_and_tokens())
def test_merge_step_lemma_in_larger_vocabularies(rules_tokens: tuple[list[Rule], list[int]]) -> None:
    """The lemma for the last rule of a hand-written list, on tokens of the whole vocabulary."""
    rules, x = rules_tokens
    if not rules:
        return
    *earlier, last = rules
    assert claims.merge_keeps_bytes(earlier, last, x)
    assert claims.merge_shortens_by_rep(last, x)
    assert claims.rep_at_most_cnt(last, x)
    assert claims.rep_positive_if_cnt_positive(last, x)
    assert claims.rep_equals_cnt_if_distinct(last, x)


def test_lemma_claim_4_needs_distinct_parts() -> None:
    """def-merge's remark: (a, a ↦ c) on (a, a, a) gives (c, a) with rep 1 but cnt 2."""
    rule = Rule(97, 97, 256)
    assert spec.apply_rule(rule, [97, 97, 97]) == [256, 97]
    assert (spec.rep(rule, [97, 97, 97]), spec.cnt([97, 97, 97], 97, 97)) == (1, 2)


@given(st.integers(0, 200))
def test_run_length(length: int) -> None:
    """exr-run-length: (a, a ↦ c) on a^ℓ replaces ⌊ℓ/2⌋ times, and a^ℓ has ℓ − 1 occurrences."""
    rule = Rule(97, 97, 256)
    x = [97] * length
    assert spec.rep(rule, x) == length // 2
    assert spec.cnt(x, 97, 97) == max(0, length - 1)
    assert spec.apply_rule(rule, x) == [256] * (length // 2) + [97] * (length % 2)


# --- thm-bpe-roundtrip, prop-bpe-length-monotone (2), prop-bpe-vocab-size ------------------------------------------


@given(rules_and_data())
def test_roundtrip_hand_written(rules_data: tuple[list[Rule], bytes]) -> None:
    rules, data = rules_data
    assert spec.dec(rules, spec.enc(rules, data)) == data
    assert claims.encoding_length_bounded(rules, data)


@settings(max_examples=60)
@given(corpora(), st.one_of(st.none(), st.integers(0, 12)), data_bytes())
def test_roundtrip_learned(corpus: list[bytes], num_merges: int | None, data: bytes) -> None:
    rules = spec.train(corpus, num_merges)
    assert claims.roundtrip(rules, data)
    for word in corpus:
        assert spec.dec(rules, spec.enc(rules, word)) == word
    assert claims.encoding_length_bounded(rules, data)


@given(rule_lists(max_rules=10))
def test_vocabulary_size(rules: list[Rule]) -> None:
    assert len(spec.vocabulary(rules)) == ALPHABET_SIZE + len(rules)
    assert claims.vocabulary_size(rules)


@settings(max_examples=60)
@given(corpora(), st.one_of(st.none(), st.integers(0, 12)))
def test_vocabulary_size_after_training(corpus: list[bytes], num_merges: int | None) -> None:
    rules = spec.train(corpus, num_merges)
    assert len(set(spec.vocabulary(rules))) == ALPHABET_SIZE + len(rules)
    assert num_merges is None or len(rules) <= num_merges


@given(rules_and_data())
def test_compression_rate_at_least_one(rules_data: tuple[list[Rule], bytes]) -> None:
    rules, data = rules_data
    if data:
        assert spec.compression_rate(rules, data) >= 1


# --- prop-bpe-training-termination, prop-bpe-training-cost ----------------------------------------------------------


@settings(max_examples=80)
@given(corpora(), st.one_of(st.none(), st.integers(0, 15)))
def test_training_terminates_within_bound(corpus: list[bytes], num_merges: int | None) -> None:
    trace = spec.train_trace(corpus, num_merges)
    assert claims.training_within_bound(trace)
    assert claims.training_variant_decreases(trace)
    assert claims.training_totals_drop_by_count_when_distinct(trace)
    assert claims.training_cost_bounded(trace)


@settings(max_examples=60)
@given(corpora())
def test_unbounded_training_leaves_no_pair(corpus: list[bytes]) -> None:
    """Unbounded training stops only when every count is 0 (def-bpe step 3): every word is then one token."""
    trace = spec.train_trace(corpus, None)
    final = trace.steps[-1].words if trace.steps else tuple(tuple(w) for w in corpus)
    assert all(len(word) == 1 for word in final)


@settings(max_examples=60)
@given(corpora(), st.integers(0, 10))
def test_training_is_deterministic_and_prefix_closed(corpus: list[bytes], num_merges: int) -> None:
    """def-bpe depends on the words' counts, not their order, and m merges are the first m of m + 1."""
    assert spec.train(corpus, num_merges) == spec.train(corpus[::-1], num_merges)
    assert spec.train(corpus, num_merges) == spec.train(corpus, num_merges + 1)[:num_merges]


@settings(max_examples=60)
@given(corpora())
def test_each_step_picks_the_maximum_with_the_smallest_pair(corpus: list[bytes]) -> None:
    """def-bpe step 4, checked against cnt computed from scratch at every step."""
    trace = spec.train_trace(corpus, None)
    words: list[list[int]] = [list(w) for w in corpus]
    for step in trace.steps:
        pairs = {(w[i], w[i + 1]) for w in words for i in range(len(w) - 1)}
        counts = {pair: sum(spec.cnt(w, *pair) for w in words) for pair in pairs}
        best = max(counts.values())
        assert step.count == best
        assert (step.rule.a, step.rule.b) == min(pair for pair, count in counts.items() if count == best)
        words = [spec.apply_rule(step.rule, w) for w in words]


@given(st.integers(2, 40))
def test_bound_attained(n: int) -> None:
    """exr-bound-attained: one word of N distinct symbols trains exactly N − 1 merges."""
    word = bytes(range(10, 10 + n))
    assert len(spec.train([word], None)) == n - 1


# --- prop-bpe-greedy-not-optimal ---------------------------------------------------------------------------------


@settings(max_examples=60)
@given(rules_and_data(max_size=20))
def test_shortest_is_a_segmentation_no_longer_than_enc(rules_data: tuple[list[Rule], bytes]) -> None:
    rules, data = rules_data
    best = spec.shortest(rules, data)
    assert spec.dec(rules, best) == data
    assert len(best) <= len(spec.enc(rules, data))


@settings(max_examples=40)
@given(rules_and_data(max_size=8))
def test_shortest_is_minimal_by_exhaustion(rules_data: tuple[list[Rule], bytes]) -> None:
    """Compare the DP with a brute-force search over all segmentations."""
    rules, data = rules_data
    strings = {s for s, _ in spec.token_strings(rules)}

    def fewest(rest: bytes) -> float:
        if not rest:
            return 0
        return min((1 + fewest(rest[k:]) for k in range(1, len(rest) + 1) if rest[:k] in strings), default=math.inf)

    assert len(spec.shortest(rules, data)) == fewest(data)


# --- def-utf8, prop-token-information, prop-utf8-boundary --------------------------------------------------------


@given(rule_lists(), texts())
def test_text_roundtrip(rules: list[Rule], text: str) -> None:
    assert spec.dec_text(rules, spec.enc_text(rules, text)) == text
    assert spec.dec_text(rules, spec.encode_text(rules, text)) == text


@given(texts())
def test_pretokenizer_pieces_join_back(text: str) -> None:
    assert "".join(spec.split_words(text)) == text


@given(rule_lists(), texts(), st.lists(st.sampled_from(["<|end|>", "<s>", "<|end|>x"]), max_size=3))
def test_special_tokens_never_from_enc(rules: list[Rule], text: str, inserted: list[str]) -> None:
    """def-utf8: special ids are outside V_m, enc never yields them, and the text with specials round-trips."""
    first = max(spec.vocabulary(rules)) + 1  # special ids are outside V_m
    specials = {"<|end|>": first, "<s>": first + 1, "<|end|>x": first + 2}
    full = text + "".join(inserted) + text
    plain = spec.enc_text(rules, full)
    assert not set(plain) & set(specials.values())
    ids = spec.encode_with_specials(rules, specials, full)
    assert spec.decode_with_specials(rules, specials, ids) == full.encode("utf-8")
    assert ids.count(specials["<s>"]) == full.count("<s>")


@given(st.integers(2, 300), st.integers(0, 4))
def test_token_information(vocab_size: int, n: int) -> None:
    """prop-token-information: |V|^n lists of length n; an injection needs |M| ≤ |V|^n."""
    assert spec.token_lists(vocab_size, n) == vocab_size**n
    assert spec.injection_possible(vocab_size**n, vocab_size, n)
    assert not spec.injection_possible(vocab_size**n + 1, vocab_size, n)
    assert math.isclose(spec.bits_per_token(vocab_size) * n, math.log2(vocab_size**n) if n else 0.0, abs_tol=1e-9)


@given(rule_lists(), texts(), st.data())
def test_stream_decoder_matches_whole_decode(rules: list[Rule], text: str, data: st.DataObject) -> None:
    """prop-utf8-boundary: fed in any chunks, the streaming decoder yields the text and never a broken character."""
    tokens = spec.enc_text(rules, text)
    decoder = spec.StreamDecoder(rules)
    out = ""
    position = 0
    while position < len(tokens):
        step = data.draw(st.integers(1, 3))
        out += decoder.feed(tokens[position : position + step])
        position += step
    assert out + decoder.finish() == text


@given(runs_over(list(range(0x80, 0xC0)) + [0xE3], max_size=12))
def test_complete_prefix_holds_back_only_incomplete_characters(data: bytes) -> None:
    ready = spec.text.complete_prefix(data)
    assert 0 <= len(data) - ready <= 3
    held = data[ready:]
    if held:
        need = spec.text.utf8_sequence_length(held[0])
        assert need is not None and need > len(held)
