"""impl.encoder against the specification: enc_R (def-bpe), dec (def-alphabet-vocab), M_r (def-merge).

Every check is differential: the implementation must return exactly what
``spec.enc`` / ``spec.dec`` return, or raise the same error class, on
hand-written rule lists (fresh ids that are not 256, 257, …, repeated pairs,
a = b rules) and on rule lists learned by ``spec.train``.  Inputs longer than
the recursive specification accepts are checked against a loop that applies
M_r rule after rule (itself checked against the specification first), so that
both merge methods of the implementation (short words, long words) and the
word cache are exercised past their boundaries.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spec
from impl import encoder as impl_encoder
from impl.encoder import SHORT_WORD, Encoder, check_rules, dec, enc
from proofs_tests.strategies import (
    corpora,
    data_bytes,
    fresh_ids,
    rule_lists,
    rules_and_data,
    rules_and_tokens,
    runs_over,
)
from spec.types import (
    ALPHABET_SIZE,
    BPETypeError,
    InputTooLongError,
    InvalidRuleError,
    InvalidTokenError,
    Rule,
)

ROOT = Path(__file__).resolve().parents[1]


def sequential(rules: list[Rule], data: bytes) -> list[int]:
    """enc_R by its definition, with a loop instead of recursion: M_{r_1}, then M_{r_2}, … (def-merge, def-bpe)."""
    tokens = list(data)
    for rule in rules:
        out: list[int] = []
        i = 0
        while i < len(tokens):
            if i + 1 < len(tokens) and tokens[i] == rule.a and tokens[i + 1] == rule.b:
                out.append(rule.c)
                i += 2
            else:
                out.append(tokens[i])
                i += 1
        tokens = out
    return tokens


# ---------------------------------------------------------------------------
# enc: hand-written and learned rule lists
# ---------------------------------------------------------------------------


@given(rules_and_data())
def test_enc_equals_spec(case: tuple[list[Rule], bytes]) -> None:
    rules, data = case
    assert enc(rules, data) == spec.enc(rules, data)


@given(rules_and_data(max_rules=12, max_size=120))
def test_both_merge_methods_equal_spec(case: tuple[list[Rule], bytes]) -> None:
    rules, data = case
    expected = spec.enc(rules, data)
    encoder = Encoder(rules)
    assert encoder._merge_short(list(data)) == expected
    assert encoder._merge_long(list(data)) == expected
    assert list(encoder.encode_word(data)) == expected
    assert list(encoder.encode_word(data)) == expected  # from the cache


@given(corpora(), st.integers(0, 12), data_bytes(max_size=60))
def test_learned_rules(corpus: list[bytes], merges: int, extra: bytes) -> None:
    rules = spec.train(corpus, merges)
    encoder = Encoder(rules)
    for word in [*corpus, b"".join(corpus)[: spec.MAX_SPEC_LENGTH], extra]:
        assert encoder.encode(word) == spec.enc(rules, word)


@given(rule_lists(max_rules=8), st.data())
def test_sequential_reference_equals_spec(rules: list[Rule], data: st.DataObject) -> None:
    alphabet = sorted({part for rule in rules for part in (rule.a, rule.b) if part < ALPHABET_SIZE}) or [97]
    word = data.draw(runs_over(alphabet, max_size=80))
    assert sequential(rules, word) == spec.enc(rules, word)


@settings(max_examples=40)
@given(rule_lists(max_rules=10), st.data())
def test_long_inputs_beyond_the_spec(rules: list[Rule], data: st.DataObject) -> None:
    """Past MAX_SPEC_LENGTH, past SHORT_WORD, with the cache on and off."""
    alphabet = sorted({part for rule in rules for part in (rule.a, rule.b) if part < ALPHABET_SIZE}) or [97]
    piece = data.draw(runs_over(alphabet, max_size=60, min_size=1))
    repeat = data.draw(st.integers(1, 3000 // len(piece) + 1))
    word = piece * repeat + data.draw(runs_over(alphabet, max_size=30))
    expected = sequential(rules, word)
    encoder = Encoder(rules, cache_size=2)
    assert enc(rules, word) == expected
    assert encoder._merge_short(list(word)) == expected
    assert encoder._merge_long(list(word)) == expected
    assert list(encoder.encode_word(word)) == expected


@given(rules_and_data(max_rules=8, max_size=40), st.integers(1, 4))
def test_cache_bound_never_changes_results(case: tuple[list[Rule], bytes], size: int) -> None:
    rules, data = case
    encoder = Encoder(rules, cache_size=size)
    pieces = [data[i:j] for i in range(0, len(data), 5) for j in (i + 3, i + 7, len(data))]
    for _ in range(2):
        for piece in pieces:
            assert list(encoder.encode_word(piece)) == spec.enc(rules, piece)
    assert len(encoder._cache) <= size


def test_spec_length_limit_does_not_apply() -> None:
    rules = [Rule(97, 98, 300)]
    data = b"ab" * spec.MAX_SPEC_LENGTH
    with pytest.raises(InputTooLongError):
        spec.enc(rules, data)
    assert enc(rules, data) == [300] * spec.MAX_SPEC_LENGTH
    assert dec(rules, [300] * spec.MAX_SPEC_LENGTH) == data


def doubling_rules(levels: int, first_id: int = 1000) -> list[Rule]:
    """(a, a ↦ c1), (c1, c1 ↦ c2), …: a run of a's halves at each level (exr-run-length)."""
    rules = [Rule(97, 97, first_id)]
    for level in range(1, levels):
        previous = rules[-1].c
        rules.append(Rule(previous, previous, first_id + 7 * level))
    return rules


