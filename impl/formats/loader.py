"""``load``: read any supported tokenizer file, choosing the reader by the file's content.

A format is told by what the file holds, never by its name: a tokenizer.json named ``tekken_….json`` is a
tokenizer.json, a tekken file named ``tokenizer.json`` a tekken file.  The name is read only where the content
cannot tell (a damaged or empty file: the reader its name asks for then says what is wrong with it, instead of a
bare "cannot tell"), and to find what the content does not hold: GPT-2's other file, a rank file's pattern.
"""

from __future__ import annotations

import json
import os
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from pathlib import Path
from typing import TYPE_CHECKING

from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import decompress, read_head, read_raw

if TYPE_CHECKING:
    from bpeproof.impl.formats.vocab import Vocab

# Each reader is imported where its format is read: telling a file's format, or reading one format, does not
# import the readers of the others (each format's signature is here).

#: Names of the files ``load`` looks for in a directory, in order.
_DIRECTORY_FILES = (
    "tokenizer.json",
    "tokenizer.json.gz",
    "encoder.json",
    "encoder.json.gz",
    "tokenizer.model",
)


#: The first bytes of a GGUF file (``bpeproof.impl.formats.gguf_container``).
_GGUF_MAGIC = b"GGUF"
#: The ``format`` member of the project's own file (``bpeproof.impl.formats.project_file.FORMAT_NAME``, not
#: imported: telling a format imports no reader).
_PROJECT_FORMAT = "bpeproof-tokenizer"
#: What the formats' signatures are looked for in: the first bytes (a JSON document is walked further).
_HEAD = 4096
#: The JSON formats (GPT-2's ``encoder.json`` among them), among which a file's name may choose when its
#: content, a JSON document, does not tell which it is.
_JSON_FORMATS = ("hf-bpe", "bpeproof", "tekken", "gpt2")
#: A line of a tiktoken rank file as tiktoken reads it (two fields cut at white space): a token in base64 (padding
#: alone for the empty token), its rank.
_RANK_LINE = re.compile(rb"[ \t]*(?:(?:[A-Za-z0-9+/]{4})+|(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)"
                        rb"|={1,2})[ \t]+[0-9]+[ \t]*\r?")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def is_gguf(path: str | os.PathLike[str], head: bytes | None = None) -> bool:
    """True when the file's content (decompressed, if gzip) starts with the magic ``GGUF``; only its first bytes
    are read (a GGUF file may be a whole model)."""
    if head is None:
        try:
            head = read_head(path, len(_GGUF_MAGIC))
        except FormatError:
            return False  # (a file that cannot be read, or not gzip under a .gz name: its reader says so)
    return head[: len(_GGUF_MAGIC)] == _GGUF_MAGIC


def looks_like_clip(data: bytes) -> bool:
    """CLIP's merges file by its first line (``"bpe_simple_vocab…#version``, which CLIP skips) and ``</w>``
    merges."""
    first, _, rest = data[:_HEAD].partition(b"\n")
    return b"#version" in first and not first.startswith(b"#version") and b"</w>" in rest


def _lines(data: bytes) -> list[bytes]:
    """The whole lines among the first bytes of ``data`` (the last one only when it ends the data)."""
    lines = data[:_HEAD].split(b"\n")
    return lines if len(data) <= _HEAD else lines[:-1]


def _is_rank_file(data: bytes) -> bool:
    """Every line of the head is a rank file's ``base64 rank`` (tiktoken skips blank lines), and one at least."""
    lines = [line for line in _lines(data) if line]
    return bool(lines) and all(map(_RANK_LINE.fullmatch, lines))


def _is_merges_file(data: bytes) -> bool:
    """GPT-2's ``vocab.bpe`` (or ``merges.txt``), by the ``#version`` line that starts it; merges without it are
    lines of two words, which other text can be too: their name then tells."""
    return data.startswith(b"#version")


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """The protobuf varint at ``at`` and where it ends; ``IndexError`` past the data."""
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80 or shift > 56:
            return value, at
        shift += 7


