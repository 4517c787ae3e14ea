"""The compiled-vocabulary cache: the same tokenizer from an entry as from the file, on every format; a damaged,
truncated or foreign entry ignored and rebuilt; two writers at once; ``--no-cache``, ``BPEPROOF_NO_CACHE`` and
``cache=False``; a cache directory that cannot be written; and the packing of values as typed arrays.

Every test points the cache at a directory of its own (the suite's conftest already keeps the user's cache out
of every run).
"""

from __future__ import annotations

import math
import os
import pickle
import re
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import regex

from bpeproof.cli import main
from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]
from bpeproof.impl.encoder import HAVE_C_LOOP
from bpeproof.impl.io.packed_state import UnpackableError, pack, unpack
from bpeproof.impl.io.vocab_cache import DIRECTORY_VARIABLE, MAGIC, OFF_VARIABLE, CacheEntry
from bpeproof.impl.parallel.jobs import tokenizer_parts
from bpeproof.impl.pipelines import compiled_vocab
from bpeproof.impl.pipelines.registry import READERS, record_classes
from bpeproof.impl.tokenizer import Tokenizer, load_tokenizer
from bpeproof.proofs_tests.fixtures.vocab_files import FORMATS, write_vocab
from bpeproof.spec.types import Rule

ROOT = Path(__file__).resolve().parents[3]
LLAMA_CPP = ROOT / "proofs_tests" / "fixtures" / "llama_cpp"
TEXTS = ["Hello, wörld! 12345 テスト  def f(x): return x", "  many   spaces\n\n\ttabs <|end|> more <|endoftext|>",
         "the lower newest widest slowest", ""]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache directory of the test's own."""
    directory = tmp_path / "cache"
    monkeypatch.setenv(DIRECTORY_VARIABLE, str(directory))
    monkeypatch.delenv(OFF_VARIABLE, raising=False)
    return directory


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.bpv")) if directory.is_dir() else []


def _behaviour(tokenizer: Tokenizer) -> tuple[object, ...]:
    """What a user sees of a tokenizer: its ids (special tokens parsed or not), its decoding and its tables."""
    encoded = [tokenizer.encode(text) for text in TEXTS]
    specials = [tokenizer.encode(text, allowed_special="all") for text in TEXTS]
    decoded = [tokenizer.decode(ids) for ids in encoded]
    return (type(tokenizer), tokenizer.semantics, encoded, specials, decoded, tokenizer.vocab_size,
            tokenizer.special_tokens, tokenizer.pattern, repr(tokenizer))


def _vocabularies(tmp_path: Path) -> list[Path]:
    files = [write_vocab(kind, tmp_path / f"{kind}-{gz}", gz=gz) for kind in FORMATS for gz in (False, True)]
    return files + [LLAMA_CPP / f"ggml-vocab-{name}.gguf.gz" for name in ("gpt-2", "llama-spm", "gemma-4", "phi-3")]


def test_the_cache_gives_the_tokenizer_of_the_file_on_every_format(tmp_path: Path, cache: Path) -> None:
    """Every format the tests can write, plain and gzip, and llama.cpp's GGUF files: the tokenizer read from the
    file, the one loaded while its entry is written and the one made from the entry encode and decode alike."""
    for path in _vocabularies(tmp_path):
        expected = _behaviour(load_tokenizer(str(path), cache=False))
        assert not _entries(cache), path
        assert _behaviour(load_tokenizer(str(path))) == expected, path
        entry = compiled_vocab.cache_entry(str(path), None, False)
        assert entry is not None and entry.read(record_classes) is not None, path
        assert _behaviour(load_tokenizer(str(path))) == expected, path
        for stale in _entries(cache):
            stale.unlink()


