"""bpeproof.impl.tokenizer: text in, token ids out, and back (def-bpe, def-utf8, prop-utf8-boundary).

Checked against the specification's text layer: pre-tokenize with the same
pattern, encode each word with ``spec.enc``, join (``spec.encode_text``,
``spec.encode_with_specials``).  Decoding must join the bytes before UTF-8
decoding, the streaming decoder must give the same text as decoding
everything at once, files must round-trip, malformed files must raise
``FormatError`` and nothing else, and an interrupted save must leave the old
file intact.  With the real tiktoken rank files (when ``../shared`` is
present) the recovered rule lists must give tiktoken's ids on real text.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof import spec
from bpeproof.impl.formats.project_file import FORMAT_NAME, FORMAT_VERSION
from bpeproof.impl.formats.tiktoken_file import load_tiktoken_ranks, tiktoken_rules
from bpeproof.impl.io.atomic import atomic_write_bytes, atomic_write_text
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, compile_pinned, pattern_name, resolve_pattern
from bpeproof.impl.pre_tokenizers.unicode_classes import pin_pattern
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.proofs_tests.checker.strategies import data_bytes, texts
from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError, InvalidTextError, InvalidTokenError, Rule

SHARED = Path(__file__).resolve().parents[4] / "shared"
VOCABS = SHARED / "vocabs"
CORPORA = SHARED / "corpora"

SAMPLE = "the lowest newest slowest wider, あいう数字 😀 é\n\n  tabs\there 123456 don't I'M\r\n"


def learned(text: str, merges: int) -> list[Rule]:
    """A rule list trained by the specification on the words of ``text`` (def-bpe)."""
    corpus = spec.corpus_from_text(text) or [b" "]
    return spec.train(corpus, merges)


@st.composite
def text_and_rules(draw: st.DrawFn, max_merges: int = 20) -> tuple[str, list[Rule]]:
    """A text and rules learned on a related text, so that the rules fire on it."""
    training = draw(texts(max_size=40))
    text = draw(st.one_of(st.just(training), texts(max_size=40), st.just(training + draw(texts(max_size=10)))))
    return text, learned(training + "ab あい", draw(st.integers(0, max_merges)))


def compose(rules: list[Rule], pattern: str, text: str) -> list[int]:
    """Pre-tokenize with the pattern, then ``spec.enc`` on each word's UTF-8 bytes, joined (def-bpe, def-utf8).

    The pattern's classes are written out as Unicode 16.0 ranges (``pin_pattern``), as the engine classifies."""
    pieces = regex.compile(pin_pattern(resolve_pattern(pattern))).findall(text)
    assert "".join(pieces) == text
    return spec.enc_words(rules, [piece.encode("utf-8") for piece in pieces if piece])


# ---------------------------------------------------------------------------
# Encoding against the specification
# ---------------------------------------------------------------------------


@given(text_and_rules())
def test_words_pattern_equals_spec_encode_text(case: tuple[str, list[Rule]]) -> None:
    text, rules = case
    tokenizer = Tokenizer(rules, "words")
    assert tokenizer.encode(text) == spec.encode_text(rules, text)


@given(texts(max_size=60))
def test_words_pattern_is_spec_split_words(text: str) -> None:
    assert compile_pinned("words").findall(text) == spec.split_words(text)


@settings(max_examples=60)
@given(text_and_rules(), st.sampled_from(["r50k", "cl100k", "o200k", r"\w+|\W"]))
def test_patterns_equal_composition(case: tuple[str, list[Rule]], pattern: str) -> None:
    text, rules = case
    tokenizer = Tokenizer(rules, pattern)
    expected = compose(rules, pattern, text)
    assert tokenizer.encode(text) == expected
    assert tokenizer.encode(text) == expected  # second time from the word cache


@given(text_and_rules(), st.integers(1, 3))
def test_small_cache(case: tuple[str, list[Rule]], size: int) -> None:
    text, rules = case
    tokenizer = Tokenizer(rules, "words", cache_size=size)
    for _ in range(2):
        assert tokenizer.encode(text * 3) == spec.encode_text(rules, text * 3)


def test_long_text_crosses_every_boundary() -> None:
    rules = learned(SAMPLE * 3, 60)
    tokenizer = Tokenizer(rules, "cl100k", cache_size=5)
    text = SAMPLE * 40 + "a" * 700 + " " * 700 + "b" * 790
    assert tokenizer.encode(text) == compose(rules, "cl100k", text)
    assert tokenizer.decode(tokenizer.encode(text)) == text