def _is_model_proto(data: bytes) -> bool:
    """A sentencepiece ``ModelProto``: its first field is a piece (field 1, a message) whose own fields are a piece
    string (1), a score (2, a float) or a type (3), filling it exactly; no text starts so (0x15 and 0x18 are
    control characters)."""
    try:
        if data[0] != 0x0A:
            return False
        size, at = _varint(data, 1)
        end = at + size
        if end > len(data) or size == 0:
            return False
        while at < end:
            tag = data[at]
            if tag == 0x0A:
                length, at = _varint(data, at + 1)
                at += length
            elif tag == 0x15:
                at += 5
            elif tag == 0x18:
                _, at = _varint(data, at + 1)
            else:
                return False
        return at == end
    except IndexError:
        return False


def _skip(text: str, at: int) -> int:
    found = _WHITESPACE.match(text, at)
    assert found is not None  # (it matches the empty string)
    return found.end()


def _json_members_kind(text: str) -> str:
    """The format of the JSON document ``text`` by its top-level members, read until one tells: a ``model``
    object is a tokenizer.json's, a ``config`` object a tekken file's, ``format`` "bpeproof-tokenizer" the
    project's, a number under any key but ``version`` (which the project's file has) GPT-2's ``encoder.json``
    (every value of which is an id).  "json" when none tells, "json:bpeproof" when a ``format`` member names
    another format (the project's reader then says what is wrong).  ``ValueError`` or ``IndexError`` for a
    document that ends or breaks before one tells."""
    at = _skip(text, 0)
    if text[at] != "{":
        return "json"  # (an array, or another value: no format is one)
    at = _skip(text, at + 1)
    other_format = False
    if text[at] == "}":
        return "json"
    while True:
        if text[at] != '"':
            raise ValueError("a member without a key")
        key, at = scanstring(text, at + 1)
        at = _skip(text, at)
        if text[at] != ":":
            raise ValueError("a key without a value")
        at = _skip(text, at + 1)
        first = text[at]
        if first == "{" and key in ("model", "config"):
            return "hf-bpe" if key == "model" else "tekken"
        if first in "-0123456789" and key != "version":
            return "gpt2"
        value, at = _DECODER.raw_decode(text, at)  # (other members are read whole: few and small before these)
        if key == "format" and isinstance(value, str):
            if value == _PROJECT_FORMAT:
                return "bpeproof"
            other_format = True
        at = _skip(text, at)
        if text[at] == "}":
            return "json:bpeproof" if other_format else "json"
        if text[at] != ",":
            raise ValueError("members not separated by a comma")
        at = _skip(text, at + 1)


def _json_kind(data: bytes) -> str:
    """``_json_members_kind`` of the document in ``data``: its first 64 KiB, where the telling member nearly
    always is, then, if they end before one tells, the whole; "json" for a document that breaks first."""
    prefix = data[: 1 << 16]
    for chunk in (prefix, data) if len(data) > len(prefix) else (data,):
        try:
            return _json_members_kind(chunk.decode("utf-8", "replace"))
        except (ValueError, IndexError):
            continue
    return "json"


def _format_by_content(data: bytes) -> str | None:
    """The format ``data`` holds, "json…" for a JSON document that does not tell which (``_json_members_kind``),
    or None when the content is none of them."""
    if data[:4] == _GGUF_MAGIC:
        return "gguf"
    if _is_model_proto(data):
        return "sentencepiece-bpe"
    if data[:_HEAD].lstrip()[:1] in (b"{", b"["):
        return _json_kind(data)
    if _is_rank_file(data):
        return "tiktoken"
    if looks_like_clip(data):
        return "clip"
    if _is_merges_file(data):
        return "gpt2-merges"
    return None


