"""The article's worked items, reproduced exactly by the specification."""

from __future__ import annotations

import math

import pytest

from bpeproof import spec
from bpeproof.spec.types import Rule

TRACE_CORPUS = [b"slow"] * 4 + [b"slower"] * 2 + [b"lowest"] * 3 + [b"newest"] * 3


def names(rules: list[Rule], tokens: tuple[int, ...] | list[int]) -> list[str]:
    """Tokens written as the strings they stand for, as the article's tables write them."""
    return [spec.symbols(rules, t).decode("ascii") for t in tokens]


def pair_names(rules: list[Rule], pair: tuple[int, int]) -> tuple[str, str]:
    a, b = names(rules, list(pair))
    return a, b


# --- ex-training-trace ---------------------------------------------------------------------------------------------


def test_training_trace_table() -> None:
    trace = spec.train_trace(TRACE_CORPUS, 5)
    rules = trace.rules
    assert (trace.corpus_words, trace.corpus_symbols) == (12, 64)
    rows = [
        (
            pair_names(rules, (step.rule.a, step.rule.b)),
            step.count,
            [pair_names(rules, pair) for pair in step.tied],
            spec.symbols(rules, step.rule.c).decode(),
            step.total_tokens,
        )
        for step in trace.steps
    ]
    assert rows == [
        (("l", "o"), 9, [("o", "w")], "lo", 55),
        (("lo", "w"), 9, [], "low", 46),
        (("e", "s"), 6, [("s", "t"), ("s", "low")], "es", 40),
        (("s", "low"), 6, [("es", "t")], "slow", 34),
        (("es", "t"), 6, [], "est", 28),
    ]
    assert trace.totals == [64, 55, 46, 40, 34, 28]
    # The segmentation column, one representative of each distinct word (slow / slower / lowest / newest).
    segmentations = [
        " / ".join(" ".join(names(rules, step.words[k])) for k in (0, 4, 6, 9)) for step in trace.steps
    ]
    assert segmentations == [
        "s lo w / s lo w e r / lo w e s t / n e w e s t",
        "s low / s low e r / low e s t / n e w e s t",
        "s low / s low e r / low es t / n e w es t",
        "slow / slow e r / low es t / n e w es t",
        "slow / slow e r / low est / n e w est",
    ]
    assert rules == [Rule(108, 111, 256), Rule(256, 119, 257), Rule(101, 115, 258), Rule(115, 257, 259),
                     Rule(258, 116, 260)]
    assert len(spec.vocabulary(rules)) == 261


def test_training_trace_unbounded_and_slowest() -> None:
    unbounded = spec.train_trace(TRACE_CORPUS, None)
    assert len(unbounded.steps) == 11
    assert unbounded.totals[-1] == 12
    assert unbounded.corpus_symbols - unbounded.corpus_words == 52  # the bound N − K, far from reached
    rules = spec.train(TRACE_CORPUS, 5)
    assert names(rules, spec.enc(rules, b"slowest")) == ["slow", "est"]
    # The figure: s l o w e s t → s lo w e s t → s low e s t → s low es t → slow es t → slow est
    tokens = list(b"slowest")
    steps = []
    for rule in rules:
        tokens = spec.apply_rule(rule, tokens)
        steps.append(" ".join(names(rules, tokens)))
    assert steps == ["s lo w e s t", "s low e s t", "s low es t", "slow es t", "slow est"]


# --- ex-bits-per-token ---------------------------------------------------------------------------------------------


def test_bits_per_token_table() -> None:
    assert round(spec.bits_per_token(50257), 2) == 15.62
    assert round(spec.bits_per_token(261), 2) == 8.03
    rows = []
    for merges in (0, 2, 5, 10, 11):
        trace = spec.train_trace(TRACE_CORPUS, merges)
        total = trace.totals[-1]
        rows.append((merges, len(spec.vocabulary(trace.rules)), total, round(trace.corpus_symbols / total, 2)))
    assert rows == [(0, 256, 64, 1.00), (2, 258, 46, 1.39), (5, 261, 28, 2.29), (10, 266, 14, 4.57),
                    (11, 267, 12, 5.33)]
    # 4 bytes per token would need 2^32 distinct tokens: more than 50,257 (prop-token-information).
    assert not spec.injection_possible(256**4, 50257, 1)


# --- ex-same-string ------------------------------------------------------------------------------------------------


def test_same_string_tokens() -> None:
    # The article's ids 4..7 are bytes in byte-level BPE; any fresh ids do, so 304..307 stand for them.
    a, b, c = b"abc"
    rules = [Rule(a, b, 304), Rule(b, c, 305), Rule(304, c, 306), Rule(a, 305, 307)]
    assert spec.symbols(rules, 304) == b"ab"
    assert spec.symbols(rules, 305) == b"bc"
    assert spec.dec(rules, [306]) == spec.dec(rules, [307]) == b"abc"
    assert spec.enc(rules, b"abc") == [306]
    assert spec.enc(rules, spec.dec(rules, [307])) == [306] != [307]
    assert len(spec.vocabulary(rules)) == 256 + 4  # ids are 256 + m, the strings fewer