@given(text_and_rules())
def test_encode_bytes_equals_encode(case: tuple[str, list[Rule]]) -> None:
    text, rules = case
    tokenizer = Tokenizer(rules, "cl100k")
    assert tokenizer.encode_bytes(text.encode("utf-8")) == tokenizer.encode(text)


@given(data_bytes(max_size=60), st.sampled_from(["words", "cl100k", "o200k"]))
def test_any_bytes_roundtrip(data: bytes, pattern: str) -> None:
    """thm-bpe-roundtrip on the tokenizer: every byte string encodes, invalid UTF-8 included (def-utf8)."""
    rules = learned("ab abc \x80\xff".encode("latin-1").decode("utf-8", "replace") + " aaaa", 10)
    tokenizer = Tokenizer(rules, pattern)
    assert tokenizer.decode_bytes(tokenizer.encode_bytes(data)) == data


def test_lone_surrogate_is_an_error() -> None:
    with pytest.raises(InvalidTextError, match="character 1"):
        Tokenizer([], "words").encode("a\udc80b")
    with pytest.raises(BPETypeError):
        Tokenizer([], "words").encode(b"ab")  # type: ignore[arg-type]


def test_pattern_must_cover_the_text() -> None:
    with pytest.raises(BPEValueError, match="character 1"):
        Tokenizer([], r"[a-z]+").encode("a b")


def test_pattern_with_groups() -> None:
    rules = learned("abc abc", 3)
    tokenizer = Tokenizer(rules, r"(a)bc|\s|.")
    assert tokenizer.encode("abc abc") == spec.enc_words(rules, [b"abc", b" ", b"abc"])


def test_invalid_pattern() -> None:
    with pytest.raises(ValueError, match="invalid pre-tokenization pattern"):
        Tokenizer([], "(unclosed")


# ---------------------------------------------------------------------------
# Special tokens (def-utf8)
# ---------------------------------------------------------------------------

SPECIALS = {"<|end|>": 90_000, "<|end|>x": 90_001, "あ!": 90_002, "<s>": 91_000}


@given(text_and_rules(), st.lists(st.sampled_from([*SPECIALS, "<|en", "<s"]), max_size=4), st.data())
def test_specials_equal_spec(case: tuple[str, list[Rule]], inserts: list[str], data: st.DataObject) -> None:
    text, rules = case
    for insert in inserts:
        position = data.draw(st.integers(0, len(text)))
        text = text[:position] + insert + text[position:]
    tokenizer = Tokenizer(rules, "words", SPECIALS)
    ids = tokenizer.encode(text, allowed_special="all")
    assert ids == spec.encode_with_specials(rules, SPECIALS, text)
    assert tokenizer.decode(ids) == text
    assert tokenizer.decode_bytes(ids) == spec.decode_with_specials(rules, SPECIALS, ids)
    # Not allowed: the names are ordinary text, and no special id comes out of plain encoding.
    plain = tokenizer.encode(text)
    assert plain == spec.encode_text(rules, text) == tokenizer.encode_ordinary(text)
    assert not set(plain) & set(SPECIALS.values())
    only_s = tokenizer.encode(text, allowed_special={"<s>"})
    assert tokenizer.decode(only_s) == text
    assert set(only_s) & set(SPECIALS.values()) <= {91_000}


def test_longest_special_wins() -> None:
    tokenizer = Tokenizer([], "words", SPECIALS)
    assert tokenizer.encode("<|end|>x<|end|>", allowed_special="all") == [90_001, 90_000]


def test_special_token_checks() -> None:
    rules = [Rule(97, 98, 256)]
    with pytest.raises(InvalidTokenError):
        Tokenizer(rules, "words", {"<a>": 256})
    with pytest.raises(InvalidTokenError):
        Tokenizer(rules, "words", {"<a>": 300, "<b>": 300})
    with pytest.raises(BPETypeError):
        Tokenizer(rules, "words", {"": 300})
    with pytest.raises(BPEValueError):
        Tokenizer(rules, "words", {"<a>": 300}).encode("x", allowed_special={"<b>"})
    tokenizer = Tokenizer(rules, "words", {"<a>": 300})
    assert tokenizer.vocab_size == ALPHABET_SIZE + 1 + 1
    assert tokenizer.token_bytes(300) == b"<a>"
    assert tokenizer.token_bytes(256) == b"ab"
    with pytest.raises(InvalidTokenError):
        tokenizer.token_bytes(301)


