"""Counting and encoding on several cores give exactly what one process gives (``bpeproof.impl.parallel``).

The one-process run is the reference: ``train`` counts ``trainer.count_words`` over ``corpus.iter_lines`` of the
files, and ``encode`` is ``Tokenizer.encode`` of each file's whole text.  Range cutting is checked in the calling
process on many generated corpora (cheap); worker processes are checked on a few, since each run starts
interpreters.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import io
import itertools
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from bpeproof.cli import main
from bpeproof.commands import tokens as token_commands
from bpeproof.impl import parallel
from bpeproof.impl.io.corpus import iter_lines, iter_range_lines
from bpeproof.impl.io.counts import read_counts, write_counts
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.packed_counts import unpack_counts
from bpeproof.impl.io.token_arrays import INDEX_NAME, read_shard_index
from bpeproof.impl.parallel.pool import may_fork
from bpeproof.impl.pipelines.special_tokens import AllowedSpecial
from bpeproof.impl.pipelines.text_pipeline import TextPipeline, TokenizerParts
from bpeproof.impl.pre_tokenizers.patterns import compile_pattern, compile_pinned
from bpeproof.impl.pre_tokenizers.unicode_classes import changed_code_points
from bpeproof.impl.tokenizer import Tokenizer, load_tokenizer
from bpeproof.impl.trainer import count_words, train_counts, train_iter, train_tables
from bpeproof.proofs_tests.tests.impl.corpus_files import read_npy, write_files

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def one_process_counts(names: list[str], pattern: str) -> Counter[bytes]:
    """The words of the files' lines, counted in one process by another pre-tokenizer than the engine's: the
    ``regex`` module on the pattern with ``UNICODE_VERSION``'s classes written out as ranges (no C scanner, no
    ``stand_ins``)."""
    return count_words(iter_lines(names), pretokenize=compile_pinned(pattern).findall)


# Lines of a few letters and spaces (many equal pair counts), with now and then a long line that a range
# boundary falls inside, and words with their reverses (a b and b a: ties at the top).
_line = st.text(alphabet="ab \té", max_size=12)
_long_line = st.text(alphabet="abc ", min_size=25, max_size=60)
_words = st.lists(st.text(alphabet="abc", min_size=2, max_size=4), min_size=1, max_size=3)


@st.composite
def tie_corpora(draw: st.DrawFn) -> list[str]:
    """One to four file texts (some empty) whose words come in mirrored pairs, so that pair counts tie."""
    words = draw(_words)
    mirrored = words + [word[::-1] for word in words]
    texts = []
    for _ in range(draw(st.integers(1, 4))):
        lines = draw(st.lists(st.one_of(_line, _long_line, st.permutations(mirrored).map(" ".join)), max_size=6))
        end = draw(st.sampled_from(["", "\n"]))
        texts.append("\n".join(lines) + end)
    return texts


# ---------------------------------------------------------------------------
# Counting: ranges, merging, rules
# ---------------------------------------------------------------------------


@settings(max_examples=150)
@given(text=st.text(alphabet="ab\n é", max_size=80), size=st.integers(1, 20))
def test_ranges_give_every_line_once(text: str, size: int) -> None:
    """Ranges of ``size`` bytes give the file's lines, each once, in order, however the cuts fall in the lines."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "text.txt"
        path.write_bytes(text.encode("utf-8"))
        length = path.stat().st_size
        lines = [line for start in range(0, length, size)
                 for line in iter_range_lines(str(path), start, min(start + size, length), gzipped=False)]
        assert lines == list(iter_lines([str(path)]))


@settings(max_examples=60)
@given(texts=tie_corpora(), size=st.integers(1, 30), gz=st.sets(st.integers(0, 3)), pattern=st.sampled_from(
    ["words", "cl100k"]))
def test_counts_of_ranges_are_the_one_process_counts(texts: list[str], size: int, gz: set[int], pattern: str) -> None:
    """In the calling process (one worker): the same table for any range size, with empty and gzip files."""
    with tempfile.TemporaryDirectory() as directory:
        names = write_files(Path(directory), texts, gz)
        assert parallel.count_files(names, pattern, workers=1, range_bytes=size) == one_process_counts(names, pattern)


