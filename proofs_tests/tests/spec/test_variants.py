"""Where the BPE variants of real tokenizers agree with the article's encoding, and the smallest cases where not."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof import spec
from bpeproof.proofs_tests.checker.strategies import corpora, data_bytes, rules_and_data
from bpeproof.spec import claims
from bpeproof.spec.types import Rule
from bpeproof.spec.variants import (
    VARIANTS,
    enc_bytes_rank,
    enc_rule_rank,
    enc_sequential,
    enc_whole_word_first,
    reachable,
    unreachable_tokens,
)

A, B, C, D = b"abcd"


@given(rules_and_data())
def test_rule_rank_equals_sequential_on_hand_written_rules(rules_data: tuple[list[Rule], bytes]) -> None:
    """(i) = (ii) on every valid rule list, fresh ids, repeated pairs and a = b included."""
    rules, data = rules_data
    assert enc_rule_rank(rules, data) == enc_sequential(rules, data) == spec.enc(rules, data)
    assert claims.rule_rank_is_sequential(rules, data)


@settings(max_examples=50)
@given(corpora(), st.one_of(st.none(), st.integers(0, 10)), data_bytes())
def test_rule_rank_equals_sequential_on_learned_rules(corpus: list[bytes], merges: int | None, data: bytes) -> None:
    rules = spec.train(corpus, merges)
    assert enc_rule_rank(rules, data) == spec.enc(rules, data)


def _strings_unique(rules: list[Rule]) -> bool:
    strings = [spec.symbols(rules, rule.c) for rule in rules]
    return len(set(strings)) == len(strings)


@given(rules_and_data())
def test_whole_word_first_agrees_when_every_token_is_reachable(rules_data: tuple[list[Rule], bytes]) -> None:
    """(iv) = (i) when no two tokens share their bytes and every token is reachable.

    If the word's bytes are a token t, t is the only token with them, and reachable means enc_R gives (t).
    """
    rules, data = rules_data
    if _strings_unique(rules) and not unreachable_tokens(rules):
        assert enc_whole_word_first(rules, data) == spec.enc(rules, data)


@settings(max_examples=300)
@given(rules_and_data(max_size=16))
def test_bytes_rank_agrees_when_every_token_is_reachable(rules_data: tuple[list[Rule], bytes]) -> None:
    """(iii) = (i) when no two tokens share bytes and every token is reachable: checked on generated rule lists
    (no proof is claimed; a counterexample here would be a finding worth reporting)."""
    rules, data = rules_data
    if _strings_unique(rules) and not unreachable_tokens(rules):
        assert enc_bytes_rank(rules, data) == spec.enc(rules, data)


@settings(max_examples=50)
@given(corpora(max_distinct=4), st.integers(0, 8))
def test_bytes_rank_on_learned_rules(corpus: list[bytes], merges: int) -> None:
    """On the training corpus's own words, (iii) gives what (i) gives wherever all tokens are reachable."""
    rules = spec.train(corpus, merges)
    if _strings_unique(rules) and not unreachable_tokens(rules):
        for word in corpus:
            assert enc_bytes_rank(rules, word) == spec.enc(rules, word)


def test_smallest_bytes_rank_divergence() -> None:
    """(iii) ≠ (i): three rules where abc is a token that (i) cannot reach."""
    rules = [Rule(B, C, 256), Rule(A, B, 257), Rule(257, C, 258)]
    assert spec.enc(rules, b"abc") == [A, 256]
    assert enc_bytes_rank(rules, b"abc") == [258]
    assert enc_whole_word_first(rules, b"abc") == [258]
    assert unreachable_tokens(rules) == [258]
    assert not reachable(rules, 258)


def test_same_string_tokens_under_each_variant() -> None:
    """ex-same-string: 306 and 307 both stand for abc; every variant picks 306, (i) for its own reasons."""
    rules = [Rule(A, B, 304), Rule(B, C, 305), Rule(304, C, 306), Rule(A, 305, 307)]
    assert {name: encode(rules, b"abc") for name, encode in VARIANTS.items()} == {key: [306] for key in VARIANTS}
    assert unreachable_tokens(rules) == [307]


def test_two_tokens_for_one_string_split_differently() -> None:
    """A later token with an earlier token's bytes: (iii) reports the earliest id, (i) the one its rules build."""
    rules = [Rule(B, C, 256), Rule(A, 256, 257), Rule(A, B, 258), Rule(258, C, 259)]
    assert spec.enc(rules, b"abc") == [257]
    assert enc_bytes_rank(rules, b"abc") == [257]
    assert unreachable_tokens(rules) == [259]