def test_a_load_reads_the_entry(tmp_path: Path, cache: Path) -> None:
    """An entry is what a load returns: an entry written for one file under another file's key gives the first
    file's ids (what the cache holds is used, not recomputed)."""
    small = write_vocab("tiktoken", tmp_path / "a")
    other = write_vocab("gpt2", tmp_path / "b")
    entry = compiled_vocab.cache_entry(str(small), None, False)
    assert entry is not None
    record = compiled_vocab.parts_record(load_tokenizer(str(other), cache=False).parts)
    assert entry.write(record, "gpt2", record_classes("gpt2"))
    assert load_tokenizer(str(small)).encode(TEXTS[0]) == load_tokenizer(str(other), cache=False).encode(TEXTS[0])


def test_the_key_follows_the_content_the_path_and_the_options(tmp_path: Path, cache: Path) -> None:
    small = write_vocab("tiktoken", tmp_path / "a")
    key = compiled_vocab.cache_entry(str(small), None, False)
    assert key is not None
    assert compiled_vocab.cache_entry(str(small), "r50k", False).key != key.key  # type: ignore[union-attr]
    assert compiled_vocab.cache_entry(str(small), None, True).key != key.key  # type: ignore[union-attr]
    python_loops = compiled_vocab.cache_entry(str(small), None, False, c_loop=False)  # models built without C
    assert python_loops is not None and python_loops.key != key.key
    copy = tmp_path / "copy" / small.name
    copy.parent.mkdir()
    copy.write_bytes(small.read_bytes())
    assert compiled_vocab.cache_entry(str(copy), None, False).key != key.key  # type: ignore[union-attr]
    text = _every_token(load_tokenizer(str(small)))
    first = load_tokenizer(str(small)).encode(text)
    lines = small.read_bytes().splitlines(keepends=True)
    small.write_bytes(b"".join(lines[:-10]))  # the last ten tokens gone: other ids, never the old entry's
    assert compiled_vocab.cache_entry(str(small), None, False).key != key.key  # type: ignore[union-attr]
    assert load_tokenizer(str(small)).encode(text) == load_tokenizer(str(small), cache=False).encode(text) != first


