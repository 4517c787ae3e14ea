"""Tests of ``bpeproof.impl.formats``: round trips, refusal of malformed files, and the real vocabularies.

The real files live in ``shared/vocabs`` next to the project; each test that
needs one skips with the reason when it is absent.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import functools
import gzip
import json
import os
import random
import struct
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sentencepiece
import tiktoken
import tokenizers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpeproof.impl.formats import (
    GPT2_PATTERN,
    FormatError,
    Vocab,
    bytes_to_unicode,
    convert,
    gpt2_bytes,
    hf_json_bytes,
    load,
    load_gpt2,
    project_bytes,
    read_hf_json,
    read_project,
    read_sentencepiece,
    read_tiktoken,
    tiktoken_bytes,
    to_rules,
    unicode_to_bytes,
    write_gpt2,
    write_hf_json,
    write_project,
    write_tiktoken,
)
from bpeproof.impl.formats.derive import last_split
from bpeproof.impl.formats.sentencepiece_model import Piece, parse_model_proto
from bpeproof.impl.formats.tiktoken_file import load_tiktoken_ranks
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.spec import symbols, validate_rules
from bpeproof.spec.types import Rule

VOCABS = Path(__file__).resolve().parents[4] / "shared" / "vocabs"

FUZZ = settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------
# Building and checking files
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """A directory for files written by hypothesis examples (function-scoped fixtures do not mix with @given)."""
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def fresh_dir(scratch: Path) -> Path:
    """A new empty directory inside ``scratch``."""
    return Path(tempfile.mkdtemp(dir=scratch))


def same(a: Vocab, b: Vocab) -> bool:
    """Equal models, wherever they were read from."""
    return dataclasses.replace(a, source="") == dataclasses.replace(b, source="")


def expect_format_error(path: Path, read: Callable[[Path], object]) -> FormatError | None:
    """Run ``read(path)``; the only exception allowed out is ``FormatError``, and it must name the file.

    (An error in GPT-2's ``vocab.bpe`` found while loading its ``encoder.json`` names both files.)
    """
    try:
        read(path)
    except FormatError as exc:
        assert str(path) in str(exc), f"the message does not name the file: {exc}"
        assert str(exc).startswith(exc.path)
        return exc
    return None


def check_merges_decode(vocab: Vocab) -> None:
    """Every merge joins two tokens into the token whose bytes are theirs, and each long token is
    either made by exactly one merge or reported in ``unsplit``."""
    made: set[int] = set()
    for a, b, c in vocab.merges:
        assert vocab.tokens[a] + vocab.tokens[b] == vocab.tokens[c]
        assert c not in made
        made.add(c)

    def units(data: bytes) -> int:  # sentencepiece merges characters, the other formats bytes
        return len(data.decode(errors="replace")) if vocab.kind == "sentencepiece-bpe" else len(data)

    long_tokens = {i for i, data in vocab.tokens.items() if units(data) >= 2} - set(vocab.specials.values())
    assert made | set(vocab.unsplit) == long_tokens
    assert not made & set(vocab.unsplit)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, wire: int, payload: bytes | int) -> bytes:
    key = _varint(number << 3 | wire)
    if wire == 0:
        assert isinstance(payload, int)
        return key + _varint(payload)
    assert isinstance(payload, bytes)
    return key + (_varint(len(payload)) + payload if wire == 2 else payload)


def model_proto(
    pieces: list[tuple[str, float, int]], *, model_type: int = 2, byte_fallback: bool = True, dummy: bool = True
) -> bytes:
    """A serialized sentencepiece ``ModelProto`` with these ``(piece, score, type)`` entries."""
    out = bytearray()
    for text, score, kind in pieces:
        body = _field(1, 2, text.encode("utf-8")) + _field(2, 5, struct.pack("<f", score)) + _field(3, 0, kind)
        out += _field(1, 2, body)
    trainer = _field(3, 0, model_type) + _field(35, 0, int(byte_fallback)) + _field(40, 0, 0)
    out += _field(2, 2, trainer)
    normalizer = _field(1, 2, b"identity") + _field(3, 0, int(dummy)) + _field(4, 0, 0)
    out += _field(3, 2, normalizer)
    return bytes(out)


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------


@st.composite
def byte_vocabs(draw: st.DrawFn, kind: str = "tiktoken") -> Vocab:
    """A small byte-level model: the 256 bytes and up to 24 joins of earlier tokens over a small alphabet.

    Ids are sometimes the bytes first (0..255), sometimes shuffled, sometimes with gaps.
    The merges are the joins in the order they were made (a proper list).
    """
    rnd = draw(st.randoms(use_true_random=False))
    pieces: list[bytes] = [bytes([i]) for i in range(256)]
    alphabet = [bytes([c]) for c in draw(st.lists(st.sampled_from(b"ab \x00\xc3\xa9\xff"), min_size=1, max_size=4))]
    joins: list[tuple[bytes, bytes]] = []
    seen = set(pieces)
    for _ in range(draw(st.integers(0, 24))):
        pool = alphabet + [a + b for a, b in joins]
        left, right = rnd.choice(pool), rnd.choice(pool)
        if left + right not in seen and len(left + right) <= 12:
            seen.add(left + right)
            joins.append((left, right))
    count = 256 + len(joins)
    style = draw(st.sampled_from(["bytes-first", "shuffled", "gaps"]))
    ids = list(range(count)) if style != "gaps" else sorted(rnd.sample(range(2 * count), count))
    if style == "shuffled":
        rnd.shuffle(ids)
    all_pieces = pieces + [a + b for a, b in joins]
    id_of = dict(zip(all_pieces, ids, strict=True))
    tokens = {id_of[piece]: piece for piece in all_pieces}
    merges = [(id_of[a], id_of[b], id_of[a + b]) for a, b in joins]
    specials: dict[str, int] = {}
    if kind != "tiktoken" and draw(st.booleans()):
        specials = {"<|endoftext|>": max(ids) + 1}
    pattern = draw(st.sampled_from([None, GPT2_PATTERN, r"\s+|\w+|[^\s\w]+"])) if kind == "hf-bpe" else None
    return Vocab(
        tokens=dict(sorted(tokens.items())),
        merges=merges,
        specials=specials,
        pattern=pattern,
        kind=kind,
        ignore_merges=kind == "hf-bpe" and draw(st.booleans()),
    )


# ---------------------------------------------------------------------------
# The byte table and the merge recovery
# ---------------------------------------------------------------------------


def test_byte_table_is_gpt2s() -> None:
    table = bytes_to_unicode()
    assert len(table) == 256 and len(set(table.values())) == 256
    assert table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ" and table[ord("A")] == "A"
    assert all(unicode_to_bytes()[char] == byte for byte, char in table.items())


def test_last_split_follows_the_ranks() -> None:
    ranks = {b"ab": 0, b"bc": 1, b"abc": 2, b"cab": 3}
    assert last_split(b"abc", ranks, 2) == (b"ab", b"c")
    assert last_split(b"abcab", ranks, 9) == (b"abc", b"ab")
    assert last_split(b"cab", ranks, 3) == (b"c", b"ab")
    assert last_split(b"xyz", ranks, 9) is None
    assert last_split(b"a", ranks, 9) is None


@given(byte_vocabs())
@settings(max_examples=40)
def test_recovered_merges_are_what_tiktoken_merges_last(vocab: Vocab) -> None:
    """The split of each token is the last join of tiktoken's own merge restricted to lower ranks."""
    ranks = {data: rank for rank, data in vocab.tokens.items()}
    derived = read_tiktoken_bytes(tiktoken_bytes(vocab))
    split_of = {c: (derived.tokens[a], derived.tokens[b]) for a, b, c in derived.merges}
    for rank, data in vocab.tokens.items():
        if len(data) < 2:
            continue
        allowed = {piece: r for piece, r in ranks.items() if r < rank or len(piece) == 1}
        encoding = tiktoken.Encoding(name="t", pat_str=r"[\s\S]+", mergeable_ranks=allowed, special_tokens={})
        parts = [vocab.tokens[r] for r in encoding._encode_bytes(data)]
        if len(parts) == 2:
            assert split_of[rank] == (parts[0], parts[1])
        else:
            assert rank in derived.unsplit
    check_merges_decode(derived)


def read_tiktoken_bytes(data: bytes) -> Vocab:
    """``read_tiktoken`` of a file holding ``data``."""
    with tempfile.TemporaryDirectory() as name:
        path = Path(name) / "v.tiktoken"
        path.write_bytes(data)
        return read_tiktoken(path)


@pytest.mark.parametrize(
    "data",
    [
        b"YQ== 0\rYg== 1\rYWI= 2\r",  # CR line ends
        b"YQ== 0\r\nYg== 1\n\rYWI= 2",  # CR LF, LF and CR, no end at the end
        b"= 0\nYQ== 1\n",  # a field of padding alone: the empty token
        b"YQ==\x0b0\nYg==\x0c1\n",  # ASCII white space between the fields
    ],
)
def test_rank_file_reads_as_tiktoken_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    """Lines end and fields split where tiktoken's own reader (``tiktoken.load.load_tiktoken_bpe``) ends and splits
    them, and every field decodes to the token tiktoken decodes it to."""
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read the file itself, no cached copy
    path = tmp_path / "v.tiktoken"
    path.write_bytes(data)
    assert load_tiktoken_ranks(path) == load_tiktoken_bpe(str(path))
    assert read_tiktoken(path).tokens == {rank: token for token, rank in load_tiktoken_bpe(str(path)).items()}


@pytest.mark.parametrize("separator", [b"\xc2\xa0", b"\x1f", b"\xc2\x85", b"\xe2\x80\x83"])
def test_rank_file_fields_are_not_cut_at_other_white_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, separator: bytes
) -> None:
    """A line whose fields only white space outside ASCII separates (NBSP, U+001F, NEL, EM SPACE) is one field:
    tiktoken refuses it, and so does the reader, naming the line."""
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    path = tmp_path / "v.tiktoken"
    path.write_bytes(b"YQ== 0\nYg==" + separator + b"1\n")
    with pytest.raises(ValueError, match="Error parsing line"):
        load_tiktoken_bpe(str(path))
    with pytest.raises(FormatError, match="line 2: expected 'base64 rank', found 1 field"):
        load_tiktoken_ranks(path)


