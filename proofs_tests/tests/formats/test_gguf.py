"""GGUF vocabularies (llama.cpp): its own tokenizer test vectors, the file reader, the refusals.

The oracle is llama.cpp's: ``proofs_tests/fixtures/llama_cpp`` holds the vocabulary-only GGUF files of
llama.cpp's ``models/`` folder with its ``.inp`` / ``.out`` test vectors (read here exactly as
``tests/test-tokenizer-0.cpp`` reads them: no BOS, special tokens not parsed); every vector must give its ids.
The byte-level BPE files are llama.cpp's own; the SPM (llama-spm, phi-3) and ``gemma4`` ones are reduced to what
their vectors need (see the folder's README).  ``BPEPROOF_LLAMA_CPP_MODELS`` may name a folder with more of them
(``bench/fetch_llama_cpp_vectors.py`` fetches llama.cpp's whole folder): each one of a model the engine executes
must pass too, each other one must be refused naming its model or pre-tokenizer.  The SPM and ``gemma4`` models
have their own tests in ``test_gguf_spm.py``.

Where the vectors do not reach, the hand-written code of llama.cpp is the oracle: its splitters
(``unicode_regex_split_custom_*``), its special-token partition (``tokenizer_st_partition``) and its merge loop
(``llm_tokenizer_bpe_session``) are ported line by line below and compared with the engine on generated inputs.
"""

from __future__ import annotations

import functools
import gzip
import heapq
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpeproof.impl.formats import gguf_container, gguf_tokenizer, gguf_vocab
from bpeproof.impl.formats.vocab import bytes_to_unicode
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.models.llama_cpp import LlamaCppModel
from bpeproof.impl.pipelines.llama_cpp import LlamaCppPipeline
from bpeproof.impl.pipelines.llama_cpp_specials import SpecialTokenPartition
from bpeproof.impl.pre_tokenizers import llama_cpp as llama_cpp_pre
from bpeproof.impl.pre_tokenizers.llama_cpp import collapse
from bpeproof.impl.tokenizer import Tokenizer, load_tokenizer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "llama_cpp"
ENV = "BPEPROOF_LLAMA_CPP_MODELS"
SEPARATOR = "\n__ggml_vocab_test__\n"


def _vocab_files(folder: Path, vectors: bool) -> list[Path]:
    files = sorted(folder.glob("ggml-vocab-*.gguf")) + sorted(folder.glob("ggml-vocab-*.gguf.gz"))
    if vectors:
        files = [path for path in files if _base(path).with_name(_base(path).name + ".out").exists()]
    return files


def _base(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".gz"))


def read_vectors(path: Path) -> list[tuple[str, list[int]]]:
    """The (text, ids) pairs of ``path.inp`` / ``path.out``, split as ``read_tests`` of test-tokenizer-0.cpp."""
    base = _base(path)
    raw = base.with_name(base.name + ".inp").read_bytes().decode("utf-8")
    inputs: list[str] = []
    position = 0
    while position < len(raw):
        following = raw.find(SEPARATOR, position)
        if following < 0:
            inputs.append(raw[position:])
            break
        inputs.append(raw[position:following])
        position = following + len(SEPARATOR)
    lines = base.with_name(base.name + ".out").read_text(encoding="utf-8").split("\n")
    assert len(lines) >= len(inputs)
    return [(text, [int(token) for token in line.split()]) for text, line in zip(inputs, lines, strict=False)]


@functools.cache
def _load(path: Path) -> Tokenizer:
    tokenizer = load_tokenizer(str(path))
    assert isinstance(tokenizer.pipeline, LlamaCppPipeline)
    return tokenizer


def _gguf_pipeline(tokenizer: Tokenizer) -> LlamaCppPipeline:
    """llama.cpp's pipeline of a GGUF file's tokenizer (its special-token partition and the file as read)."""
    assert isinstance(tokenizer.pipeline, LlamaCppPipeline)
    return tokenizer.pipeline


COMMITTED = _vocab_files(FIXTURES, vectors=True)


def test_committed_vectors_are_present() -> None:
    assert len(COMMITTED) >= 14, "proofs_tests/fixtures/llama_cpp lost its GGUF files"


@pytest.mark.parametrize("path", COMMITTED, ids=[path.name.split(".gguf")[0] for path in COMMITTED])
def test_llama_cpp_vectors(path: Path) -> None:
    tokenizer = _load(path)
    vectors = read_vectors(path)
    assert vectors
    failures = [(text, tokenizer.encode(text), ids) for text, ids in vectors if tokenizer.encode(text) != ids]
    assert not failures, f"{len(failures)} of {len(vectors)} vectors differ, first: {failures[0]!r}"
    for text, _ in vectors:
        assert tokenizer.decode(tokenizer.encode(text)) == text


@pytest.mark.parametrize("name", ["gpt-2", "falcon"])
def test_llama_cpp_vectors_without_the_c_loop(name: str) -> None:
    from bpeproof.impl.pipelines.gguf import gguf_parts

    path = FIXTURES / f"ggml-vocab-{name}.gguf.gz"
    tokenizer = Tokenizer.from_parts(gguf_parts(gguf_tokenizer.read_gguf_tokenizer(str(path)), c_loop=False))
    assert tokenizer.model.c_merger() is None
    for text, ids in read_vectors(path):
        assert tokenizer.encode(text) == ids, text