def test_a_large_gguf_file_is_keyed_by_its_key_value_pairs(tmp_path: Path, cache: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A GGUF file above the size read whole (a model with its tensors) is keyed by its header and key-value
    pairs: bytes after them (tensors) do not change the key, a changed token does."""
    monkeypatch.setattr(compiled_vocab, "GGUF_WHOLE_LIMIT", 0)
    path = write_vocab("gguf", tmp_path / "v")
    expected = _behaviour(load_tokenizer(str(path), cache=False))
    assert _behaviour(load_tokenizer(str(path))) == expected
    key = compiled_vocab.cache_entry(str(path), None, False)
    assert key is not None and key.read(record_classes) is not None
    path.write_bytes(path.read_bytes() + b"\0" * 64)  # as the tensors after the pairs
    assert compiled_vocab.cache_entry(str(path), None, False).key == key.key  # type: ignore[union-attr]
    assert _behaviour(load_tokenizer(str(path))) == expected
    data = bytearray(path.read_bytes())
    data[(len(data) - 64) // 2] ^= 1  # a byte among the pairs
    path.write_bytes(bytes(data))
    assert compiled_vocab.cache_entry(str(path), None, False).key != key.key  # type: ignore[union-attr]


def test_gpt2s_other_file_is_part_of_the_entry(tmp_path: Path, cache: Path) -> None:
    """GPT-2's encoder.json is read with the vocab.bpe beside it: a changed vocab.bpe is not the entry's."""
    encoder = write_vocab("gpt2", tmp_path)
    text = _every_token(load_tokenizer(str(encoder)))
    before = load_tokenizer(str(encoder)).encode(text)
    merges = tmp_path / "vocab.bpe"
    lines = merges.read_text(encoding="utf-8").splitlines(keepends=True)
    merges.write_text("".join(lines[:-20]), encoding="utf-8")
    after = load_tokenizer(str(encoder)).encode(text)
    assert after == load_tokenizer(str(encoder), cache=False).encode(text) != before


def _every_token(tokenizer: Tokenizer) -> str:
    """A text holding every token of more than one byte, each a word of its own."""
    found = (tokenizer.decode([token]) for token in range(256, tokenizer.vocab_size))
    return " ".join(text for text in found if len(text.encode("utf-8")) > 1)


def _rewrite_header(path: Path, change: Callable[[str], str]) -> None:
    """Change an entry's JSON header and write it back well-formed: its length and its CRC made to fit
    (``bpeproof.impl.io.vocab_cache``: magic, header length, header, sections, CRC-32)."""
    data = path.read_bytes()
    size = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
    header = change(data[len(MAGIC) + 8 : len(MAGIC) + 8 + size].decode()).encode()
    body = MAGIC + len(header).to_bytes(8, "little") + header + data[len(MAGIC) + 8 + size : -4]
    path.write_bytes(body + zlib.crc32(body).to_bytes(4, "little"))


def _damaged(data: bytes, how: str) -> bytes:
    if how == "truncated":
        return data[: len(data) // 2]
    if how == "empty":
        return b""
    if how == "flipped":
        middle = len(data) // 2
        return data[:middle] + bytes([data[middle] ^ 0x40]) + data[middle + 1 :]
    if how == "garbage":
        return b"not an entry at all\n" * 10
    raise ValueError(how)


@pytest.mark.parametrize("how", ["truncated", "empty", "flipped", "garbage", "foreign", "unpackable", "no reader"])
def test_a_bad_entry_is_ignored_removed_and_rebuilt(how: str, tmp_path: Path, cache: Path) -> None:
    """A truncated, empty, damaged or foreign entry (another key's), or one whose description names a class that
    may not be made or whose kind has no reader, gives the file's own tokenizer and is replaced by a good entry,
    never an error."""
    path = write_vocab("tokenizer.json", tmp_path / "v")
    expected = _behaviour(load_tokenizer(str(path), cache=False))
    load_tokenizer(str(path))
    entry = compiled_vocab.cache_entry(str(path), None, False)
    assert entry is not None and entry.path.is_file()
    if how == "foreign":
        other = write_vocab("tiktoken", tmp_path / "w")
        load_tokenizer(str(other))
        foreign = compiled_vocab.cache_entry(str(other), None, False)
        assert foreign is not None
        entry.path.write_bytes(foreign.path.read_bytes())
    elif how == "unpackable":
        # A well-formed entry (its CRC right) asking for a class outside the allowed ones: nothing is made.
        classes = record_classes("bpeproof")
        assert entry.write({"kind": "parts", "model": Rule(1, 2, 3)}, "bpeproof", classes)
        rule = f'"t":"tuple-of","c":{classes.index(Rule)}'
        _rewrite_header(entry.path, lambda header: header.replace(rule, f'"t":"tuple-of","c":{len(classes)}'))
    elif how == "no reader":
        assert entry.write({"kind": "parts", "model": Rule(1, 2, 3)}, "bpeproof", record_classes("bpeproof"))
        _rewrite_header(entry.path, lambda header: header.replace('"kind":"bpeproof"', '"kind":"subprocess"'))
    else:
        entry.path.write_bytes(_damaged(entry.path.read_bytes(), how))
    assert entry.read(record_classes) is None  # refused, and removed
    assert not entry.path.exists()
    if how != "foreign":
        entry.path.write_bytes(_damaged(b"x" * 100, "garbage"))
    assert _behaviour(load_tokenizer(str(path))) == expected
    assert entry.read(record_classes) is not None  # rebuilt
    assert _behaviour(load_tokenizer(str(path))) == expected


def test_an_entry_that_makes_no_tokenizer_is_rebuilt(tmp_path: Path, cache: Path) -> None:
    """An entry that unpacks but whose record makes no tokenizer (written by other code) is removed and the file
    read again."""
    path = write_vocab("tiktoken", tmp_path)
    entry = compiled_vocab.cache_entry(str(path), None, False)
    assert entry is not None and entry.write({"kind": "nonsense"}, "tiktoken", record_classes("tiktoken"))
    assert load_tokenizer(str(path)).encode(TEXTS[0]) == load_tokenizer(str(path), cache=False).encode(TEXTS[0])
    assert entry.read(record_classes)["kind"] == "parts"


WRITER = """
import sys
from bpeproof.impl.tokenizer import load_tokenizer
start = sys.argv[2]
while not __import__("os").path.exists(start):
    pass
print(load_tokenizer(sys.argv[1]).encode("the lower newest widest slowest"))
"""


def test_two_processes_writing_one_entry_leave_a_valid_one(tmp_path: Path, cache: Path) -> None:
    """Two processes that load the same file at the same moment with no entry both write it (each to a temporary
    file, renamed over the entry): what is left is a whole entry, and no temporary file."""
    path = write_vocab("gguf", tmp_path / "v")
    expected = str(load_tokenizer(str(path), cache=False).encode("the lower newest widest slowest"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    for round_ in range(3):
        for stale in _entries(cache):
            stale.unlink()
        start = tmp_path / f"start-{round_}"
        writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(start)], stdout=subprocess.PIPE,
                                    env=env, text=True) for _ in range(2)]
        start.touch()
        outputs = [writer.communicate(timeout=120)[0].strip() for writer in writers]
        assert outputs == [expected, expected]
        entry = compiled_vocab.cache_entry(str(path), None, False)
        assert entry is not None and entry.read(record_classes) is not None
        assert sorted(file.name for file in cache.iterdir()) == [entry.path.name]  # no temporary file left
    assert str(load_tokenizer(str(path)).encode("the lower newest widest slowest")) == expected


def test_no_cache_writes_and_reads_no_entry(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = write_vocab("tiktoken", tmp_path / "v")
    load_tokenizer(str(path), cache=False)
    assert not _entries(cache)
    monkeypatch.setenv(OFF_VARIABLE, "1")
    load_tokenizer(str(path))
    assert not _entries(cache)
    monkeypatch.setenv(OFF_VARIABLE, "0")  # "0" (or "") does not turn it off
    load_tokenizer(str(path))
    assert len(_entries(cache)) == 1
    _entries(cache)[0].unlink()
    monkeypatch.delenv(OFF_VARIABLE)
    assert main(["encode", TEXTS[2], "--vocab", str(path), "--no-cache"]) == 0
    uncached = capsys.readouterr().out
    assert not _entries(cache) and OFF_VARIABLE not in os.environ  # the command's setting ends with it
    assert main(["encode", TEXTS[2], "--vocab", str(path)]) == 0
    assert capsys.readouterr().out == uncached
    assert len(_entries(cache)) == 1
    for command in ("decode", "explain", "trace", "check", "audit"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--no-cache" in capsys.readouterr().out, command


def test_an_unwritable_cache_directory_only_means_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache directory that cannot be made (below a file) or that is a file: loading works, nothing is raised."""
    path = write_vocab("gguf", tmp_path / "v")
    expected = _behaviour(load_tokenizer(str(path), cache=False))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    for directory in (blocker / "cache", blocker):
        monkeypatch.setenv(DIRECTORY_VARIABLE, str(directory))
        assert _behaviour(load_tokenizer(str(path))) == expected
        assert _behaviour(load_tokenizer(str(path))) == expected
    assert blocker.read_text() == "not a directory"


def test_a_cached_model_pickles_and_runs_its_python_loop(tmp_path: Path, cache: Path) -> None:
    """The tables a cached model unpacks on first use are there for its Python loop, its steps and pickling (the
    worker processes of encode_batch are sent the model)."""
    for kind in ("tiktoken", "tokenizer.json", "gpt2", "gguf"):
        path = write_vocab(kind, tmp_path / kind)
        fresh = load_tokenizer(str(path), cache=False)
        load_tokenizer(str(path))
        cached = load_tokenizer(str(path))
        words = [b"the", b"lowest", b"\xe3\x83\x86st", b"newer"]
        assert [cached.model.encode_word(word) for word in words] == [fresh.model.encode_word(word) for word in words]
        if kind != "tokenizer.json":  # its text pipeline holds functions: encode_batch sends its file's name
            again = pickle.loads(tokenizer_parts(load_tokenizer(str(path))))[1].model  # as encode_batch sends it
            assert [again.encode_word(word) for word in words] == [fresh.model.encode_word(word) for word in words]


def test_the_tests_keep_the_users_cache_untouched() -> None:
    """The suite's processes write their entries into a directory of the run (proofs_tests/conftest.py)."""
    directory = os.environ.get(DIRECTORY_VARIABLE, "")
    assert "bpeproof-vocab-cache-" in directory


# -- packing ---------------------------------------------------------------------------------------------------

CLASSES = (Rule,)


def test_values_come_back_equal() -> None:
    values = {
        "ints": list(range(-5, 300)),
        "big": [1, 2**70, -(2**65)],
        "maybe": [1, None, 3],
        "floats": [0.5, -0.0, float("inf"), 1e-300],
        "bytes": [b"", b"\n", b"\x00", b"ab\x00\xff\xfe\x01cd", bytes(range(256))],
        "plain bytes": [b"ab", b"cd"],
        "strings": ["", "\n", "\x00", "\udc80x", "テスト", "a\x00\xff\xfe\x01b"],
        "some strings": ["a", None, "b"],
        "some bytes": [b"a", None, b"\x00"],
        "rows": [(1, 2, 3), (4, 5, 6)],
        "mixed rows": [(b"a", "b", 1), (b"c", "d", 2)],
        "rules": [Rule(1, 2, 256), Rule(256, 3, 257)],
        "one rule": Rule(7, 8, 9),
        "nested": {"a": [{"b": (1, "x")}], 3: frozenset({1, 2}), b"k": {4, 5}},
        "pattern": re.compile(rb"[a-z]+", re.IGNORECASE),
        "text pattern": re.compile("[a-z]+"),
        "named": regex.compile(r"\L<words>", words=["a", "bc"]),
        "empty": ([], (), {}, set(), frozenset(), ""),
        "scalars": (None, True, False, 0, -1, 2**100, "x", b"y"),
    }
    description, sections = pack(values, CLASSES)
    again = unpack(description, sections, CLASSES)
    for key, value in values.items():
        if key in ("pattern", "text pattern", "named"):
            assert (again[key].pattern, again[key].flags) == (value.pattern, value.flags), key
            continue
        assert again[key] == value and type(again[key]) is type(value), key
    assert again["named"].findall("bc a x") == ["bc", "a"]
    for value in ([float("nan")], float("nan")):
        nan, parts = pack(value, CLASSES)
        again = unpack(nan, parts, CLASSES)
        assert math.isnan(again[0] if isinstance(again, list) else again)


def test_only_the_allowed_classes_are_packed_or_made() -> None:
    with pytest.raises(UnpackableError):
        pack([object()], CLASSES)
    with pytest.raises(UnpackableError):
        pack(Rule(1, 2, 3), ())
    description, sections = pack(Rule(1, 2, 3), CLASSES)
    with pytest.raises(UnpackableError):
        unpack(description, sections, ())
    for forged in ({"t": "object", "c": "subprocess:Popen", "a": {}}, {"t": "object", "c": 1, "a": {}},
                   {"t": "object", "c": -1, "a": {}}, {"t": "tuple-of", "c": True, "e": {"k": "count", "n": 3}}):
        with pytest.raises(UnpackableError):
            unpack(forged, [], CLASSES)
    for damaged in ({"t": "list", "e": {"k": "int", "s": 5}}, {"t": "nonsense"}, [1, 2],
                    {"t": "list", "e": {"k": "bytes", "s": 0, "o": 1}}):
        with pytest.raises(UnpackableError):
            unpack(damaged, [b"\x01\x00"], CLASSES)


def test_the_c_tables_come_back_and_are_checked() -> None:
    merger = _fastenc.Merger.from_ranks([b"ab", b"abc", b"bc"], [*range(256), 256, 257, 258])
    units, keys, values, outputs, whole = merger.tables()
    assert whole == [None] * 256 + [b"ab", b"abc", b"bc"]  # the whole pieces it was made with, by dense id
    again = _fastenc.Merger.from_tables(units, keys, values, outputs, whole)
    for word in (b"abc", b"abcabc", b"xbcab", b""):
        assert again.encode(word) == merger.encode(word)
    beyond = (10**6).to_bytes(8, sys.byteorder)
    with pytest.raises(ValueError):
        _fastenc.Merger.from_tables(units, beyond + keys[8:], values, outputs, whole)
    with pytest.raises(ValueError):
        _fastenc.Merger.from_tables(units, keys, values[:-8], outputs, whole)
    with pytest.raises(ValueError):
        _fastenc.Merger.from_tables(units[:-4], keys, values, outputs, whole)


def test_an_entry_written_is_read_back(tmp_path: Path) -> None:
    entry = CacheEntry(tmp_path / "entries", "content", {"pattern": None})
    kinds = {"rules": CLASSES}
    assert entry.read(kinds.__getitem__) is None
    value = {"rules": [Rule(1, 2, 256)], "text": "x"}
    assert entry.write(value, "rules", CLASSES)
    assert entry.read(kinds.__getitem__) == value
    assert not entry.write([object()], "rules", CLASSES)  # cannot be packed: nothing written, the old entry kept
    assert entry.read(kinds.__getitem__) == value


def test_every_reader_gives_the_classes_of_its_records() -> None:
    """Each reader gives the classes its entries may hold as class objects (imported when asked for, so that a load
    imports only its own kind's modules): a renamed or moved class fails here, and in type checking, rather than
    making every entry holding it unreadable and every load of its files a slow one, without an error."""
    for kind, reader in READERS.items():
        classes = reader.classes()
        assert classes == record_classes(kind), kind
        assert classes and all(isinstance(found, type) for found in classes), kind
        assert len(set(classes)) == len(classes), kind  # (a class is named by its one place among them)


def test_a_cached_load_leaves_what_encoding_in_c_does_not_need_packed(tmp_path: Path, cache: Path) -> None:
    """A model made from an entry unpacks (or makes again) the tables only its Python loop, its steps or decoding
    read when they are first read (``Packable.from_packed``, cached properties): a load that encodes in C does not
    pay for them, and they are then the file's own."""
    if not HAVE_C_LOOP:
        pytest.skip("the C extension is not built")
    later = {"sentencepiece": ("_texts", "_score_of", "_bigrams", "_scores"), "gguf": ("_ranks", "_pairs"),
             "tokenizer.json": ("_by_bytes", "_merges"), "gpt2": ("_by_bytes", "_merges")}
    words = [b"the", b"lowest", b"\xe3\x83\x86st", b"newer"]
    for kind, names in later.items():
        path = write_vocab(kind, tmp_path / kind)
        fresh: Any = load_tokenizer(str(path), cache=False).model
        load_tokenizer(str(path))
        cached = load_tokenizer(str(path))
        cached.encode(TEXTS[0])
        model: Any = cached.model
        assert not set(names) & set(vars(model)), kind
        assert [model.encode_word(word) for word in words] == [fresh.encode_word(word) for word in words]
        assert [model.merge_steps(word) for word in words] == [fresh.merge_steps(word) for word in words]
        assert model.token_table() == fresh.token_table(), kind
