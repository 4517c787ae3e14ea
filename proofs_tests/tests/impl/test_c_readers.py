"""The loaders' C readers (``impl/_c/_fastload.c``, ``bpeproof.impl.io.c_readers``) against their Python paths, on
generated input: the same values, or the same error, for well-formed files and for damaged ones."""

from __future__ import annotations

import base64
import json
import random
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bpeproof.impl.formats import gguf_tokenizer, gguf_vocab
from bpeproof.impl.formats.gguf_container import parse_gguf_metadata
from bpeproof.impl.formats.gguf_tokenizer import GGUFTokenizer, read_gguf_tokenizer
from bpeproof.impl.formats.gpt2 import load_gpt2, parse_encoder
from bpeproof.impl.formats.hf_json import parse_hf_json
from bpeproof.impl.formats.sentencepiece_model import parse_model_proto
from bpeproof.impl.formats.tiktoken_file import parse_tiktoken
from bpeproof.impl.formats.vocab import (
    AddedToken,
    byte_level_alphabet,
    bytes_to_unicode,
    token_string_to_bytes,
    token_strings_to_bytes,
)
from bpeproof.impl.io import c_readers
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.packed_state import pack, unpack
from bpeproof.impl.models.sentencepiece import SentencePieceModel
from bpeproof.spec.types import BPETypeError, BPEValueError

FAST = c_readers.c_readers()
pytestmark = pytest.mark.skipif(FAST is None, reason="the C readers are not built")

FUZZ = settings(max_examples=300)


def both(monkeypatch: pytest.MonkeyPatch, read: Callable[[], Any]) -> tuple[Any, Any]:
    """What ``read`` gives (or the message it raises) with the C readers, then with the Python paths."""
    results = []
    for use in (True, False):
        monkeypatch.setattr(c_readers, "USE_C_READERS", use)
        try:
            results.append(read())
        except FormatError as error:
            results.append(("FormatError", str(error)))
    return results[0], results[1]


# -- tiktoken rank files -------------------------------------------------------------------------------------

#: What a damaged rank file may hold: separators, base64 and digit characters, padding, other bytes.
_NOISE = [b" ", b"\t", b"\r", b"\n", b"\r\n", b"=", b"==", b"A", b"/", b"+", b"-", b"0", b"9", b"\x0b", b"\x0c",
          b"\x1c", b"\xc3\xa9", b"\x00", b"12345678901234567890123456789012"]


def _rank_file(tokens: list[bytes], ranks: list[int], separator: bytes, ending: bytes) -> bytes:
    lines = [base64.b64encode(token) + separator + str(rank).encode() for token, rank in zip(tokens, ranks,
                                                                                             strict=True)]
    return ending.join(lines) + ending


@st.composite
def rank_files(draw: st.DrawFn) -> bytes:
    tokens = draw(st.lists(st.binary(min_size=0, max_size=7), min_size=0, max_size=30))
    ranks = draw(st.lists(st.integers(0, 10**25), min_size=len(tokens), max_size=len(tokens)))
    data = _rank_file(tokens, ranks, draw(st.sampled_from([b" ", b"\t", b"  "])),
                      draw(st.sampled_from([b"\n", b"\r\n"])))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(data)))
        lines = data.split(b"\n")
        if draw(st.booleans()) and len(lines) > 1:  # a line given twice
            line = draw(st.sampled_from(lines))
            data += line + b"\n"
        elif draw(st.booleans()):
            data = data[:at] + draw(st.sampled_from(_NOISE)) + data[at:]
        else:
            data = data[:at] + data[at + 1 :]
    return data


@FUZZ
@given(rank_files())
def test_rank_files_read_alike(data: bytes) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both(monkeypatch, lambda: parse_tiktoken("x.tiktoken", data))
    assert fast == slow
    if isinstance(fast, dict):
        assert list(fast.items()) == list(slow.items())  # the file's order too