# ---------------------------------------------------------------------------
# Decoding: joined bytes, strict and replace, streaming (prop-utf8-boundary)
# ---------------------------------------------------------------------------


def test_utf8_boundary_example() -> None:
    """prop-utf8-boundary: corpus "あい"×2, one merge (E3, 81 ↦ 256); enc("あ") = (256, 0x82)."""
    rules = spec.train(["あい".encode(), "あい".encode()], 1)
    assert rules == [Rule(0xE3, 0x81, 256)]
    tokenizer = Tokenizer(rules, "words")
    assert tokenizer.encode("あ") == [256, 0x82]
    with pytest.raises(InvalidTextError):
        tokenizer.decode([256])
    assert tokenizer.decode([256], errors="replace") == "\ufffd"
    stream = tokenizer.stream_decoder()
    assert stream.feed([256]) == ""
    assert stream.feed([0x82]) == "あ"
    assert stream.finish() == ""


@st.composite
def chunked(draw: st.DrawFn, ids: list[int]) -> list[list[int]]:
    cuts = sorted(draw(st.lists(st.integers(0, len(ids)), max_size=6)))
    bounds = [0, *cuts, len(ids)]
    return [ids[a:b] for a, b in itertools.pairwise(bounds)]


@given(text_and_rules(), st.data())
def test_stream_equals_whole_decode(case: tuple[str, list[Rule]], data: st.DataObject) -> None:
    text, rules = case
    tokenizer = Tokenizer(rules, "words")
    ids = tokenizer.encode(text)
    stream = tokenizer.stream_decoder()
    parts = [stream.feed(chunk) for chunk in data.draw(chunked(ids))]
    assert "".join(parts) + stream.finish() == text == tokenizer.decode(ids)


@given(st.lists(st.integers(0, 258), max_size=30), st.data())
def test_stream_on_any_tokens(ids: list[int], data: st.DataObject) -> None:
    """Arbitrary tokens give invalid UTF-8 often: strict fails exactly when whole decoding does; replace agrees."""
    tokenizer = Tokenizer([Rule(0xE3, 0x81, 257), Rule(0xF0, 0x9F, 258)], "words", {"<x>": 256})
    chunks = data.draw(chunked(ids))
    joined = tokenizer.decode_bytes(ids)
    replaced = tokenizer.stream_decoder("replace")
    out = "".join(replaced.feed(chunk) for chunk in chunks) + replaced.finish()
    assert out == joined.decode("utf-8", "replace") == tokenizer.decode(ids, errors="replace")
    strict = tokenizer.stream_decoder()
    try:
        streamed: str | None = "".join(strict.feed(chunk) for chunk in chunks) + strict.finish()
    except InvalidTextError:
        streamed = None
    try:
        whole: str | None = tokenizer.decode(ids)
    except InvalidTextError:
        whole = None
    assert streamed == whole


def test_stream_error_names_the_offset() -> None:
    tokenizer = Tokenizer([], "words")
    stream = tokenizer.stream_decoder()
    assert stream.feed([97, 98]) == "ab"
    assert stream.feed([0xE3]) == ""
    with pytest.raises(InvalidTextError, match="byte 2"):
        stream.feed([97])


def test_decode_errors() -> None:
    tokenizer = Tokenizer([Rule(97, 98, 256)], "words")
    with pytest.raises(InvalidTokenError, match=r"ids\[1\]"):
        tokenizer.decode([97, 9999])
    with pytest.raises(BPETypeError, match=r"ids\[0\]"):
        tokenizer.decode([True])
    with pytest.raises(InvalidTextError, match="byte 1"):
        tokenizer.decode([97, 0xFF])
    assert tokenizer.decode(iter([256, 97])) == "aba"


# ---------------------------------------------------------------------------
# Files: save / load, malformed files, atomic writes
# ---------------------------------------------------------------------------