def test_long_run_of_one_byte() -> None:
    """a^n with doubling rules: the result spells n in binary, highest level first (exr-run-length).

    Run here for correctness only; how fast it is belongs to ``bench/bench_encode.py``.
    """
    n = 10**5
    levels = 20
    rules = doubling_rules(levels)
    ids = [97] + [rule.c for rule in rules]
    expected = [ids[level] for level in range(levels, -1, -1) if n >> level & 1]
    result = enc(rules, b"a" * n)
    assert result == expected
    assert dec(rules, result) == b"a" * n
    # An odd run under one a = b rule: (c c … c a), as M_r's left-to-right recursion gives.
    assert enc([Rule(97, 97, 256)], b"a" * 100_001) == [256] * 50_000 + [97]


# ---------------------------------------------------------------------------
# Whole-token shortcut: is_reachable must be exactly enc_R(⟨⟨t⟩⟩) = (t)
# ---------------------------------------------------------------------------


@given(rule_lists(max_rules=10))
def test_reachable_is_own_encoding(rules: list[Rule]) -> None:
    encoder = Encoder(rules)
    for rule in rules:
        own = spec.enc(rules, spec.dec(rules, [rule.c])) == [rule.c]
        assert encoder.is_reachable(rule.c) == own, rule
    for byte in range(0, ALPHABET_SIZE, 51):
        assert encoder.is_reachable(byte)


@given(corpora(), st.integers(0, 15))
def test_reachable_learned(corpus: list[bytes], merges: int) -> None:
    rules = spec.train(corpus, merges)
    encoder = Encoder(rules)
    for rule in rules:
        assert encoder.is_reachable(rule.c) == (spec.enc(rules, spec.dec(rules, [rule.c])) == [rule.c])


def test_same_string_tokens() -> None:
    """ex-same-string: ids 6 and 7 both stand for "abc"; enc_R("abc") = (6), so only 6 is reachable."""
    a, b, c = 97, 98, 99
    rules = [Rule(a, b, 304), Rule(b, c, 305), Rule(304, c, 306), Rule(a, 305, 307)]
    encoder = Encoder(rules)
    assert encoder.token_bytes(306) == encoder.token_bytes(307) == b"abc"
    assert encoder.is_reachable(306) and not encoder.is_reachable(307)
    assert encoder.whole_token(b"abc") == 306
    assert encoder.encode(b"abc") == spec.enc(rules, b"abc") == [306]


def test_repeated_pair_never_fires() -> None:
    """A second rule for the same pair is dead: after the first no (a, b) adjacency can form again."""
    rules = [Rule(97, 97, 500), Rule(500, 97, 400), Rule(97, 97, 300)]
    encoder = Encoder(rules)
    assert not encoder.is_reachable(300)
    for n in range(1, 12):
        assert encoder.encode(b"a" * n) == spec.enc(rules, b"a" * n)
        assert 300 not in encoder.encode(b"a" * n)


# ---------------------------------------------------------------------------
# dec and token bytes
# ---------------------------------------------------------------------------


@given(rules_and_tokens())
def test_dec_equals_spec(case: tuple[list[Rule], list[int]]) -> None:
    rules, tokens = case
    assert dec(rules, tokens) == spec.dec(rules, tokens)
    encoder = Encoder(rules)
    assert encoder.decode(tokens) == spec.dec(rules, tokens)
    assert encoder.decode(iter(tokens)) == spec.dec(rules, tokens)


@given(rules_and_data(max_rules=8, max_size=60))
def test_roundtrip(case: tuple[list[Rule], bytes]) -> None:
    """thm-bpe-roundtrip on the implementation: dec(enc_R s) = s for any rule list."""
    rules, data = case
    assert dec(rules, enc(rules, data)) == data