def test_rank_file_reads_a_well_formed_file_in_one_pass() -> None:
    randomly = random.Random(5)
    tokens = list(dict.fromkeys(randomly.randbytes(randomly.randint(1, 9)) for _ in range(2000)))
    ranks = randomly.sample(range(10**6), len(tokens))
    data = _rank_file(tokens, ranks, b" ", b"\n")
    found = FAST.rank_file(data)
    assert found == dict(zip(tokens, ranks, strict=True)) and list(found) == tokens
    assert FAST.rank_file(data.replace(b"\n", b"\r\n", 3)) == found
    assert FAST.rank_file(b"=  5\n") is None  # the empty token: the line reader's
    assert FAST.rank_file(b"QQ== 1\n") == {b"A": 1}
    assert FAST.rank_file(b"QQ== 1\nQQ== 1\n") is None  # a token given twice, even with the same rank
    assert FAST.rank_file(b"QR== 1\n") is None  # not canonical: bits left over that b2a_base64 never sets


# -- GGUF string arrays and merges -----------------------------------------------------------------------------


def _gguf_strings(strings: list[bytes], count: int) -> bytes:
    """A GGUF file whose one pair is an array of ``count`` strings, of which ``strings`` are written."""
    items = b"".join(struct.pack("<Q", len(data)) + data for data in strings)
    key = b"tokenizer.ggml.tokens"
    pair = struct.pack("<Q", len(key)) + key + struct.pack("<IIQ", 9, 8, count) + items
    return b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + pair


@FUZZ
@given(st.lists(st.binary(max_size=6), max_size=12), st.integers(0, 3), st.integers(0, 40), st.booleans())
def test_gguf_string_arrays_read_alike(strings: list[bytes], extra: int, cut: int, keep: bool) -> None:
    data = _gguf_strings(strings, len(strings) + (extra if cut else 0))
    data = data[: len(data) - cut] if cut < len(data) else data
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both(monkeypatch, lambda: parse_gguf_metadata("x.gguf", data, lambda key: keep))
    assert fast == slow


def test_gguf_strings_keep_bytes_that_are_not_utf8() -> None:
    data = _gguf_strings([b"ok", b"\xff\xfe", b"", "é".encode()], 4)
    assert parse_gguf_metadata("x.gguf", data).values["tokenizer.ggml.tokens"] == ["ok", "\udcff\udcfe", "", "é"]


GPT2 = bytes_to_unicode()


@st.composite
def gguf_tokenizers(draw: st.DrawFn) -> GGUFTokenizer:
    """A byte-level GGUF tokenizer: the 256 bytes, merged tokens, a few texts outside GPT-2's table, and merges
    of which some may be odd (a side or the join no token, a pair repeated, no space after the first character)."""
    texts = [GPT2[byte] for byte in range(256)]
    merges: list[str] = []
    for _ in range(draw(st.integers(0, 25))):
        left, right = draw(st.sampled_from(texts)), draw(st.sampled_from(texts))
        if left + right not in texts:
            texts.append(left + right)
        merges.append(f"{left} {right}")
    texts += [text for text in draw(st.lists(st.sampled_from(["<|end|>", "a b", "\u00a0x", "[PAD]", "é"]),
                                             unique=True)) if text not in texts]
    odd = draw(st.lists(st.sampled_from(["a b", "ab c", " a", "a", "", "Ġ Ġ", "é x", "a  b", "<|end|> a"]),
                        max_size=3))
    for line in odd:
        merges.insert(draw(st.integers(0, len(merges))), line)
    repeated = draw(st.booleans())
    if merges and repeated:
        merges.append(draw(st.sampled_from(merges)))  # a pair listed twice
    random.Random(draw(st.integers(0, 9))).shuffle(texts)
    attrs = [gguf_tokenizer.NORMAL] * len(texts)
    return GGUFTokenizer("x.gguf", "gpt2", "gpt-2", "gpt2", texts, attrs, merges)


@FUZZ
@given(gguf_tokenizers())
def test_gguf_byte_level_tables_alike(tokenizer: GGUFTokenizer) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both(monkeypatch, lambda: gguf_vocab.byte_level_tables(tokenizer))
    assert fast == slow