# ---------------------------------------------------------------------------
# Round trips
# ---------------------------------------------------------------------------


@given(byte_vocabs(), st.booleans())
@settings(max_examples=40)
def test_tiktoken_round_trip(scratch: Path, vocab: Vocab, compressed: bool) -> None:
    path = fresh_dir(scratch) / ("v.tiktoken.gz" if compressed else "v.tiktoken")
    write_tiktoken(vocab, path)
    first = read_tiktoken(path)
    assert first.tokens == vocab.tokens and first.kind == "tiktoken" and first.source == str(path)
    check_merges_decode(first)
    write_tiktoken(first, path)
    assert same(read_tiktoken(path), first)
    assert same(load(path), first)
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == compressed


@given(byte_vocabs(kind="hf-bpe"), st.booleans())
@settings(max_examples=40)
def test_hf_json_round_trip(scratch: Path, vocab: Vocab, compressed: bool) -> None:
    path = fresh_dir(scratch) / ("tokenizer.json.gz" if compressed else "tokenizer.json")
    write_hf_json(vocab, path)
    first = read_hf_json(path)
    # Each special token is written into the model's vocabulary too, where the library reads its id from.
    with_specials = {**vocab.tokens, **{token: content.encode() for content, token in vocab.specials.items()}}
    assert first.tokens == dict(sorted(with_specials.items()))
    assert first.merges == vocab.merges and first.specials == vocab.specials
    assert first.ignore_merges == vocab.ignore_merges and first.kind == "hf-bpe"
    assert first.pattern == (vocab.pattern or GPT2_PATTERN)
    assert first.unsplit == [] and convert(first).problems == []
    write_hf_json(first, path)
    assert same(read_hf_json(path), first)
    assert same(load(path), first)
    # the Hugging Face library reads the file and sees the same vocabulary
    loaded = tokenizers.Tokenizer.from_str(
        gzip.decompress(path.read_bytes()).decode() if compressed else path.read_text()
    )
    written = json.loads(hf_json_bytes(first))["model"]["vocab"]
    assert loaded.get_vocab(with_added_tokens=False) == written


@given(byte_vocabs(kind="gpt2"), st.booleans())
@settings(max_examples=30)
def test_gpt2_round_trip(scratch: Path, vocab: Vocab, compressed: bool) -> None:
    directory = fresh_dir(scratch)
    suffix = ".gz" if compressed else ""
    full = dataclasses.replace(vocab, tokens={**vocab.tokens, **{i: s.encode() for s, i in vocab.specials.items()}})
    write_gpt2(full, directory / f"encoder.json{suffix}", directory / f"vocab.bpe{suffix}")
    first = load_gpt2(directory / f"encoder.json{suffix}", directory / f"vocab.bpe{suffix}")
    assert first.tokens == full.tokens and first.merges == full.merges and first.specials == full.specials
    assert first.pattern == GPT2_PATTERN and first.unsplit == []
    assert same(load(directory), first) and same(load(directory / f"vocab.bpe{suffix}"), first)


