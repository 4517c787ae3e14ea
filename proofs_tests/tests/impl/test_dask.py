"""``--engine dask``: counting, training, encoding and the audit's corpus statistics as tasks of a Dask cluster give
exactly what one process gives (``bpeproof.impl.parallel.dask_cluster``, ``bpeproof.audit.corpus_tasks``).

One ``distributed.LocalCluster`` (2 worker processes, one thread each) serves the module; the commands reach it
with ``--scheduler``.  The one-process run (``--workers 1``, the audit without an engine) is the reference.  The
ranges are made small (``parallel._range_size``, which the client calls to plan them), so that every file is cut
into many tasks and the count tables are added in a tree of more than one level.  The cluster allows no task a
second worker (``allowed-failures`` 0, as the clusters the commands start themselves do), so a worker that dies
fails the run.  The tests that need Dask skip without it; the message for a missing Dask is tested without it.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import random
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bpeproof.cli import main
from bpeproof.impl import parallel
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.impl.trainer import train_iter

#: Planned range size in bytes: small files still make many tasks.
RANGE_BYTES = 1500


def _distributed() -> Any:
    """The ``distributed`` module; the test skips without it."""
    return pytest.importorskip("distributed", reason="Dask is not installed: pip install 'bpeproof[dask]'")


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """The address of a 2-worker local cluster, started once for the module."""
    distributed = _distributed()
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=logging.CRITICAL,
                                           scheduler_kwargs={"dashboard_address": ":0"})
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


@pytest.fixture
def cluster(scheduler: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The module's cluster with both workers up (one may be restarting after a test killed it), small ranges."""
    with _distributed().Client(scheduler, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=30)
    monkeypatch.setattr(parallel, "_range_size", lambda total, workers, low, high: RANGE_BYTES)
    yield scheduler