def test_gguf_merge_ids_of_a_real_file() -> None:
    path = Path(__file__).resolve().parents[2] / "fixtures" / "llama_cpp" / "ggml-vocab-gpt-2.gguf.gz"
    tokenizer = read_gguf_tokenizer(path)
    found = FAST.merge_ids(tokenizer.texts, bytearray(len(tokenizer.texts)), tokenizer.merges)
    assert found is not None and len(found[0]) == len(tokenizer.merges) == 50_000
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both(monkeypatch, lambda: gguf_vocab.byte_level_tables(tokenizer))
    assert fast == slow and fast.merge_ids == found


# -- sentencepiece models ----------------------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        out.append(value & 0x7F | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def _field(number: int, wire: int, value: int | bytes) -> bytes:
    key = _varint(number << 3 | wire)
    if wire == 0:
        assert isinstance(value, int)
        return key + _varint(value)
    assert isinstance(value, bytes)
    return key + (_varint(len(value)) + value if wire == 2 else value)


@st.composite
def model_protos(draw: st.DrawFn) -> bytes:
    """A serialized ``ModelProto``: pieces mostly in the usual layout, some not (the type first, no score, a
    long or empty or non-UTF-8 text, an unknown field, a field of another wire type), the specs around them,
    and now and then cut short or with a stray byte."""
    out = bytearray()
    for _ in range(draw(st.integers(0, 12))):
        text = draw(st.sampled_from([b"a", b"\xe2\x96\x81b", b"<0x41>", b"", b"\xff", b"x" * 130, b"cd"]))
        score = struct.pack("<f", draw(st.sampled_from([0.0, -0.0, -1.5, 3.0, float("inf")])))
        kind = draw(st.sampled_from([None, 1, 2, 3, 6, 9]))
        parts = [_field(1, 2, text), _field(2, 5, score)] + ([] if kind is None else [_field(3, 0, kind)])
        layout = draw(st.sampled_from(["usual", "usual", "usual", "reversed", "no score", "extra"]))
        if layout == "reversed":
            parts.reverse()
        elif layout == "no score":
            del parts[1]
        elif layout == "extra":
            parts.append(_field(7, 0, 1))
        out += _field(1, 2, b"".join(parts))
    trainer = _field(3, 0, draw(st.sampled_from([1, 2]))) + _field(35, 0, draw(st.integers(0, 1)))
    normalizer = _field(1, 2, b"identity") + _field(3, 0, draw(st.integers(0, 1)))
    specs = [_field(2, 2, trainer), _field(3, 2, normalizer), _field(9, 5, b"\0\0\0\0"), _field(10, 1, b"\1" * 8)]
    if draw(st.booleans()):
        specs.append(_field(draw(st.sampled_from([1, 2, 3])), 0, 5))  # a sub-message that is a varint
    for spec in draw(st.permutations(specs)):
        out += spec
    if draw(st.booleans()):
        out = out[: draw(st.integers(0, len(out)))]
    return bytes(out)


@FUZZ
@given(model_protos())
def test_sentencepiece_models_read_alike(data: bytes) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both(monkeypatch, lambda: parse_model_proto("x.model", data))
    assert fast == slow


@st.composite
def piece_lists(draw: st.DrawFn) -> list[Any]:
    """Pieces of a sentencepiece model: mostly usual ones, sometimes one the library refuses or that the whole-list
    reading leaves to the piece-by-piece one (a NUL, a repeat, a float type, a huge score, a long text)."""
    pieces: list[Any] = [("<unk>", 0.0, 2), *((f"<0x{byte:02X}>", 0.0, 6) for byte in range(256))]
    for text in draw(st.lists(st.text("ab▁c", min_size=1, max_size=4), max_size=20)):
        pieces.append((text, draw(st.sampled_from([-1.0, -2.0, 0.0, -0.0, 5, -1e-3])),
                       draw(st.sampled_from([1, 1, 1, 3, 4, 5]))))
    odd = draw(st.sampled_from([None, ("\0", 0.0, 1), ("a\0", 0.0, 1), ("<unk>", 0.0, 2), ("z", 1e300, 1),
                                ("y", float("nan"), 1), ("w", 0.0, 1.0), ("v" * 2500, 0.0, 1), ("", 0.0, 1),
                                ("u", 0.0, 7), ("t", True, 1), ["s", 0.0, 1]]))
    if odd is not None:
        pieces.insert(draw(st.integers(0, len(pieces))), odd)
    return pieces


