"""Small files of every vocabulary format the loader reads, written from one trained rule list, plain or gzip.

``write_vocab(kind, folder, gz=...)`` writes the file (or files) of one format and returns the path to give
``--vocab``; the kinds are ``FORMATS``.  Every format but CLIP's holds the same tokens: the 256 bytes and the
merges ``train_counts`` learns from ``ENGLISH``'s words (``MERGES`` of them), each format spelling them its own
way; CLIP's merges file must have CLIP's 48 894 lines, so its kind is the fixture CLIP ships
(``proofs_tests/fixtures``).  The files are as small as each format allows, so that a test can run every command
on every format without ``../shared``.
"""

from __future__ import annotations

import base64
import gzip
import json
import struct
from collections import Counter
from pathlib import Path

import regex

from bpeproof.impl.formats.vocab import bytes_to_unicode
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.impl.trainer import train_counts
from bpeproof.proofs_tests.planted.vocab import ENGLISH
from bpeproof.spec.types import Rule

__all__ = ["FORMATS", "MERGES", "trained_rules", "write_vocab"]

#: The formats ``write_vocab`` writes, by the names the tests use.
FORMATS = ("bpeproof", "tiktoken", "tokenizer.json", "gpt2", "clip", "sentencepiece", "tekken", "gguf")
#: How many merges the small files hold.
MERGES = 40
#: CLIP's merges file, as CLIP ships it (gzip).
CLIP_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "bpe_simple_vocab_16e6.txt.gz"


def trained_rules() -> list[Rule]:
    """``MERGES`` rules of def-bpe on the words of ``ENGLISH`` cut by cl100k's pattern."""
    counts = Counter(piece.encode("utf-8") for piece in regex.findall(PATTERNS["cl100k"], ENGLISH))
    return train_counts(counts, MERGES)


def _tokens() -> list[bytes]:
    """Token bytes in id order: the 256 bytes, then one token per rule."""
    table = [bytes([byte]) for byte in range(256)]
    for rule in trained_rules():
        table.append(table[rule.a] + table[rule.b])
    return table


def _spelt(data: bytes) -> str:
    chars = bytes_to_unicode()
    return "".join(chars[byte] for byte in data)


def _write(path: Path, data: bytes, gz: bool) -> Path:
    target = path.with_name(path.name + ".gz") if gz else path
    target.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return target


def write_vocab(kind: str, folder: Path, *, gz: bool = False) -> Path:
    """Write the file of ``kind`` (one of ``FORMATS``) into ``folder``; the path to give ``--vocab``."""
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "bpeproof":
        text = Tokenizer(trained_rules(), "cl100k", {"<|end|>": 1000}).to_json()
        return _write(folder / "small.bpeproof.json", text.encode("utf-8"), gz)
    if kind == "clip":
        data = gzip.decompress(CLIP_FIXTURE.read_bytes())
        return _write(folder / "bpe_simple_vocab_16e6.txt", data, gz)
    tokens = _tokens()
    rules = trained_rules()
    if kind == "tiktoken":
        lines = "".join(f"{base64.b64encode(token).decode()} {rank}\n" for rank, token in enumerate(tokens))
        return _write(folder / "small_cl100k.tiktoken", lines.encode("ascii"), gz)
    strings = [_spelt(token) for token in tokens]
    merges = [f"{strings[rule.a]} {strings[rule.b]}" for rule in rules]
    if kind == "tokenizer.json":
        return _write(folder / "tokenizer.json", json.dumps(_tokenizer_json(strings, merges)).encode("utf-8"), gz)
    if kind == "gpt2":
        encoder = _write(folder / "encoder.json", json.dumps({s: i for i, s in enumerate(strings)}).encode(), gz)
        _write(folder / "vocab.bpe", ("#version: 0.2\n" + "\n".join(merges) + "\n").encode("utf-8"), gz)
        return encoder
    if kind == "sentencepiece":
        return _write(folder / "small.model", _model_proto(tokens), gz)
    if kind == "tekken":
        return _write(folder / "small_tekken.json", json.dumps(_tekken(tokens)).encode("utf-8"), gz)
    if kind == "gguf":
        return _write(folder / "small.gguf", _gguf(strings, merges), gz)
    raise ValueError(f"no such format {kind!r}; the formats are {', '.join(FORMATS)}")