def _env_files() -> list[Any]:
    folder = os.environ.get(ENV)
    if not folder:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{ENV} is not set (a folder of llama.cpp's"
                                                                 " ggml-vocab-*.gguf files)"))]
    files = _vocab_files(Path(folder), vectors=False)
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{ENV}={folder} holds no ggml-vocab-*.gguf"))]
    return [pytest.param(path, id=path.name) for path in files]


@pytest.mark.parametrize("path", _env_files())
def test_llama_cpp_folder(path: Path) -> None:
    """Every vocabulary of llama.cpp's folder whose model the engine executes (byte-level BPE, SPM, ``gemma4``)
    gives its vectors; every other one is refused, named."""
    metadata = gguf_container.read_gguf_metadata(path,
                                                 lambda key: key in ("tokenizer.ggml.model", "tokenizer.ggml.pre"))
    model = metadata.values["tokenizer.ggml.model"]
    pre = metadata.values.get("tokenizer.ggml.pre") or "default"
    kind = gguf_tokenizer.PRE_TYPES.get(pre, (None,))[0]
    unsupported = set(llama_cpp_pre.UNSUPPORTED_PRE) - gguf_tokenizer.RAW_UTF8_PRE_TYPES
    if model not in gguf_tokenizer.EXECUTED_MODELS or (model == "gpt2" and kind in unsupported):
        with pytest.raises(FormatError) as refusal:
            load_tokenizer(str(path))
        assert (repr(model) if model not in gguf_tokenizer.EXECUTED_MODELS else repr(kind)) in str(refusal.value)
        assert "\n" not in str(refusal.value)
        return
    tokenizer = load_tokenizer(str(path))
    base = _base(path)
    if base.with_name(base.name + ".out").exists():
        for text, ids in read_vectors(path):
            assert tokenizer.encode(text) == ids, text


# ---------------------------------------------------------------------------------------------------------
# Other implementations, where one encodes the same vocabulary
# ---------------------------------------------------------------------------------------------------------

SHARED = Path(__file__).resolve().parents[4] / "shared"


def test_gpt2_gguf_equals_tiktoken_on_corpora() -> None:
    """llama.cpp's GPT-2 vocabulary encodes real text as tiktoken does with GPT-2's ranks (r50k)."""
    tiktoken = pytest.importorskip("tiktoken")
    corpora = sorted((SHARED / "corpora").glob("*.txt.gz"))
    ranks_file = SHARED / "vocabs" / "r50k_base.tiktoken.gz"
    if not corpora or not ranks_file.exists():
        pytest.skip("../shared/corpora or ../shared/vocabs/r50k_base.tiktoken.gz is not here")
    from bpeproof.impl.formats.tiktoken_file import load_tiktoken_ranks
    from bpeproof.impl.pre_tokenizers.patterns import PATTERNS

    encoding = tiktoken.Encoding("r50k", pat_str=PATTERNS["r50k"], mergeable_ranks=load_tiktoken_ranks(ranks_file),
                                 special_tokens={})
    ours = _load(FIXTURES / "ggml-vocab-gpt-2.gguf.gz")
    for corpus in corpora:
        with gzip.open(corpus, "rt", encoding="utf-8") as handle:
            text = handle.read(60_000)
        assert ours.encode(text) == encoding.encode_ordinary(text), corpus.name


# ---------------------------------------------------------------------------------------------------------
# Writing small GGUF files
# ---------------------------------------------------------------------------------------------------------

U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
_CODES = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?", U64: "Q", I64: "q",
          F64: "d"}


def _string(value: str | bytes) -> bytes:
    data = value.encode("utf-8") if isinstance(value, str) else value
    return struct.pack("<Q", len(data)) + data


def _value(kind: int, value: Any) -> bytes:
    if kind == STRING:
        return _string(value)
    if kind == ARRAY:
        item, items = value
        return struct.pack("<IQ", item, len(items)) + b"".join(_value(item, x) for x in items)
    return struct.pack("<" + _CODES.get(kind, "I"), value)  # an unknown type: four bytes of anything


def gguf_bytes(pairs: list[tuple[str, int, Any]], *, magic: bytes = b"GGUF", version: int = 3) -> bytes:
    """A GGUF file of these key-value pairs and no tensor."""
    body = b"".join(_string(key) + struct.pack("<I", kind) + _value(kind, value) for key, kind, value in pairs)
    return magic + struct.pack("<IQQ", version, 0, len(pairs)) + body


GPT2_CHARS = bytes_to_unicode()


def spelt(data: bytes) -> str:
    return "".join(GPT2_CHARS[byte] for byte in data)