def _model_state(pieces: list[Any], byte_fallback: bool, columns: bool = False) -> Any:
    try:
        if columns:
            texts, scores, types = (list(column) for column in zip(*pieces, strict=True))
            model = SentencePieceModel(columns=(texts, scores, types), byte_fallback=byte_fallback)
        else:
            model = SentencePieceModel(pieces, byte_fallback=byte_fallback)
    except (BPEValueError, BPETypeError, OverflowError) as error:
        return type(error).__name__, str(error)
    made = {"_bigrams": model._bigrams}  # (made when first read, as pickling made it)
    state = {key: value for key, value in {**vars(model), **made}.items() if key not in ("normalizer", "_user_start")}
    return state, model.token_table(), list(state["_codes"].items())


class _Piece(tuple):  # type: ignore[type-arg]
    """A piece as a tuple of another class: the constructor then checks the pieces one by one."""


@FUZZ
@given(piece_lists(), st.booleans())
def test_sentencepiece_model_tables_alike(pieces: list[Any], byte_fallback: bool) -> None:
    """The model's tables read in whole-list passes, from the pieces or from their three columns, are those read
    piece by piece."""
    one_by_one = [_Piece(piece) if type(piece) is tuple else piece for piece in pieces]
    expected = _model_state(one_by_one, byte_fallback)
    assert _model_state(pieces, byte_fallback) == expected
    triples = [_Piece(piece) for piece in pieces]  # (columns hold only triples: a list piece becomes one)
    assert _model_state(pieces, byte_fallback, columns=True) == _model_state(triples, byte_fallback)


# -- tokenizer.json merges ---------------------------------------------------------------------------------------


@st.composite
def tokenizer_jsons(draw: st.DrawFn) -> bytes:
    """A byte-level tokenizer.json: the 256 bytes and merged tokens (ids in order, shuffled, or with gaps), merges
    as strings, with now and then an odd line (a side or the join no token, a repeat, a second space, a line
    break, the legacy ``#version`` line) or as pairs."""
    texts = [GPT2[byte] for byte in range(256)]
    merges: list[Any] = []
    for _ in range(draw(st.integers(0, 20))):
        left, right = draw(st.sampled_from(texts)), draw(st.sampled_from(texts))
        if left + right not in texts:
            texts.append(left + right)
        merges.append(f"{left} {right}")
    odd = draw(st.lists(st.sampled_from(["a b", "ab c", "a  b", " a", "a\nb", "#version: 0.2", "Ġ Ġ", "é x"]),
                        max_size=2))
    for line in odd:
        merges.insert(draw(st.integers(0, len(merges))), line)
    repeated = draw(st.booleans())
    if merges and repeated:
        merges.append(draw(st.sampled_from(merges)))
    as_pairs = draw(st.booleans())
    if as_pairs:
        merges = [line.split(" ", 1) if " " in line else [line, ""] for line in merges]
    order = draw(st.sampled_from(["in order", "shuffled", "gaps"]))
    ids = list(range(len(texts)))
    if order == "shuffled":
        random.Random(draw(st.integers(0, 9))).shuffle(ids)
    elif order == "gaps":
        ids = [2 * token + 3 for token in ids]
    document = {"model": {"type": "BPE", "vocab": dict(zip(texts, ids, strict=True)), "merges": merges},
                "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
                "added_tokens": [{"id": max(ids) + 1, "content": "<|end|>", "special": True}]}
    return json.dumps(document).encode()


@FUZZ
@given(tokenizer_jsons())
def test_tokenizer_json_merges_read_alike(data: bytes) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both(monkeypatch, lambda: parse_hf_json("tokenizer.json", data))
    assert fast == slow


# -- the compiled-vocabulary cache's packing --------------------------------------------------------------------

_ADDED = (AddedToken,)
_SCALARS = st.one_of(st.integers(-(2**70), 2**70), st.booleans(), st.none(), st.binary(max_size=4),
                     st.text(max_size=4), st.floats(allow_nan=False))