def _format_by_name(name: str) -> str | None:
    """The format a file's name asks for, read only when the content cannot tell (see the module's docstring)."""
    if name.endswith((".gguf", ".gguf.gz")):
        return "gguf"
    if ".tiktoken" in name:
        return "tiktoken"
    if "bpe_simple_vocab" in name:
        return "clip"
    if re.search(r"\.model(\.|$)", name):
        return "sentencepiece-bpe"
    if ".bpeproof.json" in name:
        return "bpeproof"
    if "tekken" in name and ".json" in name:
        return "tekken"
    if "encoder" in name and ".json" in name:
        return "gpt2"
    if ".json" in name:
        return "hf-bpe"
    if name.endswith((".bpe", ".bpe.gz")) or "merges.txt" in name:
        return "gpt2-merges"
    return None


def _format_of(path: Path, data: bytes) -> str:
    """``tiktoken``, ``tekken``, ``hf-bpe``, ``gpt2`` (an ``encoder.json``), ``gpt2-merges`` (its ``vocab.bpe``),
    ``sentencepiece-bpe``, ``bpeproof``, ``clip`` or ``gguf`` for a file's content.  Its name only chooses where
    the content cannot tell: among the JSON formats for a JSON document that does not say which it is (a
    ``format`` member naming another format makes it the project's file whatever the name; by default it is a
    tokenizer.json, whose reader names what is missing), among all for content that is none of them."""
    found = _format_by_content(data)
    if found is not None and not found.startswith("json"):
        return found
    named = _format_by_name(path.name.lower())
    if found is None:
        if named is None:
            raise FormatError(path, None, "cannot tell the format from the content: it is no tiktoken rank file,"
                              " tokenizer.json, tekken file, GPT-2 encoder.json or vocab.bpe, CLIP merges file,"
                              " sentencepiece model, GGUF file or bpeproof tokenizer file")
        return named
    if found == "json:bpeproof":
        return "bpeproof"
    return named if named in _JSON_FORMATS else "hf-bpe"


def sniff(path: str | os.PathLike[str], raw: bytes | None = None) -> tuple[str, bytes]:
    """The format of a file (as ``load`` decides it; GPT-2's ``vocab.bpe`` is ``gpt2`` like its ``encoder.json``)
    and its decompressed content; a directory is not read.  ``raw``: the file's bytes, when the caller has read
    them (they are not read again; a GGUF file among them is told by its first bytes)."""
    target = Path(path)
    if raw is None:
        if is_gguf(target):
            return "gguf", b""  # a GGUF file may be a whole model: it is never read here (see gguf_container)
        raw = read_raw(target)
    data = decompress(target, raw)
    if is_gguf(target, data[: len(_GGUF_MAGIC)]):
        return "gguf", b""  # (its reader reads the container itself)
    kind = _format_of(target, data)
    return ("gpt2" if kind == "gpt2-merges" else kind), data