@given(text_and_rules(), st.sampled_from(["words", "cl100k", r"\S+|\s"]), st.booleans())
def test_save_load_roundtrip(case: tuple[str, list[Rule]], pattern: str, permuted: bool) -> None:
    text, rules = case
    byte_ids = list(range(ALPHABET_SIZE))[::-1] if permuted else None
    tokenizer = Tokenizer(rules, pattern, {"<|end|>": 80_000, "ü": 80_001}, byte_ids=byte_ids)
    again = Tokenizer.from_json(tokenizer.to_json())
    assert again.rules == tokenizer.rules
    assert again.pattern == tokenizer.pattern
    assert again.pattern_name == pattern_name(PATTERNS.get(pattern, pattern))
    assert again.special_tokens == tokenizer.special_tokens
    assert again.byte_ids == tokenizer.byte_ids
    assert again.encode(text, allowed_special="all") == tokenizer.encode(text, allowed_special="all")
    assert again.decode(tokenizer.encode(text)) == text


def test_save_load_file(tmp_path: Path) -> None:
    rules = learned(SAMPLE, 30)
    tokenizer = Tokenizer(rules, "o200k", {"<|endoftext|>": 5000})
    path = tmp_path / "tok.json"
    tokenizer.save(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["format"] == FORMAT_NAME and document["version"] == FORMAT_VERSION
    assert document["rules"] == [list(rule) for rule in rules]
    assert document["pattern_name"] == "o200k"
    loaded = Tokenizer.load(path)
    assert loaded.encode(SAMPLE) == tokenizer.encode(SAMPLE)
    assert [p.name for p in tmp_path.iterdir()] == ["tok.json"]


def valid_document() -> dict[str, Any]:
    return json.loads(Tokenizer([Rule(97, 98, 256), Rule(256, 99, 300)], "words", {"<e>": 400}).to_json())  # type: ignore[no-any-return]


BROKEN: list[tuple[str, Any]] = [
    ("format", "something-else"),
    ("version", 2),
    ("version", True),
    ("version", "1"),
    ("pattern", 5),
    ("pattern", "(unclosed"),
    ("pattern_name", "nope"),
    ("pattern_name", "cl100k"),
    ("rules", {}),
    ("rules[1]", [[97, 98, 256], [1, 2]]),
    ("rules[0]", [[97, 98, 256.0]]),
    ("rules[0]", [[97, False, 256]]),
    ("rules", [[97, 98, 256], [97, 99, 256]]),
    ("rules", [[97, 98, 97]]),
    ("rules", [[999, 98, 256]]),
    ("rules", [[97, 98, -4]]),
    ("special_tokens", []),
    ("special_tokens", {"<e>": 256}),
    ("special_tokens['<e>']", {"<e>": "400"}),
    ("special_tokens['<e>']", {"<e>": -1}),
    ("special_tokens", {"": 400}),
    ("special_tokens", {"<e>": 400, "<f>": 400}),
    ("byte_ids", [0, 1]),
    ("byte_ids", list(range(255)) + [300]),
    ("byte_ids", "identity"),
]


@pytest.mark.parametrize(("key", "value"), BROKEN)
def test_malformed_values(tmp_path: Path, key: str, value: Any) -> None:
    document = valid_document()
    document[key.split("[")[0]] = value
    if key == "pattern":
        document["pattern_name"] = None
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FormatError) as info:
        Tokenizer.load(path)
    assert info.value.key == key
    assert str(path) in str(info.value) and f": {key}: " in str(info.value)


@pytest.mark.parametrize(
    ("content", "key"),
    [
        (b"", "(file)"),
        (b"\xff\xfe", "(file)"),
        (b"[1, 2]", "(file)"),
        (b"{", "(file)"),
        (b'{"format": NaN}', "(file)"),
        (b"[" * 100_000 + b"]" * 100_000, "(file)"),
        (b"{}", "format"),
    ],
)
def test_malformed_files(tmp_path: Path, content: bytes, key: str) -> None:
    """The project format's reader names the key; the loader of every format refuses the file too, naming it."""
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(FormatError) as info:
        Tokenizer.from_json(content, path)
    assert info.value.key == key
    with pytest.raises(FormatError, match=re.escape(str(path))):
        Tokenizer.load(path)


def test_missing_and_unknown_keys() -> None:
    document = valid_document()
    del document["byte_ids"]
    with pytest.raises(FormatError, match=": byte_ids: "):
        Tokenizer.from_json(json.dumps(document))
    document = valid_document()
    document["extra"] = 1
    with pytest.raises(FormatError, match=": extra: unknown key"):
        Tokenizer.from_json(json.dumps(document))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)


def load_or_format_error(data: bytes | str) -> None:
    with contextlib.suppress(FormatError):
        Tokenizer.from_json(data)


