"""GGUF files, llama.cpp's model format: the tokenizer stored in their metadata, read as llama.cpp reads it.

A GGUF file starts with the magic ``GGUF``, a version (2 or 3), the numbers of tensors and of key-value
pairs, then the key-value pairs (typed scalars, strings and arrays), then the tensors.  Only the key-value
pairs are read here (a multi-gigabyte model file is mapped, never read whole; a ``.gz`` file is decompressed).
The keys of the tokenizer (``tokenizer.ggml.*``):

- ``model``: the tokenizer kind; ``gpt2`` is byte-level BPE (the others: ``llama`` sentencepiece BPE, ``bert``
  WordPiece, ``t5`` Unigram, ``rwkv``, ``plamo2``, ``gemma4`` BPE over raw UTF-8, …);
- ``pre``: the name of the pre-tokenizer (``GGUFTokenizer.pre_type`` maps it to the kind llama.cpp runs);
- ``tokens``: the token strings, index = id (byte-level tokens in GPT-2's byte-to-character spelling; control
  and user-defined tokens as their plain text); ``token_type``: per token 1 normal, 2 unknown, 3 control,
  4 user-defined, 5 unused, 6 byte; ``merges``: "left right" strings, one per merge, in rank order;
- the ids of the special tokens (``bos_token_id``, ``eos_token_id``, ``fim_pre_token_id``, …).

``read_gguf_tokenizer`` checks the types as llama.cpp's loader does (a key of the wrong type makes llama.cpp
refuse the file, so it is refused here too) and derives each token's attributes exactly as llama.cpp's
``llama_vocab::impl::load`` does: token types, then the control flags it adds to tokens recognised by their
text (end-of-generation and fill-in-the-middle tokens), the user-defined exceptions, and the strip flags.
``vocab_from_gguf`` gives the project's common ``Vocab`` (kind ``gguf``).

The numbers are read with ``struct`` rather than the ``gguf`` package's ``GGUFReader``, which makes a NumPy
array for every string and takes seconds on a vocabulary of 150 000 tokens; the tests check both readers agree.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import gzip
import mmap
import operator
import os
import re
import struct
import zlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from typing import Any

from bpeproof.impl.formats.vocab import Vocab, bytes_to_unicode
from bpeproof.impl.io.errors import FormatError, os_problem
from bpeproof.impl.io.files import GZIP_MAGIC, is_gzip_name

__all__ = [
    "GGUF_MAGIC",
    "PRE_TYPES",
    "TOKEN_TYPES",
    "GGUFMetadata",
    "GGUFTokenizer",
    "is_gguf",
    "read_gguf_metadata",
    "read_gguf_tokenizer",
    "vocab_from_gguf",
]

GGUF_MAGIC = b"GGUF"

#: The value types of GGUF, by their number in the file.
TYPE_NAMES = {0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 6: "f32", 7: "bool", 8: "string",
              9: "array", 10: "u64", 11: "i64", 12: "f64"}
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "B", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
#: llama.cpp's longest string (``GGUF_MAX_STRING_LENGTH``).
_MAX_STRING = 1 << 30

#: ``tokenizer.ggml.token_type`` values (llama.cpp's ``llama_token_type``).
TOKEN_TYPES = {0: "undefined", 1: "normal", 2: "unknown", 3: "control", 4: "user-defined", 5: "unused", 6: "byte"}

# llama.cpp's token attributes (``llama_token_attr``), the bits that matter for encoding.
UNKNOWN, UNUSED, NORMAL, CONTROL, USER_DEFINED, BYTE = 1 << 1, 1 << 2, 1 << 3, 1 << 4, 1 << 5, 1 << 6
LSTRIP, RSTRIP = 1 << 8, 1 << 9
_ATTR_OF_TYPE = {1: NORMAL, 2: UNKNOWN, 3: CONTROL, 4: USER_DEFINED, 5: UNUSED, 6: BYTE}
_UNDEFINED_ATTR = 1 << 0

#: ``tokenizer.ggml.pre`` names → (llama.cpp's pre-tokenizer kind, whether it sets ``ignore_merges``), as
#: ``llama_vocab::impl::load`` maps them for BPE tokenizers.  A missing name is "default".
PRE_TYPES: dict[str, tuple[str, bool]] = {
    "default": ("default", False),
    "minicpm5": ("minicpm5", True),
    **{name: ("llama3", True) for name in ("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
                                           "midm-2.0", "lfm2", "jina-v5-nano")},
    "deepseek-llm": ("deepseek-llm", False),
    "deepseek-coder": ("deepseek-coder", False),
    "deepseek-v3": ("deepseek3-llm", False),
    "spark2_5": ("spark2_5", False),
    "youtu": ("youtu", True),
    "falcon": ("falcon", False),
    "mpt": ("mpt", False),
    "starcoder": ("starcoder", False),
    **{name: ("gpt2", False) for name in ("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es",
                                          "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "jina-v1-en",
                                          "jina-v2-code", "roberta-bpe", "exaone4")},
    "jais-2": ("jais2", False),
    "gemma4": ("gemma4", False),
    "granite-embed-multi-311m": ("gemma4", False),
    "sarvam-moe": ("sarvam-moe", False),
    "whitespace": ("whitespace", False),
    "refact": ("refact", False),
    "command-r": ("command-r", False),
    **{name: ("qwen2", False) for name in ("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez")},
    "qwen35": ("qwen35", False),
    "stablelm2": ("stablelm2", False),
    "olmo": ("olmo", False),
    "dbrx": ("dbrx", False),
    "smaug-bpe": ("smaug", False),
    "poro-chat": ("poro", False),
    "chatglm-bpe": ("chatglm4", False),
    "glm4": ("chatglm4", True),
    "glm5": ("chatglm4", True),
    "viking": ("viking", False),
    "jais": ("jais", False),
    "tekken": ("tekken", True),
    "smollm": ("smollm", False),
    "codeshell": ("codeshell", False),
    "bloom": ("bloom", False),
    "gpt3-finnish": ("gpt3-finnish", False),
    "exaone": ("exaone", False),
    "exaone-moe": ("exaone-moe", False),
    "chameleon": ("chameleon", False),
    "minerva-7b": ("minerva", False),
    **{name: ("gpt4o", False) for name in ("gpt-4o", "llama4", "kanana2", "talkie")},
    "granite-embed-multi-97m": ("granite-emb-multi", True),
    "tiny_aya": ("tiny-aya", False),
    "cohere2moe": ("tiny-aya", False),
    "superbpe": ("superbpe", False),
    "trillion": ("trillion", False),
    "granite-docling": ("granite-docling", False),
    **{name: ("bailingmoe", False) for name in ("bailingmoe", "bailingmoe2", "llada-moe")},
    "seed-coder": ("seed-coder", False),
    "hunyuan": ("hunyuan", False),
    "hunyuan-dense": ("hunyuan-dense", False),
    "hy_v4": ("hy-v4", False),
    "joyai-llm": ("joyai-llm", False),
    "kimi-k2": ("kimi-k2", False),
    "ufakzeka": ("ufakzeka", False),
    "grok-2": ("grok-2", False),
    "afmoe": ("afmoe", False),
    "laguna": ("laguna", False),
    "minimax-m2": ("minimax-m2", False),
    "solar-open": ("solar-open", False),
    "mellum2": ("mellum2", False),
}

#: What each ``tokenizer.ggml.model`` is, for refusals.
MODEL_KINDS = {
    "gpt2": "byte-level BPE",
    "llama": "sentencepiece BPE (SPM)",
    "bert": "WordPiece (WPM)",
    "t5": "Unigram (UGM)",
    "rwkv": "RWKV's greedy tokenizer",
    "plamo2": "PLaMo-2's Aho-Corasick tokenizer",
    "gemma4": "BPE over raw UTF-8 with spaces written as U+2581",
    "hybriddna": "DNA k-mer BPE",
    "whitespace": "whitespace-split BPE over raw UTF-8",
    "no_vocab": "no tokenizer",
    "none": "no tokenizer",
    "test": "llama.cpp's test tokenizer",
}

#: The keys of special token ids llama.cpp reads (each a u32), in its order; the deprecated fill-in-the-middle
#: names last.  Value: the role the id takes.
SPECIAL_ID_KEYS = {
    "tokenizer.ggml.bos_token_id": "bos",
    "tokenizer.ggml.eos_token_id": "eos",
    "tokenizer.ggml.eot_token_id": "eot",
    "tokenizer.ggml.eom_token_id": "eom",
    "tokenizer.ggml.unknown_token_id": "unk",
    "tokenizer.ggml.seperator_token_id": "sep",
    "tokenizer.ggml.padding_token_id": "pad",
    "tokenizer.ggml.mask_token_id": "mask",
    "tokenizer.ggml.fim_pre_token_id": "fim_pre",
    "tokenizer.ggml.fim_suf_token_id": "fim_suf",
    "tokenizer.ggml.fim_mid_token_id": "fim_mid",
    "tokenizer.ggml.fim_pad_token_id": "fim_pad",
    "tokenizer.ggml.fim_rep_token_id": "fim_rep",
    "tokenizer.ggml.fim_sep_token_id": "fim_sep",
    "tokenizer.ggml.prefix_token_id": "fim_pre",
    "tokenizer.ggml.suffix_token_id": "fim_suf",
    "tokenizer.ggml.middle_token_id": "fim_mid",
}

# The token texts llama.cpp recognises (``llama_vocab::impl::load``), for the special ids a file does not set.
_EOT_TEXTS = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
              "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>")
_FIM_TEXTS = {
    "fim_pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
                "<|code_prefix|>", "<|prefix|>"),
    "fim_suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
                "<|code_suffix|>", "<|suffix|>"),
    "fim_mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
                "<|code_middle|>", "<|middle|>"),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}
_EOG_TEXTS = frozenset((
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[",
))
_ALWAYS_USER_DEFINED = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")

#: The code points ``surrogateescape`` gives the bytes of a string that is not UTF-8.
_ESCAPED = re.compile("[\udc80-\udcff]")

#: The keys ``read_gguf_tokenizer`` keeps (every other value is skipped, not decoded).
_KEPT_PREFIXES = ("tokenizer.", "general.")


@dataclass(frozen=True)
class GGUFMetadata:
    """The key-value pairs of a GGUF file: ``values`` (Python values; arrays as lists) and ``types``
    (``"u32"``, ``"string"``, ``"array[i32]"``, …) by key, in file order.  Skipped values are absent from
    ``values`` but typed in ``types``."""

    path: str
    version: int
    tensor_count: int
    values: dict[str, Any]
    types: dict[str, str]


class _Reader:
    """Little-endian fields of a buffer, every overrun a ``FormatError`` naming the byte offset and the key."""

    def __init__(self, path: str, buffer: bytes | mmap.mmap) -> None:
        self.path = path
        self.buffer = buffer
        self.size = len(buffer)
        self.offset = 0
        self.key: str | None = None

    def fail(self, problem: str, at: int | None = None) -> FormatError:
        where = f"byte {self.offset if at is None else at}"
        if self.key is not None:
            where += f", key {self.key!r}"
        return FormatError(self.path, where, problem)

    def take(self, size: int, what: str) -> int:
        start = self.offset
        if size > self.size - start:
            raise self.fail(f"the file ends inside {what} (truncated: {self.size} bytes)")
        self.offset = start + size
        return start

    def scalar(self, code: str, size: int, what: str) -> Any:
        start = self.take(size, what)
        return struct.unpack_from("<" + code, self.buffer, start)[0]

    def string(self, what: str) -> bytes:
        size = self.scalar("Q", 8, f"the length of {what}")
        if size > _MAX_STRING:
            raise self.fail(f"{what} is {size} bytes long, more than llama.cpp reads ({_MAX_STRING})")
        start = self.take(size, what)
        return bytes(self.buffer[start : start + size])


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _read_value(reader: _Reader, kind: int, keep: bool) -> tuple[str, Any]:
    """(type name, value) of one value of type ``kind``; the value is None when not ``keep``."""
    if kind in _SCALARS:
        code = _SCALARS[kind]
        value = reader.scalar(code, struct.calcsize(code), f"a {TYPE_NAMES[kind]} value")
        return TYPE_NAMES[kind], (bool(value) if kind == 7 else value)
    if kind == _STRING:
        data = reader.string("a string value")
        return "string", _decode(data) if keep else None
    if kind != _ARRAY:
        raise reader.fail(f"unknown value type {kind}")
    item = reader.scalar("I", 4, "the item type of an array")
    count = reader.scalar("Q", 8, "the length of an array")
    if item == _ARRAY:
        raise reader.fail("an array of arrays (llama.cpp does not read nested arrays)")
    if item == _STRING:
        if count > (reader.size - reader.offset) // 8:
            raise reader.fail(f"an array of {count} strings does not fit in the rest of the file (truncated)")
        buffer = reader.buffer
        unpack = struct.Struct("<Q").unpack_from
        offset = reader.offset
        end = reader.size
        strings: list[bytes] = []
        append = strings.append
        number = 0
        try:
            for number in range(count):  # noqa: B007 - kept for the message
                start = offset + 8
                offset = start + unpack(buffer, offset)[0]
                if keep:
                    append(buffer[start:offset])
        except struct.error:
            offset = end + 1
        if offset > end:
            raise reader.fail(f"the file ends inside string {number} of an array of {count} (truncated)")
        reader.offset = offset
        if not keep:
            return "array[string]", None
        joined = b"\0".join(strings)
        if joined.count(0) == max(count - 1, 0):
            return "array[string]", joined.decode("utf-8", "surrogateescape").split("\0") if count else []
        return "array[string]", [data.decode("utf-8", "surrogateescape") for data in strings]
    if item not in _SCALARS:
        raise reader.fail(f"an array of the unknown value type {item}")
    code = _SCALARS[item]
    width = struct.calcsize(code)
    if count > (reader.size - reader.offset) // width:
        raise reader.fail(f"an array of {count} {TYPE_NAMES[item]} values does not fit in the rest of the file"
                          " (truncated)")
    start = reader.take(count * width, "an array")
    name = f"array[{TYPE_NAMES[item]}]"
    if not keep:
        return name, None
    raw = bytes(reader.buffer[start : start + count * width])
    values = array(code)
    if values.itemsize != width or struct.pack("=H", 1) != struct.pack("<H", 1):  # pragma: no cover - other C
        return name, [bool(v) if item == 7 else v for v in struct.unpack(f"<{count}{code}", raw)]
    values.frombytes(raw)
    return name, ([bool(v) for v in values] if item == 7 else values.tolist())


def parse_gguf_metadata(path: str | os.PathLike[str], buffer: bytes | mmap.mmap,
                        keep: Callable[[str], bool] | None = None) -> GGUFMetadata:
    """The key-value pairs of the GGUF file in ``buffer``, checked as llama.cpp's ``gguf_init_from_file`` does.

    ``keep(key)`` false: the value is walked over, not decoded.  Raises ``FormatError`` for a wrong magic, an
    unsupported version (1, or above 3, or a file of the other byte order), a truncated pair, an unknown type,
    an empty or repeated key, or a ``general.alignment`` that is not a u32 power of two.
    """
    name = os.fspath(path)
    reader = _Reader(name, buffer)
    magic = bytes(buffer[:4])
    if magic != GGUF_MAGIC:
        shown = magic.decode("latin-1").encode("unicode_escape").decode("ascii")
        raise FormatError(name, "byte 0", f"not a GGUF file: the magic is {shown!r}, expected 'GGUF'")
    reader.offset = 4
    version = reader.scalar("I", 4, "the version")
    if version & 0xFFFF == 0:
        raise FormatError(name, "byte 4", f"GGUF version {version} is the byte order of another machine"
                          " (llama.cpp reads files of its own byte order only)")
    if version == 1:
        raise FormatError(name, "byte 4", "GGUF version 1 is no longer read by llama.cpp")
    if version not in (2, 3):
        raise FormatError(name, "byte 4", f"GGUF version {version} is not supported (only 2 and 3)")
    tensor_count = reader.scalar("Q", 8, "the number of tensors")
    kv_count = reader.scalar("Q", 8, "the number of key-value pairs")
    if tensor_count >= 1 << 63 or kv_count >= 1 << 63:
        raise FormatError(name, "byte 8", "the numbers of tensors and of key-value pairs must be below 2**63")
    values: dict[str, Any] = {}
    types: dict[str, str] = {}
    for index in range(kv_count):
        reader.key = None
        start = reader.offset
        raw_key = reader.string(f"the key of pair {index}")
        if not raw_key:
            raise reader.fail(f"key-value pair {index} has an empty key", start)
        key = _decode(raw_key)
        if key in types:
            raise reader.fail(f"the key {key!r} occurs twice", start)
        reader.key = key
        kind = reader.scalar("I", 4, "the value type")
        wanted = keep is None or keep(key)
        type_name, value = _read_value(reader, kind, wanted)
        types[key] = type_name
        if wanted:
            values[key] = value
    reader.key = None
    alignment = types.get("general.alignment")
    if alignment is not None:
        value = values.get("general.alignment")
        if alignment != "u32":
            raise FormatError(name, "key 'general.alignment'", f"must be a u32, not {alignment}")
        if value is not None and (value == 0 or value & (value - 1)):
            raise FormatError(name, "key 'general.alignment'", f"{value} is not a power of 2")
    return GGUFMetadata(name, version, tensor_count, values, types)


@contextlib.contextmanager
def _open_buffer(path: str | os.PathLike[str]) -> Iterator[bytes | mmap.mmap]:
    """The file's bytes: mapped (a model file may be gigabytes; only the front is touched) or decompressed."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - kept open while mapped
    except OSError as exc:
        raise FormatError(path, None, os_problem(exc)) from exc
    with handle:
        head = handle.read(4)
        if head[:2] == GZIP_MAGIC:
            handle.seek(0)
            try:
                data = gzip.decompress(handle.read())
            except (OSError, EOFError, zlib.error) as exc:
                raise FormatError(path, "gzip data", f"corrupt or truncated gzip data: {exc}") from exc
            yield data
            return
        if is_gzip_name(path):
            raise FormatError(path, "byte 0", "the name ends in .gz but the file is not gzip data")
        if len(head) < 4:
            handle.seek(0)
            yield handle.read()
            return
        try:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            handle.seek(0)
            yield handle.read()
            return
        try:
            yield mapped
        finally:
            mapped.close()