@given(byte_vocabs(kind="bpeproof"), st.sampled_from([None, *PATTERNS.values()]), st.booleans())
@settings(max_examples=60)
def test_project_file_round_trip(scratch: Path, vocab: Vocab, pattern: str | None, compressed: bool) -> None:
    """write_project then read_project gives the model back, ids and all, and the project's ``Tokenizer`` reads
    the file; a model the format cannot hold (no pattern, a longer token below 256) is refused, nothing written."""
    vocab = dataclasses.replace(vocab, pattern=pattern)
    path = fresh_dir(scratch) / ("t.bpeproof.json" + (".gz" if compressed else ""))
    # Bytes may sit at any ids (the file's byte_ids); a token of two or more bytes needs an id >= 256.
    long_below_256 = any(token_id < 256 for token_id, data in vocab.tokens.items() if len(data) != 1)
    if pattern is None or long_below_256:
        with pytest.raises(FormatError):
            write_project(vocab, path)
        assert not path.parent.exists() or list(path.parent.iterdir()) == []
        return
    write_project(vocab, path)
    back = read_project(path)
    assert same(back, vocab)
    assert same(load(path), vocab)
    check_merges_decode(back)
    if not compressed:
        tokenizer = Tokenizer.load(path)
        assert tokenizer.special_tokens == vocab.specials
        assert all(tokenizer.token_bytes(token_id) == data for token_id, data in vocab.tokens.items())
        assert to_rules(back)[0] == list(tokenizer.rules)


def test_project_writer_refuses_what_the_format_cannot_hold(tmp_path: Path) -> None:
    """Byte tokens not one per byte at 0..255, improper merges, tokens no merge makes, no pattern."""
    base = SMALL_PROJECT
    cases = {
        "no pattern": dataclasses.replace(base, pattern=None),
        "bad pattern": dataclasses.replace(base, pattern="(?"),
        "byte above 255": dataclasses.replace(base, tokens=base.tokens | {97: b"ab", 256: b"a"}),
        "missing byte": dataclasses.replace(base, tokens={i: t for i, t in base.tokens.items() if i != 7}),
        "same byte twice": dataclasses.replace(base, tokens=base.tokens | {300: b"a"}),
        "improper merge": dataclasses.replace(base, merges=[(98, 97, 256), *base.merges[1:]]),
        "unmade token": dataclasses.replace(base, tokens=base.tokens | {300: b"xyz"}),
        "special in rules": dataclasses.replace(base, specials={"<s>": 256}),
        "empty token": dataclasses.replace(base, tokens=base.tokens | {300: b""}),
    }
    for name, vocab in cases.items():
        with pytest.raises(FormatError):
            write_project(dataclasses.replace(vocab, source=name), tmp_path / "t.bpeproof.json")
        assert list(tmp_path.iterdir()) == [], name


def test_project_file_is_what_tokenizer_save_writes(tmp_path: Path) -> None:
    """A file saved by ``Tokenizer.save`` reads as the model of its rules; writing it back gives the same bytes."""
    rules = [Rule(98, 99, 256), Rule(97, 98, 257), Rule(257, 99, 258)]
    byte_ids = list(range(256))
    byte_ids[97], byte_ids[120] = 120, 97
    tokenizer = Tokenizer(rules, "cl100k", {"<|end|>": 1000}, byte_ids=byte_ids)
    path = tmp_path / "saved.json"
    tokenizer.save(path)
    vocab = load(path)
    assert vocab.kind == "bpeproof" and vocab.pattern == PATTERNS["cl100k"]
    assert vocab.merges == [(98, 99, 256), (120, 98, 257), (257, 99, 258)]
    assert vocab.tokens[120] == b"a" and vocab.tokens[97] == b"x" and vocab.tokens[258] == b"abc"
    assert vocab.specials == {"<|end|>": 1000}
    assert project_bytes(vocab) == path.read_bytes()


@st.composite
def sentencepiece_pieces(draw: st.DrawFn) -> list[tuple[str, float, int]]:
    """Pieces of a small BPE model: control pieces, maybe byte pieces, merged pieces by score, then characters."""
    rnd = draw(st.randoms(use_true_random=False))
    chars = draw(st.lists(st.sampled_from(list("ab▁éあ")), min_size=1, max_size=4, unique=True))
    merged: list[str] = []
    for _ in range(draw(st.integers(0, 15))):
        pool = chars + merged
        piece = rnd.choice(pool) + rnd.choice(pool)
        if piece not in merged and len(piece) <= 8:
            merged.append(piece)
    pieces = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)]
    if draw(st.booleans()):
        pieces += [(f"<0x{byte:02X}>", 0.0, 6) for byte in range(256)]
    pieces += [(piece, -float(i), 1) for i, piece in enumerate(merged)]
    pieces += [(char, -float(len(merged) + i), 1) for i, char in enumerate(chars)]
    return pieces


@given(sentencepiece_pieces())
@settings(max_examples=30)
def test_sentencepiece_reader_agrees_with_the_library(scratch: Path, pieces: list[tuple[str, float, int]]) -> None:
    has_bytes = any(kind == 6 for _, _, kind in pieces)
    data = model_proto(pieces, byte_fallback=has_bytes)
    path = fresh_dir(scratch) / "m.model"
    path.write_bytes(data)
    vocab = read_sentencepiece(path)
    processor = sentencepiece.SentencePieceProcessor()
    processor.LoadFromSerializedProto(data)
    assert processor.get_piece_size() == len(pieces)
    for token_id, (text, score, kind) in enumerate(pieces):
        assert processor.id_to_piece(token_id) == text and processor.get_score(token_id) == score
        if kind == 6:
            assert vocab.tokens[token_id] == bytes([int(text[3:5], 16)])
        elif kind == 1:
            assert vocab.tokens[token_id] == text.replace("▁", " ").encode()
        else:
            assert vocab.specials[text] == token_id and processor.is_control(token_id) == (kind == 3)
    assert vocab.byte_fallback == has_bytes and vocab.add_dummy_prefix and not vocab.remove_extra_whitespaces
    # merges are over characters: each merged piece is made from two pieces of higher score, or reported
    for a, b, c in vocab.merges:
        assert vocab.tokens[a] + vocab.tokens[b] == vocab.tokens[c]
        for part in (a, b):
            assert len(pieces[part][0]) == 1 or vocab.scores[part] > vocab.scores[c] or part < c
    multi = {i for i, (text, _, kind) in enumerate(pieces) if kind == 1 and len(text) >= 2}
    assert {c for _, _, c in vocab.merges} | set(vocab.unsplit) == multi
    assert same(load(path), vocab)