@given(st.binary(max_size=200))
def test_fuzz_junk_bytes(data: bytes) -> None:
    load_or_format_error(data)


@given(json_values)
def test_fuzz_junk_json(value: Any) -> None:
    load_or_format_error(json.dumps(value))


@given(st.sampled_from(["format", "version", "pattern", "pattern_name", "rules", "special_tokens", "byte_ids", "x"]),
       json_values, st.sampled_from(["replace", "delete", "rule", "special"]))
def test_fuzz_mutated_documents(key: str, value: Any, how: str) -> None:
    document = valid_document()
    if how == "replace":
        document[key] = value
    elif how == "delete":
        document.pop(key, None)
    elif how == "rule":
        document["rules"].append(value)
    else:
        document["special_tokens"][str(value)[:10] or "k"] = value
    load_or_format_error(json.dumps(document))


@given(st.binary(max_size=300), st.integers(0, 299))
def test_fuzz_corrupted_file(junk: bytes, position: int) -> None:
    text = Tokenizer([Rule(97, 98, 256)], "cl100k", {"<e>": 400}).to_json().encode("utf-8")
    load_or_format_error(text[:position] + junk + text[position + len(junk) // 2 :])


def test_atomic_write_keeps_old_file_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tok.json"
    atomic_write_text(path, "old")

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        Tokenizer([], "words").save(path)
    monkeypatch.undo()
    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_bytes(path, b"new")
    monkeypatch.undo()
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["tok.json"]
    atomic_write_bytes(path, b"new")
    assert path.read_bytes() == b"new"


def test_atomic_write_keeps_mode(tmp_path: Path) -> None:
    path = tmp_path / "f"
    atomic_write_text(path, "a")
    os.chmod(path, 0o640)
    atomic_write_text(path, "b")
    assert path.stat().st_mode & 0o777 == 0o640
    with pytest.raises(TypeError):
        atomic_write_text(path, b"x")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# tiktoken rank files
# ---------------------------------------------------------------------------


def ranks_from_rules(rules: list[Rule]) -> dict[bytes, int] | None:
    """A tiktoken rank file for a rule list whose tokens all have distinct bytes: rank = id."""
    ranks = {bytes([byte]): byte for byte in range(ALPHABET_SIZE)}
    for rule in rules:
        data = spec.symbols(rules, rule.c)
        if data in ranks:
            return None
        ranks[data] = rule.c
    return ranks


@settings(max_examples=30)
@given(text_and_rules(max_merges=25), texts(max_size=30))
def test_from_tiktoken_ranks_small(case: tuple[str, list[Rule]], other: str) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    text, rules = case
    ranks = ranks_from_rules(rules)
    if ranks is None:
        return
    tokenizer = Tokenizer.from_tiktoken_ranks(ranks, "words")
    reference = tiktoken.Encoding(name="t", pat_str=PATTERNS["words"], mergeable_ranks=ranks, special_tokens={})
    for sample in (text, other):
        assert tokenizer.encode(sample) == reference.encode_ordinary(sample)


def test_tiktoken_rules_errors() -> None:
    ranks = {bytes([byte]): byte for byte in range(ALPHABET_SIZE)}
    with pytest.raises(BPEValueError):
        tiktoken_rules({**ranks, b"abc": 256})  # not two lower-rank tokens joined
    with pytest.raises(BPEValueError):
        tiktoken_rules({k: v for k, v in ranks.items() if v != 7})
    swapped = {**ranks, b"\x00": 300, b"ab": 0}
    with pytest.raises(BPEValueError):
        tiktoken_rules(swapped)
    with pytest.raises(BPETypeError):
        tiktoken_rules({**ranks, "ab": 256})  # type: ignore[dict-item]


def test_tiktoken_rules_split_tokens_as_tiktoken_merges_them() -> None:
    """A token's rule joins the two parts tiktoken's own merge of its bytes (lower ranks only) ends in; a token that
    merge never makes ("abcd": b+c go first, then a, bc, d stay apart) has no rule, even though "ab" + "cd" would
    spell it: such a rule never fires, and tiktoken encodes "abcd" alone as its own token."""
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {bytes([byte]): byte for byte in range(ALPHABET_SIZE)}
    ranks |= {b"bc": 256, b"ab": 257, b"cd": 258, b"bcd": 259, b"abcd": 260}
    reachable = {token: rank for token, rank in ranks.items() if token != b"abcd"}
    rules, byte_ids = tiktoken_rules(reachable)
    assert rules == [Rule(98, 99, 256), Rule(97, 98, 257), Rule(99, 100, 258), Rule(256, 100, 259)]
    tokenizer = Tokenizer(rules, "words", byte_ids=byte_ids)
    reference = tiktoken.Encoding(name="t", pat_str=PATTERNS["words"], mergeable_ranks=reachable, special_tokens={})
    for text in ("abcd", "abc dcab bcdab abab", "cdcd bcbcd"):
        assert tokenizer.encode(text) == reference.encode_ordinary(text)
    stuck = {token: rank for token, rank in ranks.items() if token not in (b"bcd", b"abcd")} | {b"abcd": 259}
    lower = {token: rank for token, rank in stuck.items() if rank < 259}
    parts = tiktoken.Encoding(name="cut", pat_str=r"[\s\S]+", mergeable_ranks=lower, special_tokens={})
    assert parts._encode_bytes(b"abcd") == [97, 256, 100]  # three parts: no split of "abcd"
    with pytest.raises(BPEValueError, match=r"token b'abcd' of rank 259 is not two tokens of lower rank joined"):
        tiktoken_rules(stuck)


CORPUS_FILES = [
    "en_shakespeare",
    "ja_manpages",
    "zh_CN_manpages",
    "code_python311_stdlib",
    "multi_vim_tutors",
    "unicode_emoji-test",
]
SLICE = 20_000  # characters of each corpus


@pytest.fixture(scope="module", params=["r50k", "cl100k", "o200k"])
def real_vocab(request: pytest.FixtureRequest) -> Iterator[tuple[str, Tokenizer, Any]]:
    tiktoken = pytest.importorskip("tiktoken")
    name: str = request.param
    path = VOCABS / f"{name}_base.tiktoken.gz"
    if not path.exists():
        pytest.skip(f"{path} is not present (the shared vocabularies are not part of the project)")
    ranks = load_tiktoken_ranks(path)
    specials = {"<|endoftext|>": max(ranks.values()) + 1}
    tokenizer = Tokenizer.from_tiktoken_ranks(ranks, name, specials)
    reference = tiktoken.Encoding(name=name, pat_str=PATTERNS[name], mergeable_ranks=ranks, special_tokens=specials)
    yield name, tokenizer, reference


def corpus_slice(name: str) -> str:
    path = CORPORA / f"{name}.txt.gz"
    if not path.exists():
        pytest.skip(f"{path} is not present (the shared corpora are not part of the project)")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        head = handle.read(SLICE * 20)
    middle = len(head) // 2
    return head[: SLICE // 2] + head[middle : middle + SLICE // 2]


@pytest.mark.parametrize("corpus", CORPUS_FILES)
def test_same_ids_as_tiktoken(real_vocab: tuple[str, Tokenizer, Any], corpus: str) -> None:
    name, tokenizer, reference = real_vocab
    text = corpus_slice(corpus)
    expected = reference.encode_ordinary(text)
    assert tokenizer.encode(text) == expected, f"{name} on {corpus}"
    assert tokenizer.decode(expected) == text
    with_special = text[:500] + "<|endoftext|>" + text[500:1000]
    assert tokenizer.encode(with_special, allowed_special="all") == reference.encode(
        with_special, allowed_special="all"
    )


def test_real_vocab_facts(real_vocab: tuple[str, Tokenizer, Any]) -> None:
    name, tokenizer, reference = real_vocab
    assert tokenizer.vocab_size == reference.n_vocab
    assert tokenizer.pattern_name == name
    for token in (0, 255, 256, 1000, reference.n_vocab - 2):
        assert tokenizer.token_bytes(token) == reference.decode_single_token_bytes(token)


# -- byte tokens at any ids, split steps instead of one pattern ------------------------------------------------


@given(texts(40), st.integers(0, 3))
def test_bytes_at_shifted_ids_are_the_spec_renamed(text: str, shift: int) -> None:
    """Bytes at ids 3..258 (DeepSeek's layout) with rules above them: spec.enc per word, bytes renamed, round trip."""
    rules = learned(SAMPLE, 8)
    renumbered = {rule.c: 259 + shift + index for index, rule in enumerate(rules)}
    shifted = [Rule(renumbered.get(r.a, r.a), renumbered.get(r.b, r.b), renumbered[r.c]) for r in rules]
    byte_ids = [3 + b for b in range(ALPHABET_SIZE)]
    tokenizer = Tokenizer(shifted, "cl100k", {"<s>": 0}, byte_ids=byte_ids)
    expected = [
        byte_ids[t] if t < ALPHABET_SIZE else t
        for word in compile_pinned("cl100k").findall(text)
        for t in spec.enc(shifted, word.encode("utf-8"))
    ]
    assert tokenizer.encode(text) == expected
    assert tokenizer.decode(expected) == text
    again = Tokenizer.from_json(tokenizer.to_json())
    assert again.byte_ids == tuple(byte_ids) and again.encode(text) == expected
    assert tokenizer.pre_tokenize(text) == compile_pinned("cl100k").findall(text)


def test_pretokenizer_steps_replace_the_pattern() -> None:
    """With split steps the pattern is kept but the steps cut the words; the file says version 2."""
    from bpeproof.impl.pre_tokenizers.hf_splits import SplitStep

    tokenizer = Tokenizer(learned(SAMPLE, 5), "cl100k", pretokenizer=[SplitStep(r"\p{N}{1,3}"), SplitStep(r"\s+")])
    assert tokenizer.pre_tokenize("ab 1234") == ["ab", " ", "123", "4"]
    assert tokenizer.pattern_name == "cl100k" and "2 split steps" in repr(tokenizer)
    assert tokenizer.decode(tokenizer.encode(SAMPLE)) == SAMPLE
    document = json.loads(tokenizer.to_json())
    assert document["version"] == 2 and len(document["pretokenizer"]) == 2
    with pytest.raises(BPETypeError):
        Tokenizer([], pretokenizer=["a"])  # type: ignore[list-item]
    with pytest.raises(BPETypeError):
        Tokenizer([], pretokenizer="a")  # type: ignore[arg-type]


def test_one_format_error_class() -> None:
    """``Tokenizer.from_json`` raises the ``FormatError`` that ``bpeproof.impl.formats`` exports: one class per kind."""
    import bpeproof.impl.formats

    assert bpeproof.impl.formats.FormatError is FormatError
    with pytest.raises(bpeproof.impl.formats.FormatError):
        Tokenizer.from_json("{}")


def test_atomic_write_errors_name_the_target(tmp_path: Path) -> None:
    """A failed write names the file asked for, never the temporary file beside it; a directory is refused."""
    missing = tmp_path / "no-such-dir" / "x.svg"
    with pytest.raises(FileNotFoundError) as info:
        atomic_write_text(missing, "<svg/>")
    assert info.value.filename == str(missing) and ".tmp" not in str(info.value)
    with pytest.raises(IsADirectoryError) as directory:
        atomic_write_text(tmp_path, "x")
    assert directory.value.filename == str(tmp_path)
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def test_a_pattern_that_backtracks_without_end_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file's expression such as ``(a|aa)+$`` takes exponential time: it runs under a time limit and fails with
    one clear error instead of hanging (the limit is shortened here; it is 5 s plus 1 s per million characters)."""
    import bpeproof.impl.pre_tokenizers.hf_splits
    import bpeproof.impl.pre_tokenizers.splitter
    from bpeproof.impl.pre_tokenizers.hf_splits import GPT2_SPLIT, SplitStep
    from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, PatternTimeoutError, backtracks

    monkeypatch.setattr(bpeproof.impl.pre_tokenizers.splitter, "time_limit", lambda text: 0.2)
    monkeypatch.setattr(bpeproof.impl.pre_tokenizers.hf_splits, "time_limit", lambda text: 0.2)
    text = "a" * 40 + "b"
    with pytest.raises(PatternTimeoutError, match="backtracks without end"):
        Tokenizer([], r"(a|aa)+$|.").encode(text)
    with pytest.raises(PatternTimeoutError, match="backtracks without end"):
        SplitStep("(a|aa)+$").split(text)
    assert Tokenizer([], r"(a|aa)+$|.").encode("aa") == [97, 97]  # short texts still finish
    # The patterns of real files run without a limit (it would make the regex module three times slower).
    assert not any(backtracks(source) for source in [*PATTERNS.values(), GPT2_SPLIT, r"\p{N}{1,3}"])
    assert backtracks("(a+)*") and backtracks(r"(?:\d{1,3})+") and not backtracks(r"[(]+|\(a|b\)+")