def read_gguf_metadata(path: str | os.PathLike[str], keep: Callable[[str], bool] | None = None) -> GGUFMetadata:
    """``parse_gguf_metadata`` of the file at ``path`` (plain or gzip-compressed)."""
    with _open_buffer(path) as buffer:
        return parse_gguf_metadata(path, buffer, keep)


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
    return head[:4] == GGUF_MAGIC


# ---------------------------------------------------------------------------------------------------------
# The tokenizer, as llama.cpp's loader sees it
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GGUFTokenizer:
    """The tokenizer of a GGUF file with what llama.cpp derives from it.

    ``texts``: each token's string as llama.cpp keeps it (an empty one becomes ``[EMPTY_<id>]``, as llama.cpp
    renames it); ``attrs``: each token's attribute bits (``NORMAL``, ``CONTROL``, ``USER_DEFINED``, ``UNKNOWN``,
    ``LSTRIP``, ``RSTRIP``, …) after llama.cpp's adjustments; ``merges``: the merge strings in order;
    ``pre``: ``tokenizer.ggml.pre`` ("" when absent), ``pre_type``: llama.cpp's pre-tokenizer kind for it
    (None for a model other than ``gpt2``); ``ignore_merges``: a word that is a token is that token;
    ``special_ids``: role → id after llama.cpp's defaults and recognition by text; ``eog``: the
    end-of-generation ids; ``add_bos`` / ``add_eos``: what llama.cpp adds when asked to add special tokens.
    """

    path: str
    model: str
    pre: str
    pre_type: str | None
    texts: list[str]
    attrs: list[int]
    merges: list[str]
    ignore_merges: bool = False
    special_ids: dict[str, int] = field(default_factory=dict)
    eog: frozenset[int] = frozenset()
    add_bos: bool = False
    add_eos: bool = False
    name: str = ""
    architecture: str = ""

    @property
    def special_tokens(self) -> dict[str, int]:
        """The tokens llama.cpp matches in the text before pre-tokenizing (control, user-defined, unknown):
        text → id, in id order."""
        mask = CONTROL | USER_DEFINED | UNKNOWN
        return {self.texts[i]: i for i, attr in enumerate(self.attrs) if attr & mask}

    def parsed_always(self, token: int) -> bool:
        """True for a token cut out of the text even when special tokens are not parsed (user-defined tokens
        that are neither control nor unknown, as ``tokenizer_st_partition`` does)."""
        attr = self.attrs[token]
        return bool(attr & (CONTROL | USER_DEFINED | UNKNOWN)) and not attr & (CONTROL | UNKNOWN)