def load(path: str | os.PathLike[str], *, pattern: str | None = None) -> Vocab:
    """Read a tokenizer file of any supported format, told by its content (see ``_format_of``), into a ``Vocab``.

    - a tiktoken rank file (``base64 rank`` lines; ``pattern``, if given, is recorded: rank files do not hold
      one);
    - a JSON object whose ``format`` is "bpeproof-tokenizer": the project's own tokenizer file (``pattern``, if
      given, replaces the file's);
    - a sentencepiece ``ModelProto``: its BPE model;
    - content starting with ``GGUF``: llama.cpp's GGUF file, its byte-level BPE tokenizer (kind ``gguf``, see
      ``bpeproof.impl.formats.gguf_tokenizer``; other tokenizer models are refused here, the SPM and ``gemma4``
      ones too: ``bpeproof.impl.pipelines.gguf`` runs those);
    - a JSON object with a ``config`` object: Mistral's tekken file, read as a rank file (kind ``tiktoken``) with
      its pattern, its special tokens and the ids they shift;
    - a JSON object of token strings to ids, or the merges text (``#version`` first, or ``left right`` lines):
      GPT-2's pair of files, ``encoder.json`` and ``vocab.bpe`` (or ``vocab.json`` and ``merges.txt``, as the
      tokenizers library saves them); the other one is looked up next to it by name, keeping any prefix such as
      ``gpt2_``;
    - a JSON object with a ``model`` object: Hugging Face ``tokenizer.json``;
    - text whose first line is CLIP's: CLIP's merges file (kind ``clip``);
    - a directory: the first of ``tokenizer.json``, ``encoder.json`` (with
      ``vocab.bpe``), ``tokenizer.model`` in it (each optionally ``.gz``).

    Every problem raises ``FormatError``.
    """
    target = Path(path)
    if target.is_dir():
        for name in _DIRECTORY_FILES:
            if (target / name).is_file():
                return load(target / name, pattern=pattern)
        raise FormatError(path, None, f"the directory holds none of {', '.join(_DIRECTORY_FILES)}")
    if is_gguf(target):
        from bpeproof.impl.formats.gguf_vocab import vocab_from_gguf

        return vocab_from_gguf(target)
    data = decompress(target, read_raw(target))
    kind = _format_of(target, data)
    if kind == "gguf":
        from bpeproof.impl.formats.gguf_vocab import vocab_from_gguf

        return vocab_from_gguf(target)
    if kind == "tiktoken":
        from bpeproof.impl.formats.tiktoken_file import parse_tiktoken, vocab_from_ranks

        return vocab_from_ranks(parse_tiktoken(target, data), source=os.fspath(path), pattern=pattern)
    if kind == "sentencepiece-bpe":
        from bpeproof.impl.formats.sentencepiece_model import parse_model_proto, vocab_from_proto

        return vocab_from_proto(parse_model_proto(target, data), source=os.fspath(path))
    if kind == "tekken":
        from bpeproof.impl.formats.tekken import parse_tekken, vocab_from_tekken

        return vocab_from_tekken(parse_tekken(target, data), source=os.fspath(path))
    if kind == "hf-bpe":
        from bpeproof.impl.formats.hf_json import parse_hf_json

        return parse_hf_json(target, data)
    if kind == "clip":
        from bpeproof.impl.formats.clip_merges import parse_clip

        return parse_clip(target, data)
    if kind == "bpeproof":
        from bpeproof.impl.formats.project_file import parse_project

        return parse_project(target, data, pattern=pattern)
    from bpeproof.impl.formats.gpt2 import load_gpt2, merges_path_for

    if kind == "gpt2-merges":
        encoder = encoder_path_for(target)
        if encoder is None:
            raise FormatError(path, None, "GPT-2's merges, but no encoder.json (or vocab.json) found next to them")
        return load_gpt2(encoder, target)
    merges = merges_path_for(target)
    if merges is None:
        raise FormatError(path, None, "GPT-2's encoder, but no vocab.bpe (or merges.txt) found next to it")
    return load_gpt2(target, merges)


def encoder_path_for(merges_path: Path) -> Path | None:
    """The ``encoder.json`` next to a ``vocab.bpe`` (same prefix and compression, or the other), or the
    ``vocab.json`` next to a ``merges.txt`` (the tokenizers library's names for them), if any."""
    name = merges_path.name
    candidates: list[str] = []
    for merges, encoder in (("vocab.bpe", "encoder.json"), ("merges.txt", "vocab.json")):
        if merges in name:
            base = name.replace(merges, encoder)
            candidates += [base, base.removesuffix(".gz") if base.endswith(".gz") else base + ".gz"]
    candidates += ["encoder.json", "encoder.json.gz", "vocab.json", "vocab.json.gz"]
    for candidate in candidates:
        if (merges_path.parent / candidate).is_file():
            return merges_path.parent / candidate
    return None


def gpt2_companion(path: Path) -> Path | None:
    """The other file of the GPT-2 pair that ``path`` is one of, as ``load`` finds it: the merges next to an
    encoder (a JSON object), the encoder next to the merges (which side ``path`` is, by its content)."""
    from bpeproof.impl.formats.gpt2 import merges_path_for

    if read_head(path, _HEAD).lstrip()[:1] == b"{":
        return merges_path_for(path)
    return encoder_path_for(path)
