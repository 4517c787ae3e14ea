"""Bad input gets a ValueError or TypeError subclass whose message names the offending item."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
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


# ---------------------------------------------------------------------------
# Deep rule lists: refused by validate_rules, never a RecursionError (MAX_RULE_DEPTH)
# ---------------------------------------------------------------------------

#: The frames the deepest call of the specification may take (``MAX_RULE_DEPTH`` says 871 are needed): the rest of
#: Python's default limit of 1000 is its caller's.
SPEC_FRAMES = 900

T = TypeVar("T")


def _within_frames(function: Callable[[], T], frames: int = SPEC_FRAMES) -> T:
    """``function()`` with the recursion limit ``frames`` above the current depth, put back afterwards."""
    depth = 0
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + frames)
    try:
        return function()
    finally:
        sys.setrecursionlimit(old)


def _chain(length: int) -> list[Rule]:
    """(a, a ↦ 256), (256, a ↦ 257), (257, a ↦ 258), …: rule j's new id is j + 1 merges deep and stands for a^(j+2)."""
    return [Rule(97, 97, 256)] + [Rule(256 + j - 1, 97, 256 + j) for j in range(1, length)]


@pytest.mark.parametrize(("length", "tokens"), [(300, spec.MAX_SPEC_LENGTH), (1_100, 1)])
def test_rule_chain_deeper_than_the_bound_is_refused(length: int, tokens: int) -> None:
    rules = _chain(length)
    deepest = rules[-1].c
    bound = spec.MAX_RULE_DEPTH
    message = (rf"^rule {bound} \({255 + bound}, 97, {256 + bound}\): new id c = {256 + bound} is {bound + 1} merges"
               rf" deep; .* at most {bound} deep \(MAX_RULE_DEPTH")
    for call in (
        lambda: spec.dec(rules, [deepest] * tokens),
        lambda: spec.symbols(spec.validate_rules(rules), deepest),
        lambda: spec.shortest(rules, b"a" * tokens),
        lambda: spec.enc(rules, b"a" * tokens),
        lambda: spec.dec_text(rules, [97] * tokens),
    ):
        with pytest.raises(InputTooLongError, match=message):
            call()


def test_rule_chain_at_the_bound_is_evaluated_within_the_frames() -> None:
    rules = _chain(spec.MAX_RULE_DEPTH)
    deepest = rules[-1].c
    string = b"a" * (spec.MAX_RULE_DEPTH + 1)
    n = spec.MAX_SPEC_LENGTH
    assert _within_frames(lambda: spec.dec(rules, [deepest] * n)) == string * n
    assert _within_frames(lambda: spec.symbols(spec.validate_rules(rules), deepest)) == string
    assert _within_frames(lambda: spec.shortest(rules, string)) == [deepest]
    assert _within_frames(lambda: spec.enc(rules, b"ab" * (n // 2))) == list(b"ab" * (n // 2))
    assert _within_frames(lambda: spec.decode_with_specials(rules, {"<s>": 1000}, [deepest] * n)) == string * n


@st.composite
def deep_rule_lists(draw: st.DrawFn) -> tuple[list[Rule], int]:
    """A rule list, valid but for its depth, whose tokens reach up to 4 × MAX_RULE_DEPTH merges deep, and one of its
    deepest tokens.  Each rule joins an earlier id (most often the newest, so that chains grow long) and any earlier
    id, in either order; a byte instead of the second when the two would stand for more than 2 × MAX_RULE_DEPTH
    bytes, so that every token stands for few bytes."""
    bound = spec.MAX_RULE_DEPTH
    count = draw(st.sampled_from([bound, bound + 1, 4 * bound]) | st.integers(1, 4 * bound))
    ids = draw(st.lists(st.integers(256, 10 * count + 300), min_size=count, max_size=count, unique=True))
    length = {byte: 1 for byte in b"abc"}
    rules: list[Rule] = []
    for c in ids:
        earlier = list(length)
        part = draw(st.sampled_from(earlier)) if draw(st.integers(0, 15)) == 15 else earlier[-1]
        other = draw(st.sampled_from(earlier))
        if length[part] + length[other] > 2 * bound:
            other = draw(st.sampled_from(b"abc"))
        a, b = (part, other) if draw(st.booleans()) else (other, part)
        rules.append(Rule(a, b, c))
        length[c] = length[a] + length[b]
    return rules, max(length, key=lambda token: (_depth(rules, token), token))


def _depth(rules: list[Rule], token: int) -> int:
    """The depth of a token, computed apart from validate_rules: a byte 0, a new id 1 + the deeper of its parts."""
    depth: dict[int, int] = {}
    for rule in rules:
        depth[rule.c] = 1 + max(depth.get(rule.a, 0), depth.get(rule.b, 0))
    return depth.get(token, 0)


def _spelling(rules: list[Rule], token: int) -> bytes:
    """⟨⟨token⟩⟩, computed apart from the specification: a table filled rule by rule."""
    table = {byte: bytes([byte]) for byte in range(256)}
    for rule in rules:
        table[rule.c] = table[rule.a] + table[rule.b]
    return table[token]


@settings(max_examples=30)
@given(deep_rule_lists())
def test_no_rule_list_raises_recursion_error(rules_token: tuple[list[Rule], int]) -> None:
    """Up to MAX_RULE_DEPTH, dec, symbols and shortest give their values within SPEC_FRAMES; beyond it every one
    refuses the rule list with InputTooLongError.  None raises RecursionError (the deepest token comes last in
    dec's recursion on the longest token list accepted)."""
    rules, token = rules_token
    tokens = [97] * (spec.MAX_SPEC_LENGTH - 1) + [token]
    string = _spelling(rules, token)
    if _depth(rules, token) > spec.MAX_RULE_DEPTH:
        for call in (
            lambda: spec.dec(rules, tokens),
            lambda: spec.symbols(spec.validate_rules(rules), token),
            lambda: spec.shortest(rules, string),
        ):
            with pytest.raises(InputTooLongError, match=f"at most {spec.MAX_RULE_DEPTH} deep"):
                _within_frames(call)
        return
    assert _within_frames(lambda: spec.dec(rules, tokens)) == b"a" * (spec.MAX_SPEC_LENGTH - 1) + string
    assert _within_frames(lambda: spec.symbols(spec.validate_rules(rules), token)) == string
    best = _within_frames(lambda: spec.shortest(rules, string))
    assert len(best) == 1 and _spelling(rules, best[0]) == string