def _typed(metadata: GGUFMetadata, key: str, expected: tuple[str, ...]) -> Any:
    """The value of ``key`` or None when absent; ``FormatError`` when of another type (llama.cpp refuses it)."""
    found = metadata.types.get(key)
    if found is None:
        return None
    if found not in expected:
        raise FormatError(metadata.path, f"key {key!r}", f"has the type {found}, but llama.cpp reads it as"
                          f" {' or '.join(expected)}")
    return metadata.values.get(key)


def _model_refusal(model: str) -> str:
    kind = MODEL_KINDS.get(model)
    if kind is None:
        return f"the tokenizer model {model!r} is unknown to llama.cpp"
    return (f"the tokenizer model is {model!r} ({kind}); only 'gpt2' (byte-level BPE) is executed by this"
            " engine")


def read_gguf_tokenizer(path: str | os.PathLike[str]) -> GGUFTokenizer:
    """The tokenizer of a GGUF file, for the byte-level BPE model (``tokenizer.ggml.model`` = ``gpt2``).

    Every other model, an unknown ``pre`` name, a key of the wrong type, token strings that are not UTF-8 or
    occur twice (llama.cpp stops on both), a missing merge list: ``FormatError`` naming it.
    """
    metadata = read_gguf_metadata(path, lambda key: key.startswith(_KEPT_PREFIXES))
    name = metadata.path
    model = _typed(metadata, "tokenizer.ggml.model", ("string",))
    if model is None:
        raise FormatError(name, "key 'tokenizer.ggml.model'", "missing: the file holds no tokenizer")
    if model != "gpt2":
        raise FormatError(name, "key 'tokenizer.ggml.model'", _model_refusal(model))
    pre = _typed(metadata, "tokenizer.ggml.pre", ("string",))
    pre_name = "default" if pre is None or pre == "" else pre
    if pre_name not in PRE_TYPES:
        raise FormatError(name, "key 'tokenizer.ggml.pre'", f"the pre-tokenizer {pre_name!r} is unknown to"
                          " llama.cpp (and to this engine)")
    pre_type, ignore_merges = PRE_TYPES[pre_name]
    merges = _typed(metadata, "tokenizer.ggml.merges", ("array[string]",))
    if merges is None:
        raise FormatError(name, "key 'tokenizer.ggml.merges'", "missing: llama.cpp needs the merges of a BPE"
                          " tokenizer")
    for key, expected in (("tokenizer.ggml.token_type_count", ("u32",)), ("general.name", ("string",)),
                          ("general.architecture", ("string",)), ("tokenizer.ggml.add_space_prefix", ("bool",)),
                          ("tokenizer.ggml.remove_extra_whitespaces", ("bool",))):
        _typed(metadata, key, expected)
    texts = _typed(metadata, "tokenizer.ggml.tokens", ("array[string]",))
    if texts is None:
        raise FormatError(name, "key 'tokenizer.ggml.tokens'", "missing: the file holds no vocabulary")
    count = len(texts)
    scores = _typed(metadata, "tokenizer.ggml.scores", ("array[f32]", "array[i32]"))
    if metadata.types.get("tokenizer.ggml.scores") is not None and scores is not None and len(scores) < count:
        raise FormatError(name, "key 'tokenizer.ggml.scores'", f"{len(scores)} scores for {count} tokens")
    types = _typed(metadata, "tokenizer.ggml.token_type", ("array[i32]",))
    if types is not None and len(types) < count:
        raise FormatError(name, "key 'tokenizer.ggml.token_type'", f"{len(types)} token types for {count} tokens")
    if _ESCAPED.search("\0".join(texts)):
        index = next(i for i, text in enumerate(texts) if _ESCAPED.search(text))
        raise FormatError(name, f"key 'tokenizer.ggml.tokens', token {index}", "the string is not UTF-8")
    for index, text in enumerate(texts):
        if not text:
            texts[index] = f"[EMPTY_{index}]"
    index_of = dict(zip(texts, range(count), strict=True))
    if len(index_of) != count:
        first: dict[str, int] = {}
        for index, text in enumerate(texts):
            if text in first:
                raise FormatError(name, f"key 'tokenizer.ggml.tokens', token {index}",
                                  f"the string {text!r} is also token {first[text]} (llama.cpp stops on this)")
            first[text] = index
    attrs = [_ATTR_OF_TYPE.get(kind, _UNDEFINED_ATTR) for kind in types] if types is not None else [NORMAL] * count
    del attrs[count:]
    special_ids = _special_ids(metadata, count)
    add_bos = pre_type in ("llama3", "tekken", "chameleon")
    add_eos = False
    for key, default in (("tokenizer.ggml.add_bos_token", add_bos), ("tokenizer.ggml.add_eos_token", add_eos)):
        value = _typed(metadata, key, ("bool",))
        if key.endswith("bos_token"):
            add_bos = default if value is None else value
        else:
            add_eos = default if value is None else value
    general_name = metadata.values.get("general.name") or ""
    architecture = metadata.values.get("general.architecture") or ""
    eog = _adjust_attributes(name, texts, index_of, attrs, special_ids)
    _strip_attributes(name, pre_name, general_name, architecture, index_of, attrs)
    return GGUFTokenizer(name, model, pre or "", pre_type, texts, attrs, merges, ignore_merges,
                         {role: token for role, token in special_ids.items() if token >= 0}, frozenset(eog),
                         add_bos, add_eos, general_name, architecture)


