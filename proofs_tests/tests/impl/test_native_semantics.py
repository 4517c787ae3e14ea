"""Each library's semantics as the engine runs it, against its definition in ``spec/variants.py`` and the library.

* tiktoken (``impl.models.tiktoken.TiktokenModel``), C and Python, against ``spec.variants.enc_tiktoken`` and
  against tiktoken itself, on generated rank files that need not be proper: tokens whose rank is below their
  parts', tokens that only the whole-piece lookup reaches, the empty token;
* Hugging Face BPE (``impl.models.hugging_face.HuggingFaceModel``), C and Python, against
  ``spec.variants.enc_pair_rank`` and against ``tokenizers`` on generated merge lists: improper order, a pair listed
  twice, results that are not new;
* where the coincidence theorem applies (a valid rule list, every token reachable), all of them equal the
  article's sequential enc_R;
* the command line never prints ids that differ from the library's, and refuses what it cannot reproduce.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpeproof.impl.encoder
from bpeproof.impl.formats.vocab import bytes_to_token_string
from bpeproof.impl.models.hugging_face import HuggingFaceModel
from bpeproof.impl.models.sequential import SequentialModel
from bpeproof.impl.models.tiktoken import TiktokenModel
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.spec import enc as spec_enc
from bpeproof.spec.types import InvalidTextError, Rule
from bpeproof.spec.variants import enc_pair_rank, enc_tiktoken

ALPHABET = b"abc "


def python_tiktoken(ranks: dict[bytes, int], pattern: str) -> Tokenizer:
    """``Tokenizer.from_tiktoken_ranks`` on the Python loop."""
    return Tokenizer.from_model(TiktokenModel(ranks, c_loop=False), pattern)


@st.composite
def rank_files(draw: st.DrawFn) -> dict[bytes, int]:
    """All 256 bytes at shuffled ranks and 0–12 tokens over a tiny alphabet, at any ranks (proper or not)."""
    tokens = draw(st.lists(st.binary(min_size=2, max_size=5).map(lambda b: bytes(ALPHABET[x % 4] for x in b)),
                           max_size=12, unique=True))
    ranks_bytes = draw(st.permutations(range(256 + len(tokens))))
    ranks = {bytes([byte]): ranks_bytes[byte] for byte in range(256)}
    for index, token in enumerate(tokens):
        ranks[token] = ranks_bytes[256 + index]
    return ranks


words = st.binary(max_size=24).map(lambda b: bytes(ALPHABET[x % 4] for x in b))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rank_files(), st.lists(words, min_size=1, max_size=6))
def test_tiktoken_model_is_its_definition(ranks: dict[bytes, int], texts: list[bytes]) -> None:
    fast = TiktokenModel(ranks)
    slow = TiktokenModel(ranks, c_loop=False)
    assert fast.c_merger() is not None or not bpeproof.impl.encoder.HAVE_C_LOOP
    assert slow.c_merger() is None
    for word in texts:
        expected = enc_tiktoken(ranks, word)
        assert list(slow.encode_word(word)) == expected
        merger = fast.c_merger()
        got = list(merger.encode(word)) if merger is not None else list(fast.encode_word(word))
        assert got == expected


@settings(max_examples=150, deadline=None)
@given(rank_files(), st.lists(words, min_size=1, max_size=4))
def test_tiktoken_model_equals_tiktoken(ranks: dict[bytes, int], texts: list[bytes]) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    library = tiktoken.Encoding("generated", pat_str=PATTERNS["r50k"], mergeable_ranks=ranks, special_tokens={})
    ours = Tokenizer.from_tiktoken_ranks(ranks, "r50k")
    text = " ".join(word.decode("ascii") for word in texts)
    assert ours.encode(text) == library.encode_ordinary(text)
    assert python_tiktoken(ranks, "r50k").encode(text) == library.encode_ordinary(text)


def test_improper_rank_file_of_the_report() -> None:
    """abc at 256 and ab at 257: tiktoken gives [256, 32, 256, 100] for 'abc abcd'; so must the engine."""
    ranks = {bytes([byte]): byte for byte in range(256)} | {b"abc": 256, b"ab": 257}
    assert Tokenizer.from_tiktoken_ranks(ranks, "r50k").encode("abc abcd") == [256, 32, 256, 100]
    only = {bytes([byte]): byte for byte in range(256)} | {b"abc": 256}
    assert Tokenizer.from_tiktoken_ranks(only, "r50k").encode("abc abcd") == [256, 32, 97, 98, 99, 100]


def test_empty_token_and_missing_byte() -> None:
    ranks = {bytes([byte]): byte for byte in range(1, 256)} | {b"": 256, b"\x00a": 257}
    tokenizer = Tokenizer.from_tiktoken_ranks(ranks, "r50k")
    assert tokenizer.decode_bytes([256, 97]) == b"a"
    assert tokenizer.model.encode_word(b"\x00a") == (257,)  # the missing byte 0 is covered by a token
    with pytest.raises(InvalidTextError, match="0x00"):
        tokenizer.encode("\x00")
    with pytest.raises(InvalidTextError, match="0x00"):
        python_tiktoken(ranks, "r50k").encode("\x00")


@st.composite
def merge_tables(draw: st.DrawFn) -> tuple[dict[int, bytes], list[tuple[int, int, int]]]:
    """A byte-level vocabulary (bytes at shuffled ids) and merges over it in any order, repeats allowed."""
    strings = draw(st.lists(st.binary(min_size=2, max_size=4).map(lambda b: bytes(ALPHABET[x % 4] for x in b)),
                            max_size=10, unique=True))
    ids = draw(st.permutations(range(256 + len(strings))))
    tokens = {ids[byte]: bytes([byte]) for byte in range(256)}
    tokens |= {ids[256 + index]: data for index, data in enumerate(strings)}
    by_bytes = {data: token for token, data in tokens.items()}
    candidates = [(by_bytes[data[:cut]], by_bytes[data[cut:]], by_bytes[data])
                  for data in strings for cut in range(1, len(data))
                  if data[:cut] in by_bytes and data[cut:] in by_bytes]
    merges = draw(st.lists(st.sampled_from(candidates), max_size=14)) if candidates else []
    return tokens, merges


@settings(max_examples=300, deadline=None)
@given(merge_tables(), st.lists(words, min_size=1, max_size=6), st.booleans())
def test_hugging_face_model_is_its_definition(
    table: tuple[dict[int, bytes], list[tuple[int, int, int]]], texts: list[bytes], ignore_merges: bool
) -> None:
    tokens, merges = table
    fast = HuggingFaceModel(tokens, merges, ignore_merges=ignore_merges)
    slow = HuggingFaceModel(tokens, merges, ignore_merges=ignore_merges, c_loop=False)
    pairs = {(a, b): (rank, c) for rank, (a, b, c) in enumerate(merges)}  # a pair listed twice keeps its last
    by_bytes = {data: token for token, data in sorted(tokens.items(), reverse=True)}
    for word in texts:
        if ignore_merges and word in by_bytes:
            expected = [by_bytes[word]]
        else:
            expected = enc_pair_rank(pairs, [by_bytes[bytes([byte])] for byte in word])
        assert list(slow.encode_word(word)) == expected
        assert list(fast.encode_word(word)) == expected
        merger = fast.c_merger()
        if merger is not None:
            assert list(merger.encode(word)) == expected


def _tokenizer_json(tokens: dict[int, bytes], merges: list[tuple[int, int, int]], ignore_merges: bool) -> str:
    vocab = {bytes_to_token_string(data): token for token, data in tokens.items()}
    lines = [[bytes_to_token_string(tokens[a]), bytes_to_token_string(tokens[b])] for a, b, _ in merges]
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
             "ignore_merges": ignore_merges, "vocab": vocab, "merges": lines}
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                             "use_regex": True},
        "model": model,
    })


@settings(max_examples=100, deadline=None)
@given(merge_tables(), st.lists(words, min_size=1, max_size=4), st.booleans())
def test_hugging_face_files_equal_tokenizers(
    table: tuple[dict[int, bytes], list[tuple[int, int, int]]], texts: list[bytes], ignore_merges: bool
) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from bpeproof.commands._vocab import load_tokenizer

    tokens, merges = table
    document = _tokenizer_json(tokens, merges, ignore_merges)
    library = tokenizers.Tokenizer.from_str(document)
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tokenizer.json"
        path.write_text(document, encoding="utf-8")
        ours = load_tokenizer(str(path))
    text = " ".join(word.decode("ascii") for word in texts)
    assert ours.semantics == "hf-bpe"
    assert ours.encode(text) == library.encode(text, add_special_tokens=False).ids


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=6), st.lists(words, min_size=1, max_size=4))
def test_all_semantics_coincide_on_a_proper_rule_list(pairs: list[tuple[int, int]], texts: list[bytes]) -> None:
    """Where every token is reachable (checked), tiktoken's and Hugging Face's semantics give enc_R's ids."""
    rules: list[Rule] = []
    known = list(ALPHABET)
    strings = {byte: bytes([byte]) for byte in range(256)}
    for left, right in pairs:
        a, b = known[left % len(known)], known[right % len(known)]
        joined = strings[a] + strings[b]
        if joined in strings.values():
            continue
        c = 256 + len(rules)
        rules.append(Rule(a, b, c))
        strings[c] = joined
        known.append(c)
    sequential = SequentialModel(rules)
    if not all(sequential.encoder.is_reachable(rule.c) for rule in rules):
        return  # the theorem's condition fails: the semantics may differ (spec/variants.py's example)
    ranks = {data: token for token, data in strings.items()}
    hugging = HuggingFaceModel(strings, [tuple(rule) for rule in rules])  # type: ignore[misc]
    for word in texts:
        expected = spec_enc(rules, word)
        assert enc_tiktoken(ranks, word) == expected
        assert list(TiktokenModel(ranks).encode_word(word)) == expected
        assert list(hugging.encode_word(word)) == expected


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bpeproof.cli", *args], capture_output=True, text=True, timeout=120,
                          check=False)