def _corpus(directory: Path, seed: int) -> list[str]:
    """Three files (one gzip, one empty line at the end): lines of short words over a few letters, with their
    reverses, so that many pair counts tie; some long lines, which range boundaries fall inside."""
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcé") for _ in range(rng.randint(2, 5))) for _ in range(30)]
    words += [word[::-1] for word in words] + ["x/y", "1.5", "Don't"]
    names = []
    for index, lines in enumerate((400, 250, 150)):
        text = "".join(" ".join(rng.choice(words) for _ in range(rng.choice((3, 8, 40)))) + rng.choice(".,!\n") + "\n"
                       for _ in range(lines))
        path = directory / (f"part{index}.txt.gz" if index == 1 else f"part{index}.txt")
        data = text.encode("utf-8")
        path.write_bytes(gzip.compress(data) if index == 1 else data)
        names.append(str(path))
    return names


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------
# The same results as one process
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
def test_count_and_train_are_the_one_process_ones(cluster: str, tmp_path: Path, seed: int,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The same count table byte for byte, and the same rules (ties included), for the words and cl100k patterns."""
    names = _corpus(tmp_path, seed)
    for pattern in ("words", "cl100k"):
        one, dask = tmp_path / f"one-{pattern}.tsv.gz", tmp_path / f"dask-{pattern}.tsv.gz"
        assert _run(capsys, "count", *names, "-o", str(one), "--workers", "1", "--pattern", pattern)[0] == 0
        code, out, _ = _run(capsys, "count", *names, "-o", str(dask), "--engine", "dask", "--scheduler", cluster,
                            "--pattern", pattern, "--json")
        assert code == 0 and json.loads(out)["engine"] == "dask"
        assert one.read_bytes() == dask.read_bytes()
        one, dask = tmp_path / f"one-{pattern}.json", tmp_path / f"dask-{pattern}.json"
        assert _run(capsys, "train", *names, "--merges", "60", "-o", str(one), "--workers", "1",
                    "--pattern", pattern)[0] == 0
        assert _run(capsys, "train", *names, "--merges", "60", "-o", str(dask), "--engine", "dask",
                    "--scheduler", cluster, "--pattern", pattern)[0] == 0
        assert one.read_bytes() == dask.read_bytes()
        assert len(json.loads(one.read_text(encoding="utf-8"))["rules"]) > 30


def test_encode_writes_the_one_process_array(cluster: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The same .npy bytes: cl100k (files cut at line cuts, many tasks) and a raw pattern (a file per task)."""
    names = _corpus(tmp_path, 3)
    training = [line.encode("utf-8") for line in Path(names[0]).read_text(encoding="utf-8").split()]
    from bpeproof.impl.trainer import train

    rules = train(training, 80)
    for pattern in ("cl100k", r"\S+|\s+"):
        vocab = tmp_path / "vocab.json"
        Tokenizer(rules, pattern).save(vocab)
        one, dask = tmp_path / "one.npy", tmp_path / "dask.npy"
        assert _run(capsys, "encode", "--vocab", str(vocab), "--file", *names, "-o", str(one), "--workers", "1")[0] == 0
        code, out, _ = _run(capsys, "encode", "--vocab", str(vocab), "--file", *names, "-o", str(dask),
                            "--engine", "dask", "--scheduler", cluster, "--json")
        assert code == 0 and json.loads(out)["tokens"] > 1000
        assert one.read_bytes() == dask.read_bytes()


def _vocabularies(tmp_path: Path, names: list[str], capsys: pytest.CaptureFixture[str]) -> list[list[str]]:
    """Audit targets, each with its options: the project's file and a tiktoken rank file (their libraries count
    in ranges cut at line cuts), a tokenizer.json (counted a file per task) and one without a token for "c" (the
    corpus is then counted by the project's encoder)."""
    from bpeproof.impl.formats import Vocab, load, write_hf_json

    project = tmp_path / "trained.json"
    assert _run(capsys, "train", *names, "--merges", "80", "-o", str(project), "--workers", "1",
                "--pattern", "cl100k")[0] == 0
    rank_file = tmp_path / "trained.tiktoken"
    hf_file = tmp_path / "trained-hf.json"
    assert _run(capsys, "convert", str(project), str(rank_file))[0] == 0
    assert _run(capsys, "convert", str(project), str(hf_file))[0] == 0
    vocab = load(str(project), pattern=None)
    kept = {token: data for token, data in vocab.tokens.items() if b"c" not in data}
    holed = tmp_path / "holed.json"
    write_hf_json(Vocab(tokens=kept, merges=[m for m in vocab.merges if all(t in kept for t in m)], kind="hf-bpe",
                        pattern=vocab.pattern), holed)
    return [[str(project)], [str(rank_file), "--pattern", "cl100k"], [str(hf_file)], [str(holed)]]


def test_audit_corpus_statistics_are_the_one_process_ones(cluster: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The whole report (corpus rows, word samples, the project's comparison), timings aside, for files whose
    libraries count in ranges, by the project's encoder, and whole; the samples are taken across ranges."""
    pytest.importorskip("tiktoken", reason="the rank file's library, tiktoken, is not installed")
    pytest.importorskip("tokenizers", reason="the tokenizer.json's library, tokenizers, is not installed")
    from bpeproof.audit import project_section, sampling

    monkeypatch.setattr(sampling, "SAMPLE_TEXT_CHARS", 4000)
    monkeypatch.setattr(project_section, "PROJECT_TEXT_CHARS", 6000)
    names = _corpus(tmp_path, 4)
    encoded_by = set()
    for target in _vocabularies(tmp_path, names, capsys):
        reports = []
        for engine in ([], ["--engine", "dask", "--scheduler", cluster]):
            out = tmp_path / "report.json"
            assert _run(capsys, "audit", *target, "--corpus", *names, "--samples", "100", "--json", str(out),
                        "--quiet", *engine)[0] == 0
            document: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
            document.pop("timings")
            reports.append(document)
        assert reports[0] == reports[1]
        assert all(row["tokens"] > 0 for row in reports[0]["corpora"])
        encoded_by |= {row["encoded_by"] for row in reports[0]["corpora"]}
    assert encoded_by == {"bpeproof", "tiktoken", "tokenizers", "project"}


def test_audit_shows_one_bar_of_the_bytes_the_workers_measured(cluster: str, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """With progress on, the corpus statistics on the engine advance one bar by every byte of every corpus."""
    from bpeproof.audit import corpus_tasks, report
    from bpeproof.impl.parallel.dask_cluster import dask_engine

    names = _corpus(tmp_path, 5)
    vocab = tmp_path / "tok.json"
    Tokenizer(train_iter([Path(names[0]).read_text(encoding="utf-8")], 40, pretokenize=str.split), "words").save(vocab)
    bars: list[tuple[int, list[int], list[bool]]] = []

    class Bar:
        def __init__(self, total: int) -> None:
            self.record: tuple[int, list[int], list[bool]] = (total, [], [])
            bars.append(self.record)

        def update(self, count: int = 1) -> None:
            self.record[1].append(count)

        def close(self) -> None:
            self.record[2].append(True)

    monkeypatch.setattr(corpus_tasks, "bytes_bar", lambda total, progress, description: Bar(total) if progress
                        else None)
    with dask_engine(scheduler=cluster) as engine:
        report.audit(str(vocab), corpora=names, progress=True, engine=engine)
    size = sum(Path(name).stat().st_size for name in names)  # a .gz file's own size: what is read of it
    assert [(total, sum(updates), closed) for total, updates, closed in bars] == [(size, size, [True])]
    assert len(bars[0][1]) > len(names)  # one step per range, not one per file


def test_own_local_cluster(tmp_path: Path) -> None:
    """Without a scheduler: a local cluster of the processes asked for, allowing no second worker for a task,
    closed at the end; the same table."""
    pytest.importorskip("distributed", reason="Dask is not installed: pip install 'bpeproof[dask]'")
    from bpeproof.impl.parallel.dask_cluster import dask_engine

    names = _corpus(tmp_path, 5)
    with dask_engine(workers=1) as engine:
        assert engine.slots == 1
        assert engine.client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.allowed_failures) == 0
        counts = parallel.count_files(names, "words", engine=engine, range_bytes=RANGE_BYTES)
    assert engine.client.status == "closed"
    assert counts == parallel.count_files(names, "words", workers=1)


def _started_tasks(address: str) -> list[str]:
    """The keys of the counting tasks the cluster's scheduler has started (its transition log), once per start."""
    with _distributed().Client(address, set_as_default=False) as client:
        log = client.run_on_scheduler(lambda dask_scheduler: [
            entry[0] for entry in dask_scheduler.transition_log if entry[2] == "processing"])
    return [key for key in log if isinstance(key, str) and key.startswith("bpeproof-count_task-")]


def test_scheduler_from_the_environment(cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``DASK_SCHEDULER_ADDRESS`` instead of ``--scheduler``: the tasks run on that cluster."""
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cluster)
    names = _corpus(tmp_path, 6)
    before = set(_started_tasks(cluster))
    code, out, _ = _run(capsys, "count", *names, "-o", str(tmp_path / "t.tsv"), "--engine", "dask", "--json")
    assert code == 0 and json.loads(out)["workers"] == 2
    # Keys new in the log, not a longer log: the scheduler keeps its latest transitions only, so after the earlier
    # tests' runs the log may be no longer than before (a run's task keys are its own).
    assert set(_started_tasks(cluster)) - before


# ---------------------------------------------------------------------------
# Faults
# ---------------------------------------------------------------------------


def test_without_dask_the_engine_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now fails, as when not installed
    (tmp_path / "a.txt").write_text("some words\n", encoding="utf-8")
    for command in (["count", str(tmp_path / "a.txt"), "-o", str(tmp_path / "t.tsv")],
                    ["train", str(tmp_path / "a.txt"), "--merges", "3", "-o", str(tmp_path / "t.json")]):
        code, out, err = _run(capsys, *command, "--engine", "dask")
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and "pip install 'bpeproof[dask]'" in err, err
    assert not list(tmp_path.glob("t.*"))


def test_usage_errors_of_the_engine_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.txt").write_text("some words\n", encoding="utf-8")
    table = str(tmp_path / "t.tsv")
    for args, message in (
        (["count", str(tmp_path / "a.txt"), "-o", table, "--scheduler", "tcp://h:1"], "only with --engine dask"),
        (["count", str(tmp_path / "a.txt"), "-o", table, "--engine", "dask", "--scheduler", "tcp://h:1",
          "--workers", "2"], "the cluster's own workers"),
        (["count", "-", "-o", table, "--engine", "dask"], "standard input"),
        (["encode", "some text", "--vocab", table, "--engine", "dask"], "only with -o"),
    ):
        code, _, err = _run(capsys, *args)
        assert code == 2 and message in err and err.count("\n") == 1, err


def test_a_missing_file_fails_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Checked before a cluster is asked for: exit 2, one line naming the file, nothing written."""
    (tmp_path / "a.txt").write_text("some words\n", encoding="utf-8")
    vocab = tmp_path / "vocab.json"
    Tokenizer([], "words").save(vocab)
    missing = str(tmp_path / "missing.txt")
    for command in (["count", str(tmp_path / "a.txt"), missing, "-o", str(tmp_path / "t.tsv")],
                    ["train", str(tmp_path / "a.txt"), missing, "--merges", "3", "-o", str(tmp_path / "t.json")],
                    ["encode", "--vocab", str(vocab), "--file", missing, "-o", str(tmp_path / "t.npy")]):
        started = time.perf_counter()
        code, _, err = _run(capsys, *command, "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9")
        assert code == 2 and err == f"bpeproof: error: {missing}: no such file\n", err
        assert time.perf_counter() - started < 5  # no connection was tried
    assert not list(tmp_path.glob("t.*"))


def test_an_unreadable_file_fails_the_run_once(cluster: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A range that is not UTF-8 fails the run naming its file (exit 2, nothing written), tried once: a
    deterministic error is not retried.  A missing file met by the engine's planning is named too."""
    from bpeproof.impl.io.errors import FormatError
    from bpeproof.impl.parallel.dask_cluster import dask_engine

    names = _corpus(tmp_path, 7)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"good words\n" * 300 + b"\xff not UTF-8\n" + b"more words\n" * 300)
    code, out, err = _run(capsys, "count", names[0], str(bad), names[2], "-o", str(tmp_path / "t.tsv"),
                          "--engine", "dask", "--scheduler", cluster)
    assert (code, out) == (2, "") and err == f"bpeproof: error: {bad}: not valid UTF-8 at byte 3300\n"
    assert not (tmp_path / "t.tsv").exists()
    starts = _started_tasks(cluster)
    assert starts and len(starts) == len(set(starts)), "a task was started twice"
    with dask_engine(cluster) as engine, pytest.raises(FormatError, match=r"missing\.txt: no such file"):
        parallel.count_files([names[0], str(tmp_path / "missing.txt")], "words", engine=engine)


def test_a_worker_that_dies_fails_the_run(cluster: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A worker killed while it reads a file: exit 2, one line naming the file, nothing written.  (The file is a
    pipe no one writes to, so the task waits in it until the worker is killed.)"""
    names = _corpus(tmp_path, 8)
    pipe = tmp_path / "pipe.txt.gz"
    os.mkfifo(pipe)
    killed: list[int] = []
    suffix = f"-{_pipe_index(names)}"

    def kill_the_reader() -> None:
        with _distributed().Client(cluster, set_as_default=False) as client:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not killed:
                for worker, keys in client.processing().items():
                    if any(str(key).startswith("bpeproof-count_task-") and str(key).endswith(suffix)
                           for key in keys):
                        pid = client.run(os.getpid, workers=[worker])[worker]
                        os.kill(pid, 9)
                        killed.append(pid)
                        break
                time.sleep(0.05)

    thread = threading.Thread(target=kill_the_reader, daemon=True)
    thread.start()
    code, out, err = _run(capsys, "count", *names, str(pipe), "-o", str(tmp_path / "t.tsv"), "--engine", "dask",
                          "--scheduler", cluster)
    thread.join()
    assert killed, "the task reading the pipe was never seen running"
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"bpeproof: error: {pipe}: the Dask workers reading it stopped"), err
    assert not (tmp_path / "t.tsv").exists()


def _pipe_index(names: list[str]) -> int:
    """The index of the task reading the pipe: after every range of the files before it."""
    total = 0
    for name in names:
        size = os.path.getsize(name)
        total += 1 if name.endswith(".gz") else max(1, -(-size // RANGE_BYTES))
    return total