def _special_ids(metadata: GGUFMetadata, count: int) -> dict[str, int]:
    """Role → id (-1 for none): llama.cpp's defaults for BPE (bos and eos 11), replaced by the file's keys."""
    ids = {"bos": 11, "eos": 11, "eot": -1, "eom": -1, "unk": -1, "sep": -1, "pad": -1, "mask": -1,
           "fim_pre": -1, "fim_suf": -1, "fim_mid": -1, "fim_pad": -1, "fim_rep": -1, "fim_sep": -1}
    if metadata.values.get("tokenizer.ggml.pre") == "chatglm-bpe" or metadata.values.get("tokenizer.ggml.pre") in (
            "glm4", "glm5"):
        ids["bos"] = -1
    for key, role in SPECIAL_ID_KEYS.items():
        if ids[role] >= count:
            ids[role] = -1
        value = _typed(metadata, key, ("u32",))
        if value is not None and value < count:
            ids[role] = value
    return ids


def _adjust_attributes(path: str, texts: list[str], index_of: dict[str, int], attrs: list[int],
                       ids: dict[str, int]) -> set[int]:
    """llama.cpp's changes to the token types (in place), in its order; returns the end-of-generation ids."""

    def mark_control(token: int) -> None:
        attrs[token] |= CONTROL

    if ids["eot"] < 0:
        found = [index_of[text] for text in _EOT_TEXTS if text in index_of]
        if found:
            ids["eot"] = min(found)  # which one is llama.cpp's hash order; all of them become control below
            for token in found:
                mark_control(token)
    if ids["eom"] < 0 and "<|eom_id|>" in index_of:
        ids["eom"] = index_of["<|eom_id|>"]
        mark_control(ids["eom"])
    for role, candidates in _FIM_TEXTS.items():
        if ids[role] >= 0:
            continue
        found = sorted(index_of[text] for text in candidates if text in index_of)
        if len(found) > 1 and any(not attrs[token] & CONTROL for token in found):
            shown = ", ".join(repr(texts[token]) for token in found)
            raise FormatError(path, f"key 'tokenizer.ggml.{role}_token_id'",
                              f"absent, and the tokens {shown} all qualify: llama.cpp marks the first one its hash"
                              " table yields as control, so which tokens are control is unspecified")
        if found:
            ids[role] = found[0]
            mark_control(found[0])
    for token, attr in enumerate(attrs):
        if attr & CONTROL and not attr & UNUSED and "unused" in texts[token]:
            attrs[token] |= UNUSED
    eog: set[int] = {ids[role] for role in ("fim_pad", "fim_rep", "fim_sep") if ids[role] >= 0}
    for text in _EOG_TEXTS:
        listed = index_of.get(text)
        if listed is not None:
            eog.add(listed)
            mark_control(listed)
    for text in _ALWAYS_USER_DEFINED:
        listed = index_of.get(text)
        if listed is not None:
            attrs[listed] = USER_DEFINED
    eog.update(ids[role] for role in ("eos", "eot", "eom") if ids[role] >= 0)
    eog_texts = {texts[token]: token for token in eog if 0 <= token < len(texts)}
    has_call = "<|call|>" in eog_texts or "<|calls|>" in eog_texts
    if "<|end|>" in eog_texts and has_call and ("<|return|>" in eog_texts or "<|flush|>" in eog_texts):
        end = eog_texts["<|end|>"]
        eog.discard(end)
        attrs[end] = USER_DEFINED
    if "</s>" in eog_texts and ("<|tool_response>" in eog_texts or "<|plamo:eos|>" in eog_texts):
        eog.discard(eog_texts["</s>"])
        attrs[eog_texts["</s>"]] = NORMAL
    return eog