_ADDED_TOKENS = st.builds(AddedToken, st.text(min_size=1, max_size=3), st.integers(0, 9), special=st.booleans())
_LISTS = st.one_of(
    st.lists(st.integers(-(2**40), 2**40), max_size=12), st.lists(st.integers(0, 5), max_size=12).map(sorted),
    st.builds(lambda n: list(range(n)), st.integers(0, 9)), st.lists(st.binary(max_size=3), max_size=9),
    st.lists(st.text(max_size=3), max_size=9), st.lists(st.booleans(), max_size=9),
    st.lists(st.one_of(st.none(), st.integers(0, 9)), max_size=9),
    st.lists(st.one_of(st.none(), st.text()), max_size=9),
    st.lists(_SCALARS, max_size=6), st.lists(_ADDED_TOKENS, max_size=5),
    st.lists(st.tuples(st.integers(0, 9), st.text(max_size=2)), max_size=5))
VALUES = st.recursive(st.one_of(_SCALARS, _LISTS), lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3),
    st.tuples(inner, inner), st.frozensets(st.integers(0, 99), max_size=5)), max_leaves=12)


@FUZZ
@given(VALUES)
@example({"": None, "0": 2**63})  # an int beyond 64 bits beside a None: the items one by one, None kept
def test_packing_alike(value: Any) -> None:
    """The C joins and arrays pack values that unpack, with or without C, to the value itself."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        packed = []
        for use in (True, False):
            monkeypatch.setattr(c_readers, "USE_C_READERS", use)
            packed.append(pack(value, _ADDED))
        for use in (True, False):
            monkeypatch.setattr(c_readers, "USE_C_READERS", use)
            for description, sections in packed:
                assert unpack(description, sections, _ADDED) == value


@FUZZ
@given(st.lists(st.text(alphabet=st.sampled_from([*GPT2.values(), "a", " ", "\u00a0", "\u0143", "\u0144", "é",
                                                  "\U0001f600", "\udcff"]), max_size=5), max_size=8))
def test_byte_level_spellings_alike(texts: list[str]) -> None:
    """GPT-2's spelling undone in one C pass gives what the charmap gives, text by text."""
    assert FAST.spelt_bytes(texts, byte_level_alphabet()) == [token_string_to_bytes(text) for text in texts]
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both(monkeypatch, lambda: token_strings_to_bytes(texts))
    assert fast == slow


@st.composite
def tokenizer_json_texts(draw: st.DrawFn) -> bytes:
    """A tokenizer.json written in one of several ways (escaped or raw UTF-8, indented or not, members in any
    order), now and then with something the JSON reader must judge: a repeated key, an id that is no plain
    integer, a string escape of every kind, a stray byte, a cut."""
    texts = [GPT2[byte] for byte in range(256)] + draw(st.lists(
        st.text(st.sampled_from(['a', '"', "\\", "\n", "\t", "é", "\U0001f600", "/", "\x01", "Ġ"]), min_size=2,
                max_size=3), unique=True, max_size=6))
    texts = list(dict.fromkeys(texts))
    vocab = {text: index for index, text in enumerate(texts)}
    merges = [f"{a} {b}" for a, b in draw(st.lists(st.tuples(st.sampled_from(texts[:260]),
                                                              st.sampled_from(texts[:260])), max_size=5))]
    model: dict[str, Any] = {"type": "BPE", "vocab": vocab, "merges": merges, "dropout": None}
    document: dict[str, Any] = {"version": "1.0", "model": model, "added_tokens": [],
                                "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False}}
    if draw(st.booleans()):
        document = dict(reversed(list(document.items())))
        model = dict(reversed(list(model.items())))
        document["model"] = model
    data = json.dumps(document, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1, 2]))).encode()
    change = draw(st.sampled_from(["none", "none", "repeat", "float id", "negative id", "big id", "leading zero",
                                   "stray", "cut", "model twice", "vocab twice", "surrogate", "bom"]))
    if change == "repeat":
        data = data.replace(b'"vocab": {', b'"vocab": {"a": 1, "a": 2, ', 1)
    elif change == "float id":
        data = data.replace(b'": 5,', b'": 5.0,', 1)
    elif change == "negative id":
        data = data.replace(b'": 5,', b'": -5,', 1)
    elif change == "big id":
        data = data.replace(b'": 5,', b'": 99999999999,', 1)
    elif change == "leading zero":
        data = data.replace(b'": 5,', b'": 05,', 1)
    elif change == "stray":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"}", b",", b'"', b"\\", b"\xff", b"x"])) + data[at:]
    elif change == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif change == "model twice":
        data = data[:-1] + b', "model": {}}'
    elif change == "vocab twice":
        data = data.replace(b'"merges"', b'"vocab": {}, "merges"', 1)
    elif change == "surrogate":
        data = data.replace(b'"vocab": {', b'"vocab": {"\\ud800x": 900, ', 1)
    elif change == "bom":
        data = b"\xef\xbb\xbf" + data
    return data


