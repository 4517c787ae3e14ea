"""bpeproof.impl.encoder against the specification: enc_R (def-bpe), dec (def-alphabet-vocab), M_r (def-merge).

Every check is differential: the implementation must return exactly what
``spec.enc`` / ``spec.dec`` return, or raise the same error class, on
hand-written rule lists (fresh ids that are not 256, 257, …, repeated pairs,
a = b rules) and on rule lists learned by ``spec.train``.  Inputs longer than
the recursive specification accepts are checked against a loop that applies
M_r rule after rule (itself checked against the specification first), so that
both merge methods of the implementation (short words, long words) and the
word cache are exercised past their boundaries.

Every test of an encoder runs twice: with the C merge loop of ``impl/_c/_fastenc.c``
(when it is built) and with the pure-Python loops (``Encoder(rules, c_loop=False)``).
The last part checks the C code against the Python code and the specification
directly: huge and scattered ids, the fallbacks, the word loop of the
tokenizer, the hand-written cl100k pre-tokenizer, and bad input.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof import spec
from bpeproof.impl import encoder as impl_encoder
from bpeproof.impl.encoder import SHORT_WORD, Encoder, check_rules, dec, enc
from bpeproof.impl.io.packed_counts import unpack_counts
from bpeproof.impl.models.sequential import SequentialModel
from bpeproof.impl.pre_tokenizers import splitter
from bpeproof.impl.pre_tokenizers.char_table import HAND_WRITTEN as SPELLING_NUMBERS
from bpeproof.impl.pre_tokenizers.char_table import SCANNERS, STEP_SCANNERS, char_table
from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer, SplitStep
from bpeproof.impl.pre_tokenizers.patterns import SPLIT_SEQUENCES, compile_pinned
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.impl.trainer import count_words
from bpeproof.impl.word_counts import WordCounts
from bpeproof.proofs_tests.checker.strategies import (
    corpora,
    data_bytes,
    fresh_ids,
    rule_lists,
    rules_and_data,
    rules_and_tokens,
    runs_over,
    texts,
)
from bpeproof.spec.types import (
    ALPHABET_SIZE,
    BPETypeError,
    InputTooLongError,
    InvalidRuleError,
    InvalidTextError,
    InvalidTokenError,
    Rule,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module", params=["c", "python"])
def c_loop(request: pytest.FixtureRequest) -> bool:
    """Whether the test's encoders merge in the C loop: a test that takes it runs with the C merge loop, then with
    the pure-Python loops."""
    if request.param == "c" and not impl_encoder.HAVE_C_LOOP:
        pytest.skip("the C extension bpeproof.impl._c._fastenc is not built (pip install -e . builds it)")
    return bool(request.param == "c")


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
def test_enc_equals_spec(c_loop: bool, case: tuple[list[Rule], bytes]) -> None:
    rules, data = case
    assert enc(rules, data, c_loop=c_loop) == spec.enc(rules, data)


@given(rules_and_data(max_rules=12, max_size=120))
def test_both_merge_methods_equal_spec(c_loop: bool, case: tuple[list[Rule], bytes]) -> None:
    rules, data = case
    expected = spec.enc(rules, data)
    encoder = Encoder(rules, c_loop=c_loop)
    assert encoder._merge_short(list(data)) == expected
    assert encoder._merge_long(list(data)) == expected
    assert list(encoder.encode_word(data)) == expected
    assert list(encoder.encode_word(data)) == expected  # from the cache


@given(corpora(), st.integers(0, 12), data_bytes(max_size=60))
def test_learned_rules(c_loop: bool, corpus: list[bytes], merges: int, extra: bytes) -> None:
    rules = spec.train(corpus, merges)
    encoder = Encoder(rules, c_loop=c_loop)
    for word in [*corpus, b"".join(corpus)[: spec.MAX_SPEC_LENGTH], extra]:
        assert encoder.encode(word) == spec.enc(rules, word)


@given(rule_lists(max_rules=8), st.data())
def test_sequential_reference_equals_spec(rules: list[Rule], data: st.DataObject) -> None:
    alphabet = sorted({part for rule in rules for part in (rule.a, rule.b) if part < ALPHABET_SIZE}) or [97]
    word = data.draw(runs_over(alphabet, max_size=80))
    assert sequential(rules, word) == spec.enc(rules, word)


@settings(max_examples=40)
@given(rule_lists(max_rules=10), st.data())
def test_long_inputs_beyond_the_spec(c_loop: bool, rules: list[Rule], data: st.DataObject) -> None:
    """Past MAX_SPEC_LENGTH, past SHORT_WORD, with the cache on and off."""
    alphabet = sorted({part for rule in rules for part in (rule.a, rule.b) if part < ALPHABET_SIZE}) or [97]
    piece = data.draw(runs_over(alphabet, max_size=60, min_size=1))
    repeat = data.draw(st.integers(1, 3000 // len(piece) + 1))
    word = piece * repeat + data.draw(runs_over(alphabet, max_size=30))
    expected = sequential(rules, word)
    encoder = Encoder(rules, cache_size=2, c_loop=c_loop)
    assert enc(rules, word, c_loop=c_loop) == expected
    assert encoder._merge_short(list(word)) == expected
    assert encoder._merge_long(list(word)) == expected
    assert list(encoder.encode_word(word)) == expected


@given(rules_and_data(max_rules=8, max_size=40), st.integers(1, 4))
def test_cache_bound_never_changes_results(c_loop: bool, case: tuple[list[Rule], bytes], size: int) -> None:
    rules, data = case
    encoder = Encoder(rules, cache_size=size, c_loop=c_loop)
    pieces = [data[i:j] for i in range(0, len(data), 5) for j in (i + 3, i + 7, len(data))]
    for _ in range(2):
        for piece in pieces:
            assert list(encoder.encode_word(piece)) == spec.enc(rules, piece)
    assert len(encoder._cache) <= size


def test_spec_length_limit_does_not_apply(c_loop: bool) -> None:
    rules = [Rule(97, 98, 300)]
    data = b"ab" * spec.MAX_SPEC_LENGTH
    with pytest.raises(InputTooLongError):
        spec.enc(rules, data)
    assert enc(rules, data, c_loop=c_loop) == [300] * spec.MAX_SPEC_LENGTH
    assert dec(rules, [300] * spec.MAX_SPEC_LENGTH) == data


def doubling_rules(levels: int, first_id: int = 1000) -> list[Rule]:
    """(a, a ↦ c1), (c1, c1 ↦ c2), …: a run of a's halves at each level (exr-run-length)."""
    rules = [Rule(97, 97, first_id)]
    for level in range(1, levels):
        previous = rules[-1].c
        rules.append(Rule(previous, previous, first_id + 7 * level))
    return rules