def _strip_attributes(path: str, pre: str, name: str, architecture: str, index_of: dict[str, int],
                      attrs: list[int]) -> None:
    """The strip flags llama.cpp sets by model name (``_set_token_attr``), in place."""

    def token(text: str) -> int:
        found = index_of.get(text)
        if found is None:
            raise FormatError(path, "key 'general.name'", f"names a Phi-3 model, and llama.cpp stops loading one"
                              f" without the token {text!r}")
        return found

    lowered = name.lower()
    if any(part in pre for part in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) or any(
            part in architecture for part in ("nomic-bert-moe", "jina-bert-v3")):
        if "<mask>" in index_of:
            attrs[index_of["<mask>"]] |= LSTRIP
    elif "phi-3" in lowered or "phi3" in lowered:
        for index, attr in enumerate(attrs):
            if attr & (CONTROL | USER_DEFINED | UNKNOWN):
                attrs[index] |= RSTRIP
        attrs[token("</s>")] |= RSTRIP
        for text in ("<unk>", "<s>", "<|endoftext|>"):
            attrs[token(text)] &= ~RSTRIP
    elif "modern-bert" in lowered and "[MASK]" in index_of:
        attrs[index_of["[MASK]"]] |= LSTRIP


# ---------------------------------------------------------------------------------------------------------
# The common model
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ByteLevelTables:
    """A GGUF tokenizer's strings as bytes, and its merges as the merge loop needs them.

    ``token_bytes``: per id, the bytes its string stands for in GPT-2's byte-to-character table, None when a
    character is outside the table (such a string is never built by merging: llama.cpp looks the merged,
    byte-encoded pieces up among all token strings, and the pieces are always spelt in the table);
    ``lookup``: those bytes → id; ``decoded``: id → the bytes llama.cpp's detokenizer gives for each
    non-special token (a character outside the table becomes ``[UNK_BYTE_0x..]`` text, as in llama.cpp);
    ``merge_ids``: the merges as three columns of ids (left, right, result), first occurrence of a pair only
    (llama.cpp keeps
    the first rank of a pair), when every merge that can ever apply joins two tokens into a token — else None,
    and ``merge_bytes`` gives them as byte pairs instead.
    """

    token_bytes: list[bytes | None]
    lookup: dict[bytes, int]
    decoded: dict[int, bytes]
    merge_ids: tuple[list[int], list[int], list[int]] | None