@pytest.mark.parametrize("pattern", ["r50k", "cl100k", "o200k", r"\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+|\s+"])
@pytest.mark.parametrize("workers", [1, 2])
def test_training_counts_the_words_a_tokenizer_encodes(tmp_path: Path, pattern: str, workers: int) -> None:
    """Training cuts text into the words a tokenizer with the same pattern encodes, also at the code points whose
    class the installed ``regex`` module has from a later Unicode than ``UNICODE_VERSION``."""
    changed = changed_code_points()
    sample = [chr(point) for point in changed[:: max(1, len(changed) // 400)]]
    lines = [f"ab{''.join(sample[i : i + 7])} 12{sample[i]}x, {sample[i + 1]}3 {sample[i + 2]}{sample[i + 3]}"
             for i in range(0, len(sample) - 7, 7)]
    name = tmp_path / "changed.txt"
    name.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tokenizer = Tokenizer(train_iter(["ab"], 1, pretokenize=str.split), pattern)
    expected = Counter(piece.encode("utf-8") for line in iter_lines([str(name)])
                       for piece in tokenizer.pre_tokenize(line))
    assert parallel.count_files([str(name)], pattern, workers=workers, range_bytes=200) == expected
    assert one_process_counts([str(name)], pattern) == expected


def test_training_counts_whole_matches_of_a_pattern_with_groups(tmp_path: Path) -> None:
    """A pattern with a capture group: the words are its whole matches, as in encoding (``findall`` would give the
    group, and the words of the other alternatives would be lost)."""
    name = tmp_path / "text.txt"
    name.write_text("ab 12 cd\n", encoding="utf-8")
    assert parallel.count_files([str(name)], r"( ?\p{L}+)| ?\p{N}+|\s+", workers=1) == Counter(
        {b"ab": 1, b" 12": 1, b" cd": 1, b"\n": 1})


@settings(max_examples=100)
@given(texts=tie_corpora(), seed=st.integers(0, 2**32 - 1), merges=st.integers(0, 40))
def test_training_depends_only_on_the_table(texts: list[str], seed: int, merges: int) -> None:
    """The trainer's tie-break sees the counts, not the order of the words: any order, the same rules."""
    counts = count_words(texts, pretokenize=str.split)
    if not counts:
        return
    items = list(counts.items())
    random.Random(seed).shuffle(items)
    assert train_counts(dict(items), merges) == train_counts(counts, merges)


@pytest.mark.parametrize("workers", [2, 3])
@settings(max_examples=2, phases=[Phase.explicit, Phase.reuse, Phase.generate])  # no shrinking: each run starts workers
@given(texts=tie_corpora(), size=st.integers(3, 40))
def test_workers_learn_the_one_process_rules(workers: int, texts: list[str], size: int) -> None:
    """Worker processes over small ranges (cuts inside long lines, an empty file, a .gz file): the same table and
    the same rules, ties included, with every worker's table in the sum."""
    # First a file whose every range holds words: each worker's first task does, so no table is empty.
    texts = ["ab ba\n" * 12, *texts, ""]
    with tempfile.TemporaryDirectory() as directory:
        names = write_files(Path(directory), texts, {1})
        expected = one_process_counts(names, "words")
        counts = parallel.count_files(names, "words", workers=workers, range_bytes=size)
        assert counts == expected
        tables = parallel.count_tables(names, "words", workers=workers, range_bytes=size)
        assert len(tables) == workers and unpack_counts(tables) == expected  # one table per worker, none added
        if expected:
            rules = train_counts(expected, 30)
            assert train_counts(counts, 30, threads=workers) == rules
            assert train_tables(tables, 30, threads=workers) == (rules, len(expected), sum(expected.values()))


def test_tapered_ranges_cover_the_files_once(tmp_path: Path) -> None:
    """The last ranges cut finer (``plans.taper``) still hold every byte once: the same counts and the same rules,
    with the default range sizes."""
    from bpeproof.impl.parallel.plans import plan_ranges, taper

    rng = random.Random(5)
    words = ["low", "lower", "newest", "widest", "語", "ab", "1234"]
    texts = ["".join(rng.choice(words) + rng.choice(" \n") for _ in range(3000)) for _ in range(2)]
    names = write_files(tmp_path, texts + ["x y\n"], {2})
    plan, _ = plan_ranges(names, 1000, cut=True)
    tapered = taper(plan, 3)
    assert len(tapered.tasks) > len(plan.tasks)
    for name in names[:2]:
        edges = [(task.start, task.stop) for task in tapered.tasks if task.name == name]
        assert edges[0][0] == 0 and all(a[1] == b[0] for a, b in itertools.pairwise(edges))
        assert edges[-1][1] == Path(name).stat().st_size
    expected = one_process_counts(names, "words")
    tables = parallel.count_tables(names, "words", workers=2)
    assert unpack_counts(tables) == expected
    assert train_tables(tables, 40, threads=2)[0] == train_counts(expected, 40)


def test_count_table_round_trip(tmp_path: Path) -> None:
    counts = {b"a\tb": 3, b"\n": 7, b"\xff\x00": 1, "語".encode(): 3}
    for name in ("t.tsv.gz", "t.tsv"):
        write_counts(tmp_path / name, counts, "cl100k-source")
        assert read_counts(tmp_path / name) == (counts, "cl100k-source")
    (tmp_path / "bad.tsv").write_text("word_hex\tcount\n61\t2\n61\t3\n", encoding="utf-8")
    with pytest.raises(FormatError, match="line 3: the word b'a' appears twice"):
        read_counts(tmp_path / "bad.tsv")
    (tmp_path / "zero.tsv").write_text("word_hex\tcount\n61\t0\n", encoding="utf-8")
    with pytest.raises(FormatError, match="line 2: the count '0'"):
        read_counts(tmp_path / "zero.tsv")


def test_parquet_count_table_is_the_tsv_table(tmp_path: Path) -> None:
    """A .parquet table holds the rows of the TSV table, in its order, as other tools read them (pyarrow's own
    reader here), and reads back to the same table and pattern; bad tables are named errors."""
    pyarrow = pytest.importorskip("pyarrow", reason="pyarrow is not installed: pip install 'bpeproof[parquet]'")
    parquet = pytest.importorskip("pyarrow.parquet")

    counts = {b"a\tb": 3, b"\n": 7, b"\xff\x00": 1, "語".encode(): 3, b"z": 12}
    write_counts(tmp_path / "t.parquet", counts, "a pattern ✓")
    write_counts(tmp_path / "t.tsv", counts, "a pattern ✓")
    assert read_counts(tmp_path / "t.parquet") == (counts, "a pattern ✓")
    table = parquet.read_table(tmp_path / "t.parquet")
    rows = [line.split("\t") for line in (tmp_path / "t.tsv").read_text(encoding="utf-8").splitlines()[2:]]
    assert table.column("word").to_pylist() == [bytes.fromhex(word) for word, _ in rows]
    assert table.column("count").to_pylist() == [int(count) for _, count in rows]
    assert str(table.schema.field("count").type) == "int64"
    (tmp_path / "same-name.tsv").write_bytes((tmp_path / "t.parquet").read_bytes())  # read by its content
    assert read_counts(tmp_path / "same-name.tsv") == (counts, "a pattern ✓")

    def bad(name: str, columns: dict[str, Any]) -> Path:
        path = tmp_path / name
        parquet.write_table(pyarrow.table(columns), path)
        return path

    text = bad("text.parquet", {"word": ["ab", "c"], "count": [2, 1]})  # UTF-8 strings are read too
    assert read_counts(text) == ({b"ab": 2, b"c": 1}, None)
    for path, message in (
        (bad("cols.parquet", {"w": [b"a"], "count": [1]}), "'word' is missing"),
        (bad("zero.parquet", {"word": [b"a"], "count": [0]}), "row 0: the count 0"),
        (bad("twice.parquet", {"word": [b"a", b"a"], "count": [1, 2]}), "row 1: the word b'a' appears twice"),
        (bad("null.parquet", {"word": [b"a", None], "count": [1, 2]}), "row 1: a null word"),
        (bad("empty.parquet", {"word": [b""], "count": [1]}), "row 0: an empty word"),
        (bad("float.parquet", {"word": [b"a"], "count": [1.5]}), "column count: expected integers"),
    ):
        with pytest.raises(FormatError, match=message):
            read_counts(path)
    (tmp_path / "cut.parquet").write_bytes((tmp_path / "t.parquet").read_bytes()[:40])
    with pytest.raises(FormatError, match="not a readable Parquet file"):
        read_counts(tmp_path / "cut.parquet")


def test_parquet_without_pyarrow_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Without pyarrow: ``count -o X.parquet`` stops before counting, and a Parquet table is not read, each with
    the install command, exit 2."""
    pytest.importorskip("pyarrow", reason="pyarrow is not installed: a Parquet table cannot be made for the test")
    names = write_files(tmp_path, ["ab ba\n"])
    table = tmp_path / "t.parquet"
    assert main(["count", *names, "-o", str(table), "--workers", "1"]) == 0
    capsys.readouterr()
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a))
    for name in ("pyarrow", "pyarrow.parquet"):
        monkeypatch.setitem(sys.modules, name, None)  # import pyarrow raises ImportError
    assert main(["count", *names, "-o", str(tmp_path / "u.parquet"), "--workers", "1"]) == 2
    assert "pip install 'bpeproof[parquet]'" in capsys.readouterr().err
    assert not (tmp_path / "u.parquet").exists()
    assert main(["train", "--counts", str(table), "--merges", "2", "-o", str(tmp_path / "v.json")]) == 2
    err = capsys.readouterr().err
    assert "reading Parquet needs pyarrow" in err and err.count("\n") == 1


def test_count_then_train_counts_is_train(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``count`` → ``train --counts`` writes the file ``train`` writes, for 1 and 2 workers; so does ``train`` with 3
    workers (three tables that share words, added in the C loop, on three threads)."""
    rng = random.Random(7)
    words = ["low", "lower", "newest", "widest", "wol", "tsewen", " ", "\t"]
    texts = ["".join(rng.choice(words + ["\n"]) for _ in range(400)) for _ in range(3)]
    names = write_files(tmp_path, texts, {1})
    outputs = []
    for workers in ("1", "2"):
        table = tmp_path / f"counts{workers}.tsv.gz"
        assert main(["count", *names, "-o", str(table), "--workers", workers, "--pattern", "cl100k"]) == 0
        out = tmp_path / f"from_counts{workers}.json"
        assert main(["train", "--counts", str(table), "--merges", "40", "-o", str(out)]) == 0
        direct = tmp_path / f"direct{workers}.json"
        assert main(["train", *names, "--merges", "40", "-o", str(direct), "--workers", workers,
                     "--pattern", "cl100k"]) == 0
        outputs += [table.read_bytes(), out.read_bytes(), direct.read_bytes()]
    three = tmp_path / "direct3.json"
    assert main(["train", *names, "--merges", "40", "-o", str(three), "--workers", "3", "--pattern", "cl100k"]) == 0
    capsys.readouterr()
    assert outputs[0] == outputs[3]  # the same table, byte for byte
    assert len({outputs[1], outputs[2], outputs[4], outputs[5], three.read_bytes()}) == 1
    assert json.loads(outputs[1])["pattern_name"] == "cl100k"
    if importlib.util.find_spec("pyarrow") is not None:  # the same through a Parquet table
        parquet = tmp_path / "counts.parquet"
        assert main(["count", *names, "-o", str(parquet), "--pattern", "cl100k"]) == 0
        out = tmp_path / "from_parquet.json"
        assert main(["train", "--counts", str(parquet), "--merges", "40", "-o", str(out)]) == 0
        capsys.readouterr()
        assert out.read_bytes() == outputs[1]


# ---------------------------------------------------------------------------
# Progress and failures
# ---------------------------------------------------------------------------


class _Bar:
    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0

    def update(self, count: int = 1) -> None:
        self.done += count

    def close(self) -> None:
        pass


@pytest.mark.parametrize("workers", [1, 2])
def test_one_bar_counts_every_byte(tmp_path: Path, workers: int) -> None:
    names = write_files(tmp_path, ["ab ba\n" * 50, "x" * 300, "ab\n" * 40], {2})
    bars: list[_Bar] = []

    def make(total: int, progress: bool | None, description: str) -> _Bar:
        bars.append(_Bar(total))
        return bars[-1]

    with mock.patch.object(parallel, "bytes_bar", make):
        parallel.count_files(names, "words", workers=workers, range_bytes=64)
    (bar,) = bars
    assert bar.total == sum(os.path.getsize(name) for name in names) == bar.done


def test_the_bar_is_shown_only_on_a_terminal() -> None:
    assert parallel.bytes_bar(100, None, "counting words") is None  # pytest's stderr is no terminal
    with mock.patch.object(sys.stderr, "isatty", return_value=True):
        bar = parallel.bytes_bar(100, None, "counting words")
    assert bar is not None
    bar.close()


def test_a_bad_file_is_named_as_one_process_names_it(tmp_path: Path) -> None:
    """Invalid UTF-8 in a later range: the same error, at the same byte, for 1 and 2 workers."""
    good = tmp_path / "good.txt"
    good.write_text("ab ba\n" * 30, encoding="utf-8")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ab ab\n" * 20 + b"caf\xe9\n" + b"ab\n" * 20)
    names = [str(good), str(bad), str(tmp_path / "missing.txt")]
    with pytest.raises(FormatError) as one:
        one_process_counts(names, "words")
    for workers in (1, 2):
        with pytest.raises(FormatError) as many:
            parallel.count_files(names, "words", workers=workers, range_bytes=16)
        assert str(many.value) == str(one.value) == f"{bad}: not valid UTF-8 at byte 123"


@pytest.mark.parametrize("command", ["train", "count", "encode", "shards"])
def test_a_file_that_cannot_be_read_fails_the_run(tmp_path: Path, command: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 2, one line naming the file, nothing written (no temporary file left either)."""
    vocab = tmp_path / "tok.json"
    Tokenizer(train_iter(["ab ab ba"], 3, pretokenize=str.split), "words").save(vocab)
    good = tmp_path / "good.txt"
    good.write_text("ab ba\n" * 30, encoding="utf-8")
    bad = tmp_path / "bad.txt.gz"
    bad.write_bytes(gzip.compress(b"ab ab\n" * 20)[:-6])
    out = tmp_path / "out"
    args = {"train": ["train", str(good), str(bad), "--merges", "3", "-o", str(out)],
            "count": ["count", str(good), str(bad), "-o", str(out)],
            "encode": ["encode", "--vocab", str(vocab), "--file", str(good), str(bad), "-o", str(out)],
            "shards": ["encode", "--vocab", str(vocab), "--file", str(good), str(bad), "-o", str(out),
                       "--shard-tokens", "7"]}[command]
    before = set(tmp_path.iterdir())
    assert main([*args, "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad}: corrupt or truncated gzip data" in err
    assert set(tmp_path.iterdir()) == before
    assert main([*args[:2], str(tmp_path / "nowhere.txt"), *args[2:], "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err == f"bpeproof: error: {tmp_path / 'nowhere.txt'}: no such file\n"


def _children(pid: int, *, forked: bool = False) -> list[int]:
    """The live worker processes (spawned interpreters, not multiprocessing's resource tracker) of ``pid``; with
    ``forked``, its forked copies (their command line is its own)."""
    try:
        own = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        own = None
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            worker = command == own if forked else b"spawn_main" in command
            if int(fields[1]) == pid and fields[0] != "Z" and worker:
                out.append(int(entry.name))
    return out


def _wait_for(condition: Any, seconds: float = 60.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def _unblock(fifo: Path) -> None:
    """Let a reader blocked on opening ``fifo`` go on (it reads an empty file)."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


needs_proc = pytest.mark.skipif(not (hasattr(os, "mkfifo") and Path("/proc/self/stat").exists()),
                                reason="needs named pipes and /proc (Linux)")


@needs_proc
def test_a_worker_that_dies_fails_the_run_naming_its_file(tmp_path: Path) -> None:
    """A worker blocked reading a named pipe is killed: the run fails naming the pipe, and no worker is left."""
    fifo = tmp_path / "stuck.gz"  # a .gz name: planning does not open it, the worker does (and waits)
    os.mkfifo(fifo)
    other = tmp_path / "other.txt"
    other.write_text("ab ba\n", encoding="utf-8")
    raised: list[BaseException] = []

    def run() -> None:
        try:
            parallel.count_files([str(fifo), str(other)], "words", workers=2)
        except BaseException as error:
            raised.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        _wait_for(lambda: len(_children(os.getpid())) == 2)
        (stuck,) = _wait_for(lambda: (found := _children(os.getpid())) and len(found) == 1 and found)
        os.kill(stuck, signal.SIGKILL)
        thread.join(60)
    finally:
        _unblock(fifo)
        thread.join(60)
    (error,) = raised
    assert isinstance(error, FormatError)
    assert str(error) == f"{fifo}: the worker process reading it stopped (killed by signal SIGKILL)"
    assert _children(os.getpid()) == []


@needs_proc
def test_ctrl_c_stops_every_worker(tmp_path: Path) -> None:
    fifo = tmp_path / "stuck.gz"
    os.mkfifo(fifo)
    other = tmp_path / "other.txt"
    other.write_text("ab ba\n", encoding="utf-8")
    out = tmp_path / "counts.tsv.gz"
    command = [sys.executable, "-m", "bpeproof", "count", str(fifo), str(other), "-o", str(out), "--workers", "2"]
    # SIGINT at its default, as in a terminal's foreground job: a CI shell that runs the tests in the background
    # has it ignored, and a process keeps an ignored SIGINT (Python then never raises KeyboardInterrupt).
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        workers = _wait_for(lambda: (found := _children(process.pid)) and len(found) == 2 and found)
        # Tasks go out once both workers are up; when one has finished "other", the other waits on the pipe.
        _wait_for(lambda: len(_children(process.pid)) == 1)
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C sends: the whole foreground process group
        try:
            _, err = process.communicate(timeout=120)  # far above the second it takes: a loaded CI machine is slow
        except subprocess.TimeoutExpired:
            raise AssertionError(f"not stopped 120 s after Ctrl-C; alive: parent {process.poll() is None},"
                                 f" workers {_children(process.pid)}") from None
    finally:
        _unblock(fifo)
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130 and err.strip().endswith("bpeproof: interrupted")
    assert _children(process.pid) == [] and not any(Path(f"/proc/{pid}").exists() for pid in workers)
    assert not out.exists()


def _train_on_a_pipe(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, Path]:
    """``bpeproof train`` with 2 workers on a pipe no one writes to and a small file: its workers are forked (Linux,
    one thread); one counts the small file and ends, the other waits on the pipe."""
    fifo = tmp_path / "stuck.gz"  # a .gz name: planning does not open it, the worker does (and waits)
    os.mkfifo(fifo)
    other = tmp_path / "other.txt"
    other.write_text("ab ba\n", encoding="utf-8")
    out = tmp_path / "tok.json"
    command = [sys.executable, "-m", "bpeproof", "train", str(fifo), str(other), "--merges", "3", "-o", str(out),
               "--workers", "2"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return process, fifo, out


@needs_proc
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="training's workers are forked on Linux")
@pytest.mark.parametrize("how", ["ctrl-c", "kill"])
def test_forked_training_workers_stop_with_the_run(tmp_path: Path, how: str) -> None:
    """Ctrl-C stops a training whose forked worker waits (exit 130); a forked worker killed while it reads fails the
    run with one line naming its file (exit 2); no worker is left and nothing is written."""
    process, fifo, out = _train_on_a_pipe(tmp_path)
    try:
        # Forked workers start at once, and the small file is counted at once: after a second, the one worker left
        # is the one on the pipe.
        time.sleep(1)
        workers = (stuck,) = _wait_for(lambda: (found := _children(process.pid, forked=True)) and len(found) == 1
                                       and found)
        if how == "ctrl-c":
            os.killpg(process.pid, signal.SIGINT)
        else:
            os.kill(stuck, signal.SIGKILL)
        try:
            _, err = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"not stopped 120 s after {how}") from None
    finally:
        _unblock(fifo)
        if process.poll() is None:
            process.kill()
    if how == "ctrl-c":
        assert process.returncode == 130 and err.strip().endswith("bpeproof: interrupted")
    else:
        assert process.returncode == 2
        assert err == f"bpeproof: error: {fifo}: the worker process reading it stopped (killed by signal SIGKILL)\n"
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
    assert not out.exists()


# ---------------------------------------------------------------------------
# Encoding: line cuts, ranges, workers, encode_batch
# ---------------------------------------------------------------------------


PIECES = ["a", "b", "Z", "1", "22", ".", "'", "'s", "/", "\n", "\n", "\r", "\t", " ", " ", "é", "\u3000", "\x1c",
          "<|s|>", "a\nb", ".\n/"]
_texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def _tokenizer(pattern: str) -> Tokenizer:
    """A tokenizer with merges for the words the pieces make (" \\n", "\\n\\n", ".\\n", …), so that words cut
    differently get different ids, and a special token."""
    texts = ["".join(pair) for pair in itertools.product(PIECES, repeat=2)]
    return Tokenizer(train_iter(texts * 2, 150, pretokenize=compile_pattern(pattern).findall), pattern,
                     {"<|s|>": 5000})


TOKENIZERS = {pattern: _tokenizer(pattern) for pattern in ("r50k", "cl100k", "o200k", "words")}


def _cut(text: str, positions: list[int]) -> list[str]:
    data = text.encode("utf-8")
    edges = [0, *positions, len(data)]
    return [data[a:b].decode("utf-8") for a, b in itertools.pairwise(edges)]


@settings(max_examples=300)
@given(text=_texts, pattern=st.sampled_from(sorted(TOKENIZERS)))
def test_line_cuts_keep_every_word_whole(text: str, pattern: str) -> None:
    """Cut at every line cut, the parts give the words and the ids of the whole text (with and without specials)."""
    tokenizer = TOKENIZERS[pattern]
    parts = _cut(text, parallel.line_cut_positions(text.encode("utf-8")))
    assert [word for part in parts for word in tokenizer.pre_tokenize(part)] == tokenizer.pre_tokenize(text)
    for allowed in (None, "all"):
        ids = [token for part in parts for token in tokenizer.encode(part, allowed_special=allowed)]
        assert ids == tokenizer.encode(text, allowed_special=allowed)


@pytest.mark.parametrize(("pattern", "text", "cut"), [
    ("r50k", "a \nb", 3),  # " \n" at the end of a part, " " and "\n" in the whole
    ("words", "a \nb", 3),
    ("cl100k", "a\n\nb", 2),  # "\n\n" is one word
    ("o200k", "a.\n/b", 3),  # o200k's [\r\n/]* takes the "/"
])
def test_a_cut_at_any_other_newline_would_change_the_words(pattern: str, text: str, cut: int) -> None:
    """Why the rule asks what it asks: at these newlines a cut changes the words, and none is a line cut."""
    tokenizer = TOKENIZERS[pattern]
    assert tokenizer.pre_tokenize(text[:cut]) + tokenizer.pre_tokenize(text[cut:]) != tokenizer.pre_tokenize(text)
    assert cut not in parallel.line_cut_positions(text.encode("utf-8"))


def test_only_tokenizers_whose_words_stay_whole_are_cut() -> None:
    tokenizer = TOKENIZERS["cl100k"]
    assert parallel.line_cuts_are_exact(tokenizer, "all")
    assert not parallel.line_cuts_are_exact(Tokenizer(tokenizer.rules, r"\S+|\s+"))
    newline_special = Tokenizer(tokenizer.rules, "cl100k", {"a\nb": 5000})
    assert parallel.line_cuts_are_exact(newline_special, None)
    assert not parallel.line_cuts_are_exact(newline_special, "all")


@settings(max_examples=80)
@given(texts=st.lists(_texts, min_size=1, max_size=3), data=st.data(), block=st.integers(3, 12),
       pattern=st.sampled_from(sorted(TOKENIZERS)), gz=st.booleans())
def test_encoding_ranges_is_encoding_the_files(texts: list[str], data: st.DataObject, block: int, pattern: str,
                                               gz: bool) -> None:
    """In the calling process: ranges of ``size`` bytes read in blocks of ``block`` bytes give each file's ids,
    also when a range ends right at a line cut."""
    tokenizer = TOKENIZERS[pattern]
    cuts = parallel.line_cut_positions(texts[-1].encode("utf-8"))
    size = data.draw(st.one_of(st.integers(1, 30), *([st.sampled_from(cuts)] if cuts else [])), label="size")
    with tempfile.TemporaryDirectory() as directory, mock.patch.object(parallel, "_BLOCK", block):
        names = write_files(Path(directory), texts, {0} if gz else set())
        out = Path(directory) / "ids.npy"
        files = parallel.encode_files(tokenizer, names, out, workers=1, allowed_special="all", range_bytes=size)
        expected = [tokenizer.encode(text, allowed_special="all") for text in texts]
        assert read_npy(out) == [token for ids in expected for token in ids]
        assert [(entry.tokens, entry.bytes) for entry in files] == [(len(ids), len(text.encode()))
                                                                   for ids, text in zip(expected, texts, strict=True)]


def _tricky_text(seed: int, size: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(PIECES + ["ab", "ba", "low", "\n"] * 3) for _ in range(size))


def test_encode_workers_write_the_one_process_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    texts = [_tricky_text(1, 3000), "", _tricky_text(2, 2000)]
    names = write_files(tmp_path, texts, {2})
    tokenizer = TOKENIZERS["cl100k"]
    vocab = tmp_path / "tok.json"
    tokenizer.save(vocab)
    expected = [token for text in texts for token in tokenizer.encode(text, allowed_special="all")]
    arrays = {}
    for workers in ("1", "2"):
        out = tmp_path / f"ids{workers}.npy"
        assert main(["encode", "--vocab", str(vocab), "--file", *names, "--specials", "-o", str(out),
                     "--workers", workers, "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["tokens"] == len(expected)
        first = len(tokenizer.encode(texts[0], allowed_special="all"))
        assert [entry["start"] for entry in summary["files"]] == [0, first, first]
        arrays[workers] = read_npy(out)
    assert arrays["1"] == arrays["2"] == expected
    # the same process cut more finely, through the API, with worker processes
    out = tmp_path / "fine.npy"
    parallel.encode_files(tokenizer, names, out, workers=2, allowed_special="all", range_bytes=700)
    assert read_npy(out) == expected
    numpy = pytest.importorskip("numpy")
    loaded = numpy.load(out)
    assert loaded.dtype == numpy.uint32 and loaded.tolist() == expected


@pytest.mark.parametrize("shard_tokens", [5, 64, 10**6])
def test_shards_hold_the_ids_of_the_array(tmp_path: Path, shard_tokens: int) -> None:
    """Shards of N ids, read one after the other, are the one array (workers 1 and 2, ranges cut finely); every
    shard but the last holds N ids, the index says where each shard and each file starts, and it is checked
    against the shard files."""
    texts = [_tricky_text(3, 1500), "", _tricky_text(4, 900)]
    names = write_files(tmp_path, texts, {2})
    tokenizer = TOKENIZERS["o200k"]
    array_path = tmp_path / "ids.npy"
    expected_files = parallel.encode_files(tokenizer, names, array_path, workers=1, allowed_special="all")
    expected = read_npy(array_path)
    for workers in (1, 2):
        directory = tmp_path / f"shards{workers}"
        files = parallel.encode_files(tokenizer, names, directory, workers=workers, allowed_special="all",
                                      range_bytes=400, shard_tokens=shard_tokens)
        assert files == expected_files
        index, shards = read_shard_index(directory)
        assert [token for shard in shards for token in read_npy(shard.path)] == expected
        assert [shard.tokens for shard in shards[:-1]] == [shard_tokens] * (len(shards) - 1)
        assert 0 < shards[-1].tokens <= shard_tokens and len(shards) == -(-len(expected) // shard_tokens)
        assert sorted(path.name for path in directory.iterdir()) == sorted(
            [INDEX_NAME, *(shard.path.name for shard in shards)])
        assert [(entry["file"], entry["start"], entry["tokens"]) for entry in index["files"]] == [
            (entry.name, entry.start, entry.tokens) for entry in expected_files]
        assert index["tokens"] == len(expected) and index["tokenizer"]["pattern"] == "o200k"


def test_a_shard_directory_is_new_or_empty_and_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``encode -o DIR --shard-tokens N``: into an empty directory, never over files; a directory without
    ``--shard-tokens`` is a usage error; ``read_shard_index`` rejects an index its shards do not match."""
    vocab = tmp_path / "tok.json"
    TOKENIZERS["cl100k"].save(vocab)
    text = tmp_path / "a.txt"
    text.write_text(_tricky_text(5, 600), encoding="utf-8")
    target = tmp_path / "out"
    target.mkdir()
    base = ["encode", "--vocab", str(vocab), "--file", str(text), "-o", str(target)]
    assert main([*base, "--shard-tokens", "10", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    index, shards = read_shard_index(target)
    assert summary["shards"] == len(shards) == len(index["shards"]) and summary["tokens"] == index["tokens"]
    before = {path.name: path.read_bytes() for path in target.iterdir()}
    assert main([*base, "--shard-tokens", "10"]) == 2
    assert "is a directory that is not empty" in capsys.readouterr().err
    assert main(base) == 2
    assert "give --shard-tokens N" in capsys.readouterr().err
    assert {path.name: path.read_bytes() for path in target.iterdir()} == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.txt", "out", "tok.json"]  # no temporary left
    assert main(["encode", "--vocab", str(vocab), "ab", "--shard-tokens", "3"]) == 2
    assert "--shard-tokens: only with -o DIRECTORY" in capsys.readouterr().err
    last = shards[-1].path
    last.write_bytes(last.read_bytes()[:-4])
    with pytest.raises(FormatError, match=r"holds .* bytes of ids, its header says"):
        read_shard_index(target)
    last.write_bytes(before[last.name])
    document = json.loads((target / INDEX_NAME).read_text(encoding="utf-8"))
    document["shards"][0]["tokens"] += 1
    (target / INDEX_NAME).write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FormatError, match=r"shards\[0\]: says 11 ids, the file holds 10"):
        read_shard_index(target)
    with pytest.raises(FormatError, match="not a shard directory"):
        read_shard_index(tmp_path)


def test_encode_batch_is_encode_of_each(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "_BATCH_IN_PROCESS", 0)  # worker processes even for a small batch
    rules = TOKENIZERS["o200k"].rules
    permuted = list(range(256))
    random.Random(3).shuffle(permuted)
    tokenizer = Tokenizer(rules, "o200k", {"<|s|>": 5000}, byte_ids=permuted)
    texts = [_tricky_text(seed, 200) for seed in range(12)] + [""]
    for allowed in (None, "all"):
        expected = [tokenizer.encode(text, allowed_special=allowed) for text in texts]
        assert tokenizer.encode_batch(texts, num_workers=2, allowed_special=allowed) == expected
    assert tokenizer.encode_batch(texts, num_workers=1) == [tokenizer.encode(text) for text in texts]


class _LocalPipeline(TextPipeline):
    """A text pipeline holding a function defined in a function: it cannot be pickled."""

    description = "local"
    library_allowed_special: AllowedSpecial = None

    def __init__(self) -> None:
        def split(text: str) -> list[str]:
            return re.findall(r"\S+|\s+", text)

        self.split = split

    def pieces(self, text: str, allowed: Any = None) -> list[str | int]:
        return list(self.split(text))


def test_encode_batch_of_a_tokenizer_that_cannot_travel_warns_and_encodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where workers are spawned (not on Linux, or beside another thread), a tokenizer that does not pickle is
    encoded in this process, with a warning; forked workers are handed it as it is."""
    monkeypatch.setattr(parallel, "_BATCH_IN_PROCESS", 0)
    base = TOKENIZERS["words"]
    tokenizer = Tokenizer.from_parts(TokenizerParts(_LocalPipeline(), base.model))
    texts = ["ab ba low", "  low\n"]
    expected = [tokenizer.encode(text) for text in texts]
    monkeypatch.setattr(parallel, "may_fork", lambda kind: False)
    with pytest.warns(RuntimeWarning, match="cannot be sent to worker processes"):
        assert tokenizer.encode_batch(texts, num_workers=2) == expected
    monkeypatch.undo()
    monkeypatch.setattr(parallel, "_BATCH_IN_PROCESS", 0)
    if may_fork("batch"):  # (not beside another thread, which the test runner may have started)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert tokenizer.encode_batch(texts, num_workers=2) == expected


def test_a_tokenizer_json_travels_to_spawned_workers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A tokenizer.json's pipeline (functions, which do not pickle) is sent as the recipe it is built from: spawned
    workers encode as this process does, without a warning."""
    from bpeproof.proofs_tests.planted.hf_ports import write_files

    monkeypatch.setattr(parallel, "_BATCH_IN_PROCESS", 0)
    monkeypatch.setattr(parallel, "may_fork", lambda kind: False)
    path = write_files(tmp_path, added_token=True)["split"]
    tokenizer = load_tokenizer(str(path))
    texts = ["Hello world, héllo 123", "  tabs\tand\nlines ", "<|endoftext|> after"] * 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tokenizer.encode_batch(texts, num_workers=2) == [tokenizer.encode(text) for text in texts]


def test_encode_says_it_reads_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    vocab = tmp_path / "tok.json"
    TOKENIZERS["words"].save(vocab)
    monkeypatch.setattr(sys, "stdin", Terminal("ab ba"))
    assert main(["encode", "--vocab", str(vocab)]) == 0
    captured = capsys.readouterr()
    assert captured.err == token_commands.STDIN_HINT + "\n"
    assert captured.out.split() == [str(token) for token in TOKENIZERS["words"].encode("ab ba")]
    monkeypatch.setattr(sys, "stdin", io.StringIO("ab ba"))  # not a terminal: no hint
    assert main(["encode", "--vocab", str(vocab)]) == 0
    assert capsys.readouterr().err == ""


def test_a_batch_meant_for_forked_workers_reaches_spawned_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller chose to fork and handed its tokenizer itself; a thread started since makes the pool spawn: the
    pool sends the tokenizer's parts instead (``for_spawn``), and the ids are the same."""
    from bpeproof.impl.parallel import pool

    monkeypatch.setattr(parallel, "_BATCH_IN_PROCESS", 0)
    monkeypatch.setattr(parallel, "may_fork", lambda kind: True)
    monkeypatch.setattr(pool, "may_fork", lambda kind: False)
    tokenizer = TOKENIZERS["words"]
    texts = ["ab ba low", "  low\n", "newest lowest"] * 2
    assert tokenizer.encode_batch(texts, num_workers=2) == [tokenizer.encode(text) for text in texts]
