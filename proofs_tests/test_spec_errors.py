"""Bad input gets a ValueError or TypeError subclass whose message names the offending item."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpeproof import spec
from bpeproof.spec.types import (
    BPETypeError,
    BPEValueError,
    InputTooLongError,
    InvalidCorpusError,
    InvalidRuleError,
    InvalidTextError,
    InvalidTokenError,
    Rule,
)


@pytest.mark.parametrize(
    ("corpus", "error", "message"),
    [
        ([], InvalidCorpusError, "K >= 1"),
        ([b"ab", b""], InvalidCorpusError, "word 1 is empty"),
        ([b"ab", "cd"], BPETypeError, "word 1 must be bytes"),
        (b"abc", BPETypeError, "corpus must be a sequence"),
        ("abc", BPETypeError, "corpus must be a sequence"),
        ([b"a" * (spec.MAX_SPEC_LENGTH + 1)], InputTooLongError, "word 0"),
    ],
)
def test_bad_corpus(corpus: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        spec.train(corpus, 3)


@pytest.mark.parametrize(
    ("num_merges", "error", "message"),
    [(-1, InvalidCorpusError, "-1 is negative"), (1.5, BPETypeError, "float"), (True, BPETypeError, "bool")],
)
def test_bad_num_merges(num_merges: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        spec.train([b"ab"], num_merges)


@pytest.mark.parametrize(
    ("rules", "error", "message"),
    [
        ([Rule(97, 98, 256), Rule(256, 300, 257)], InvalidRuleError, r"rule 1 .*part b = 300"),
        ([Rule(97, 98, 256), Rule(97, 98, 256)], InvalidRuleError, r"rule 1 .*c = 256 is already"),
        ([Rule(97, 98, 98)], InvalidRuleError, r"rule 0 .*c = 98 is already"),
        ([Rule(97, 98, -5)], InvalidRuleError, r"rule 0 .*negative"),
        ([Rule(300, 98, 256)], InvalidRuleError, r"rule 0 .*part a = 300"),
        ([(97, 98)], BPETypeError, "rule 0 must be an"),
        ([(97, 98, "x")], BPETypeError, "rule 0"),
        ([(97.0, 98, 256)], BPETypeError, "rule 0"),
        ("abc", BPETypeError, "rules must be a sequence"),
    ],
)
def test_bad_rules(rules: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        spec.enc(rules, b"ab")
    with pytest.raises(error, match=message):
        spec.dec(rules, [97])


def test_bad_tokens_and_data() -> None:
    rules = [Rule(97, 98, 256)]
    with pytest.raises(InvalidTokenError, match=r"tokens\[1\] = 999"):
        spec.dec(rules, [97, 999])
    with pytest.raises(BPETypeError, match=r"tokens\[0\] must be an int"):
        spec.dec(rules, ["a"])  # type: ignore[list-item]
    with pytest.raises(BPETypeError, match="data must be bytes"):
        spec.enc(rules, "ab")  # type: ignore[arg-type]
    with pytest.raises(InputTooLongError, match="use the implementation"):
        spec.enc(rules, b"a" * (spec.MAX_SPEC_LENGTH + 1))
    with pytest.raises(InvalidTextError, match="non-empty"):
        spec.compression_rate(rules, b"")
    with pytest.raises(InvalidTextError, match="not valid UTF-8 at byte 0"):
        spec.dec_text(rules, [0x82])
    with pytest.raises(InvalidTokenError, match="already an id"):
        spec.check_special_tokens(rules, {"<s>": 256})
    with pytest.raises(InvalidTokenError, match="share the id"):
        spec.check_special_tokens(rules, {"<s>": 1000, "</s>": 1000})
    with pytest.raises(BPETypeError, match="text must be str"):
        spec.enc_text(rules, b"ab")  # type: ignore[arg-type]


def test_stream_decoder_reports_invalid_bytes_with_their_offset() -> None:
    decoder = spec.StreamDecoder([])
    assert decoder.feed(list(b"ab")) == "ab"
    with pytest.raises(InvalidTextError, match="at byte 2"):
        decoder.feed([0xFF])
    incomplete = spec.StreamDecoder([])
    assert incomplete.feed([0xE3, 0x81]) == ""
    with pytest.raises(InvalidTextError, match="at byte 0"):
        incomplete.finish()


@given(st.lists(st.tuples(st.integers(-3, 300), st.integers(-3, 300), st.integers(-3, 300)), max_size=5))
def test_any_rule_list_is_accepted_or_refused_cleanly(triples: list[tuple[int, int, int]]) -> None:
    """validate_rules either accepts a list (and then it is over V_{j-1}) or raises InvalidRuleError naming the rule."""
    try:
        rules = spec.validate_rules(triples)
    except InvalidRuleError as error:
        assert str(error).startswith("rule ")
        return
    known = set(range(256))
    for rule in rules:
        assert rule.a in known and rule.b in known and rule.c not in known
        known.add(rule.c)


def test_errors_are_value_or_type_errors() -> None:
    for error in (InvalidCorpusError, InvalidRuleError, InvalidTokenError, InvalidTextError, InputTooLongError):
        assert issubclass(error, BPEValueError) and issubclass(error, ValueError)
    assert issubclass(BPETypeError, TypeError)