@functools.cache
def _byte_level_codec() -> Any:
    """The charmap encoding table of GPT-2's byte-to-character table (``codecs.charmap_encode``)."""
    return codecs.charmap_build("".join(bytes_to_unicode()[byte] for byte in range(256)))


def byte_level_bytes(text: str) -> bytes | None:
    """The bytes a GPT-2-spelt string stands for, or None when a character is not in the table."""
    try:
        data: bytes = codecs.charmap_encode(text, "strict", _byte_level_codec())[0]
    except UnicodeEncodeError:
        return None
    return data


def _all_byte_level(texts: list[str]) -> list[bytes | None]:
    """``byte_level_bytes`` of every string: one call for all when every one is in the table."""
    try:
        joined: bytes = codecs.charmap_encode("".join(texts), "strict", _byte_level_codec())[0]
    except UnicodeEncodeError:
        return [byte_level_bytes(text) for text in texts]
    ends = list(accumulate(map(len, texts)))
    return [joined[start:end] for start, end in zip([0, *ends], ends, strict=False)]


def _llama_decode_text(text: str) -> bytes:
    """llama.cpp's ``llama_decode_text``: each character's byte, or ``[UNK_BYTE_0x<hex>`` text ``]``."""
    table = {char: byte for byte, char in bytes_to_unicode().items()}
    out = bytearray()
    for char in text:
        byte = table.get(char)
        if byte is not None:
            out.append(byte)
        else:
            out += b"[UNK_BYTE_0x" + char.encode("utf-8", "surrogatepass").hex().encode() + text.encode(
                "utf-8", "surrogatepass") + b"]"
    return bytes(out)