@given(rule_lists())
def test_token_bytes_and_size(rules: list[Rule]) -> None:
    encoder = Encoder(rules)
    assert encoder.vocabulary_size == len(spec.vocabulary(rules)) == ALPHABET_SIZE + len(rules)
    for token in spec.vocabulary(rules):
        assert encoder.token_bytes(token) == spec.symbols(rules, token)
    with pytest.raises(InvalidTokenError):
        encoder.token_bytes(max(spec.vocabulary(rules)) + 1)


# ---------------------------------------------------------------------------
# Errors: the same classes as the specification, for the same inputs
# ---------------------------------------------------------------------------


def outcome(function: object, *args: object) -> object:
    try:
        return function(*args)  # type: ignore[operator]
    except (BPETypeError, InvalidRuleError, InvalidTokenError) as error:
        return type(error)


@st.composite
def broken_rule_lists(draw: st.DrawFn) -> list[object]:
    """A valid list with one rule spoiled: a part outside V_{j-1}, c in V_{j-1} or negative, or a wrong type."""
    rules: list[object] = list(draw(rule_lists(max_rules=6)))
    ids = draw(fresh_ids(1))
    bad = draw(
        st.sampled_from(
            [
                Rule(ids[0] + 10_000, 97, ids[0]),
                Rule(97, ids[0] + 10_000, ids[0]),
                Rule(97, 98, 97),
                Rule(97, 98, -1),
                [97, 98, ids[0]],
                (97, 98),
                (97, True, ids[0]),
                (97, 98.0, ids[0]),
                "abc",
            ]
        )
    )
    reuse = draw(st.booleans())
    if rules and reuse:
        previous = draw(st.sampled_from([r for r in rules if isinstance(r, Rule)]))
        bad = Rule(97, 98, previous.c)  # an id already in V_{j-1}
    rules.insert(draw(st.integers(0, len(rules))), bad)
    return rules


@given(broken_rule_lists(), data_bytes(max_size=10))
def test_rule_errors_match_spec(rules: list[object], data: bytes) -> None:
    assert outcome(enc, rules, data) == outcome(spec.enc, rules, data)
    assert outcome(dec, rules, [97]) == outcome(spec.dec, rules, [97])
    assert outcome(check_rules, rules) == outcome(spec.validate_rules, rules)


def test_rule_error_names_the_index() -> None:
    with pytest.raises(InvalidRuleError, match="rule 1"):
        enc([Rule(97, 98, 256), Rule(97, 999, 257)], b"ab")
    with pytest.raises(InvalidRuleError, match="rule 1"):
        Encoder([Rule(97, 98, 256), Rule(97, 98, 256)])


@pytest.mark.parametrize("rules", [None, "ab", b"ab", 5, {(97, 98, 256)}])
def test_rules_of_the_wrong_type(rules: object) -> None:
    assert outcome(enc, rules, b"ab") == outcome(spec.enc, rules, b"ab") == BPETypeError


@pytest.mark.parametrize("data", ["ab", [97, 98], None, 3, memoryview(b"ab")])
def test_data_of_the_wrong_type(data: object) -> None:
    assert outcome(enc, [], data) == outcome(spec.enc, [], data) == BPETypeError


@pytest.mark.parametrize(
    "tokens",
    [[97, 300], [-1], [256], [97, True], [97, 1.0], "ab", b"ab", None, 7, [[97]], (97, 98), bytearray(b"ab")],
)
def test_token_errors_match_spec(tokens: object) -> None:
    rules = [Rule(97, 98, 257)]
    assert outcome(dec, rules, tokens) == outcome(spec.dec, rules, tokens)


def test_bytearray_data() -> None:
    rules = [Rule(97, 98, 256)]
    assert enc(rules, bytearray(b"abab")) == spec.enc(rules, b"abab") == [256, 256]
    assert Encoder(rules).encode_word(bytearray(b"abab")) == (256, 256)


# ---------------------------------------------------------------------------
# The wall: the encoder may use only spec.types
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["encoder.py", "tokenizer.py", "patterns.py", "atomic.py"])
def test_imports_only_spec_types(name: str) -> None:
    tree = ast.parse((ROOT / "impl" / name).read_text(encoding="utf-8"))
    used = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "spec"
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name.split(".")[0] == "spec"
    }
    assert used <= {"spec.types"}, used


def test_short_word_threshold_is_exercised() -> None:
    assert 2 < SHORT_WORD < 200
    assert impl_encoder.SHORT_WORD == SHORT_WORD