def test_cli_prints_tiktokens_ids_for_an_improper_file(tmp_path: Path) -> None:
    lines = [f"{base64.b64encode(bytes([byte])).decode()} {byte}" for byte in range(256)]
    lines += [f"{base64.b64encode(b'abc').decode()} 256", f"{base64.b64encode(b'ab').decode()} 257", "= 258"]
    path = tmp_path / "x.tiktoken"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    result = _cli("encode", "abc abcd", "--vocab", str(path), "--pattern", "r50k")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["256", "32", "256", "100"]
    result = _cli("encode", "abc", "--vocab", str(path), "--pattern", "r50k", "--json")
    assert json.loads(result.stdout)["semantics"] == "tiktoken"


def test_cli_refuses_what_it_cannot_reproduce(tmp_path: Path) -> None:
    tokens = {byte: bytes([byte]) for byte in range(256)}
    document = json.loads(_tokenizer_json(tokens, [], False))
    document["normalizer"] = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                              "strip_accents": None, "lowercase": True}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = _cli("encode", "abc", "--vocab", str(path))
    assert result.returncode == 2
    assert "normalizer (BertNormalizer)" in result.stderr and result.stdout == ""
    document["normalizer"] = None
    document["model"]["dropout"] = 0.1
    path.write_text(json.dumps(document), encoding="utf-8")
    result = _cli("encode", "abc", "--vocab", str(path))
    assert result.returncode == 2 and "dropout" in result.stderr and result.stdout == ""