def _merge_sides(merges: list[str]) -> list[str]:
    """[left0, right0, left1, right1, …] of the merge strings, each cut at its first space after the first
    character, as llama.cpp cuts them; a string without such a space gives two empty sides."""
    joined = "\n".join(merges)
    flat = joined.replace("\n", " ").split(" ")
    if len(flat) == 2 * len(merges) and not joined.startswith(" ") and "\n " not in joined:
        return flat
    sides: list[str] = []
    for line in merges:
        cut = line.find(" ", 1)
        sides += [line[:cut], line[cut + 1 :]] if cut >= 0 else ["", ""]
    return sides


def byte_level_tables(tokenizer: GGUFTokenizer) -> ByteLevelTables:
    """The ``ByteLevelTables`` of a GGUF tokenizer."""
    texts = tokenizer.texts
    count = len(texts)
    token_bytes = _all_byte_level(texts)
    outside = [token for token, data in enumerate(token_bytes) if data is None]  # spelt outside the table
    lookup: dict[bytes, int] = dict(zip(token_bytes, range(count), strict=True))  # type: ignore[arg-type]
    lookup.pop(None, None)  # type: ignore[call-overload]
    decoded: dict[int, bytes] = dict(zip(range(count), token_bytes, strict=True))  # type: ignore[arg-type]
    for token in outside:
        decoded[token] = _llama_decode_text(texts[token])
    special = CONTROL | USER_DEFINED | UNKNOWN
    for token in [token for token, attr in enumerate(tokenizer.attrs) if attr & special]:
        del decoded[token]
    # Ids of the strings BPE can build (tokens spelt in the table); the others are never a piece.
    buildable = dict(zip(texts, range(count), strict=True))
    for token in outside:
        del buildable[texts[token]]
    sides = _merge_sides(tokenizer.merges)
    lefts, rights = sides[0::2], sides[1::2]
    a_ids = list(map(buildable.get, lefts))
    b_ids = list(map(buildable.get, rights))
    c_ids = list(map(buildable.get, map(operator.add, lefts, rights)))
    odd: list[int] = []
    complete = None not in a_ids and None not in b_ids and None not in c_ids
    stride = len(texts)
    columns: tuple[list[int], list[int], list[int]]
    if complete and len(set(map(operator.add, map(operator.mul, a_ids, repeat(stride)), b_ids))) == len(a_ids):
        columns = (a_ids, b_ids, c_ids)  # type: ignore[assignment]
    else:
        columns = ([], [], [])
        seen: set[tuple[int, int]] = set()
        for index, (a, b, c) in enumerate(zip(a_ids, b_ids, c_ids, strict=True)):
            if a is None or b is None or c is None:
                odd.append(index)
                continue
            if (a, b) not in seen:
                seen.add((a, b))
                columns[0].append(a)
                columns[1].append(b)
                columns[2].append(c)
    if odd and _odd_merges_apply(lefts, rights, odd):
        return ByteLevelTables(token_bytes, lookup, decoded, None)
    return ByteLevelTables(token_bytes, lookup, decoded, columns)