def restricted_encoding(pieces: list[Piece], target: int) -> list[str]:
    """sentencepiece's own encoding of piece ``target``'s text by a model without it and every piece after it
    in priority order (lower score, or equal score and higher id): the two parts its BPE would join last."""
    rank = (-pieces[target].score, target)
    keep = [
        (piece.text, piece.score, piece.type)
        for index, piece in enumerate(pieces)
        if piece.type != 1 or len(piece.text) == 1 or (-piece.score, index) < rank
    ]
    processor = sentencepiece.SentencePieceProcessor()
    processor.LoadFromSerializedProto(model_proto(keep, byte_fallback=any(p.type == 6 for p in pieces), dummy=False))
    return list(processor.encode(pieces[target].text.replace("▁", " "), out_type=str))


def test_sentencepiece_splits_are_what_sentencepiece_merges_last(tmp_path: Path) -> None:
    """Train a small BPE model; each recovered split is what the library's BPE joins last without the piece."""
    text = ["the quick brown fox jumps over the lazy dog, naïve café 数字 12345 the other then"] * 30
    path = tmp_path / "trained.model"
    with path.open("wb") as handle:
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(text),
            model_writer=handle,
            vocab_size=330,
            model_type="bpe",
            byte_fallback=True,
            minloglevel=2,
        )
    vocab = read_sentencepiece(path)
    pieces = parse_model_proto(path, path.read_bytes()).pieces
    assert vocab.byte_fallback and vocab.add_dummy_prefix and len(vocab.merges) > 20 and vocab.unsplit == []
    check_merges_decode(vocab)
    for a, b, c in vocab.merges:
        assert restricted_encoding(pieces, c) == [pieces[a].text, pieces[b].text]


def test_sentencepiece_unigram_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "u.model"
    path.write_bytes(model_proto([("<unk>", 0.0, 2), ("a", -1.0, 1)], model_type=1))
    error = expect_format_error(path, read_sentencepiece)
    assert error is not None and "not BPE" in str(error) and "unigram" in str(error)


# ---------------------------------------------------------------------------
# Conversion to the specification's rules
# ---------------------------------------------------------------------------


@given(byte_vocabs(kind="hf-bpe"))
@settings(max_examples=30)
def test_to_rules_gives_a_proper_rule_list(vocab: Vocab) -> None:
    rules, id_map = to_rules(vocab)
    assert validate_rules(rules) == rules
    assert len(rules) == len(vocab.merges)
    for file_id, rule_id in id_map.items():
        if len(vocab.tokens[file_id]) >= 2:
            assert symbols(rules, rule_id) == vocab.tokens[file_id]
            assert rule_id >= 256 and (file_id < 256 or rule_id == file_id)
        else:
            assert rule_id == vocab.tokens[file_id][0]


@given(byte_vocabs(kind="hf-bpe"), st.randoms(use_true_random=False))
@settings(max_examples=40)
def test_improper_merges_are_reported_not_crashed_on(vocab: Vocab, rnd: random.Random) -> None:
    """Shuffled, duplicated and invented merges: each improper one is reported and the rest stay proper."""
    merges = list(vocab.merges)
    rnd.shuffle(merges)
    if merges:
        merges.insert(rnd.randrange(len(merges) + 1), rnd.choice(merges))
    ids = sorted(vocab.tokens)
    merges.append((rnd.choice(ids), rnd.choice(ids), rnd.choice(ids)))
    merges.append((-1, ids[0], ids[0]))
    broken = dataclasses.replace(vocab, merges=merges, source="broken.json")
    conversion = convert(broken)
    assert validate_rules(conversion.rules) == conversion.rules
    assert len(conversion.rules) + len(conversion.improper) == len(merges)
    assert {problem.index for problem in conversion.improper} <= set(range(len(merges)))
    assert any(problem.kind == "unknown-id" for problem in conversion.improper)
    with pytest.raises(FormatError, match=r"broken\.json: merges: \d+ of \d+ merges are improper"):
        to_rules(broken)
    assert to_rules(broken, strict=False)[0] == conversion.rules


def test_problem_kinds_named() -> None:
    tokens = {0: b"a", 1: b"b", 2: b"ab", 3: b"abab", 4: b"ba", 5: b"<s>"}
    vocab = Vocab(tokens, [(2, 2, 3), (0, 1, 2), (0, 1, 2), (1, 0, 3), (0, 0, 1)], specials={"<s>": 5}, source="x")
    kinds = [(problem.kind, problem.index) for problem in convert(vocab).problems]
    assert kinds[:4] == [
        ("part-not-built", 0),
        ("duplicate-result", 2),
        ("not-concatenation", 3),
        ("not-concatenation", 4),
    ]
    assert ("unreachable-token", None) in kinds and ("missing-byte", None) in kinds
    assert to_rules(vocab, strict=False)[0] == [Rule(97, 98, 256)]
    assert to_rules(vocab, strict=False)[1] == {0: 97, 1: 98, 2: 256}


# ---------------------------------------------------------------------------
# Writers: atomic, and refusing what the format cannot hold
# ---------------------------------------------------------------------------