def test_long_run_of_one_byte(c_loop: bool) -> None:
    """a^n with doubling rules: the result spells n in binary, highest level first (exr-run-length).

    Run here for correctness only; how fast it is belongs to ``bench/bench_encode.py``.
    """
    n = 10**5
    levels = 20
    rules = doubling_rules(levels)
    ids = [97] + [rule.c for rule in rules]
    expected = [ids[level] for level in range(levels, -1, -1) if n >> level & 1]
    result = enc(rules, b"a" * n, c_loop=c_loop)
    assert result == expected
    assert dec(rules, result) == b"a" * n
    # An odd run under one a = b rule: (c c … c a), as M_r's left-to-right recursion gives.
    assert enc([Rule(97, 97, 256)], b"a" * 100_001, c_loop=c_loop) == [256] * 50_000 + [97]


# ---------------------------------------------------------------------------
# Whole-token shortcut: is_reachable must be exactly enc_R(⟨⟨t⟩⟩) = (t)
# ---------------------------------------------------------------------------


@given(rule_lists(max_rules=10))
def test_reachable_is_own_encoding(c_loop: bool, rules: list[Rule]) -> None:
    encoder = Encoder(rules, c_loop=c_loop)
    for rule in rules:
        own = spec.enc(rules, spec.dec(rules, [rule.c])) == [rule.c]
        assert encoder.is_reachable(rule.c) == own, rule
    for byte in range(0, ALPHABET_SIZE, 51):
        assert encoder.is_reachable(byte)


@pytest.mark.parametrize("check", ["impl_pair_table_equals_rule_ranks", "impl_shortcut_equals_spec"])
def test_every_pair_of_rules_up_to_renaming(check: str) -> None:
    """The encoder's pair table and whole-token shortcut on all 50 pairs of rules up to renaming the bytes: a proof
    by exhaustion for two rules (``proofs_tests/proofs/equivalence.py``)."""
    from bpeproof.proofs_tests.proofs import equivalence

    function = getattr(equivalence, check)
    wrong = [case for case in equivalence.canonical_rule_cases() if not function(*case)]
    assert not wrong, [equivalence.canonical_rules(*case) for case in wrong]


@given(corpora(), st.integers(0, 15))
def test_reachable_learned(c_loop: bool, corpus: list[bytes], merges: int) -> None:
    rules = spec.train(corpus, merges)
    encoder = Encoder(rules, c_loop=c_loop)
    for rule in rules:
        assert encoder.is_reachable(rule.c) == (spec.enc(rules, spec.dec(rules, [rule.c])) == [rule.c])