# --- prop-bpe-greedy-not-optimal -----------------------------------------------------------------------------------


def test_greedy_is_not_shortest() -> None:
    corpus = [b"ab"] * 4 + [b"bcd"] * 2 + [b"bc"]
    trace = spec.train_trace(corpus, 3)
    rules = trace.rules
    assert [step.count for step in trace.steps] == [4, 3, 2]
    assert [spec.symbols(rules, r.c) for r in rules] == [b"ab", b"bc", b"bcd"]
    assert sorted(s for s, _ in spec.token_strings(rules) if s in (b"a", b"b", b"c", b"d", b"ab", b"bc", b"bcd")) == \
        [b"a", b"ab", b"b", b"bc", b"bcd", b"c", b"d"]
    greedy = spec.enc(rules, b"abcd")
    assert [spec.symbols(rules, t) for t in greedy] == [b"ab", b"c", b"d"]
    best = spec.shortest(rules, b"abcd")
    assert [spec.symbols(rules, t) for t in best] == [b"a", b"bcd"]
    assert len(best) == 2 < 3 == len(greedy)


# --- prop-utf8-boundary, def-utf8 ----------------------------------------------------------------------------------


def test_utf8_boundary() -> None:
    assert "あ".encode().hex(" ") == "e3 81 82" and "い".encode().hex(" ") == "e3 81 84"
    trace = spec.train_trace(["あい".encode()] * 2, 1)
    assert trace.rules == [Rule(0xE3, 0x81, 256)]
    assert trace.steps[0].count == 4
    rules = trace.rules
    ids = spec.enc(rules, "あ".encode())
    assert ids == [256, 0x82]
    assert [spec.token_is_valid_utf8(rules, t) for t in ids] == [False, False]
    for token in ids:
        with pytest.raises(UnicodeDecodeError):
            spec.symbols(rules, token).decode("utf-8")
    assert spec.dec_text(rules, ids) == "あ"
    decoder = spec.StreamDecoder(rules)
    assert decoder.feed([256]) == ""  # E3 81 is held back: the character is not complete
    assert decoder.feed([0x82]) == "あ"
    assert decoder.finish() == ""


def test_three_byte_characters() -> None:
    text = "数学は積み重ねです"
    assert (len(text), len(text.encode())) == (9, 27)
    assert len(spec.enc_text([], text)) == 27


def test_utf8_forms() -> None:
    for char, length in (("a", 1), ("é", 2), ("あ", 3), ("😀", 4)):
        encoded = char.encode()
        assert spec.text.utf8_sequence_length(encoded[0]) == length == len(encoded)
        assert all(spec.text.is_continuation(byte) for byte in encoded[1:])


# --- exercises -----------------------------------------------------------------------------------------------------


def test_exercise_apply_merge() -> None:
    a = ord("a")
    rule = Rule(a, a, 256)
    assert spec.apply_rule(rule, [a] * 4) == [256, 256]
    assert (spec.cnt([a] * 4, a, a), spec.rep(rule, [a] * 4)) == (3, 2)
    rules = spec.train(TRACE_CORPUS, 5)
    assert names(rules, spec.enc(rules, b"lower")) == ["low", "e", "r"]


@pytest.mark.parametrize("length", range(0, 12))
def test_exercise_run_length(length: int) -> None:
    rule = Rule(97, 97, 256)
    assert spec.rep(rule, [97] * length) == length // 2
    assert spec.cnt([97] * length, 97, 97) == max(0, length - 1)


@pytest.mark.parametrize("n", range(2, 12))
def test_exercise_bound_attained(n: int) -> None:
    trace = spec.train_trace([bytes(range(65, 65 + n))], None)
    assert len(trace.steps) == n - 1 == trace.corpus_symbols - trace.corpus_words


def test_exercise_concatenation() -> None:
    a, b, c, d = b"abcd"
    rules = [Rule(b, c, 256), Rule(a, b, 257), Rule(c, d, 258)]
    s, t = b"ab", b"cd"
    assert len(spec.enc(rules, s + t)) == 3 > len(spec.enc(rules, s)) + len(spec.enc(rules, t)) == 2
    x, y = spec.enc(rules, s), spec.enc(rules, t)
    assert spec.dec(rules, x + y) == spec.dec(rules, x) + spec.dec(rules, y)


def test_character_level_is_zero_merges() -> None:
    """rem-other-tokenizers: byte level is m = 0."""
    assert spec.train(TRACE_CORPUS, 0) == []
    assert spec.enc([], b"slow") == list(b"slow")
    assert math.isclose(spec.compression_rate([], b"slow"), 1.0)