def test_writes_are_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vocab = Vocab({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(97, 98, 256)])
    path = tmp_path / "v.tiktoken"
    path.write_bytes(b"old")
    write_tiktoken(vocab, path)
    assert read_tiktoken(path).tokens == vocab.tokens
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.tiktoken"]
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask

    def failing_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    before = path.read_bytes()
    with pytest.raises(OSError, match="disk full"):
        write_hf_json(vocab, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.tiktoken"]


def test_gpt2_pair_is_renamed_only_when_both_are_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure while writing the second file of the pair leaves both old files: never a new encoder.json beside
    an old vocab.bpe."""
    old = Vocab({i: bytes([i]) for i in range(256)} | {256: b"ab"}, [(97, 98, 256)])
    new = Vocab({i: bytes([i]) for i in range(256)} | {256: b"ba"}, [(98, 97, 256)])
    encoder, merges = tmp_path / "encoder.json", tmp_path / "vocab.bpe"
    write_gpt2(old, encoder, merges)
    before = (encoder.read_bytes(), merges.read_bytes())
    real_fsync = os.fsync
    calls = []

    def failing_second_fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise OSError("disk full")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_second_fsync)
    with pytest.raises(OSError, match="disk full"):
        write_gpt2(new, encoder, merges)
    assert (encoder.read_bytes(), merges.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["encoder.json", "vocab.bpe"]
    monkeypatch.setattr(os, "fsync", real_fsync)
    write_gpt2(new, encoder, merges)
    assert load_gpt2(encoder, merges).merges == [(98, 97, 256)]


def test_writers_refuse_what_the_format_cannot_hold(tmp_path: Path) -> None:
    twice = Vocab({0: b"a", 1: b"a"}, [], source="twice")
    bad_merge = Vocab({0: b"a", 1: b"b", 2: b"ba"}, [(0, 1, 2)], source="bad")
    for vocab in (twice, bad_merge):
        with pytest.raises(FormatError, match=vocab.source):
            hf_json_bytes(vocab)
        with pytest.raises(FormatError, match=vocab.source):
            gpt2_bytes(vocab)
    with pytest.raises(FormatError, match="twice: token 1"):
        tiktoken_bytes(twice)
    with pytest.raises(FormatError):
        write_tiktoken(twice, tmp_path / "t.tiktoken")
    assert list(tmp_path.iterdir()) == []


def _vocab_with_id(token_id: int, special: int | None = None) -> Vocab:
    """The 256 bytes and the token "ab" = a + b at ``token_id``, and a special token at ``special``."""
    tokens = {byte: bytes([byte]) for byte in range(256)} | {token_id: b"ab"}
    specials = {}
    if special is not None:
        tokens[special] = b"<|end|>"
        specials = {"<|end|>": special}
    return Vocab(tokens, [(97, 98, token_id)], specials=specials, source="big", pattern=PATTERNS["words"])


def test_writers_refuse_ids_their_readers_cannot_take(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each writer takes the largest id its format's own library reads — and the file then encodes with it — and
    refuses the next one with one FormatError naming the id and the limit, writing nothing: tiktoken reads ranks
    as u32 and takes 2**32 - 1 for "no rank"; ``tokenizers`` reads ids as u32 (tokenizer.json and GPT-2's files)."""
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    top = 2**32 - 2  # tiktoken's largest usable rank
    path = tmp_path / "ok.tiktoken"
    write_tiktoken(_vocab_with_id(top, special=2**40), path)  # the special token is not written: no limit for it
    ranks = load_tiktoken_bpe(str(path))
    assert ranks == load_tiktoken_ranks(path) and ranks[b"ab"] == top
    encoding = tiktoken.Encoding(name="t", pat_str=PATTERNS["words"], mergeable_ranks=ranks, special_tokens={})
    assert encoding.encode_ordinary("abab") == [top, top]
    hf_path = tmp_path / "ok.json"
    write_hf_json(_vocab_with_id(top + 1, special=top), hf_path)
    assert tokenizers.Tokenizer.from_file(str(hf_path)).encode("abab").ids == [top + 1, top + 1]
    encoder, merges = tmp_path / "encoder.json", tmp_path / "vocab.bpe"
    write_gpt2(_vocab_with_id(top + 1), encoder, merges)
    model = tokenizers.models.BPE.from_file(str(encoder), str(merges))
    assert [token.id for token in model.tokenize("abab")] == [top + 1, top + 1]
    written = sorted(path.name for path in tmp_path.iterdir())
    refusals: list[tuple[Callable[[Path], None], Vocab, str]] = [
        (lambda out: write_tiktoken(_vocab_with_id(top + 1), out), _vocab_with_id(top + 1), "4294967294"),
        (lambda out: write_hf_json(_vocab_with_id(top + 2), out), _vocab_with_id(top + 2), "4294967295"),
        (lambda out: write_hf_json(_vocab_with_id(300, special=2**32), out), _vocab_with_id(300, special=2**32),
         "4294967295"),
        (lambda out: write_gpt2(_vocab_with_id(10**100), out, tmp_path / "new.bpe"), _vocab_with_id(10**100),
         "4294967295"),
    ]
    for write, vocab, limit in refusals:
        shown = max(token_id for token_id in [*vocab.tokens, *vocab.specials.values()])
        with pytest.raises(FormatError, match=rf"^big: token {shown}: the id is above {limit}, the largest") as error:
            write(tmp_path / "new.out")
        assert "\n" not in str(error.value)
    assert sorted(path.name for path in tmp_path.iterdir()) == written
    negative = dataclasses.replace(_vocab_with_id(300), specials={"<|end|>": -1})  # an added token only
    with pytest.raises(FormatError, match=r"^big: special token '<\|end\|>': a token id cannot be negative"):
        hf_json_bytes(negative)


def test_project_writer_takes_what_its_reader_parses(tmp_path: Path) -> None:
    """The project file holds ids of any size its reader parses — integers of at most
    ``sys.get_int_max_str_digits()`` digits — and its writer refuses a longer one instead of failing half-way."""
    import sys

    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)  # the smallest limit Python allows
    try:
        largest = 10**640 - 1
        path = tmp_path / "ok.bpeproof.json"
        write_project(_vocab_with_id(largest, special=largest - 1), path)
        assert read_project(path).tokens[largest] == b"ab"
        Tokenizer([(97, 98, largest)], "words").save(tmp_path / "saved.bpeproof.json")
        assert Tokenizer.load(tmp_path / "saved.bpeproof.json").encode("abab") == [largest, largest]
        written = sorted(path.name for path in tmp_path.iterdir())
        for vocab in (_vocab_with_id(largest + 1), _vocab_with_id(300, special=largest + 1)):
            with pytest.raises(FormatError, match=r"^big: token of 2127 bits: the id is above 10\*\*640 - 1"):
                write_project(vocab, tmp_path / "new.bpeproof.json")
        with pytest.raises(FormatError, match=r"new\.bpeproof\.json: token of 2127 bits: the id is above 10\*\*640"):
            Tokenizer([(97, 98, largest + 1)], "words").save(tmp_path / "new.bpeproof.json")
        assert sorted(path.name for path in tmp_path.iterdir()) == written
        # The reader refuses such a file just the same: the two agree.
        text = path.read_text(encoding="utf-8").replace(str(largest), "1" + "0" * 640, 1)
        (tmp_path / "long.bpeproof.json").write_text(text, encoding="utf-8")
        with pytest.raises(FormatError, match="digits"):
            read_project(tmp_path / "long.bpeproof.json")
    finally:
        sys.set_int_max_str_digits(old)