@FUZZ
@given(tokenizer_json_texts())
def test_tokenizer_json_documents_read_alike(data: bytes) -> None:
    """The model's vocabulary and merges read in C and the rest by the JSON reader make the whole reader's
    document (or the same error)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both(monkeypatch, lambda: parse_hf_json("tokenizer.json", data))
    assert fast == slow


def test_tokenizer_json_model_read_in_c() -> None:
    vocab = {"a": 0, 'b"': 1, "é\n": 2, "ab": 3}
    document = {"model": {"vocab": vocab, "merges": ['a b"']}, "x": [1, {"y": 2}]}
    data = json.dumps(document, ensure_ascii=False).encode()
    found = FAST.tokenizer_json_model(data)
    assert found is not None and found[0] == vocab and found[1] == ['a b"']
    vocab_start, vocab_end, merges_start, merges_end = found[2]
    assert json.loads(data[vocab_start:vocab_end]) == vocab
    assert json.loads(data[merges_start:merges_end]) == ['a b"']
    assert FAST.tokenizer_json_model(data.replace(b": 3", b": 3.5")) is None


# -- GPT-2's encoder.json and vocab.bpe ------------------------------------------------------------------------


@st.composite
def gpt2_pairs(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """GPT-2's pair of files: the encoder (ids in order or not, now and then one repeated or a string outside the
    byte table) and the merges (a #version line or not, CR LF line ends, a blank line, an odd line)."""
    texts = [GPT2[byte] for byte in range(256)]
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        left, right = draw(st.sampled_from(texts)), draw(st.sampled_from(texts))
        if left + right not in texts:
            texts.append(left + right)
        lines.append(f"{left} {right}")
    texts.append("<|endoftext|>")
    ids = list(range(len(texts)))
    if draw(st.booleans()):
        random.Random(draw(st.integers(0, 9))).shuffle(ids)
    encoder: dict[str, Any] = dict(zip(texts, ids, strict=True))
    change = draw(st.sampled_from(["none", "none", "none", "repeat id", "outside", "empty", "version", "crlf",
                                   "blank", "odd", "unknown side"]))
    if change == "repeat id":
        encoder[texts[3]] = ids[4]
    elif change == "outside":
        encoder["x y"] = len(texts)
    elif change == "empty":
        encoder[""] = len(texts)
    elif change == "odd":
        lines.insert(0, "a  b")
    elif change == "unknown side":
        lines.append("Ġ Ċ\u0143")
    ending = "\r\n" if change == "crlf" else "\n"
    head = ["#version: 0.2"] if change != "version" else []
    body = ending.join([*head, *lines]) + ending + ("\n" if change == "blank" else "")
    return json.dumps(encoder).encode(), body.encode()


@FUZZ
@given(gpt2_pairs())
def test_gpt2_pairs_read_alike(files: tuple[bytes, bytes]) -> None:
    """GPT-2's files read in whole-list passes and in C give what they give line by line, or the same error."""
    with tempfile.TemporaryDirectory() as name:
        encoder, merges = Path(name) / "encoder.json", Path(name) / "vocab.bpe"
        encoder.write_bytes(files[0])
        merges.write_bytes(files[1])
        with pytest.MonkeyPatch.context() as monkeypatch:
            fast, slow = both(monkeypatch, lambda: load_gpt2(encoder, merges))
    assert fast == slow


#: Pieces of a JSON object of strings to ids and what may go wrong in one: escapes (short, \\u, a surrogate's),
#: raw control characters, bytes that are not UTF-8, ids that are no plain int, a repeated key, other values,
#: something after the object, a byte order mark.
_ENCODER_PIECES = [b'"a"', b'"\\u00e9"', b'"\\n\\t\\/"', b'"\\ud83d\\ude00"', b'"\xc4\xa0x"', b'"\x01"',
                   b'"\xff"', b'"\xed\xa0\x80"', b":", b",", b" ", b"\n", b"0", b"7", b"12", b"-1", b"1.0", b"1e3",
                   b"01", b"true", b"null", b"[1]", b"{}", b"99999999999", b"}", b"{", b"\xef\xbb\xbf"]


@st.composite
def encoder_documents(draw: st.DrawFn) -> bytes:
    """GPT-2's encoder.json: mostly a well-formed object of distinct strings to ids, now and then with a piece of
    ``_ENCODER_PIECES`` put in, left out or written over."""
    keys = draw(st.lists(st.text(max_size=5), max_size=12))
    ids = draw(st.lists(st.integers(0, 2**31 + 5), min_size=len(keys), max_size=len(keys)))
    data = json.dumps(dict(zip(keys, ids, strict=True)), ensure_ascii=draw(st.booleans())).encode()
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(data)))
        piece = draw(st.sampled_from(_ENCODER_PIECES))
        data = data[:at] + piece + data[at + draw(st.integers(0, 2)):]
    return data