def _tokenizer_json(strings: list[str], merges: list[str]) -> dict[str, object]:
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": len(strings), "content": "<|end|>", "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None, "pre_tokenizer": byte_level, "post_processor": None, "decoder": byte_level,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {string: index for index, string in enumerate(strings)}, "merges": merges},
    }


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes | int, wire: int = 2) -> bytes:
    key = _varint(number << 3 | wire)
    if isinstance(payload, int):
        return key + _varint(payload)
    return key + (_varint(len(payload)) + payload if wire == 2 else payload)


def _model_proto(tokens: list[bytes]) -> bytes:
    """A sentencepiece BPE model: ``<unk>``, ``<s>``, ``</s>``, the merged tokens (spaces as ``▁``) by falling
    score, then the characters of ``ENGLISH``."""
    pieces: list[tuple[str, float, int]] = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)]
    merged = [token.decode("utf-8").replace(" ", "\u2581") for token in tokens[256:]]
    pieces += [(text, -float(index), 1) for index, text in enumerate(dict.fromkeys(merged))]
    known = {text for text, _, _ in pieces}
    chars = [char for char in dict.fromkeys(ENGLISH.replace(" ", "\u2581")) if char not in known and char.isprintable()]
    pieces += [(char, -100.0 - index, 1) for index, char in enumerate(chars)]
    out = bytearray()
    for text, score, kind in pieces:
        out += _field(1, _field(1, text.encode("utf-8")) + _field(2, struct.pack("<f", score), 5) + _field(3, kind, 0))
    out += _field(2, _field(3, 2, 0))  # trainer_spec.model_type = BPE
    out += _field(3, _field(1, b"identity") + _field(3, 1, 0) + _field(4, 1, 0) + _field(5, 1, 0))
    return bytes(out)


def _tekken(tokens: list[bytes]) -> dict[str, object]:
    specials = ["<unk>", "<s>", "</s>"]
    vocab = [{"rank": rank, "token_bytes": base64.b64encode(data).decode("ascii"),
              "token_str": data.decode("utf-8", "replace")} for rank, data in enumerate(tokens)]
    return {
        "config": {"pattern": PATTERNS["cl100k"], "num_vocab_tokens": len(vocab),
                   "default_vocab_size": len(vocab) + len(specials), "default_num_special_tokens": len(specials),
                   "version": "v11"},
        "vocab": vocab,
        "special_tokens": [{"rank": rank, "token_str": name, "is_control": True} for rank, name in enumerate(specials)],
    }


_STRING, _ARRAY, _INT32 = 8, 9, 5


def _gguf_string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _gguf(strings: list[str], merges: list[str]) -> bytes:
    """A vocabulary-only GGUF file: llama.cpp's byte-level BPE (``gpt2``) with GPT-2's pre-tokenizer."""

    def array(kind: int, items: list[bytes]) -> bytes:
        return struct.pack("<IIQ", _ARRAY, kind, len(items)) + b"".join(items)

    pairs = [
        ("general.architecture", struct.pack("<I", _STRING) + _gguf_string("gpt2")),
        ("tokenizer.ggml.model", struct.pack("<I", _STRING) + _gguf_string("gpt2")),
        ("tokenizer.ggml.pre", struct.pack("<I", _STRING) + _gguf_string("gpt-2")),
        ("tokenizer.ggml.tokens", array(_STRING, [_gguf_string(s) for s in [*strings, "<|end|>"]])),
        ("tokenizer.ggml.token_type", array(_INT32, [struct.pack("<i", 1)] * len(strings) + [struct.pack("<i", 3)])),
        ("tokenizer.ggml.merges", array(_STRING, [_gguf_string(merge) for merge in merges])),
    ]
    body = b"".join(_gguf_string(key) + value for key, value in pairs)
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs)) + body