# ---------------------------------------------------------------------------
# Malformed input: one FormatError naming the file, nothing else
# ---------------------------------------------------------------------------

SMALL = Vocab(
    {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b" a", 258: b"abab"},
    [(97, 98, 256), (32, 97, 257), (256, 256, 258)],
    specials={"<|endoftext|>": 259},
    kind="hf-bpe",
)
SMALL_GPT2 = dataclasses.replace(SMALL, tokens=SMALL.tokens | {259: b"<|endoftext|>"})
SMALL_PROJECT = dataclasses.replace(SMALL, kind="bpeproof", pattern=PATTERNS["words"])


@functools.cache
def valid_files() -> dict[str, bytes]:
    """One small valid file of each kind, by file name."""
    encoder, merges = gpt2_bytes(SMALL_GPT2)
    pieces = [("<unk>", 0.0, 2), ("ab", -1.0, 1), ("▁a", -2.0, 1), ("abab", -3.0, 1)]
    pieces += [("a", -4.0, 1), ("b", -5.0, 1), ("▁", -6.0, 1)]
    return {
        "v.tiktoken": tiktoken_bytes(SMALL),
        "tokenizer.json": hf_json_bytes(SMALL),
        "encoder.json": encoder,
        "vocab.bpe": merges,
        "m.model": model_proto(pieces, byte_fallback=False),
        "t.bpeproof.json": project_bytes(SMALL_PROJECT),
    }


def write_case(directory: Path, name: str, data: bytes, compressed: bool) -> Path:
    """Write one file (and, for GPT-2, a valid partner) and return the path to load."""
    files = valid_files()
    suffix = ".gz" if compressed else ""
    if name in ("encoder.json", "vocab.bpe"):
        partner = "vocab.bpe" if name == "encoder.json" else "encoder.json"
        (directory / (partner + suffix)).write_bytes(gzip.compress(files[partner]) if compressed else files[partner])
    path = directory / (name + suffix)
    path.write_bytes(gzip.compress(data, mtime=0) if compressed else data)
    return path


@pytest.mark.parametrize("name", sorted(valid_files()))
@pytest.mark.parametrize("compressed", [False, True])
def test_valid_files_load(tmp_path: Path, name: str, compressed: bool) -> None:
    vocab = load(write_case(tmp_path, name, valid_files()[name], compressed))
    assert len(vocab.merges) == 3
    check_merges_decode(vocab)


@given(
    st.sampled_from(sorted(valid_files())),
    st.booleans(),
    st.one_of(
        st.binary(max_size=300).map(lambda junk: ("junk", junk)),
        st.tuples(st.just("truncate"), st.floats(0, 1)),
        st.tuples(st.just("flip"), st.lists(st.tuples(st.floats(0, 0.999), st.integers(0, 255)), min_size=1)),
        st.tuples(st.just("gzip-truncate"), st.floats(0, 0.99)),
    ),
)
@FUZZ
def test_fuzzed_files_raise_only_format_error(
    scratch: Path, name: str, compressed: bool, mutation: tuple[str, object]
) -> None:
    data = valid_files()[name]
    how, arg = mutation
    if how == "junk":
        assert isinstance(arg, bytes)
        data = arg
    elif how == "truncate":
        assert isinstance(arg, float)
        data = data[: int(len(data) * arg)]
    elif how == "flip":
        assert isinstance(arg, list)
        buffer = bytearray(data)
        for where, value in arg:
            buffer[int(where * len(buffer))] = value
        data = bytes(buffer)
    path = write_case(fresh_dir(scratch), name, data, compressed or how == "gzip-truncate")
    if how == "gzip-truncate":
        assert isinstance(arg, float)
        raw = path.read_bytes()
        path.write_bytes(raw[: int(len(raw) * arg)])
    expect_format_error(path, load)


JSON_VALUES = st.sampled_from([None, True, 0, -1, 1.5, "x", "a b", [], ["a"], ["a", "zz"], {}, {"type": "BPE"}])