def test_same_string_tokens(c_loop: bool) -> None:
    """ex-same-string: ids 6 and 7 both stand for "abc"; enc_R("abc") = (6), so only 6 is reachable."""
    a, b, c = 97, 98, 99
    rules = [Rule(a, b, 304), Rule(b, c, 305), Rule(304, c, 306), Rule(a, 305, 307)]
    encoder = Encoder(rules, c_loop=c_loop)
    assert encoder.token_bytes(306) == encoder.token_bytes(307) == b"abc"
    assert encoder.is_reachable(306) and not encoder.is_reachable(307)
    assert encoder.whole_token(b"abc") == 306
    assert encoder.encode(b"abc") == spec.enc(rules, b"abc") == [306]


def test_repeated_pair_never_fires(c_loop: bool) -> None:
    """A second rule for the same pair is dead: after the first no (a, b) adjacency can form again."""
    rules = [Rule(97, 97, 500), Rule(500, 97, 400), Rule(97, 97, 300)]
    encoder = Encoder(rules, c_loop=c_loop)
    assert not encoder.is_reachable(300)
    for n in range(1, 12):
        assert encoder.encode(b"a" * n) == spec.enc(rules, b"a" * n)
        assert 300 not in encoder.encode(b"a" * n)


# ---------------------------------------------------------------------------
# dec and token bytes
# ---------------------------------------------------------------------------


@given(rules_and_tokens())
def test_dec_equals_spec(c_loop: bool, case: tuple[list[Rule], list[int]]) -> None:
    rules, tokens = case
    assert dec(rules, tokens) == spec.dec(rules, tokens)
    encoder = Encoder(rules, c_loop=c_loop)
    assert encoder.decode(tokens) == spec.dec(rules, tokens)
    assert encoder.decode(iter(tokens)) == spec.dec(rules, tokens)


@given(rules_and_data(max_rules=8, max_size=60))
def test_roundtrip(c_loop: bool, case: tuple[list[Rule], bytes]) -> None:
    """thm-bpe-roundtrip on the implementation: dec(enc_R s) = s for any rule list."""
    rules, data = case
    assert dec(rules, enc(rules, data, c_loop=c_loop)) == data


@given(rule_lists())
def test_token_bytes_and_size(c_loop: bool, rules: list[Rule]) -> None:
    encoder = Encoder(rules, c_loop=c_loop)
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
def test_rule_errors_match_spec(c_loop: bool, rules: list[object], data: bytes) -> None:
    assert outcome(partial(enc, c_loop=c_loop), rules, data) == outcome(spec.enc, rules, data)
    assert outcome(dec, rules, [97]) == outcome(spec.dec, rules, [97])
    assert outcome(check_rules, rules) == outcome(spec.validate_rules, rules)


def test_rule_error_names_the_index(c_loop: bool) -> None:
    with pytest.raises(InvalidRuleError, match="rule 1"):
        enc([Rule(97, 98, 256), Rule(97, 999, 257)], b"ab", c_loop=c_loop)
    with pytest.raises(InvalidRuleError, match="rule 1"):
        Encoder([Rule(97, 98, 256), Rule(97, 98, 256)], c_loop=c_loop)


@pytest.mark.parametrize("rules", [None, "ab", b"ab", 5, {(97, 98, 256)}])
def test_rules_of_the_wrong_type(c_loop: bool, rules: object) -> None:
    assert outcome(partial(enc, c_loop=c_loop), rules, b"ab") == outcome(spec.enc, rules, b"ab") == BPETypeError


@pytest.mark.parametrize("data", ["ab", [97, 98], None, 3, memoryview(b"ab")])
def test_data_of_the_wrong_type(c_loop: bool, data: object) -> None:
    assert outcome(partial(enc, c_loop=c_loop), [], data) == outcome(spec.enc, [], data) == BPETypeError


@pytest.mark.parametrize(
    "tokens",
    [[97, 300], [-1], [256], [97, True], [97, 1.0], "ab", b"ab", None, 7, [[97]], (97, 98), bytearray(b"ab")],
)
def test_token_errors_match_spec(tokens: object) -> None:
    rules = [Rule(97, 98, 257)]
    assert outcome(dec, rules, tokens) == outcome(spec.dec, rules, tokens)


def test_bytearray_data(c_loop: bool) -> None:
    rules = [Rule(97, 98, 256)]
    assert enc(rules, bytearray(b"abab"), c_loop=c_loop) == spec.enc(rules, b"abab") == [256, 256]
    assert Encoder(rules, c_loop=c_loop).encode_word(bytearray(b"abab")) == (256, 256)


def test_short_word_threshold_is_exercised() -> None:
    assert 2 < SHORT_WORD < 200
    assert impl_encoder.SHORT_WORD == SHORT_WORD


def test_engine_is_the_one_asked_for(c_loop: bool) -> None:
    assert Encoder([Rule(97, 98, 256)], c_loop=c_loop)._use_c == c_loop