@FUZZ
@given(encoder_documents())
def test_encoders_read_alike(data: bytes) -> None:
    """An encoder.json read in C gives what the JSON reader gives, or the same error."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both(monkeypatch, lambda: parse_encoder("encoder.json", data))
    assert fast == slow
    if type(fast) is tuple and type(fast[0]) is dict:
        assert list(fast[0].items()) == list(slow[0].items())  # (the same order too)


def _pieces_one_by_one(tokenizer: GGUFTokenizer) -> dict[int, bytes]:
    """``text_pieces`` as llama.cpp's loader makes them, token by token (the reference of the whole-list one)."""
    pieces: dict[int, bytes] = {}
    special = gguf_tokenizer.CONTROL | gguf_tokenizer.USER_DEFINED | gguf_tokenizer.UNKNOWN
    for token, (text, attr) in enumerate(zip(tokenizer.texts, tokenizer.attrs, strict=True)):
        if attr & special:
            continue
        if attr & gguf_tokenizer.NORMAL:
            pieces[token] = text.replace("\u2581", " ").encode("utf-8")
        elif attr & gguf_tokenizer.BYTE:
            if len(text.encode("utf-8")) < 3:
                raise FormatError(tokenizer.path, f"key 'tokenizer.ggml.tokens', token {token}",
                                  f"the byte token {text!r} is shorter than '<0xXX>': llama.cpp fails to load it")
            pieces[token] = bytes([gguf_vocab.byte_token_value(text)])
        else:
            pieces[token] = b""
    return pieces


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["▁a", "b▁▁", "<0x41>", "<0xFF>", "é", "▁", "<s>", "x\U0001f600"]),
                          st.sampled_from([gguf_tokenizer.NORMAL, gguf_tokenizer.BYTE, gguf_tokenizer.CONTROL,
                                           gguf_tokenizer.UNUSED, gguf_tokenizer.NORMAL | gguf_tokenizer.CONTROL,
                                           gguf_tokenizer.USER_DEFINED, 0])), max_size=12))
def test_text_pieces_alike(tokens: list[tuple[str, int]]) -> None:
    """A text-spelt GGUF vocabulary's pieces made in whole-list passes are those made token by token."""
    texts = [text for text, _ in tokens]
    attrs = [attr for _, attr in tokens]
    tokenizer = GGUFTokenizer("x.gguf", "llama", "", None, texts, attrs, [])
    outcomes: list[tuple[object, object]] = []
    for read in (gguf_vocab.text_pieces, _pieces_one_by_one):
        try:
            pieces = read(tokenizer)
            outcomes.append((pieces, list(pieces)))
        except FormatError as error:
            outcomes.append(("FormatError", str(error)))
    assert outcomes[0] == outcomes[1]
