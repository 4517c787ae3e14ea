"""Pre-tokenization classifies code points by Unicode 16.0, as tiktoken's and Oniguruma's engines do.

The ``regex`` module ships newer tables: without ``bpeproof.impl.pre_tokenizers.unicode_classes`` a letter assigned in
Unicode 17.0
(U+0CDC) is a letter to the project and unassigned to tiktoken, and ``"\\u0cdc'a"`` gets other ids.  Two
independent computations are compared: the pattern with its classes written out as Unicode 16.0 ranges
(``pin_pattern``), and the engine's way (``stand_ins``: the text's changed code points replaced), and both
with the libraries themselves.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof.impl.models.tiktoken import TiktokenModel
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.pre_tokenizers.unicode_classes import (
    UNICODE_VERSION,
    category_of,
    changed_code_points,
    pin_pattern,
    stand_ins,
)
from bpeproof.impl.tokenizer import Tokenizer, load_tokenizer

SHARED = Path(__file__).resolve().parents[4] / "shared"
DEEPSEEK = SHARED / "vocabs" / "deepseek_tokenizer.json.gz"

CHANGED = changed_code_points()
#: Letters of Unicode 17.0 and 18.0 (unassigned in 16.0) and U+0295, Ll in 16.0 and Lo later.
KNOWN = ["\u0cdc", "\u0295", "\U00011db0", "\u0558"]


def test_the_table_is_unicode_16() -> None:
    assert UNICODE_VERSION == "16.0"
    assert category_of(0x41) == "Lu" and category_of(0x3042) == "Lo" and category_of(0x0CDC) == "Cn"
    assert category_of(0x0295) == "Ll" and category_of(0x1F600) == "So" and category_of(0x10FFFF) == "Cn"


def test_changed_code_points_are_the_installed_regex_modules_newer_assignments() -> None:
    for code in CHANGED[:: max(1, len(CHANGED) // 500)]:
        char = chr(code)
        assert not regex.match(rf"\p{{{category_of(code)}}}", char), hex(code)
    if regex.match(r"\p{L}", "\u0cdc"):  # a regex module with Unicode 17.0 or later
        assert 0x0CDC in CHANGED


def test_pinned_classes_hold_exactly_the_categories() -> None:
    codes = [code for code in range(0x110000) if not 0xD800 <= code < 0xE000]
    everything = "".join(map(chr, codes))
    categories = [category_of(code) for code in codes]  # each code point's category once, for the four classes
    for name, prefix in (("L", "L"), ("N", "N"), ("Lu", "Lu"), ("M", "M")):
        pinned = regex.compile(pin_pattern(rf"\p{{{name}}}"))
        found = {ord(char) for char in pinned.findall(everything)}
        wanted = {code for code, category in zip(codes, categories, strict=True) if category.startswith(prefix)}
        assert found == wanted, name


@pytest.mark.parametrize(("source", "text", "expected"), [
    (r"\p{L}+", "ab\u0cdccd", ["ab", "cd"]),
    (r"\P{L}+", "ab\u0cdccd", ["\u0cdc"]),
    (r"[^\p{L}\p{N}]+", "a\u0cdc1", ["\u0cdc"]),
    (r"\p{^N}+", "1\u0cdc2", ["\u0cdc"]),
    (r"\pL+", "x\u0cdcy", ["x", "y"]),
    (r"[]\p{Lu}]+", "]A\u0cdc", ["]A"]),
    (r"\p{Letter}+|\p{gc=Nd}", "é\u0cdc٣", ["é", "٣"]),
    (r"\\p{L}", "\\p{L}", ["\\p{L}"]),
    (r"\w+", "ab\u0cdccd", ["ab", "cd"]),
    (r"\W", "a\u0cdc!", ["\u0cdc", "!"]),
    (r"\d+", "1\u0cdc2", ["1", "2"]),
])
def test_pin_pattern_rewrites_every_spelling(source: str, text: str, expected: list[str]) -> None:
    assert regex.findall(pin_pattern(source), text) == expected


def test_other_properties_are_left_alone() -> None:
    assert pin_pattern(r"\p{Han}+[[:alpha:]]") == r"\p{Han}+[[:alpha:]]"


_changed = st.sampled_from([chr(code) for code in CHANGED]) if CHANGED else st.sampled_from(KNOWN)
_texts = st.lists(st.one_of(_changed, st.sampled_from(list("aZ1 '\n\t!é日ー٣\u0301")), st.characters()),
                  max_size=24).map("".join)


@settings(max_examples=300, deadline=None)
@given(_texts)
def test_stand_ins_cut_as_the_pinned_pattern_does(text: str) -> None:
    pinned_text = stand_ins(text)
    assert len(pinned_text) == len(text)
    for name in ("r50k", "cl100k", "o200k"):
        pinned = regex.compile(pin_pattern(PATTERNS[name]))
        expected = [match.span() for match in pinned.finditer(text)]
        assert [match.span() for match in regex.finditer(PATTERNS[name], pinned_text)] == expected, name


def _small_ranks() -> dict[bytes, int]:
    ranks = {bytes([byte]): byte for byte in range(256)}
    for token in (b"'a", b"'s", b"ab", b" a", b"\xe0\xb3", b"\xe0\xb3\x9c"):
        ranks.setdefault(token, len(ranks))
    return ranks


@pytest.mark.parametrize("c_loop", [True, False])
@pytest.mark.parametrize("name", ["r50k", "cl100k", "o200k"])
def test_tiktoken_agrees_on_every_changed_code_point(name: str, c_loop: bool) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    ranks = _small_ranks()
    library = tiktoken.Encoding(name="small", pat_str=PATTERNS[name], mergeable_ranks=ranks, special_tokens={})
    ours = Tokenizer.from_tiktoken_ranks(ranks, name) if c_loop else Tokenizer.from_model(
        TiktokenModel(ranks, c_loop=False), name)
    differ = []
    for code in [*CHANGED, *map(ord, KNOWN)]:
        char = chr(code)
        text = f"{char}'a {char}'s a{char}b 1{char}2 {char}\u0301 A{char}a"
        if library.encode_ordinary(text) != ours.encode(text):
            differ.append(hex(code))
    assert not differ, f"{len(differ)} code points differ from tiktoken {tiktoken.__version__}: {differ[:10]}"


@pytest.mark.skipif(not DEEPSEEK.exists(), reason=f"{DEEPSEEK} is not here (the shared vocabularies)")
def test_tokenizers_agrees_on_every_changed_code_point() -> None:
    tokenizers = pytest.importorskip("tokenizers")
    library = tokenizers.Tokenizer.from_str(gzip.decompress(DEEPSEEK.read_bytes()).decode("utf-8"))
    ours = load_tokenizer(str(DEEPSEEK))
    differ = []
    for code in [*CHANGED, *map(ord, KNOWN)]:
        char = chr(code)
        text = f" {char}a a{char}! !{char}a  {char} a 1{char}"
        if library.encode(text, add_special_tokens=False).ids != ours.encode(text):
            differ.append(hex(code))
    assert not differ, f"{len(differ)} code points differ from tokenizers {tokenizers.__version__}: {differ[:10]}"


def test_stand_ins_leave_text_without_changed_code_points_as_it_is() -> None:
    text = "plain ASCII, é, 日本語, ٣"
    assert stand_ins(text) is text
    for code in CHANGED[:: max(1, len(CHANGED) // 200)]:
        stand_in = stand_ins(f"a{chr(code)}b")
        assert stand_in[0] == "a" and stand_in[2] == "b" and stand_in[1] != chr(code)
        assert category_of(ord(stand_in[1])) == category_of(code)