def _json_paths(value: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Paths to the values of a JSON document worth mutating (a big vocabulary: only its non-byte entries)."""
    paths: list[tuple[object, ...]] = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            if key == "vocab" and isinstance(child, dict) and len(child) > 250:
                paths += [(*prefix, key), *[(*prefix, key, k) for k in list(child)[250:]]]
            else:
                paths += _json_paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value[:6]):
            paths += _json_paths(child, (*prefix, index))
    return paths


@given(st.sampled_from(["tokenizer.json", "encoder.json", "t.bpeproof.json"]), st.data())
@FUZZ
def test_json_with_wrong_shapes_raises_only_format_error(scratch: Path, name: str, data: st.DataObject) -> None:
    document = json.loads(valid_files()[name])
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_json_paths(document)))
        if not path:
            document = copy.deepcopy(data.draw(JSON_VALUES))
            continue
        parent: object = document
        for step in path[:-1]:
            parent = parent[step]  # type: ignore[index]
        key = path[-1]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[key]
        elif isinstance(parent, dict):
            parent[key] = copy.deepcopy(data.draw(JSON_VALUES))
        elif isinstance(parent, list):
            parent[int(str(key))] = copy.deepcopy(data.draw(JSON_VALUES))
    file = write_case(fresh_dir(scratch), name, json.dumps(document).encode(), False)
    expect_format_error(file, load)


def project_document(**changes: object) -> bytes:
    """The small valid project file with some keys replaced (a value of ``...`` deletes the key)."""
    document = json.loads(project_bytes(SMALL_PROJECT))
    for key, value in changes.items():
        if value is ...:
            del document[key]
        else:
            document[key] = value
    return json.dumps(document).encode()


PROJECT_BAD_CASES: list[tuple[str, bytes, str]] = [
    ("t.bpeproof.json", project_document(rules=...), "rules: missing"),
    ("t.bpeproof.json", project_document(extra=1), "extra: unknown key"),
    ("t.bpeproof.json", project_document(version=2), "version: version 2 files have the key 'pretokenizer'"),
    ("t.bpeproof.json", project_document(pattern="(", pattern_name=None), "pattern: invalid pre-tokenization pattern"),
    ("t.bpeproof.json", project_document(pattern_name="cl100k"), "pattern_name: 'cl100k' names a different expression"),
    ("t.bpeproof.json", project_document(rules=[[97, 300, 256]]), "rule 0 (97, 300, 256): part b = 300 is not in the"),
    ("t.bpeproof.json", project_document(rules=[[97, 98, 97]]), "rules: rule 0 (97, 98, 97): new id c = 97 is already"),
    ("t.bpeproof.json", project_document(rules=[[97, 98]]), "rules[0]: must be an array of three integers"),
    ("t.bpeproof.json", project_document(rules=[[97, 98, -3]]), "rule 0 (97, 98, -3): new id c = -3 is negative"),
    ("t.bpeproof.json", project_document(byte_ids=[0] * 256), "byte_ids: byte_ids gives the id 0 to the bytes 0 and 1"),
    ("t.bpeproof.json", project_document(byte_ids=list(range(255))), "byte_ids: byte_ids must hold exactly 256 ints"),
    ("t.bpeproof.json", project_document(special_tokens={"<s>": 97}), "special token '<s>' = 97 is already an id"),
    ("t.bpeproof.json", project_document(special_tokens={"": 900}), "must be a non-empty str"),
    ("t.bpeproof.json", project_document(special_tokens={"a": 900, "b": 900}), "share the id 900"),
    ("t.bpeproof.json", b'{"format": "bpeproof-tokenizer", "version": 1} junk', "not valid JSON"),
]


BAD_CASES: list[tuple[str, bytes, str]] = [
    ("v.tiktoken", b"YWI= 0\nYWI= 1\n", "line 2: token b'ab' already given rank 0"),
    ("v.tiktoken", b"YQ== 0\nYg== 0\n", "line 2: rank 0 already given on line 1"),
    ("v.tiktoken", b"YQ== 0\nYg== one\n", "line 2: the rank 'one' is not a non-negative integer"),
    ("v.tiktoken", b"YQ== 0\nYg== -1\n", "line 2: the rank '-1'"),
    ("v.tiktoken", b"YQ== 0\n!!!! 1\n", "line 2: '!!!!' is not base64"),
    ("v.tiktoken", b"YQ= 0\n", "line 1: 'YQ=' is not base64"),
    ("v.tiktoken", b"YQ== 0 7\n", "line 1: expected 'base64 rank', found 3 field(s)"),
    ("v.tiktoken", b"YQ== 0\n\xff\n", "line 2: invalid UTF-8"),
    ("v.tiktoken", b"\n\n", "holds no tokens"),
    ("v.tiktoken.gz", b"YQ== 0\n", "not gzip data"),
    ("v.tiktoken.gz", gzip.compress(b"YQ== 0\n" * 50, mtime=0)[:-9], "corrupt or truncated gzip data"),
    ("tokenizer.json", b'{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}', "merges[0]: the right"),
    ("tokenizer.json", b'{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [["a"]]}}', "found 1 items"),
    ("tokenizer.json", b'{"model": {"type": "BPE", "vocab": {"a": 0, "aa": 1}, "merges": ["a a a"]}}', "'left right'"),
    ("tokenizer.json", b'{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]}}', "result 'ab'"),
    ("tokenizer.json", b'{"model": {"type": "BPE", "vocab": {"a": "0"}}}', "key model.vocab['a']: expected an integer"),
    ("tokenizer.json", b'{"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}}}', "the id 0 is given to two tokens"),
    ("tokenizer.json", b'{"model": {"type": "BPE", "vocab": {"a": 0, "a": 1}}}', "key 'a': the key occurs twice"),
    ("tokenizer.json", b'{"model": {"type": "Unigram", "vocab": []}}', "key model.type: the model is 'Unigram'"),
    ("tokenizer.json", b'{"model": {"type": "BPE"}}', "key model.vocab: missing"),
    ("tokenizer.json", b'{"modl": {}}', "key model: missing"),
    ("tokenizer.json", b'{"model": {"vocab": {}}, "added_tokens": [{"id": 1}]}', "added_tokens[0].content: missing"),
    (
        "tokenizer.json",
        b'{"model": {"vocab": {}}, "pre_tokenizer": {"type": "Split"}}',
        "pre_tokenizer.pattern: missing",
    ),
    ("tokenizer.json", b'{"model": {"vocab": {"a": NaN}}}', "NaN is not valid JSON"),
    ("tokenizer.json", b'{"model": ', "invalid JSON"),
    ("tokenizer.json", b"[1, 2]", "key (top level): expected a JSON object"),
    ("encoder.json", b'{"a": 0, "\\u4e00": 1}', "not in GPT-2's byte table"),
    ("encoder.json", b"{}", "holds no tokens"),
    ("vocab.bpe", b"#version: 0.2\na b c\n", "line 2: expected 'left right'"),
    ("vocab.bpe", "#version: 0.2\nĀĀ a\n".encode(), "line 2: the left part 'ĀĀ'"),
    ("vocab.bpe", b"#version: 0.2\na q\n", "line 2: the merge result 'aq' is not in the vocabulary ("),
    ("m.model", b"\x0a\x02\x08\x01", "pieces[0] at byte 4: field 1 has wire type 0, expected 2"),
    ("m.model", b"\x0a\x80", "truncated varint"),
    ("m.model", b"\x0a\x10\x0a", "claims 16 bytes"),
    ("m.model", b"\x0f", "unsupported wire type 7"),
    ("m.model", b"\x12\x00", "no pieces"),
    ("m.model", b"\x0a\x02\x18\x09", "unknown piece type 9"),
    ("m.model", b"\x0a\x04\x0a\x02\xff\xfe", "not UTF-8"),
    ("m.model", model_proto([("<unk>", 0.0, 2), ("<0x00>", 0.0, 6)]), "byte_fallback is set but 1 byte piece"),
]


@pytest.mark.parametrize(("name", "data", "expected"), BAD_CASES + PROJECT_BAD_CASES)
def test_malformed_files_are_named_and_explained(tmp_path: Path, name: str, data: bytes, expected: str) -> None:
    if name.endswith(".gz"):  # written as given: the content is the malformation
        path = tmp_path / name
        path.write_bytes(data)
    else:
        path = write_case(tmp_path, name, data, False)
    error = expect_format_error(path, load)
    assert error is not None, "the file was accepted"
    assert expected in str(error), str(error)


def test_missing_files_and_directories(tmp_path: Path) -> None:
    assert expect_format_error(tmp_path / "none.tiktoken", load) is not None
    assert expect_format_error(tmp_path, load) is not None
    (tmp_path / "encoder.json").write_bytes(b'{"a": 0}')
    error = expect_format_error(tmp_path / "encoder.json", load)
    assert error is not None and "no vocab.bpe" in str(error)


def test_load_tells_formats_apart_by_content(tmp_path: Path) -> None:
    for name, data in valid_files().items():
        if name in ("encoder.json", "vocab.bpe"):
            continue
        for compressed in (False, True):
            path = tmp_path / f"{name.replace('.', '_')}_{compressed}_no_extension"
            path.write_bytes(gzip.compress(data) if compressed else data)
            assert len(load(path).merges) == 3, name


# ---------------------------------------------------------------------------
# The real vocabularies (skipped when shared/vocabs is absent)
# ---------------------------------------------------------------------------


def real(name: str) -> Path:
    """The path of a real vocabulary file, or a skip when it is not there."""
    path = VOCABS / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (real vocabularies are not shipped with the project)")
    return path


@functools.cache
def real_vocab(name: str) -> Vocab:
    """Each real file is read once per test run."""
    return load(real(name))


@pytest.mark.parametrize(
    ("name", "tokens", "merges"),
    [
        ("r50k_base.tiktoken.gz", 50_256, 50_000),
        ("cl100k_base.tiktoken.gz", 100_256, 100_000),
        ("o200k_base.tiktoken.gz", 199_998, 199_742),
    ],
)
def test_real_tiktoken_files(name: str, tokens: int, merges: int) -> None:
    vocab = real_vocab(name)
    assert (len(vocab.tokens), len(vocab.merges), vocab.unsplit) == (tokens, merges, [])
    check_merges_decode(vocab)
    assert all(a < c and b < c for a, b, c in vocab.merges)
    rules, id_map = to_rules(vocab)
    assert len(rules) == merges
    assert all(id_map[i] == (i if len(data) > 1 else data[0]) for i, data in vocab.tokens.items())


def test_real_splits_are_what_tiktoken_merges_last() -> None:
    """A sample of cl100k tokens: the recovered split is the last join of tiktoken's own restricted merge."""
    vocab = real_vocab("cl100k_base.tiktoken.gz")
    ranks = {data: rank for rank, data in vocab.tokens.items()}
    split_of = {c: (vocab.tokens[a], vocab.tokens[b]) for a, b, c in vocab.merges}
    sample = random.Random(7).sample([rank for rank, data in vocab.tokens.items() if len(data) >= 3], 6)
    for rank in [*sample, max(vocab.tokens, key=lambda r: len(vocab.tokens[r]))]:
        allowed = {data: r for data, r in ranks.items() if r < rank or len(data) == 1}
        encoding = tiktoken.Encoding(name="cut", pat_str=r"[\s\S]+", mergeable_ranks=allowed, special_tokens={})
        parts = encoding._encode_bytes(vocab.tokens[rank])
        assert [vocab.tokens[part] for part in parts] == list(split_of[rank])


def test_real_r50k_merges_are_gpt2s() -> None:
    ranks = real_vocab("r50k_base.tiktoken.gz")
    gpt2 = real_vocab("gpt2_encoder.json.gz")
    assert len(gpt2.tokens) == 50_257 and gpt2.specials == {"<|endoftext|>": 50256}
    assert {i: gpt2.tokens[i] for i in ranks.tokens} == ranks.tokens
    assert ranks.merges == gpt2.merges
    assert validate_rules(to_rules(gpt2)[0]) == to_rules(ranks)[0]


def test_real_deepseek() -> None:
    vocab = real_vocab("deepseek_tokenizer.json.gz")
    assert (len(vocab.tokens), len(vocab.specials), len(vocab.merges)) == (128_000, 1_283, 127_741)
    assert [step.type for step in vocab.pre_tokenizers] == ["Split", "Split", "Split", "ByteLevel"]
    assert vocab.pattern is None and not vocab.ignore_merges and vocab.unsplit == []
    assert convert(vocab).problems == []
    check_merges_decode(vocab)


def test_real_mistral() -> None:
    path = real("mistral_tokenizer.model.v1")
    vocab = real_vocab("mistral_tokenizer.model.v1")
    processor = sentencepiece.SentencePieceProcessor(model_file=str(path))
    assert processor.get_piece_size() == 32_000 == len(vocab.tokens) + len(vocab.specials)
    assert vocab.byte_fallback and vocab.specials == {"<unk>": 0, "<s>": 1, "</s>": 2}
    assert sum(1 for i in range(32_000) if processor.is_byte(i)) == 256
    assert all(processor.get_score(i) == vocab.scores[i] for i in range(0, 32_000, 97))
    assert vocab.unsplit == [] and len(vocab.merges) == 28_446
    check_merges_decode(vocab)
    pieces = parse_model_proto(path, path.read_bytes()).pieces
    for a, b, c in random.Random(3).sample(vocab.merges, 4):
        assert restricted_encoding(pieces, c) == [pieces[a].text, pieces[b].text]
    # sentencepiece merges characters, not bytes: tokens built on multi-byte characters are not byte-level rules
    kinds = {problem.kind for problem in convert(vocab).problems}
    assert kinds == {"unreachable-token", "part-not-built"}


def test_real_files_round_trip_through_the_writers(tmp_path: Path) -> None:
    vocab = real_vocab("r50k_base.tiktoken.gz")
    write_tiktoken(vocab, tmp_path / "r50k.tiktoken.gz")
    assert same(read_tiktoken(tmp_path / "r50k.tiktoken.gz"), vocab)
    write_hf_json(vocab, tmp_path / "tokenizer.json")
    as_json = read_hf_json(tmp_path / "tokenizer.json")
    assert as_json.tokens == vocab.tokens and as_json.merges == vocab.merges
    path = real("r50k_base.tiktoken.gz")
    with gzip.open(path, "rt") as handle:
        ranks = {
            base64.b64decode(token): int(rank) for token, rank in (line.split() for line in handle if line.strip())
        }
    encoding = tiktoken.Encoding(name="r50k", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={})
    loaded = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    text = "Hello world, it's 2026: ünïcödé and 数字 tokens   spaced\n\tout!"
    assert loaded.encode(text).ids == encoding.encode_ordinary(text)


def test_real_r50k_round_trips_through_the_project_file(tmp_path: Path) -> None:
    vocab = dataclasses.replace(real_vocab("r50k_base.tiktoken.gz"), pattern=PATTERNS["r50k"])
    write_project(vocab, tmp_path / "r50k.bpeproof.json.gz")
    back = load(tmp_path / "r50k.bpeproof.json.gz")
    assert back.kind == "bpeproof" and back.tokens == vocab.tokens and back.merges == vocab.merges
    assert back.pattern == vocab.pattern and back.specials == {} and back.unsplit == []