def tokenizer_pairs(merges: list[tuple[bytes, bytes]], *, specials: dict[str, int] | None = None,
                    model: str = "gpt2", pre: str | None = "gpt-2", extra: list[tuple[str, int, Any]] | None = None,
                    words: list[bytes] = ()) -> list[tuple[str, int, Any]]:  # type: ignore[assignment]
    """The key-value pairs of a byte-level BPE tokenizer: the 256 bytes, one token per merge result and per
    word of ``words``, then ``specials`` (text → token type)."""
    tokens = [spelt(bytes([byte])) for byte in range(256)]
    for left, right in merges:
        if spelt(left + right) not in tokens:
            tokens.append(spelt(left + right))
    tokens += [spelt(word) for word in words if spelt(word) not in tokens]
    types = [1] * len(tokens)
    for text, kind in (specials or {}).items():
        tokens.append(text)
        types.append(kind)
    pairs: list[tuple[str, int, Any]] = [("general.architecture", STRING, "gpt2"),
                                         ("tokenizer.ggml.model", STRING, model)]
    if pre is not None:
        pairs.append(("tokenizer.ggml.pre", STRING, pre))
    pairs += [("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
              ("tokenizer.ggml.token_type", ARRAY, (I32, types)),
              ("tokenizer.ggml.merges", ARRAY, (STRING, [f"{spelt(a)} {spelt(b)}" for a, b in merges]))]
    return pairs + (extra or [])


SMALL_MERGES = [(b"h", b"e"), (b"l", b"l"), (b"he", b"ll"), (b"hell", b"o"), (b" ", b"w"), (b"o", b"r")]


def write(tmp_path: Path, pairs: list[tuple[str, int, Any]], name: str = "v.gguf", **options: Any) -> Path:
    path = tmp_path / name
    path.write_bytes(gguf_bytes(pairs, **options))
    return path


def test_small_file_encodes_and_is_read_by_every_entry_point(tmp_path: Path) -> None:
    path = write(tmp_path, tokenizer_pairs(SMALL_MERGES, specials={"<|end|>": 3}))
    tokenizer = load_tokenizer(str(path))
    ids = tokenizer.encode("hello world<|end|>")
    assert tokenizer.decode(ids) == "hello world<|end|>"
    assert tokenizer.encode("<|end|>", allowed_special="all") == [tokenizer.special_tokens["<|end|>"]]
    from bpeproof.impl import formats

    vocab = formats.load(path)
    assert vocab.kind == "gguf" and vocab.specials == {"<|end|>": tokenizer.special_tokens["<|end|>"]}
    assert formats.sniff(path)[0] == "gguf"
    plain = tmp_path / "no-extension"
    plain.write_bytes(path.read_bytes())
    assert load_tokenizer(str(plain)).encode("hello") == tokenizer.encode("hello")
    packed = tmp_path / "v.gguf.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert load_tokenizer(str(packed)).encode("hello") == tokenizer.encode("hello")


def test_cli_encodes_a_gguf_file(tmp_path: Path) -> None:
    path = write(tmp_path, tokenizer_pairs(SMALL_MERGES))
    result = subprocess.run([sys.executable, "-m", "bpeproof.cli", "encode", "hello world", "--vocab", str(path)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert [int(x) for x in result.stdout.split()] == load_tokenizer(str(path)).encode("hello world")


# ---------------------------------------------------------------------------------------------------------
# The reader against the maintained gguf package
# ---------------------------------------------------------------------------------------------------------

ALL_TYPES: list[tuple[str, int, Any]] = [
    ("a.u8", U8, 200), ("a.i8", I8, -100), ("a.u16", U16, 60000), ("a.i16", I16, -30000), ("a.u32", U32, 4000000000),
    ("a.i32", I32, -2000000000), ("a.f32", F32, 1.5), ("a.bool", BOOL, True), ("a.string", STRING, "naïve ☃"),
    ("a.u64", U64, 2**63 + 5), ("a.i64", I64, -(2**62)), ("a.f64", F64, 2.25),
    ("a.strings", ARRAY, (STRING, ["", "x", "ĠĠ", "日本"])), ("a.ints", ARRAY, (I32, [1, -2, 3])),
    ("a.floats", ARRAY, (F32, [0.5, -1.0])), ("a.bools", ARRAY, (BOOL, [True, False])),
    ("a.empty", ARRAY, (U8, [])),
]


def test_reader_agrees_with_gguf_package(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    path = write(tmp_path, ALL_TYPES + tokenizer_pairs(SMALL_MERGES))
    theirs = gguf.GGUFReader(str(path))
    ours = gguf_container.read_gguf_metadata(path)
    for key, field in theirs.fields.items():
        if key.startswith("GGUF."):
            continue
        value = field.contents()
        assert ours.values[key] == (value if not isinstance(value, bytes) else value.decode()), key
    assert set(ours.values) == {key for key in theirs.fields if not key.startswith("GGUF.")}


def test_file_written_by_gguf_package(tmp_path: Path) -> None:
    gguf = pytest.importorskip("gguf")
    pairs = tokenizer_pairs(SMALL_MERGES, specials={"<|endoftext|>": 3})
    values = {key: value for key, _, value in pairs}
    path = tmp_path / "written.gguf"
    writer = gguf.GGUFWriter(str(path), "gpt2")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(values["tokenizer.ggml.tokens"][1])
    writer.add_token_types(values["tokenizer.ggml.token_type"][1])
    writer.add_token_merges(values["tokenizer.ggml.merges"][1])
    writer.add_eos_token_id(len(values["tokenizer.ggml.tokens"][1]) - 1)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    mine = write(tmp_path, pairs, name="mine.gguf")
    assert load_tokenizer(str(path)).encode("hello world") == load_tokenizer(str(mine)).encode("hello world")


# ---------------------------------------------------------------------------------------------------------
# Malformed files: one FormatError line, never a traceback
# ---------------------------------------------------------------------------------------------------------


def _refused(path: Path) -> str:
    with pytest.raises(FormatError) as refusal:
        load_tokenizer(str(path))
    message = str(refusal.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


def test_every_truncation_is_refused(tmp_path: Path) -> None:
    data = gguf_bytes(tokenizer_pairs(SMALL_MERGES))
    path = tmp_path / "cut.gguf"
    for size in sorted({*range(0, 200), *range(200, len(data), 37)}):
        path.write_bytes(data[:size])
        message = _refused(path)
        assert size < 4 or "truncated" in message or "magic" in message, (size, message)


@pytest.mark.parametrize(("options", "expected"), [
    ({"magic": b"GGML"}, "magic"),
    ({"version": 1}, "version 1"),
    ({"version": 3 << 24}, "byte order"),
    ({"version": 4}, "version 4"),
])
def test_header_refused(tmp_path: Path, options: dict[str, Any], expected: str) -> None:
    assert expected in _refused(write(tmp_path, tokenizer_pairs(SMALL_MERGES), **options))


def _replace(pairs: list[tuple[str, int, Any]], key: str, kind: int, value: Any) -> list[tuple[str, int, Any]]:
    return [(k, kind, value) if k == key else (k, t, v) for k, t, v in pairs]


@pytest.mark.parametrize(("key", "kind", "value", "expected"), [
    ("tokenizer.ggml.tokens", ARRAY, (I32, [1, 2]), "tokenizer.ggml.tokens"),
    ("tokenizer.ggml.token_type", ARRAY, (U32, [1] * 300), "tokenizer.ggml.token_type"),
    ("tokenizer.ggml.token_type", ARRAY, (I32, [1, 1]), "token types for"),
    ("tokenizer.ggml.merges", STRING, "h e", "tokenizer.ggml.merges"),
    ("tokenizer.ggml.model", U32, 2, "tokenizer.ggml.model"),
    ("tokenizer.ggml.pre", ARRAY, (STRING, ["gpt-2"]), "tokenizer.ggml.pre"),
    ("general.architecture", ARRAY, (ARRAY, []), "nested"),
    ("general.architecture", 13, 0, "unknown value type"),
])
def test_wrong_types_refused(tmp_path: Path, key: str, kind: int, value: Any, expected: str) -> None:
    assert expected in _refused(write(tmp_path, _replace(tokenizer_pairs(SMALL_MERGES), key, kind, value)))


@pytest.mark.parametrize(("extra", "expected"), [
    ([("tokenizer.ggml.bos_token_id", I32, 1)], "bos_token_id"),
    ([("tokenizer.ggml.add_bos_token", U8, 1)], "add_bos_token"),
    ([("tokenizer.ggml.scores", STRING, "x")], "scores"),
    ([("general.alignment", U64, 32)], "alignment"),
    ([("general.architecture", STRING, "again")], "twice"),
    ([("", STRING, "x")], "empty key"),
])
def test_bad_keys_refused(tmp_path: Path, extra: list[tuple[str, int, Any]], expected: str) -> None:
    assert expected in _refused(write(tmp_path, tokenizer_pairs(SMALL_MERGES, extra=extra)))


def test_missing_and_repeated_tokens_refused(tmp_path: Path) -> None:
    pairs = tokenizer_pairs(SMALL_MERGES)
    assert "tokenizer.ggml.merges" in _refused(write(tmp_path, [p for p in pairs if p[0] != "tokenizer.ggml.merges"]))
    assert "no tokenizer" in _refused(write(tmp_path, [p for p in pairs if p[0] != "tokenizer.ggml.model"]))
    tokens = next(v for k, _, v in pairs if k == "tokenizer.ggml.tokens")[1]
    repeated = _replace(pairs, "tokenizer.ggml.tokens", ARRAY, (STRING, [*tokens[:-1], tokens[0]]))
    assert "also token 0" in _refused(write(tmp_path, repeated))
    broken = _replace(pairs, "tokenizer.ggml.tokens", ARRAY, (STRING, [*tokens[:-1], b"\xff\xfe"]))
    assert "not UTF-8" in _refused(write(tmp_path, broken))


@pytest.mark.parametrize("model", ["bert", "t5", "rwkv", "plamo2", "hybriddna", "whitespace", "none", "mine"])
def test_other_models_refused(tmp_path: Path, model: str) -> None:
    message = _refused(write(tmp_path, tokenizer_pairs(SMALL_MERGES, model=model)))
    assert repr(model) in message


@pytest.mark.parametrize(("pre", "expected"), [("no-such-pre", "'no-such-pre' is unknown"), ("kimi-k2", "kimi-k2"),
                                               ("whitespace", "whitespace")])
def test_pre_tokenizers_refused(tmp_path: Path, pre: str, expected: str) -> None:
    assert expected in _refused(write(tmp_path, tokenizer_pairs(SMALL_MERGES, pre=pre)))


def test_cli_refusal_is_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, tokenizer_pairs(SMALL_MERGES, model="bert"))
    result = subprocess.run([sys.executable, "-m", "bpeproof.cli", "encode", "hello", "--vocab", str(path)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "'bert'" in result.stderr and "Traceback" not in result.stderr


def test_order_dependent_files_refused(tmp_path: Path) -> None:
    """Where llama.cpp's result depends on an unspecified order, the file is refused, naming the tokens."""
    overlapping = tokenizer_pairs(SMALL_MERGES, specials={"<ab": 4, "ab>": 4})
    assert "'<ab'" in _refused(write(tmp_path, overlapping)) or "'ab>'" in _refused(write(tmp_path, overlapping))
    two_prefixes = tokenizer_pairs(SMALL_MERGES, specials={"<fim-prefix>": 1, "<fim_prefix>": 1})
    assert "fim_pre_token_id" in _refused(write(tmp_path, two_prefixes))
    chosen = two_prefixes + [("tokenizer.ggml.fim_pre_token_id", U32, 256 + len(SMALL_MERGES))]
    load_tokenizer(str(write(tmp_path, chosen)))


# ---------------------------------------------------------------------------------------------------------
# llama.cpp's hand-written splitters (src/unicode.cpp), ported line by line
# ---------------------------------------------------------------------------------------------------------


class _Flags:
    def __init__(self, code: int | None) -> None:
        if code is None:
            self.number = self.letter = self.whitespace = self.mark = False
            self.defined = False
            return
        kind = llama_cpp_pre.code_point_class(code) if code >= 128 else None
        char = chr(code)
        self.whitespace = kind == "w" or (code < 128 and char in "\t\n\v\f\r ")
        self.letter = kind == "2" or (code < 128 and char.isalpha())
        self.number = kind == "1" or (code < 128 and char.isdigit())
        self.mark = kind == "4"
        self.defined = True  # as_uint() is zero only out of range


def _tolower(code: int) -> int:
    return code + 32 if 65 <= code <= 90 else code


def port_custom(text: str, variant: str) -> list[int]:
    """``unicode_regex_split_custom_{gpt2,llama3,qwen2,qwen35}`` on one fragment: the piece lengths."""
    cpts = [ord(char) for char in text]
    end = len(cpts)
    out = OUT = -1
    pieces: list[int] = []
    prev_end = 0

    def get_cpt(pos: int) -> int:
        return cpts[pos] if 0 <= pos < end else OUT

    def get_flags(pos: int) -> _Flags:
        return _Flags(cpts[pos] if 0 <= pos < end else None)

    def add_token(stop: int) -> int:
        nonlocal prev_end
        size = stop - prev_end
        if size > 0:
            pieces.append(size)
        prev_end = stop
        return size

    lower = _tolower if variant != "gpt2" else (lambda code: code)
    marks = variant == "qwen35"
    pos = 0
    while pos < end:
        cpt = get_cpt(pos)
        flags = get_flags(pos)
        if cpt == ord("'") and pos + 1 < end:
            nxt = lower(get_cpt(pos + 1))
            if nxt in map(ord, "stmd"):
                pos += add_token(pos + 2)
                continue
            if pos + 2 < end:
                nxt2 = lower(get_cpt(pos + 2))
                if (nxt, nxt2) in ((ord("r"), ord("e")), (ord("v"), ord("e")), (ord("l"), ord("l"))):
                    pos += add_token(pos + 3)
                    continue
        if variant == "gpt2":
            flags2 = get_flags(pos + 1) if cpt == ord(" ") else flags
            if flags2.letter:
                pos += cpt == ord(" ")
                while flags2.letter:
                    pos += 1
                    flags2 = get_flags(pos)
                add_token(pos)
                continue
            if flags2.number:
                pos += cpt == ord(" ")
                while flags2.number:
                    pos += 1
                    flags2 = get_flags(pos)
                add_token(pos)
                continue
            if not (flags2.whitespace or flags2.letter or flags2.number) and flags2.defined:
                pos += cpt == ord(" ")
                while not (flags2.whitespace or flags2.letter or flags2.number) and flags2.defined:
                    pos += 1
                    flags2 = get_flags(pos)
                add_token(pos)
                continue
            count = 0
            while get_flags(pos + count).whitespace:
                count += 1
            if count > 1 and get_cpt(pos + count) != out:
                pos += count - 1
                add_token(pos)
                continue
            if count > 0:
                pos += count
                add_token(pos)
                continue
            pos += 1
            add_token(pos)
            continue
        if not (cpt in (13, 10) or flags.number):
            following = get_flags(pos + 1)
            if flags.letter or following.letter or (marks and (flags.mark or following.mark)):
                pos += 1
                while get_flags(pos).letter or (marks and get_flags(pos).mark):
                    pos += 1
                add_token(pos)
                continue
        if flags.number:
            if variant == "llama3":
                start = pos
                while get_flags(pos).number:
                    pos += 1
                    if pos - start >= 3:
                        add_token(pos)
                        start = pos
                add_token(pos)
            else:
                pos += 1
                add_token(pos)
            continue
        flags2 = get_flags(pos + 1) if cpt == ord(" ") else flags

        def other(f: _Flags) -> bool:
            return not (f.whitespace or f.letter or f.number or (marks and f.mark))

        if other(flags2) and flags.defined:
            pos += cpt == ord(" ")
            while other(flags2) and flags2.defined:
                pos += 1
                flags2 = get_flags(pos)
            cpt2 = get_cpt(pos)
            while cpt2 in (13, 10):
                pos += 1
                cpt2 = get_cpt(pos)
            add_token(pos)
            continue
        count = 0
        last_newline = 0
        while get_flags(pos + count).whitespace:
            if get_cpt(pos + count) in (13, 10):
                last_newline = pos + count + 1
            count += 1
        if last_newline > 0:
            pos = last_newline
            add_token(pos)
            continue
        if count > 1 and get_cpt(pos + count) != out:
            pos += count - 1
            add_token(pos)
            continue
        if count > 0:
            pos += count
            add_token(pos)
            continue
        pos += 1
        add_token(pos)
    return pieces


CUSTOM = {"gpt2": llama_cpp_pre.GPT2_EXPRESSION, "llama3": llama_cpp_pre.LLAMA3_EXPRESSION,
          "qwen2": llama_cpp_pre.QWEN2_EXPRESSION, "qwen35": llama_cpp_pre.QWEN35_EXPRESSION}

#: Characters that stress the splitters: the literals they test, every class of code point, and the edges of
#: llama.cpp's table (0x1C..0x1F are controls there, not spaces; U+0378 is unassigned; U+0301 a mark; U+00B2
#: a number; U+0085, U+00A0, U+3000 White_Space; a surrogate and U+10FFFF).
ALPHABET = list("'sStTmMdDrReEvVlLxX09 \t\n\r\v\f.,!$+_") + [
    "\x00", "\x1c", "\x1f", "\x7f", "\x85", "\xa0", "é", "É", "ß", "²", "٣", "\u0301", "\u0378", "\u3000",
    "日", "ー", "😀", "\u200b", "\ufffd", "\U0010ffff", "\ud800", "\u2028", "Ⅻ", "ǅ"]
TEXTS = st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, variant=st.sampled_from(sorted(CUSTOM)))
def test_custom_splitters_match_llama_cpp_code(text: str, variant: str) -> None:
    step = llama_cpp_pre.LlamaCppStep(CUSTOM[variant])
    spans = step.cut(collapse(text), 0, len(text))
    assert [end - start for start, end in spans] == port_custom(text, variant)


def port_afmoe(text: str) -> list[int]:
    """``unicode_regex_split_custom_afmoe`` on one fragment."""
    flags = [_Flags(ord(char)) for char in text]
    pieces: list[int] = []
    prev = 0
    pos = 0
    end = len(text)
    while pos < end:
        if flags[pos].number:
            start = pos
            count = 0
            while pos < end and flags[pos].number:
                count += 1
                pos += 1
            current = start
            if count % 3:
                pieces.append(current + count % 3 - prev)
                prev = current = current + count % 3
            while current < start + count:
                pieces.append(current + 3 - prev)
                prev = current = current + 3
            continue
        pos += 1
    if prev < end:
        pieces.append(end - prev)
    return [piece for piece in pieces if piece > 0]


@settings(max_examples=200, deadline=None)
@given(text=TEXTS)
def test_digit_grouping_matches_llama_cpp_code(text: str) -> None:
    step = llama_cpp_pre.LlamaCppStep("\\p{AFMoE_digits}")
    assert [end - start for start, end in step.cut(collapse(text), 0, len(text))] == port_afmoe(text)


def test_collapsed_categories_lose_case_above_ascii() -> None:
    """llama.cpp collapses every letter above 127 into one byte, so \\p{Lu} and \\p{Ll} both take it."""
    tekken = llama_cpp_pre.LlamaCppPreTokenizer("tekken")
    assert tekken.split("HelloWorld") == ["Hello", "World"]
    assert tekken.split("ÉcoleÉté") == ["ÉcoleÉté"]


def test_empty_matches_as_std_regex_iterator() -> None:
    """superbpe's second expression only matches empty strings: each cuts the digits, three from the right."""
    superbpe = llama_cpp_pre.LlamaCppPreTokenizer("superbpe")
    text = "x1234567 12"
    assert "".join(superbpe.split(text)) == text
    assert [piece for piece in superbpe.split(text) if piece.isdigit()] == ["1", "234", "567", "12"]


# ---------------------------------------------------------------------------------------------------------
# The special-token partition (tokenizer_st_partition), ported
# ---------------------------------------------------------------------------------------------------------


def port_partition(text: bytes, tokens: list[tuple[bytes, int, bool, bool]]) -> list[bytes | int]:
    """``llama_vocab::impl::tokenizer_st_partition`` over a list standing for its forward_list of fragments:
    (offset, length) of the raw text, or a token id; ``it`` is an index, shifted back when an element before
    it is erased.  ``tokens`` in the cache's order."""
    buffer: list[tuple[int, int] | int] = [(0, len(text))] if text else []
    space = b" \t\n\v\f\r"
    for token_text, token, lstrip, rstrip in tokens:
        it = 0
        while it < len(buffer):
            fragment = buffer[it]
            if isinstance(fragment, tuple):
                base, length = fragment
                while True:
                    match = text.find(token_text, base, base + length)
                    if match < 0:
                        break
                    source = it
                    if match > base:
                        left = match - base
                        while lstrip and left > 0 and text[base + left - 1] in space:
                            left -= 1
                        if left > 0:
                            buffer.insert(it + 1, (base, left))
                            it += 1
                    buffer.insert(it + 1, token)
                    it += 1
                    if match + len(token_text) < base + length:
                        right = match + len(token_text)
                        right_length = length - ((match - base) + len(token_text))
                        while rstrip and right_length > 0 and text[right] in space:
                            right += 1
                            right_length -= 1
                        if right_length > 0:
                            buffer.insert(it + 1, (right, right_length))
                            it += 1
                        del buffer[source]
                        it -= 1
                        base, length = right, right_length
                    else:
                        del buffer[source]
                        it -= 1
                        break
            it += 1
    return [text[f[0] : f[0] + f[1]] if isinstance(f, tuple) else f for f in buffer]


SPECIAL_TEXTS = ["<a>", "<b>", "ab", "a", "  ", " ", "<|x|>", "x|", "é"]


@settings(max_examples=300, deadline=None)
@given(chosen=st.lists(st.tuples(st.sampled_from(SPECIAL_TEXTS), st.booleans(), st.booleans()),
                       unique_by=lambda t: t[0], max_size=5),
       text=st.lists(st.sampled_from(["<a>", "<b>", "a", "b", " ", "\t", "x", "|", "<", ">", "é", "<|x|>"]),
                     max_size=16).map("".join))
def test_partition_matches_llama_cpp_code(chosen: list[tuple[str, bool, bool]], text: str) -> None:
    tokens = [(name, 1000 + i, lstrip, rstrip) for i, (name, lstrip, rstrip) in enumerate(chosen)]
    partition = SpecialTokenPartition(tokens)
    if partition.ambiguity() is not None:
        return
    expected = port_partition(text.encode(), [(t.encode(), i, lstrip, rstrip) for t, i, lstrip, rstrip in
                                              partition.tokens])
    got = partition.cut(text)
    assert [f.encode() if isinstance(f, str) else f for f in got] == expected


@settings(max_examples=20, deadline=None)
@given(parts=st.lists(st.sampled_from([" ", "  ", "\t", "\t\t", "\n", "x", "ab", "    ", "<|endoftext|>"]),
                      min_size=1200, max_size=1600))
def test_partition_of_long_texts_with_many_tokens(parts: list[str]) -> None:
    """mpt's 178 user-defined whitespace runs on texts long enough for the one-pass search of the tokens."""
    partition = _gguf_pipeline(_load(FIXTURES / "ggml-vocab-mpt.gguf.gz"))._partition(None)
    text = "".join(parts)
    expected = port_partition(text.encode(), [(t.encode(), i, ls, rs) for t, i, ls, rs in partition.tokens])
    assert [f.encode() if isinstance(f, str) else f for f in partition.cut(text)] == expected


# ---------------------------------------------------------------------------------------------------------
# The merge loop (llm_tokenizer_bpe_session::tokenize), ported
# ---------------------------------------------------------------------------------------------------------


def port_bpe(word: bytes, ranks: dict[tuple[bytes, bytes], int], lookup: dict[bytes, int],
             ignore_merges: bool = False) -> list[int]:
    """One word through llama.cpp's symbols and priority queue of bigrams (rank, then left index)."""
    if ignore_merges and word in lookup:
        return [lookup[word]]
    symbols = [[i, i + 1] for i in range(len(word))]  # [start, end) of each symbol; empty once merged away
    nxt = list(range(1, len(word))) + [-1]
    prv = list(range(-1, len(word) - 1))
    queue: list[tuple[int, int, int, bytes]] = []

    def text(i: int) -> bytes:
        return word[symbols[i][0] : symbols[i][1]]

    def add(left: int, right: int) -> None:
        if left == -1 or right == -1:
            return
        rank = ranks.get((text(left), text(right)))
        if rank is not None:
            heapq.heappush(queue, (rank, left, right, text(left) + text(right)))

    for i in range(1, len(word)):
        add(i - 1, i)
    while queue:
        _, left, right, joined = heapq.heappop(queue)
        if symbols[left][1] == symbols[left][0] or symbols[right][1] == symbols[right][0]:
            continue
        if text(left) + text(right) != joined:
            continue
        symbols[left][1] = symbols[right][1]
        symbols[right][1] = symbols[right][0]
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prv[nxt[right]] = left
        add(prv[left], left)
        add(left, nxt[left])
    out: list[int] = []
    for i in range(len(word)):
        piece = text(i)
        if not piece:
            continue
        if piece in lookup:
            out.append(lookup[piece])
        else:
            out += [lookup[bytes([b])] for b in piece if bytes([b]) in lookup]
    return out


WORD_BYTES = st.lists(st.sampled_from(list(b"abcd\xc3\xa9")), max_size=12).map(bytes)


@settings(max_examples=200, deadline=None)
@given(pairs=st.lists(st.tuples(st.sampled_from([b"a", b"b", b"c", b"ab", b"bc", b"abc", b"cd", b"d"]),
                                st.sampled_from([b"a", b"b", b"c", b"d", b"bc", b"cd", b"ab"])), max_size=10),
       tokens=st.sets(st.sampled_from([b"ab", b"bc", b"abc", b"cd", b"abcd", b"bcd", b"aa"])),
       missing=st.sets(st.sampled_from(list(b"cd\xa9"))), words=st.lists(WORD_BYTES, max_size=8),
       ignore=st.booleans())
def test_general_merge_loop_matches_llama_cpp_code(pairs: list[tuple[bytes, bytes]], tokens: set[bytes],
                                                   missing: set[int], words: list[bytes], ignore: bool) -> None:
    """Any merge list, the joined strings tokens or not, some bytes without a token."""
    vocabulary = [bytes([b]) for b in range(256) if b not in missing] + sorted(tokens)
    lookup = {data: token for token, data in enumerate(vocabulary)}
    model = LlamaCppModel(lookup, pairs, {token: data for data, token in lookup.items()}, ignore_merges=ignore)
    ranks: dict[tuple[bytes, bytes], int] = {}
    for rank, pair in enumerate(pairs):
        ranks.setdefault(pair, rank)
    for word in words:
        assert list(model.encode_word(word)) == port_bpe(word, ranks, lookup, ignore)


def _pair_model_words() -> Iterator[bytes]:
    yield from (b"hello", b" world", b"\xe6\x97\xa5\xe6\x9c\xac", b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")


@functools.cache
def _falcon() -> tuple[Tokenizer, dict[bytes, int], dict[tuple[bytes, bytes], int]]:
    tokenizer = _load(FIXTURES / "ggml-vocab-falcon.gguf.gz")  # bytes without a token: the barrier units
    tables = gguf_vocab.byte_level_tables(_gguf_pipeline(tokenizer).gguf)
    ranks = {pair: rank for rank, pair in enumerate(gguf_vocab.merge_bytes(_gguf_pipeline(tokenizer).gguf))}
    return tokenizer, tables.lookup, ranks


@settings(max_examples=60, deadline=None)
@given(words=st.lists(st.binary(max_size=60), max_size=10))
def test_pair_table_matches_llama_cpp_code_on_a_real_vocabulary(words: list[bytes]) -> None:
    tokenizer, lookup, ranks = _falcon()
    model = tokenizer.model
    for word in [*words, *_pair_model_words()]:
        expected = port_bpe(word, ranks, lookup)
        assert list(model.encode_word(word)) == expected
        fast = model.c_merger()
        if fast is not None:
            assert [t for t in fast.encode(word) if t != LlamaCppModel.BARRIER] == expected


def test_invalid_utf8_is_read_as_llama_cpp_reads_it() -> None:
    tokenizer = _load(FIXTURES / "ggml-vocab-gpt-2.gguf.gz")
    assert tokenizer.encode_bytes(b"ab\xffc\xe6\x97") == tokenizer.encode("ab\ufffdc\ufffd\ufffd")
    assert tokenizer.encode_bytes("héllo wörld".encode()) == tokenizer.encode("héllo wörld")
    assert tokenizer.decode_bytes(tokenizer.encode_bytes(b"\xc0\x80x")) == b"\x00x"  # overlong: U+0000


def test_special_tokens_follow_parse_special() -> None:
    """mpt's whitespace runs are user-defined (always cut); <|endoftext|> is control (cut only when parsed)."""
    tokenizer = _load(FIXTURES / "ggml-vocab-mpt.gguf.gz")
    eot = tokenizer.special_tokens["<|endoftext|>"]
    assert eot not in tokenizer.encode("a<|endoftext|>b")
    assert tokenizer.encode("a<|endoftext|>b", allowed_special="all").count(eot) == 1
    assert tokenizer.encode("a<|endoftext|>b", allowed_special=["<|endoftext|>"]).count(eot) == 1
    run = tokenizer.special_tokens["    "]
    assert run in tokenizer.encode("x    y")


def test_load_reads_only_the_metadata(tmp_path: Path) -> None:
    """A model file's tensors after the metadata are never read: a huge tail costs nothing."""
    data = gguf_bytes(tokenizer_pairs(SMALL_MERGES))
    path = tmp_path / "model.gguf"
    with path.open("wb") as handle:
        handle.write(data)
        handle.seek(1 << 34)  # a 16 GiB sparse file
        handle.write(b"\0")
    assert load_tokenizer(str(path)).encode("hello") == load_tokenizer(str(write(tmp_path, tokenizer_pairs(
        SMALL_MERGES)))).encode("hello")
