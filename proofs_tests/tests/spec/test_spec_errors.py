"""Bad input gets a ValueError or TypeError subclass whose message names the offending item."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bpeproof import spec
from bpeproof.impl import trainer
from bpeproof.impl.encoder import Encoder
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
from bpeproof.spec.variants import (
    VARIANTS,
    enc_bytes_rank,
    enc_hf_bpe,
    enc_pair_rank,
    enc_rule_rank,
    enc_sequential,
    enc_tiktoken,
    reachable,
    unreachable_tokens,
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


# ---------------------------------------------------------------------------
# spec.variants and spec.train: the same bounds, never a RecursionError
# ---------------------------------------------------------------------------


def _tables(rules: list[Rule]) -> tuple[dict[bytes, int], dict[tuple[int, int], tuple[int, int]]]:
    """The rules as a rank file (bytes → id, the id being the rank) and a merge table (pair → rule index, id)."""
    ranks = {bytes([byte]): byte for byte in range(256)}
    pairs: dict[tuple[int, int], tuple[int, int]] = {}
    for rank, rule in enumerate(rules):
        ranks.setdefault(_spelling(rules, rule.c), rule.c)
        pairs.setdefault((rule.a, rule.b), (rank, rule.c))
    return ranks, pairs


def _data_calls(rules: list[Rule], data: bytes) -> dict[str, Callable[[], list[int]]]:
    """Every function of spec.variants that encodes ``data``: the five of VARIANTS and the two over tables."""
    ranks, pairs = _tables(rules)
    calls: dict[str, Callable[[], list[int]]] = {
        name: (lambda encode=encode: encode(rules, data)) for name, encode in VARIANTS.items()  # type: ignore[misc]
    }
    calls["tiktoken"] = lambda: enc_tiktoken(ranks, data)
    calls["pair-rank"] = lambda: enc_pair_rank(pairs, list(data))
    return calls


def _unit_count_word(length: int) -> tuple[dict[str, int], list[tuple[str, str]], str]:
    """A Hugging Face vocabulary (a, b, ab) and a word of ``length`` characters: its units are its characters."""
    return {"a": 0, "b": 1, "ab": 2}, [("a", "b")], ("ab" * length)[:length]


@pytest.mark.parametrize("length", [spec.MAX_SPEC_LENGTH + 1, 3 * spec.MAX_SPEC_LENGTH])
def test_variants_refuse_data_longer_than_the_bound(length: int) -> None:
    """Every variant refuses more than MAX_SPEC_LENGTH bytes (or units) as spec.enc does, before recursing: a rule
    fires at every other byte, so each merge loop would recurse length / 2 times."""
    rules = [Rule(97, 98, 256)]
    data = (b"ab" * length)[:length]
    message = rf"^(data|units) has {length} items; .* at most {spec.MAX_SPEC_LENGTH} "
    for call in _data_calls(rules, data).values():
        with pytest.raises(InputTooLongError, match=message):
            _within_frames(call)
    vocab, merges, word = _unit_count_word(length)
    with pytest.raises(InputTooLongError, match=rf"^units has {length} items; .* at most {spec.MAX_SPEC_LENGTH} "):
        _within_frames(lambda: enc_hf_bpe(vocab, merges, word))
    with pytest.raises(InputTooLongError, match=message):
        enc_sequential([], data)  # no rule to fire: refused all the same, as spec.enc refuses it
    with pytest.raises(BPETypeError, match="data must be bytes"):
        enc_bytes_rank(rules, "ab")  # type: ignore[arg-type]


def test_variants_refuse_rule_lists_deeper_than_the_bound() -> None:
    rules = _chain(spec.MAX_RULE_DEPTH + 1)
    message = rf"^rule {spec.MAX_RULE_DEPTH} .* at most {spec.MAX_RULE_DEPTH} deep \(MAX_RULE_DEPTH"
    calls = {name: call for name, call in _data_calls(rules, b"aa").items() if name in VARIANTS}
    calls |= {"reachable": lambda: [reachable(rules, 97)], "unreachable_tokens": lambda: unreachable_tokens(rules)}
    for call in calls.values():
        with pytest.raises(InputTooLongError, match=message):
            _within_frames(call)


def _doubling(times: int) -> list[Rule]:
    """(a, a ↦ 256), (256, 256 ↦ 257), …: the new id 256 + j stands for a^(2^(j+1))."""
    return [Rule(97, 97, 256)] + [Rule(255 + j, 255 + j, 256 + j) for j in range(1, times)]


#: Tokens of 800 and 801 bytes: a^512 (263 + 1), then + a^256 (263), + a^32 (260), + a.
LONG_TOKENS = [*_doubling(9), Rule(264, 263, 265), Rule(265, 260, 266), Rule(266, 97, 267)]


@pytest.mark.parametrize(("rules", "token", "size"), [(LONG_TOKENS, 267, 801), (_doubling(10), 265, 1024)])
def test_tokens_longer_than_the_bound_are_refused(rules: list[Rule], token: int, size: int) -> None:
    """A rule list with a token of more than MAX_SPEC_LENGTH bytes is refused by validate_rules, naming the rule
    and the length (measured without spelling it): reachable and unreachable_tokens, which encode a token's own
    bytes once per byte, and dec, which spells it, never start on it."""
    assert len(_spelling(rules, token)) == size
    message = rf"new id c = {token} stands for {size} bytes; .* at most {spec.MAX_SPEC_LENGTH} bytes \(MAX_SPEC_LENGTH"
    for call in (lambda: reachable(rules, token), lambda: unreachable_tokens(rules), lambda: spec.dec(rules, [97])):
        with pytest.raises(InputTooLongError, match=message):
            _within_frames(call)
    shorter = [rule for rule in rules if len(_spelling(rules, rule.c)) <= spec.MAX_SPEC_LENGTH]
    engine = Encoder(shorter)
    assert _within_frames(lambda: unreachable_tokens(shorter)) == [
        rule.c for rule in shorter if not engine.is_reachable(rule.c)
    ]
    with pytest.raises(BPETypeError, match="token must be an int"):
        reachable(shorter, "a")  # type: ignore[arg-type]
    with pytest.raises(InvalidTokenError, match="token 999 is not in the vocabulary"):
        reachable(shorter, 999)


def test_variants_at_the_bounds_take_the_frames_of_dec() -> None:
    """At the bounds every variant answers within SPEC_FRAMES.  The merge loops recurse once per merge: on a^800
    with the rules up to a^768, 798 times (a^800 is no token, so the whole-word variant and tiktoken merge too).
    (iii) also spells every token at every level; on 800 bytes and 64 rules it takes seconds (a^800 over the
    64-deep chain: 856 frames), so it runs on a^66: 64 joins, each level spelling every token up to the 64-deep
    one, within the frames left by 800 − 66 merges fewer."""
    data = b"a" * spec.MAX_SPEC_LENGTH
    engine = Encoder(LONG_TOKENS[:-2])
    for name, call in _data_calls(LONG_TOKENS[:-2], data).items():
        if "bytes-rank" not in name:
            assert _within_frames(call) == engine.encode(data) == [265, 260], name
    engine = Encoder(LONG_TOKENS[:-1])
    assert _within_frames(lambda: enc_sequential(LONG_TOKENS[:-1], data)) == engine.encode(data) == [266]
    assert _within_frames(lambda: enc_rule_rank(LONG_TOKENS[:-1], data)) == [266]
    assert _within_frames(lambda: reachable(LONG_TOKENS[:-1], 266)) == engine.is_reachable(266)
    rules = _chain(spec.MAX_RULE_DEPTH)
    short = b"a" * (spec.MAX_RULE_DEPTH + 2)
    frames = SPEC_FRAMES - (spec.MAX_SPEC_LENGTH - len(short))
    for name in ("bytes-rank", "whole-word+bytes-rank"):
        ids = _within_frames(lambda name=name: VARIANTS[name](rules, short), frames)  # type: ignore[misc]
        assert Encoder(rules).decode(ids) == short and len(ids) == 2


def _descending(length: int, top: int = 255) -> bytes:
    """top, top − 1, …: def-bpe joins such a word from its right end into one chain, one merge deeper each time."""
    return bytes(range(top, top - length, -1))


def test_training_refuses_a_merge_deeper_than_the_bound() -> None:
    bound = spec.MAX_RULE_DEPTH
    word = _descending(bound + 2)
    message = (rf"^merge {bound} \(\d+, {255 + bound}, {256 + bound}\): new id c = {256 + bound} would be"
               rf" {bound + 1} merges deep; .* at most {bound} deep \(MAX_RULE_DEPTH")
    for call in (lambda: spec.train([word], None), lambda: spec.train_trace([word, word], bound + 1)):
        with pytest.raises(InputTooLongError, match=message):
            _within_frames(call)
    rules = spec.train([word], bound)
    assert rules == trainer.train([word], bound) and _depth(rules, rules[-1].c) == bound
    assert _within_frames(lambda: spec.dec(rules, spec.enc(rules, word))) == word


@st.composite
def deep_corpora(draw: st.DrawFn) -> list[bytes]:
    """One to three words, most of them descending runs of about MAX_RULE_DEPTH bytes, some bytes changed."""
    bound = spec.MAX_RULE_DEPTH
    words: list[bytes] = []
    for _ in range(draw(st.integers(1, 3))):
        length = draw(st.sampled_from([bound, bound + 1, bound + 2]) | st.integers(2, bound + 8))
        word = bytearray(_descending(length, draw(st.integers(length - 1, 255))))
        for _ in range(draw(st.integers(0, 3))):
            word[draw(st.integers(0, length - 1))] = draw(st.integers(0, 255))
        words += [bytes(word)] * draw(st.integers(1, 2))
    return draw(st.permutations(words))


@settings(max_examples=40, deadline=None)
@given(deep_corpora())
def test_training_refuses_exactly_the_first_merge_deeper_than_the_bound(corpus: list[bytes]) -> None:
    """spec.train gives impl's rules while they stay MAX_RULE_DEPTH deep; at the first deeper one (the engine has
    no bound) it raises InputTooLongError naming that merge, and training with fewer merges gives the rules before
    it, which spec.enc then evaluates."""
    expected = trainer.train(corpus, None)
    too_deep = [index for index, rule in enumerate(expected) if _depth(expected, rule.c) > spec.MAX_RULE_DEPTH]
    if not too_deep:
        assert _within_frames(lambda: spec.train(corpus, None)) == expected
        return
    first = too_deep[0]
    with pytest.raises(InputTooLongError, match=rf"^merge {first} {re.escape(str(tuple(expected[first])))}: "):
        _within_frames(lambda: spec.train(corpus, None))
    rules = _within_frames(lambda: spec.train(corpus, first))
    assert rules == expected[:first]
    for word in corpus:
        assert _within_frames(lambda word=word: spec.dec(rules, spec.enc(rules, word))) == word  # type: ignore[misc]


@st.composite
def chains_and_data(draw: st.DrawFn) -> tuple[list[Rule], bytes]:
    """A rule chain about MAX_RULE_DEPTH deep (each rule joins the newest id and any earlier one, so the last is as
    deep as the list is long; fresh ids in any order; tokens of at most 2 × MAX_RULE_DEPTH bytes) and data of about
    MAX_SPEC_LENGTH bytes: a token's bytes repeated, so that the rules fire."""
    bound, limit = spec.MAX_RULE_DEPTH, spec.MAX_SPEC_LENGTH
    count = draw(st.sampled_from([bound - 1, bound, bound + 1]) | st.integers(1, bound + 2))
    ids = draw(st.lists(st.integers(256, 4 * count + 300), min_size=count, max_size=count, unique=True))
    length = {byte: 1 for byte in b"abc"}
    newest = draw(st.sampled_from(b"abc"))
    rules: list[Rule] = []
    for c in ids:
        other = draw(st.sampled_from(list(length)))
        if length[newest] + length[other] > 2 * bound:
            other = draw(st.sampled_from(b"abc"))
        a, b = (newest, other) if draw(st.booleans()) else (other, newest)
        rules.append(Rule(a, b, c))
        length[c] = length[a] + length[b]
        newest = c
    size = draw(st.sampled_from([limit - 1, limit, limit + 1]) | st.integers(0, limit + 1))
    unit = _spelling(rules, draw(st.sampled_from(list(length))))
    return rules, (unit * (size // len(unit) + 1))[:size]


@settings(max_examples=10, deadline=None)
@given(chains_and_data())
@example((_chain(spec.MAX_RULE_DEPTH), b"a" * (spec.MAX_SPEC_LENGTH + 1)))
@example((_chain(spec.MAX_RULE_DEPTH + 1), b"a" * spec.MAX_SPEC_LENGTH))
def test_variants_refuse_or_answer_within_the_frames(rules_data: tuple[list[Rule], bytes]) -> None:
    """Around both bounds every function of spec.variants either refuses with InputTooLongError (too deep, or too
    long) or answers within SPEC_FRAMES, and its answer decodes to the data.  (iii), which spells every token at
    every step, runs on the first 8 bytes within the frames left as if they were MAX_SPEC_LENGTH (see above)."""
    rules, data = rules_data
    bound, limit = spec.MAX_RULE_DEPTH, spec.MAX_SPEC_LENGTH
    deep = _depth(rules, rules[-1].c) > bound
    answers: dict[str, list[int]] = {}
    for name, call in _data_calls(rules, data).items():
        if deep and name in VARIANTS:
            with pytest.raises(InputTooLongError, match=f"at most {bound} deep"):
                _within_frames(call)
        elif len(data) > limit:
            with pytest.raises(InputTooLongError, match=f"^(data|units) has {len(data)} items; .* at most {limit} "):
                _within_frames(call)
        elif "bytes-rank" not in name:
            answers[name] = _within_frames(call)
            assert b"".join(_spelling(rules, token) for token in answers[name]) == data, name
    if deep:
        for token_call in (lambda: [reachable(rules, rules[-1].c)], lambda: unreachable_tokens(rules)):
            with pytest.raises(InputTooLongError, match=f"at most {bound} deep"):
                _within_frames(token_call)
        return
    engine = Encoder(rules)
    prefix = data[:8]
    frames = SPEC_FRAMES - (limit - len(prefix))
    for name in ("bytes-rank", "whole-word+bytes-rank"):
        ids = _within_frames(lambda name=name: VARIANTS[name](rules, prefix), frames)  # type: ignore[misc]
        assert engine.decode(ids) == prefix
    if answers:
        assert answers["sequential"] == answers["rule-rank"] == engine.encode(data)
    assert _within_frames(lambda: reachable(rules, rules[-1].c)) == engine.is_reachable(rules[-1].c)
    assert _within_frames(lambda: unreachable_tokens(rules)) == [
        rule.c for rule in rules if not engine.is_reachable(rule.c)
    ]


@st.composite
def long_token_rules(draw: st.DrawFn) -> list[Rule]:
    """A rule list whose last token stands for a^L, L about MAX_SPEC_LENGTH: a^2, a^4, … by doubling, then the
    powers of two of L's binary expansion joined to it one by one, on either side; fresh ids in any order."""
    limit = spec.MAX_SPEC_LENGTH
    size = draw(st.sampled_from([limit - 1, limit, limit + 1]) | st.integers(2, 2 * limit))
    count = size.bit_length() - 1 + bin(size).count("1") - 1
    ids = iter(draw(st.lists(st.integers(256, 4 * count + 300), min_size=count, max_size=count, unique=True)))
    powers = [97]
    rules: list[Rule] = []
    while 2 ** len(powers) <= size:
        rules.append(Rule(powers[-1], powers[-1], next(ids)))
        powers.append(rules[-1].c)
    whole = powers[-1]
    for bit in range(len(powers) - 2, -1, -1):
        if size >> bit & 1:
            a, b = (whole, powers[bit]) if draw(st.booleans()) else (powers[bit], whole)
            rules.append(Rule(a, b, next(ids)))
            whole = rules[-1].c
    return rules


@settings(max_examples=25, deadline=None)
@given(long_token_rules())
def test_reachable_refuses_exactly_the_tokens_longer_than_the_bound(rules: list[Rule]) -> None:
    """reachable and unreachable_tokens answer as impl does when every token stands for at most MAX_SPEC_LENGTH
    bytes; otherwise the rule list is refused at its first longer token, by name."""
    engine = Encoder(rules)
    sizes = {rule.c: len(_spelling(rules, rule.c)) for rule in rules}
    too_long = [token for token, size in sizes.items() if size > spec.MAX_SPEC_LENGTH]
    if too_long:
        message = rf"new id c = {too_long[0]} stands for {sizes[too_long[0]]} bytes; "
        for call in (lambda: reachable(rules, rules[-1].c), lambda: unreachable_tokens(rules)):
            with pytest.raises(InputTooLongError, match=message):
                _within_frames(call)
    else:
        answer = _within_frames(lambda: reachable(rules, rules[-1].c))
        assert answer == engine.is_reachable(rules[-1].c)
        assert _within_frames(lambda: unreachable_tokens(rules)) == [
            rule.c for rule in rules if not engine.is_reachable(rule.c)
        ]