# ---------------------------------------------------------------------------
# The C loop (impl/_c/_fastenc.c) against the Python loops and the specification
# ---------------------------------------------------------------------------


def python_encoder(rules: list[Rule], cache_size: int = 0) -> Encoder:
    """An encoder that merges with the pure-Python loops."""
    return Encoder(rules, cache_size=cache_size, c_loop=False)


def c_merger(rules: list[Rule]) -> Any:
    """The C merger of ``rules`` (the test is skipped when the extension is not built)."""
    if not impl_encoder.HAVE_C_LOOP:
        pytest.skip("the C extension bpeproof.impl._c._fastenc is not built")
    return Encoder(rules, c_loop=True).c_merger()


@given(rules_and_data(max_rules=10, max_size=120))
def test_c_and_python_equal_spec(c_loop: bool, case: tuple[list[Rule], bytes]) -> None:
    rules, data = case
    expected = spec.enc(rules, data)
    assert list(c_merger(rules).encode(data)) == expected
    assert list(python_encoder(rules).encode_word_uncached(data)) == expected
    assert Encoder(rules, c_loop=c_loop).encode(data) == expected


@settings(max_examples=40)
@given(rule_lists(max_rules=12), st.data())
def test_c_long_words_and_runs(rules: list[Rule], data: st.DataObject) -> None:
    """Both C methods (flat array up to 48 bytes, heap beyond) on periodic words and runs a a a a."""
    alphabet = sorted({part for rule in rules for part in (rule.a, rule.b) if part < ALPHABET_SIZE}) or [97]
    piece = data.draw(runs_over(alphabet, max_size=40, min_size=1))
    word = piece * data.draw(st.integers(1, 400 // len(piece) + 1)) + data.draw(runs_over(alphabet, max_size=30))
    merger = c_merger(rules)
    for length in sorted({0, 1, 2, 47, 48, 49, 50, 97, len(word)}):
        prefix = word[:length]
        assert list(merger.encode(prefix)) == sequential(rules, prefix)


def test_c_runs_of_one_byte() -> None:
    """(a a ↦ c) and doubling rules on every run length across the flat/heap boundary (exr-run-length)."""
    single = c_merger([Rule(97, 97, 256)])
    doubling = doubling_rules(8)
    merger = c_merger(doubling)
    for n in range(0, 300):
        assert list(single.encode(b"a" * n)) == [256] * (n // 2) + [97] * (n % 2)
        assert list(merger.encode(b"a" * n)) == sequential(doubling, b"a" * n)


def every_rule_list(alphabet: list[int], count: int) -> Iterator[list[Rule]]:
    """Every valid list of ``count`` rules over ``alphabet``: rule j joins two ids of V_{j-1} into 256 + j."""
    if count == 0:
        yield []
        return
    for rules in every_rule_list(alphabet, count - 1):
        vocabulary = alphabet + [rule.c for rule in rules]
        for a in vocabulary:
            for b in vocabulary:
                yield [*rules, Rule(a, b, ALPHABET_SIZE + len(rules))]


def test_every_rule_list_of_three_over_one_byte() -> None:
    """Small scope, exhaustively: each of the 42 valid lists of at most three rules over one byte, on every run a^n
    up to 130, by both C methods (flat array up to 48 bytes, heap beyond) and both Python loops.

    Random rule lists seldom have the shapes that matter: a heap loop that merges a popped pair whose rank has
    changed since it was pushed is right on every list of two rules, and of these 42 lists wrong only on
    (a, a ↦ c1), (c1, a ↦ c2), (c1, c1 ↦ c3), from a^5 on (the C heap from a^49 on).
    """
    word_lengths = range(131)
    for count in range(4):
        for rules in every_rule_list([97], count):
            merger = c_merger(rules) if impl_encoder.HAVE_C_LOOP else None
            python = python_encoder(rules)
            for n in word_lengths:
                word = b"a" * n
                expected = sequential(rules, word)
                if merger is not None:
                    assert list(merger.encode(word)) == expected, (rules, n)
                assert python._merge_short(list(word)) == expected, (rules, n)
                assert python._merge_long(list(word)) == expected, (rules, n)


@pytest.mark.parametrize("base", [2**31, 2**32, 2**40, 2**63, 2**64 + 5, 2**100])
def test_ids_beyond_32_and_64_bits(c_loop: bool, base: int) -> None:
    """Rule ids of any size: the C loop numbers tokens densely and reports the original int objects."""
    rules = [Rule(97, 97, base + 9), Rule(base + 9, 98, base), Rule(base, base + 9, base + 3), Rule(97, 97, base + 1)]
    for n in range(12):
        for data in (b"a" * n, b"aab" * n, b"aabaa" * n + b"a"):
            expected = sequential(rules, data)
            assert list(c_merger(rules).encode(data)) == expected
            assert Encoder(rules, c_loop=c_loop).encode(data) == expected
            assert list(python_encoder(rules).encode_word_uncached(data)) == expected
    assert Encoder(rules, c_loop=c_loop).encode(b"aabaa") == spec.enc(rules, b"aabaa") == [base + 3]


@given(rules_and_data(max_rules=8, max_size=60))
def test_fallbacks_when_the_c_loop_cannot_run(c_loop: bool, case: tuple[list[Rule], bytes]) -> None:
    """Too many rules or too long a word for 32-bit dense ids: the Python loops take over, same ids."""
    rules, data = case
    expected = spec.enc(rules, data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(impl_encoder, "C_RULE_LIMIT", len(rules) - 1)
        encoder = Encoder(rules, c_loop=c_loop)
        assert not encoder._use_c
        assert encoder.encode(data) == expected
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(impl_encoder, "C_WORD_LIMIT", 5)
        assert Encoder(rules, c_loop=c_loop).encode(data) == expected


def test_the_c_loop_is_chosen_at_construction() -> None:
    rules = [Rule(97, 98, 256)]
    assert not python_encoder(rules)._use_c
    assert python_encoder(rules).c_merger() is None
    if impl_encoder.HAVE_C_LOOP:
        encoder = Encoder(rules)  # (the C loop unless told otherwise)
        assert encoder._use_c and encoder.encode(b"abab") == [256, 256]


# -- the word loop and the pre-tokenizer of bpeproof.impl.tokenizer --------------------------------------------------


def tokenizers(rules: list[Rule], pattern: str, cache_size: int, byte_ids: list[int] | None) -> list[Tokenizer]:
    """The tokenizer with the C loops (when built) and with the pure-Python loops."""
    built: list[Tokenizer] = []
    for use_c in ([True] if impl_encoder.HAVE_C_LOOP else []) + [False]:
        if use_c:
            built.append(Tokenizer(rules, pattern, cache_size=cache_size, byte_ids=byte_ids))
        else:
            model = SequentialModel.checked(rules, byte_ids, c_loop=False)
            built.append(Tokenizer.from_model(model, pattern, cache_size=cache_size))
        assert (built[-1]._fast is not None) == use_c
    return built


@settings(max_examples=60)
@given(
    texts(max_size=60),
    st.sampled_from(["words", "cl100k", "r50k", "o200k", r"\w+|\W"]),
    st.integers(0, 4),
    st.booleans(),
    st.data(),
)
def test_tokenizer_c_and_python_equal_spec(
    text: str, pattern: str, cache_size: int, permuted: bool, data: st.DataObject
) -> None:
    """C word loop (cache filled and evicted in C) = Python word loop = spec.enc per pre-token."""
    rules = spec.train(spec.corpus_from_text(text + " ab あい") or [b" "], data.draw(st.integers(0, 25)))
    byte_ids = data.draw(st.permutations(range(ALPHABET_SIZE))) if permuted else None
    pieces = compile_pinned(pattern).findall(text)
    internal = spec.enc_words(rules, [piece.encode("utf-8") for piece in pieces if piece])
    expected = [byte_ids[t] if byte_ids is not None and t < ALPHABET_SIZE else t for t in internal]
    for tokenizer in tokenizers(rules, pattern, cache_size, byte_ids):
        for _ in range(2):
            assert tokenizer.encode(text) == expected
            assert len(tokenizer._cache) <= cache_size
            if tokenizer._fast is not None:
                assert tokenizer._fast.cached_words() <= cache_size
        assert tokenizer.decode(expected) == text
        tokenizer.clear_cache()
        assert not tokenizer._cache
        assert tokenizer._fast is None or tokenizer._fast.cached_words() == 0
        assert tokenizer.encode(text) == expected


@pytest.mark.parametrize("pattern", ["cl100k", "words"])
def test_tokenizer_falls_back_for_huge_texts(pattern: str) -> None:
    """Texts past C_TEXT_LIMIT (pieces that might not fit the C loop's 32-bit positions) take the Python loops."""
    rules = [Rule(97, 97, 256), Rule(256, 98, 300)]
    samples = ["aab aaab  b\n" * 5, "aab aaab "]
    python_loops = tokenizers(rules, pattern, 8, None)[-1]
    expected = [python_loops.encode(text) for text in samples]
    for tokenizer in tokenizers(rules, pattern, 8, None):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(splitter, "C_TEXT_LIMIT", 10)  # the first text is past it, the second is not
            assert [tokenizer.encode(text) for text in samples] == expected


@given(data_bytes(max_size=60))
def test_tokenizer_escaped_bytes(data: bytes) -> None:
    """encode_bytes: the C loop turns U+DC80..U+DCFF back into the bytes 0x80..0xFF (surrogateescape)."""
    rules = spec.train([data or b"a", b"\xff\xfe\x80"], 10)
    results = [tokenizer.encode_bytes(data) for tokenizer in tokenizers(rules, "cl100k", 8, None)]
    assert all(result == results[-1] for result in results)
    assert results[-1] == spec.enc_words(
        rules, [piece.encode("utf-8", "surrogateescape")
                for piece in compile_pinned("cl100k").findall(data.decode("utf-8", "surrogateescape"))]
    )


#: Characters where tiktoken's patterns are delicate: contractions in any case (ſ folds to s), letters without
#: case, title case and modifier letters, marks (not letters, but in o200k's letter classes), digits of other
#: scripts, white space of every kind, "/" (o200k), escaped bytes.
TRICKY = list(
    "'sSſdDmMtTlLvVeErRx1²٣Ⅷ \t\r\n\x0b\x0c\x1c\x85\xa0\u2028\u3000!.,-/日あ😀é\u0301\u0903\u20ddAbǅʰ\udc80"
)

#: The named patterns written out by hand in impl/_c/_fastenc_scan.h, in the order of their numbers there.
HAND_WRITTEN = sorted(SCANNERS, key=SCANNERS.__getitem__)


def split_pattern() -> Any:
    """``_fastenc.split_pattern`` (the test is skipped when the extension is not built)."""
    if not impl_encoder.HAVE_C_LOOP:
        pytest.skip("the C extension bpeproof.impl._c._fastenc is not built")
    from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]

    return _fastenc.split_pattern


#: Every spelling a scanner runs (``char_table.HAND_WRITTEN``), compiled on the pinned classes, with its number.
SPELLINGS = [(compile_pinned(source), which) for source, which in SPELLING_NUMBERS.items()]


@given(st.text(st.sampled_from(TRICKY), max_size=40) | st.text(st.sampled_from("a1 \n\r'sL!"), max_size=12)
       | st.text(max_size=40))
def test_hand_written_patterns_are_the_regex(text: str) -> None:
    """The pre-tokenizers written out in impl/_c/_fastenc_scan.h are regex.findall with each expression the engine
    runs them for: the named patterns, as a tokenizer.json the project writes spells them, and ByteLevel's."""
    split = split_pattern()
    table = char_table()
    for compiled, which in SPELLINGS:
        assert split(text, table, which) == compiled.findall(text), compiled.pattern[:40]


#: Characters where DeepSeek-V3's steps are delicate: digits of every kind, kana and ideographs at the ends of their
#: ranges and those in them that are marks, symbols or punctuation, ASCII punctuation before ASCII letters or others,
#: marks, controls and format characters (no step matches them), white space and line breaks.
TRICKY_STEPS = list(
    "1234²٣Ⅷ〇一龥龦぀あゟ゙゛゠アー・ヿ、。日本.,'!@[`{~aZé\u0301\u0903 \t\r\n\x00\x85\xa0\u200d\u3000😀Σ$+"
)


STEP_EXAMPLES = [
    "", "x\nabc", "\r\na", " .Hello", ".é", "a・b ー゛゙", "12345あ6", "\u200dabc", "a \n  b", "x  ", "  \t1",
    "日本語123abc", "\u0301a", "a\u0301", " !!\n\nx", "@@a", "$1", " $ x", "ab\x00\x00cd", "\u3000日", "٣٣٣٣",
]


@given(st.text(st.sampled_from(TRICKY_STEPS), max_size=40)
       | st.text(st.sampled_from("1あ・.a \n\u0301\u200d!"), max_size=10) | st.text(max_size=40))
def test_hand_written_split_steps_are_the_steps(text: str) -> None:
    """The sequences of split steps written out in impl/_c/_fastenc_scan.h cut as the steps do, one after another
    (``PreTokenizer.split``, the ``regex`` module on the pinned classes)."""
    split = split_pattern()
    table = char_table()
    for name, which in STEP_SCANNERS.items():
        steps = PreTokenizer([SplitStep(source) for source in SPLIT_SEQUENCES[name]])
        for sample in (text, *STEP_EXAMPLES):
            assert split(sample, table, which) == steps.split(sample), (name, sample)


def test_the_scanners_differ_where_their_patterns_do() -> None:
    """llama3 and cl100k part at a run of white space ending the text after a line break; qwen2 and llama3 at
    digits: each scanner is its own pattern, not another's (the test above would pass with two equal scanners
    only if their patterns agreed on every text it draws)."""
    split = split_pattern()
    table = char_table()
    assert split("a\n  ", table, SCANNERS["cl100k"]) == ["a", "\n  "]
    assert split("a\n  ", table, SCANNERS["llama3"]) == ["a", "\n", "  "]
    assert split("1234", table, SCANNERS["llama3"]) == ["123", "4"]
    assert split("1234", table, SCANNERS["qwen2"]) == ["1", "2", "3", "4"]


def test_hand_written_pattern_examples() -> None:
    split = split_pattern()
    table = char_table()
    examples = [
        "", "don't I'M 'LL 'ſ 'Ve 're' DON'T you'RE", "  \n\n  x  ", "a  \r\n", "   ", "x\u3000\u3000y",
        "1234567 ²³", "!!!\r\n\r\nx", " !?\n", "\t\tword", "'", "''s", "\udc80\udcff abc", "a\u0301b",
        "😀😀 😀", "HTTPServer getURL ǅemal ʰa", "a/b//\n/", " \u0301A!", "\u0301A!", "ABC'S", "path/to/file\n",
        "'llama 'velvet 'rex 'Rex we'LLX 'sdmt 'ed",  # each contraction cut off the letters that follow it
        "a\n  ", "x \n\t", "12345 6",  # where cl100k, llama3 and qwen2 part
    ]
    for text in examples:
        for compiled, which in SPELLINGS:
            assert split(text, table, which) == compiled.findall(text), (compiled.pattern[:40], text)
    assert len(table) == 2 * 0x110000
    with pytest.raises(ValueError):
        split("abc", b"short", 0)
    with pytest.raises(ValueError):
        split("abc", table, len(SCANNERS) + len(STEP_SCANNERS))
    with pytest.raises(TypeError):
        split(b"abc", table, 0)


#: TRICKY without the escaped byte: the texts of a corpus are decoded UTF-8, which holds no lone surrogate.
TRICKY_TEXT = [char for char in TRICKY if not 0xD800 <= ord(char) < 0xE000]


@settings(max_examples=150)
@given(st.lists(st.text(st.sampled_from(TRICKY_TEXT), max_size=30) | st.text(max_size=30), max_size=8),
       st.integers(0, 8))
def test_word_counts_are_count_words(c_loop: bool, texts: list[str], cut: int) -> None:
    """``WordCounts`` (the C counter for tiktoken's patterns) adds up, over its calls, what ``count_words`` counts
    with the regex module on the pinned classes."""
    for name in [*HAND_WRITTEN, "words"]:
        counts = WordCounts(name, c_loop=c_loop)
        counts.add(texts[:cut])
        counts.add(iter(texts[cut:]))
        assert counts.counts() == count_words(texts, pretokenize=compile_pinned(name).findall), name
        assert unpack_counts([counts.packed()]) == counts.counts(), name  # the trainer's packed table


def test_word_counts_examples(c_loop: bool) -> None:
    """The same word from texts of every str kind (1, 2 and 4 bytes a code point) is one word; many distinct
    words (the table grows); texts past the scanner's limit; a lone surrogate is a named error."""
    counts = WordCounts("cl100k", c_loop=c_loop)
    counts.add(["ab cd", "ab 日", "ab 😀 ab"])
    assert counts.counts() == Counter({b"ab": 3, b" cd": 1, " 日".encode(): 1, " 😀".encode(): 1, b" ab": 1})
    many = [f"w{index} x{index % 7}" for index in range(30_000)]
    counts = WordCounts("r50k", c_loop=c_loop)
    counts.add(many)
    assert counts.counts() == count_words(many, pretokenize=compile_pinned("r50k").findall)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(splitter, "C_TEXT_LIMIT", 10)
        counts = WordCounts("o200k", c_loop=c_loop)
        counts.add(["short one", "a text longer than ten", "short one"])
        assert counts.counts() == count_words(["short one", "a text longer than ten", "short one"],
                                              pretokenize=compile_pinned("o200k").findall)
    counts = WordCounts("cl100k", c_loop=c_loop)
    with pytest.raises(InvalidTextError, match="cannot be encoded as UTF-8"):  # when it is counted, or at the end
        counts.add(["ok \udc80x"])
        counts.counts()
    counts = WordCounts("cl100k", c_loop=c_loop)
    with pytest.raises(InvalidTextError, match="cannot be encoded as UTF-8"):  # packed for the trainer: the same
        counts.add(["ok \udc80x"])
        counts.packed()
    with pytest.raises(BPETypeError, match="must be str"):
        WordCounts("cl100k", c_loop=c_loop).add([b"bytes"])  # type: ignore[list-item]


def test_tokenizer_uses_the_hand_written_patterns() -> None:
    """The tokenizer takes the hand-written pre-tokenizer for tiktoken's patterns, and only with the C loop."""
    if not impl_encoder.HAVE_C_LOOP:
        pytest.skip("the C extension bpeproof.impl._c._fastenc is not built")
    rules = [Rule(97, 98, 256)]
    for name in [*HAND_WRITTEN, "words"]:
        c_loop, python_loops = tokenizers(rules, name, 16, None)
        assert (c_loop._scanned is not None) == (name in HAND_WRITTEN)
        assert python_loops._scanned is None


# -- bad input to the C code: exceptions, never a crash -----------------------------------------------------


def test_c_merger_rejects_bad_input() -> None:
    if not impl_encoder.HAVE_C_LOOP:
        pytest.skip("the C extension bpeproof.impl._c._fastenc is not built")
    from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]

    outputs = list(range(ALPHABET_SIZE + 1))
    with pytest.raises(TypeError):
        _fastenc.Merger(None, [97], outputs)
    with pytest.raises(ValueError):
        _fastenc.Merger([97], [], outputs)
    with pytest.raises(ValueError):
        _fastenc.Merger([97], [97], outputs[:-1])
    with pytest.raises(ValueError):
        _fastenc.Merger([256], [97], outputs)  # rule 0 may only join bytes
    with pytest.raises(ValueError):
        _fastenc.Merger([-1], [97], outputs)
    with pytest.raises(ValueError):
        _fastenc.Merger([2**70], [97], outputs)
    with pytest.raises(TypeError):
        _fastenc.Merger(["a"], [97], outputs)
    with pytest.raises(TypeError):
        _fastenc.Merger([97], [97], [*outputs[:-1], "x"])
    merger = _fastenc.Merger([97], [97], outputs)
    assert merger.encode(b"aaa") == (256, 97)
    assert merger.encode(bytearray(b"aa")) == merger.encode(memoryview(b"aa")) == (256,)
    for bad in ["aa", 5, None, [97, 97]]:
        with pytest.raises(TypeError):
            merger.encode(bad)
    with pytest.raises(TypeError):
        merger.encode_pieces(("aa",), {}, 4)
    with pytest.raises(TypeError):
        merger.encode_pieces(["aa", b"aa"], {}, 4)
    with pytest.raises(TypeError):
        merger.encode_pieces(["aa"], [], 4)
    with pytest.raises(TypeError):
        merger.encode_pieces(["aa"], {"aa": [256]}, 4)
    with pytest.raises(UnicodeEncodeError):
        merger.encode_pieces(["a\ud800"], {}, 4)
    cache: dict[str, tuple[int, ...]] = {}
    assert merger.encode_pieces(["aaa", "\udce1\udce1", "aa", "aaa"], cache, 2) == [256, 97, 225, 225, 256, 256, 97]
    assert list(cache) == ["aa", "aaa"]  # full at 2: the older half went before each new word
    assert merger.encode_pieces(["aa"], {"aa": (1, 2)}, 0) == [1, 2]
    table = char_table()
    assert merger.encode_text("aaa \udce1 aa", table, 0, 4) == [256, 97, 32, 225, 32, 256]
    assert merger.cached_words() == 3
    with pytest.raises(ValueError):
        merger.encode_text("aa", b"short", 0, 4)
    with pytest.raises(ValueError):
        merger.encode_text("aa", table, -1, 4)
    with pytest.raises(TypeError):
        merger.encode_text("aa", table, 0, "4")
    with pytest.raises(TypeError):
        merger.encode_text(b"aa", table, 0, 4)
    with pytest.raises(UnicodeEncodeError):
        merger.encode_text("a\ud800", table, 1, 4)
    merger.clear_cache()
    assert merger.cached_words() == 0


@settings(max_examples=30)
@given(st.lists(st.text(st.sampled_from("ab \u00e9\u3042\U0001f600"), min_size=1, max_size=6), max_size=60),
       st.integers(0, 5))
def test_c_word_cache_evicts_and_keeps_results(words: list[str], limit: int) -> None:
    """The C word cache (keyed by code points; pieces of every str kind) never changes the ids."""
    if not impl_encoder.HAVE_C_LOOP:
        pytest.skip("the C extension bpeproof.impl._c._fastenc is not built")
    rules = spec.train([word.encode("utf-8") for word in words] or [b"ab"], 20)
    merger = c_merger(rules)
    table = char_table()
    text = "".join(words)
    pieces = compile_pinned("cl100k").findall(text)
    expected = spec.enc_words(rules, [piece.encode("utf-8") for piece in pieces])
    for _ in range(3):
        assert merger.encode_text(text, table, 0, limit) == expected
        assert merger.cached_words() <= limit
        for piece in pieces:  # each piece alone: another str kind than inside the text, same cache entry
            assert merger.encode_text(piece, table, 0, limit) == spec.enc_words(
                rules, [part.encode("utf-8") for part in compile_pinned("cl100k").findall(piece)]
            )