def _odd_merges_apply(lefts: list[str], rights: list[str], odd: list[int]) -> bool:
    """True when some merge that is not "token + token → token" may apply: both its sides are strings merging
    can form (single bytes, and the results of merges over such strings), spelt in the byte table."""
    formable = set(bytes_to_unicode().values())
    changed = True
    while changed:
        changed = False
        for left, right in zip(lefts, rights, strict=True):
            if left in formable and right in formable and left + right not in formable:
                formable.add(left + right)
                changed = True
    return any(lefts[index] in formable and rights[index] in formable for index in odd)


def merge_bytes(tokenizer: GGUFTokenizer) -> list[tuple[bytes, bytes]]:
    """The merges as byte pairs in rank order, first occurrence of a pair only, leaving out those that never
    apply (a side empty or spelt outside the byte table)."""
    sides = _merge_sides(tokenizer.merges)
    pairs: dict[tuple[bytes, bytes], None] = {}
    for left, right in zip(sides[0::2], sides[1::2], strict=True):
        left_bytes, right_bytes = byte_level_bytes(left), byte_level_bytes(right)
        if left_bytes and right_bytes:
            pairs.setdefault((left_bytes, right_bytes), None)
    return list(pairs)


def vocab_from_gguf(path: str | os.PathLike[str]) -> Vocab:
    """The project's ``Vocab`` (kind ``gguf``) of a byte-level BPE GGUF file.

    ``tokens``: the non-special tokens' bytes and the special tokens' texts (UTF-8); ``merges``: the merges
    whose sides and result are tokens, as id triples, in rank order; ``specials``: the control, user-defined
    and unknown tokens; ``ignore_merges`` as llama.cpp sets it for the pre-tokenizer.
    """
    tokenizer = read_gguf_tokenizer(path)
    tables = byte_level_tables(tokenizer)
    specials = tokenizer.special_tokens
    tokens: dict[int, bytes] = dict(tables.decoded)
    for text, token in specials.items():
        tokens[token] = text.encode("utf-8")
    merges = list(zip(*tables.merge_ids, strict=True)) if tables.merge_ids is not None else None
    if merges is None:
        lookup = tables.lookup
        merges = []
        for left, right in merge_bytes(tokenizer):
            a, b, c = lookup.get(left), lookup.get(right), lookup.get(left + right)
            if a is not None and b is not None and c is not None:
                merges.append((a, b, c))
    return Vocab(tokens=dict(sorted(tokens.items())), merges=merges, specials=specials, kind="gguf",
                 source=os.fspath(path), ignore_merges=tokenizer.ignore_merges)
