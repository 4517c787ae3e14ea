"""``load``: read any supported tokenizer file, choosing the reader from the name or the content."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import GZIP_MAGIC, decompress, read_raw

if TYPE_CHECKING:
    from bpeproof.impl.formats.vocab import Vocab

# Each reader is imported where its format is read: telling a file's format, or reading one format, does not
# import the readers of the others (each format's signature is here, with the names).

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
#: Recognises the project's own file by its content: the ``format`` member, anywhere in the object
#: (``bpeproof.impl.formats.project_file``).
PROJECT_MARKER = re.compile(rb'"format"\s*:\s*"bpeproof-tokenizer"')


def is_gguf(path: str | os.PathLike[str], head: bytes | None = None) -> bool:
    """True when the file is named ``*.gguf`` (``.gguf.gz``) or starts with the magic ``GGUF``."""
    name = os.fspath(path).lower()
    if name.endswith((".gguf", ".gguf.gz")):
        return True
    if head is None:
        try:
            with open(path, "rb") as handle:
                head = handle.read(4)
        except OSError:
            return False
    return head[:4] == _GGUF_MAGIC


def looks_like_clip(name: str, data: bytes) -> bool:
    """A CLIP merges file by its name, or by its first line (``"bpe_simple_vocab…#version``) and ``</w>`` merges."""
    if "bpe_simple_vocab" in name.lower():
        return True
    head = data[:4096]
    first, _, rest = head.partition(b"\n")
    return b"#version" in first and not first.startswith(b"#version") and b"</w>" in rest


def looks_like_tekken(data: bytes) -> bool:
    """True for a JSON object that has tekken's config keys and base64 token entries."""
    head = data[:4096].lstrip()
    return head.startswith(b"{") and b'"default_num_special_tokens"' in data and b'"token_bytes"' in data[: 1 << 20]


def _format_of(path: Path, data: bytes) -> str:
    """``tiktoken``, ``tekken``, ``hf-bpe``, ``gpt2``, ``sentencepiece-bpe``, ``bpeproof`` or ``clip`` for a file, by
    name first, then content; a JSON object whose ``format`` is "bpeproof-tokenizer" is the project's file whatever
    its name, one with tekken's config and token entries is a tekken file, and CLIP's merges file is known by its
    name (``bpe_simple_vocab…``) or its first line."""
    name = path.name.lower()
    if data[:4] == _GGUF_MAGIC:
        return "gguf"
    if ".tiktoken" in name:
        return "tiktoken"
    if looks_like_clip(name, data):
        return "clip"
    if re.search(r"\.model(\.|$)", name):
        return "sentencepiece-bpe"
    if data[:4096].lstrip().startswith(b"{") and PROJECT_MARKER.search(data):
        return "bpeproof"
    if ("tekken" in name and ".json" in name) or looks_like_tekken(data):
        return "tekken"
    if "encoder" in name and ".json" in name:
        return "gpt2"
    if ".json" in name:
        return "hf-bpe"
    if name.endswith((".bpe", ".bpe.gz")):
        return "gpt2"
    head = data[:4096].lstrip()
    if head.startswith(b"{"):
        return "hf-bpe" if b'"model"' in data[: 1 << 20] or b'"version"' in head else "gpt2"
    if re.match(rb"[A-Za-z0-9+/=]+ [0-9]+\r?\n", head):
        return "tiktoken"
    if data[:1] == b"\x0a":  # ModelProto field 1 (pieces), wire type 2: a sentencepiece model
        return "sentencepiece-bpe"
    raise FormatError(path, None, "cannot tell the format from the name or the content")


def sniff(path: str | os.PathLike[str]) -> tuple[str, bytes]:
    """The format of a file (as ``load`` decides it) and its decompressed content; a directory is not read."""
    target = Path(path)
    if is_gguf(target):
        return "gguf", b""  # a GGUF file may be a whole model: it is never read here (see gguf_container)
    raw = read_raw(target)
    data = decompress(target, raw)
    return _format_of(target, data if raw.startswith(GZIP_MAGIC) else raw), data


def load(path: str | os.PathLike[str], *, pattern: str | None = None) -> Vocab:
    """Read a tokenizer file of any supported format into a ``Vocab``.

    - ``*.tiktoken`` / ``*.tiktoken.gz``: tiktoken rank file (``pattern``, if
      given, is recorded: rank files do not hold one);
    - a JSON object whose ``format`` is "bpeproof-tokenizer" (any name, plain
      or gzip): the project's own tokenizer file (``pattern``, if given,
      replaces the file's);
    - ``*.model``, ``*.model.*``: sentencepiece BPE model;
    - ``*.gguf`` / ``*.gguf.gz``, or a file starting with ``GGUF``: llama.cpp's GGUF file, its byte-level BPE
      tokenizer (kind ``gguf``, see ``bpeproof.impl.formats.gguf_tokenizer``; other tokenizer models are refused
      here, the SPM and ``gemma4`` ones too: ``bpeproof.impl.pipelines.gguf`` runs those);
    - ``*tekken*.json[.gz]``, or JSON with tekken's config and token entries: Mistral's tekken file, read as a
      rank file (kind ``tiktoken``) with its pattern, its special tokens and the ids they shift;
    - ``*encoder*.json[.gz]`` or ``*.bpe[.gz]``: GPT-2's pair of files — the
      other one is looked up next to it (``encoder.json`` ↔ ``vocab.bpe``,
      keeping any prefix such as ``gpt2_``);
    - other ``*.json[.gz]``: Hugging Face ``tokenizer.json``;
    - ``bpe_simple_vocab*.txt[.gz]``, or text whose first line is CLIP's: CLIP's merges file (kind ``clip``);
    - a directory: the first of ``tokenizer.json``, ``encoder.json`` (with
      ``vocab.bpe``), ``tokenizer.model`` in it (each optionally ``.gz``);
    - any other name: decided by the content.

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
    raw = read_raw(target)
    data = decompress(target, raw)
    kind = _format_of(target, data if raw.startswith(GZIP_MAGIC) else raw)
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

    name = target.name.lower()
    if name.endswith((".bpe", ".bpe.gz")):
        encoder = encoder_path_for(target)
        if encoder is None:
            raise FormatError(path, None, "no encoder.json found next to this vocab.bpe")
        return load_gpt2(encoder, target)
    merges = merges_path_for(target)
    if merges is None:
        raise FormatError(path, None, "no vocab.bpe found next to this encoder.json")
    return load_gpt2(target, merges)


def encoder_path_for(merges_path: Path) -> Path | None:
    """The ``encoder.json`` next to a ``vocab.bpe`` (same prefix and compression, or the other), if any."""
    name = merges_path.name
    candidates: list[str] = []
    if "vocab.bpe" in name:
        base = name.replace("vocab.bpe", "encoder.json")
        candidates += [base, base.removesuffix(".gz") if base.endswith(".gz") else base + ".gz"]
    candidates += ["encoder.json", "encoder.json.gz"]
    for candidate in candidates:
        if (merges_path.parent / candidate).is_file():
            return merges_path.parent / candidate
    return None
