r"""Counting words and encoding text in worker processes, with exactly the results of one process.

Counting (``count_files``).  def-bpe needs only the distinct words of the corpus with their frequencies
(rem-faster-training), and the sum of the count tables of the parts of a corpus is the table of the whole,
however it was cut.  Each plain file is cut into byte ranges; a range holds the lines that *start* in it
(``impl.io.corpus.iter_range_lines``), so every line is read exactly once and cut into words on its own, exactly as
the one-process ``train`` reads it; a gzip file cannot be cut and is one range.  Each worker counts the ranges it
is given into one table (``trainer.count_words``, the one-process counter), and the parent adds the tables.
Training on the sum gives the rules of the one-process run, ties included: the trainer's choice at every step
(largest count, then smallest pair, in ``_fastbpe.c``'s heap order and in the Python loops') is a function of the
table alone, not of the order of its words.  Memory: one table per worker and their sum, bounded by the distinct
words, never by the text (ranges are streamed line by line).

Encoding (``encode_files``).  A text may only be cut where encoding the two parts gives the ids of the whole.
For the named patterns r50k, cl100k, o200k and words (``impl.pre_tokenizers.patterns``) that is so at every *line cut*:
right
after a newline that has a printable ASCII character (U+0021..U+007E) on each side, the one after it not ``/``.
In the whole text a word ends there: no alternative of those patterns runs from a newline on into a printable
character (o200k's ``[\r\n/]*`` would take a ``/``, hence the exception), and no white space stands before the
newline to join it.  The first part, which ends there, gets the same words: where a pattern looks past the
newline (``\s++$``, ``\s+(?!\S)``, a possessive or greedy run), the end of the part gives the same word as the
printable character gives in the whole text.  None of the patterns looks behind, so the second part is matched
as the whole text is from the cut on.  Allowed special tokens are cut out first and hold no newline there (a
tokenizer with one that does is not cut).  ``proofs_tests/tests/impl/test_parallel.py`` checks the words and the ids on
generated texts, and that a cut at the other newlines would change them.  So a file is cut into ranges that
start and end at line cuts, each range is encoded in pieces cut at line cuts, and the ids are written in order.
A tokenizer with another pre-tokenizer (a raw pattern, split steps, a ``tokenizer.json`` pipeline,
sentencepiece) is not cut: each file is one task.  The ids go to a ``.npy`` file of little-endian uint32, or to a
directory of such shards with an index (``impl.io.token_arrays``: numpy is not needed), written next to the target and
renamed at the end.

``encode_batch`` encodes a list of texts, each on its own, like tiktoken's ``encode_batch``; the tokenizer is
sent to the workers as its model, pattern, special tokens and pipeline (its C merge tables are rebuilt there).

Processes.  Workers are started with the 'spawn' method (a fresh interpreter: nothing copied from the parent,
no lock held by one of its threads) and each talks to the parent over one pipe: the parent hands out the tasks
in order, one at a time, and keeps the results in order.  Workers ignore Ctrl-C; the parent stops all of them
when it is interrupted, on any error, and when one of them dies.  A failure is reported for the first failing
task in reading order (the parent lets the tasks before it finish), so a run names the same file whatever the
number of workers, the file the one-process run names.  Standard input (``-``) is read in the parent, in one
process.

Other engines.  ``count_files`` and ``encode_files`` take an ``engine`` (a ``TaskEngine``, e.g.
``impl.parallel.dask_cluster.DaskEngine`` on a Dask cluster) that runs the same tasks on its own workers: ``count_task``
counts one range, ``merge_counts`` adds tables, ``encode_task`` encodes one range; the planning and the writing
stay here.  Standard input cannot be sent to such workers, and a file that cannot be opened stops the run
before any task starts.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import re
import signal
import sys
import threading
import uuid
import warnings
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, Protocol

from bpeproof.impl.io.corpus import iter_lines, iter_range_lines, probe, read_text
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.token_arrays import NpyWriter, ShardWriter

if TYPE_CHECKING:
    from bpeproof.impl.tokenizer import AllowedSpecial, Tokenizer

__all__ = [
    "TaskEngine",
    "WorkerError",
    "bytes_bar",
    "count_files",
    "count_task",
    "default_workers",
    "encode_batch",
    "encode_files",
    "encode_task",
    "line_cut_positions",
    "line_cuts_are_exact",
    "merge_counts",
    "plan_engine_ranges",
    "words_stop_at_line_cuts",
]

#: Bytes read at a time when encoding, and the size of the pieces a range is encoded in.
_BLOCK = 1 << 20

#: A line cut: a newline between two printable ASCII characters, the second not "/" (see the module docstring).
_CUT = re.compile(rb"[\x21-\x7e]\n(?=[\x21-\x2e\x30-\x7e])")

#: The patterns whose words never cross a line cut.
_CUT_PATTERNS = frozenset({"r50k", "cl100k", "o200k", "words"})

#: Semantics whose ids are the concatenation of each word's ids.
_WORD_SEMANTICS = frozenset({"sequential", "tiktoken", "hf-bpe"})

#: encode_batch encodes a batch of fewer characters in the calling process (starting workers costs more).
_BATCH_IN_PROCESS = 1 << 20


class WorkerError(ValueError):
    """A worker process failed in a way that is not a file's fault (it stopped before reading anything)."""


def default_workers() -> int:
    """All cores: ``os.cpu_count()`` (1 when unknown)."""
    return os.cpu_count() or 1


def _check_workers(workers: int | None) -> int:
    if workers is None:
        return default_workers()
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"the number of workers must be an int >= 1, not {workers!r}")
    return workers


@dataclass(frozen=True)
class Range:
    """Bytes [start, stop) of a file (a gzip file is always read whole)."""

    name: str
    start: int
    stop: int
    gzipped: bool


# ---------------------------------------------------------------------------
# Jobs: what a worker (or the parent, with one worker) does with each task
# ---------------------------------------------------------------------------


Progress = Callable[[int], None] | None


class _Job(Protocol):
    #: Whether results are kept in the worker until ``final`` (lost if it dies).
    keeps_state: bool

    def run(self, task: Any) -> Any: ...

    def final(self) -> Any: ...


class _CountJob:
    """Count the words of ranges into one table (``tokenizer.WordCounts`` over the range's lines)."""

    keeps_state = True

    def __init__(self, pattern: str, on_bytes: Progress) -> None:
        from bpeproof.impl.tokenizer import WordCounts

        self._counts = WordCounts(pattern)
        self._on_bytes = on_bytes

    def run(self, task: Range) -> None:
        self._counts.add(_range_lines(task, self._on_bytes))

    def final(self) -> Counter[bytes]:
        return self._counts.counts()


def _range_lines(task: Range, on_bytes: Progress) -> Iterator[str]:
    return iter_range_lines(task.name, task.start, task.stop, gzipped=task.gzipped, on_bytes=on_bytes)


def count_task(pattern: str, task: Range) -> Counter[bytes]:
    """One range counted on its own (a task of a ``TaskEngine``): the table ``count_files``'s workers add to theirs."""
    from bpeproof.impl.tokenizer import WordCounts

    counts = WordCounts(pattern)
    counts.add(_range_lines(task, None))
    return counts.counts()


def merge_counts(tables: Iterable[Mapping[bytes, int]]) -> Counter[bytes]:
    """The sum of count tables: the table of the text they were counted from, however it was cut."""
    merged: Counter[bytes] = Counter()
    for table in sorted(tables, key=len, reverse=True):  # the largest first: the others are added to it
        merged.update(table)
    return merged


#: How a worker gets the tokenizer: ("file", path, pattern) loads a vocabulary file (``impl.pipelines.registry``);
# ("model",
#: pickled parts) rebuilds an in-memory tokenizer (``_tokenizer_parts``).
TokenizerSource = tuple[Literal["file"], str, str | None] | tuple[Literal["model"], bytes]


def _nothing() -> None:
    return None


class _PartsPickler(pickle.Pickler):
    """Pickles a tokenizer's parts with the C merge tables left out (None): the models rebuild them on first use."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj).__module__.endswith("_fastenc"):
            return (_nothing, ())
        return NotImplemented


def _tokenizer_parts(tokenizer: Tokenizer) -> bytes:
    """A tokenizer as bytes another process can rebuild it from (``_open_tokenizer``); pickle errors propagate."""
    parts = (
        tokenizer.model,
        tokenizer.pattern,
        tokenizer.special_tokens,
        tokenizer.pretokenizer,
        getattr(tokenizer, "_pipeline", None),
        getattr(tokenizer, "_cache_size", 1 << 18),
    )
    buffer = io.BytesIO()
    _PartsPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(parts)
    return buffer.getvalue()


def _open_tokenizer(source: TokenizerSource | Tokenizer) -> Tokenizer:
    from bpeproof.impl.tokenizer import Tokenizer

    if isinstance(source, Tokenizer):  # in the calling process
        return source
    if source[0] == "file":
        from bpeproof.impl.pipelines.registry import load_tokenizer

        return load_tokenizer(source[1], source[2])
    model, pattern, specials, pretokenizer, pipeline, cache_size = pickle.loads(source[1])
    return Tokenizer.from_model(model, pattern, specials, cache_size=cache_size, pretokenizer=pretokenizer,
                                pipeline=pipeline)


def _to_uint32(ids: list[int], name: str) -> array[int]:
    try:
        out = array("I", ids)  # C unsigned int: 32 bits wherever CPython runs
    except OverflowError:
        raise ValueError(f"{name}: a token id is 2**32 or more ({max(ids)}): it does not fit a uint32 array") from None
    if sys.byteorder == "big":  # pragma: no cover - .npy '<u4' is little-endian
        out.byteswap()
    return out


class _EncodeJob:
    """Encode ranges of files: (uint32 ids as bytes, number of text bytes) for each."""

    keeps_state = False

    def __init__(self, setup: tuple[TokenizerSource | Tokenizer, AllowedSpecial, bool], on_bytes: Progress) -> None:
        source, self._allowed, self._cut = setup
        self._tokenizer = _open_tokenizer(source)
        self._on_bytes = on_bytes

    def run(self, task: Range) -> tuple[bytes, int]:
        encode = self._tokenizer.encode
        out = array("I")
        size = 0
        for text, length in iter_range_texts(task, cut=self._cut, on_bytes=self._on_bytes):
            size += length
            out.extend(_to_uint32(encode(text, allowed_special=self._allowed), task.name))
        return out.tobytes(), size

    def final(self) -> None:
        return None


class _BatchJob:
    """Encode batches of texts, each on its own: the ids of each as 64-bit unsigned ints (bytes)."""

    keeps_state = False

    def __init__(self, setup: tuple[TokenizerSource, AllowedSpecial], on_bytes: Progress) -> None:
        source, self._allowed = setup
        self._tokenizer = _open_tokenizer(source)

    def run(self, task: list[str]) -> list[bytes]:
        encode = self._tokenizer.encode
        return [array("Q", encode(text, allowed_special=self._allowed)).tobytes() for text in task]

    def final(self) -> None:
        return None


_JOBS: dict[str, Callable[[Any, Progress], _Job]] = {"count": _CountJob, "encode": _EncodeJob, "batch": _BatchJob}


# ---------------------------------------------------------------------------
# Another engine's workers: the same tasks, scheduled elsewhere
# ---------------------------------------------------------------------------


class TaskEngine(Protocol):
    """Another scheduler for the tasks of ``count_files`` and ``encode_files`` (``dask_cluster.DaskEngine``).

    It runs ``function(setup, task)`` for each task on its own workers (``count_task``, ``encode_task``: the
    functions this module's worker processes run) and calls ``bar.update(sizes[i])`` as task i finishes.  On a
    failure it raises the error of the first failing task in reading order, as the worker processes here do; a
    worker lost while it ran a task is a ``FormatError`` naming the task's label."""

    @property
    def slots(self) -> int:
        """How many tasks run at a time (the ranges are sized by it)."""
        ...

    def map_in_order(self, function: Callable[[Any, Any], Any], setup: Any, tasks: Sequence[Any],
                     labels: Sequence[str], sizes: Sequence[int], on_done: Callable[[int, Any], None],
                     bar: Any) -> None:
        """``on_done(i, function(setup, tasks[i]))`` for each task, in the order of the tasks."""
        ...

    def reduce(self, function: Callable[[Any, Any], Any], setup: Any, tasks: Sequence[Any], labels: Sequence[str],
               sizes: Sequence[int], combine: Callable[[list[Any]], Any], bar: Any) -> Any:
        """``combine`` of ``function(setup, task)`` over all tasks, combined a few at a time in a tree on the
        workers (``combine`` of combined values is the combination of them all; of an empty list, nothing)."""
        ...


#: An engine's worker threads keep the tokenizer of the run they last encoded for (``encode_task``).
_LOCAL = threading.local()


def encode_task(setup: tuple[str, TokenizerSource, AllowedSpecial, bool], task: Range) -> tuple[bytes, int]:
    """One range encoded (a task of a ``TaskEngine``): (uint32 ids as bytes, bytes of text), as ``encode_files``'s
    workers encode it.  ``setup`` is (a name of the run, the tokenizer's source, the allowed special tokens, whether
    ranges are cut); each worker thread rebuilds the tokenizer once per run."""
    key, source, allowed, cut = setup
    held: tuple[str, _EncodeJob] | None = getattr(_LOCAL, "encode", None)
    if held is None or held[0] != key:
        held = (key, _EncodeJob((source, allowed, cut), None))
        _LOCAL.encode = held
    return held[1].run(task)


def words_stop_at_line_cuts(pattern: str) -> bool:
    """Whether no word of ``pattern`` (a name or an expression) crosses a line cut, so that a text may be cut there
    (the module docstring): the named patterns r50k, cl100k, o200k and words."""
    from bpeproof.impl.pre_tokenizers.patterns import pattern_name, resolve_pattern

    return pattern_name(resolve_pattern(pattern)) in _CUT_PATTERNS


def plan_engine_ranges(engine: TaskEngine, names: Sequence[str], *, cut: bool) -> list[tuple[Range, int]]:
    """The ranges of files as tasks of ``engine`` (cut at line cuts with ``cut``, else a file each; sized as
    ``encode_files`` sizes them), each with the index of its file; read them with ``iter_range_texts``."""
    plan, _ = _plan_ranges(names, _range_size(_sizes(names), engine.slots, 1 << 20, 16 << 20), cut=cut)
    _on_engine(engine, plan)
    return list(zip(plan.tasks, plan.files, strict=True))


def _on_engine(engine: TaskEngine, plan: _Plan) -> list[int]:
    """Checks a plan for another engine's workers, which cannot read standard input; a file that cannot be read
    stops the run before any task starts.  The sizes of the tasks in bytes (for the progress bar)."""
    if "-" in plan.labels:
        raise ValueError("standard input (-) cannot be read by the engine's workers: give files")
    if plan.error is not None:
        raise plan.error
    return [task.stop - task.start for task in plan.tasks]


# ---------------------------------------------------------------------------
# Line cuts (encoding)
# ---------------------------------------------------------------------------


def line_cuts_are_exact(tokenizer: Tokenizer, allowed_special: AllowedSpecial = None) -> bool:
    """Whether ``tokenizer.encode`` of a text is the encodings of its parts joined, for parts cut at line cuts
    (see the module docstring): a word semantics, no pipeline or split steps, a named pattern, and no allowed
    special token whose name holds a newline."""
    if tokenizer.semantics not in _WORD_SEMANTICS or tokenizer.pretokenizer is not None:
        return False
    if getattr(tokenizer, "_pipeline", None) is not None or tokenizer.pattern_name not in _CUT_PATTERNS:
        return False
    if allowed_special is None:
        return True
    names = tokenizer.special_tokens if allowed_special == "all" else allowed_special
    return not any("\n" in name for name in names)


def line_cut_positions(data: bytes) -> list[int]:
    """Every line cut of a UTF-8 text: the positions p (in bytes) right after a newline whose neighbours are
    printable ASCII characters, the one after it not ``/``.  Encoding the parts cut there gives the ids of the
    whole when ``line_cuts_are_exact``."""
    return [match.end() for match in _CUT.finditer(data)]


def _last_cut(data: bytes | bytearray, low: int) -> int:
    """The last line cut p in ``data`` with p - 2 >= ``low`` (0: none)."""
    index = data.rfind(b"\n", low + 1)
    while index > low:
        if index + 1 < len(data) and _CUT.match(data, index - 1):
            return index + 1
        index = data.rfind(b"\n", low + 1, index)
    return 0


def _first_cut(handle: BinaryIO, start: int, stop: int) -> int | None:
    """The first line cut p in [start, stop) of a file (0 when ``start`` is 0), or None."""
    if start == 0:
        return 0
    position = max(start - 2, 0)
    handle.seek(position)
    tail = b""
    while position < stop:
        block = handle.read(min(_BLOCK, stop - position))
        if not block:
            return None
        data = tail + block
        offset = position - len(tail)
        for match in _CUT.finditer(data):
            if offset + match.end() >= start:
                return offset + match.end()
        tail = data[-2:]
        position += len(block)
    return None


def _decode(name: str, data: bytes | bytearray, offset: int) -> str:
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as error:
        raise FormatError(name, None, f"not valid UTF-8 at byte {offset + error.start}") from None


def _cut_texts(name: str, handle: BinaryIO, base: int, stop: int | None) -> Iterator[tuple[str, int]]:
    """The text from ``base`` (a line cut) to the first line cut at or after ``stop`` (None: the end), in pieces
    of about ``_BLOCK`` bytes cut at line cuts, each with its length in bytes."""
    buffer = bytearray()
    end_scan = 0  # where the search for the cut that ends the range resumes (relative to base)
    inner_scan = 0  # where the search for an inner cut resumes
    while True:
        block = handle.read(_BLOCK)
        buffer += block
        end: int | None = None
        if stop is not None and base + len(buffer) > stop:
            match = _CUT.search(buffer, max(stop - base - 2, end_scan, 0))
            if match is not None:
                end = match.end()
            end_scan = max(len(buffer) - 2, 0)
        if end is not None or not block:
            piece = buffer if end is None else buffer[:end]
            if piece:
                yield _decode(name, piece, base), len(piece)
            return
        if len(buffer) >= _BLOCK:
            cut = _last_cut(buffer, max(inner_scan - 2, 0))
            if cut:
                yield _decode(name, buffer[:cut], base), cut
                del buffer[:cut]
                base += cut
                end_scan = max(end_scan - cut, 0)
            inner_scan = max(len(buffer) - 1, 0)


def iter_range_texts(task: Range, *, cut: bool, on_bytes: Progress = None) -> Iterator[tuple[str, int]]:
    """The text of a range, in pieces (each with its length in bytes) whose encodings joined are the encoding of the
    range: with ``cut``, pieces end at line cuts; otherwise the range is a whole file, read as one text.  A range of
    a plain file starts at its first line cut at or after ``start`` and ends at the first at or after ``stop``, so
    consecutive ranges that cover a file give its text exactly once.  ``on_bytes`` as
    ``impl.io.corpus.iter_range_lines`` calls it: the bytes of [start, stop) read so far (of the compressed file for
    gzip), adding up to stop - start."""
    size = task.stop - task.start
    reported = 0

    def report(done: int) -> None:
        nonlocal reported
        done = min(done, size)
        if on_bytes is not None and done > reported:
            on_bytes(done - reported)
            reported = done

    if task.name == "-" or not cut:
        text = read_text(task.name)
        report(size)
        if text:
            yield text, len(text.encode("utf-8"))
        return
    import gzip
    import zlib

    try:
        with Path(task.name).open("rb") as raw:
            if task.gzipped:
                with gzip.GzipFile(fileobj=raw, mode="rb") as unpacked:
                    for piece in _cut_texts(task.name, unpacked, 0, None):  # type: ignore[arg-type]
                        report(raw.tell())
                        yield piece
            else:
                first = _first_cut(raw, task.start, task.stop)
                if first is not None:
                    raw.seek(first)
                    for piece in _cut_texts(task.name, raw, first, task.stop):
                        report(raw.tell() - task.start)
                        yield piece
            report(size)
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise FormatError(task.name, None, f"corrupt or truncated gzip data: {error}") from None
    except FileNotFoundError:
        raise FormatError(task.name, None, "no such file") from None
    except IsADirectoryError:
        raise FormatError(task.name, None, "is a directory, not a file") from None
    except OSError as error:
        raise FormatError(task.name, None, f"cannot be read: {error.strerror or error}") from None


# ---------------------------------------------------------------------------
# Running tasks: in the parent, or in worker processes
# ---------------------------------------------------------------------------


ErrorPayload = tuple[str, Any, Any, Any]


def _payload(error: BaseException) -> ErrorPayload:
    """An error as plain data for the pipe (FormatError's fields; other errors pickled, or their text)."""
    if isinstance(error, FormatError):
        return ("format", error.path, error.where, error.problem)
    if isinstance(error, (ValueError, TypeError, OSError)):
        try:
            return ("pickled", pickle.dumps(error), None, None)
        except Exception:  # an error that does not pickle is reported by its text
            pass
    return ("text", f"{type(error).__name__}: {error}", None, None)


def _rebuild(payload: ErrorPayload, label: str) -> BaseException:
    kind, first, second, third = payload
    if kind == "format":
        return FormatError(first, second, third)
    if kind == "pickled":
        with contextlib.suppress(Exception):
            error: BaseException = pickle.loads(first)
            return error
    return WorkerError(f"{label}: {first}")


def _worker_main(conn: Connection, kind: str, setup: Any, report: bool) -> None:
    """A worker: build the job, then run each task the parent sends until it sends None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides: it stops every worker on Ctrl-C

    def on_bytes(count: int) -> None:
        conn.send(("progress", -1, count))

    index = -1
    try:
        job = _JOBS[kind](setup, on_bytes if report else None)
        conn.send(("ready", -1, None))
        while (message := conn.recv()) is not None:
            index, task = message
            value = job.run(task)
            conn.send(("done", index, value))
            index = -1
        conn.send(("final", -1, job.final()))
    except (EOFError, BrokenPipeError):  # the parent is gone
        return
    except BaseException as error:
        with contextlib.suppress(OSError):
            conn.send(("error", index, _payload(error)))


def _how_it_ended(process: BaseProcess) -> str:
    process.join(5)
    code = process.exitcode
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


@dataclass
class _Plan:
    """Tasks in reading order, a label (file name) for each, and the error that stopped the planning, if any."""

    tasks: list[Any]
    labels: list[str]
    files: list[int]
    error: BaseException | None = None

    def add(self, task: Any, label: str, file: int) -> None:
        self.tasks.append(task)
        self.labels.append(label)
        self.files.append(file)

    def in_process(self, workers: int) -> bool:
        """Whether the tasks run in the calling process: one worker (or one task), or standard input to read."""
        return min(workers, len(self.tasks)) <= 1 or "-" in self.labels


def _run_here(kind: str, setup: Any, plan: _Plan, bar: Any, on_done: Callable[[int, Any], None],
              on_final: Callable[[Any], None]) -> None:
    job = _JOBS[kind](setup, bar.update if bar is not None else None)
    for index, task in enumerate(plan.tasks):
        on_done(index, job.run(task))
    if plan.error is not None:
        raise plan.error
    on_final(job.final())


def _run_pool(kind: str, setup: Any, plan: _Plan, workers: int, bar: Any, on_done: Callable[[int, Any], None],
              on_final: Callable[[Any], None], ahead: int) -> None:
    """Run the tasks in ``workers`` processes; ``on_done`` gets the results in task order, ``on_final`` each
    worker's final value.  At most ``ahead`` tasks past the first unfinished one are handed out."""
    tasks, labels = plan.tasks, plan.labels
    context = get_context("spawn")
    errors: dict[int, BaseException] = {}
    if plan.error is not None:
        errors[len(tasks)] = plan.error
    keeps_state: bool = getattr(_JOBS[kind], "keeps_state", False)
    processes: list[BaseProcess] = []
    conns: list[Connection] = []
    try:
        for _ in range(workers):
            here, there = context.Pipe()
            process = context.Process(target=_worker_main, args=(there, kind, setup, bar is not None),
                                      name="bpeproof-worker", daemon=True)
            process.start()
            there.close()
            processes.append(process)
            conns.append(here)
        holding: list[int | None] = [None] * workers
        done_by: list[list[int]] = [[] for _ in range(workers)]
        over = [False] * workers  # sent its final value, its error, or died
        idle: list[int] = []
        starting: list[int] = []
        results: dict[int, Any] = {}
        flushed = 0  # tasks 0 .. flushed - 1 are done and delivered
        handed = 0  # tasks 0 .. handed - 1 have been handed out

        def limit() -> int:
            return min(errors, default=len(tasks))

        def give(worker: int) -> None:
            nonlocal handed
            if handed < limit() and handed >= flushed + ahead:
                idle.append(worker)
                return
            message = (handed, tasks[handed]) if handed < limit() else None
            holding[worker] = handed if message is not None else None
            try:
                conns[worker].send(message)
            except OSError:  # the worker is gone: its task is lost
                died(worker)
                return
            if message is not None:
                handed += 1

        def died(worker: int) -> None:
            over[worker] = True
            lost = [] if holding[worker] is None else [holding[worker]]
            if keeps_state:
                lost += done_by[worker]
            how = _how_it_ended(processes[worker])
            if lost:
                first = min(i for i in lost if i is not None)
                errors.setdefault(first, FormatError(labels[first], None, f"the worker process reading it stopped"
                                                                          f" ({how})"))
            else:
                errors.setdefault(-1, WorkerError(f"a worker process stopped ({how}) before it read anything"))

        def receive(worker: int) -> None:
            nonlocal flushed
            conn = conns[worker]
            while not over[worker] and conn.poll():
                try:
                    what, index, value = conn.recv()
                except (EOFError, OSError):
                    died(worker)
                    return
                if what == "progress":
                    if bar is not None:
                        bar.update(value)
                elif what == "ready":  # the first tasks go out once every worker is up, one to each
                    starting.append(worker)
                    if len(starting) == workers:
                        for waiting in starting:
                            give(waiting)
                elif what == "done":
                    holding[worker] = None
                    done_by[worker].append(index)
                    if index < limit():
                        results[index] = value
                    while flushed in results:
                        on_done(flushed, results.pop(flushed))
                        flushed += 1
                    give(worker)
                    while idle and (handed < flushed + ahead or handed >= limit()):
                        give(idle.pop(0))
                elif what == "final":
                    over[worker] = True
                    if not errors:
                        on_final(value)
                elif what == "error":
                    over[worker] = True
                    holding[worker] = None
                    errors.setdefault(index, _rebuild(value, labels[index] if index >= 0 else "a worker process"))

        while True:
            if errors and flushed >= limit():
                raise errors[limit()]
            live = [worker for worker in range(workers) if not over[worker]]
            if not live:
                if errors:
                    raise errors[limit()]
                return
            ready = set(wait([conns[w] for w in live] + [processes[w].sentinel for w in live]))
            for worker in live:
                if conns[worker] in ready or processes[worker].sentinel in ready:
                    receive(worker)
                if not over[worker] and processes[worker].sentinel in ready and not conns[worker].poll():
                    died(worker)
    finally:
        for started in processes:
            if started.is_alive():
                started.terminate()
        for started in processes:
            started.join(2)
            if started.is_alive():  # pragma: no cover - a worker that ignores SIGTERM
                started.kill()
                started.join()
        for conn in conns:
            conn.close()


def _run(kind: str, setup: Any, plan: _Plan, workers: int, bar: Any, on_done: Callable[[int, Any], None],
         on_final: Callable[[Any], None], ahead: int | None = None) -> None:
    try:
        if plan.in_process(workers):
            _run_here(kind, setup, plan, bar, on_done, on_final)
        else:
            count = min(workers, len(plan.tasks))
            _run_pool(kind, setup, plan, count, bar, on_done, on_final, ahead or len(plan.tasks))
    finally:
        if bar is not None:
            bar.close()


def _ignore(*values: Any) -> None:
    return None


def bytes_bar(total: int, progress: bool | None, description: str) -> Any:
    """A tqdm bar of bytes when ``progress`` is True; with None, one that appears after a second on a terminal."""
    if progress is None:
        progress, delay = sys.stderr.isatty(), 1.0
    else:
        delay = 0.0
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=description, leave=False,
                delay=delay)


def _range_size(total: int, workers: int, low: int, high: int) -> int:
    return max(low, min(high, total // max(4 * workers, 1) + 1))


def _plan_ranges(names: Sequence[str], range_bytes: int, cut: bool) -> tuple[_Plan, int]:
    """The ranges of the files in reading order, and their total size in bytes.  A file that cannot be read stops
    the plan: its error is raised once the ranges before it are read (as the one-process run would)."""
    plan = _Plan([], [], [])
    total = 0
    for file, name in enumerate(names):
        if name == "-":
            plan.add(Range(name, 0, 0, False), name, file)
            continue
        try:
            size, gzipped = probe(name)
        except FormatError as error:
            plan.error = error
            break
        total += size
        if gzipped or not cut:
            plan.add(Range(name, 0, size, gzipped), name, file)
            continue
        for start in range(0, size, range_bytes) if size else range(1):
            plan.add(Range(name, start, min(start + range_bytes, size), False), name, file)
    return plan, total


def _sizes(names: Sequence[str]) -> int:
    total = 0
    for name in names:
        if name != "-":
            with contextlib.suppress(OSError):
                total += os.stat(name).st_size
    return total


# ---------------------------------------------------------------------------
# Counting
# ---------------------------------------------------------------------------


def count_files(
    names: Sequence[str],
    pattern: str,
    *,
    workers: int | None = None,
    range_bytes: int | None = None,
    progress: bool | None = None,
    engine: TaskEngine | None = None,
) -> Counter[bytes]:
    """The distinct words of text files with their frequencies, as ``train`` counts them in one process
    (``trainer.count_words(impl.io.corpus.iter_lines(names), pretokenize=tokenizer.pattern_splitter(pattern))``: the
    words a tokenizer with that pattern encodes), counted in ``workers`` processes (default: all cores) over byte
    ranges of about ``range_bytes`` bytes.

    ``progress``: a bar of the bytes read (None: on a terminal, after a second).  A file that cannot be read, or a
    worker that dies, raises ``FormatError`` naming the file.  With ``engine`` the ranges are counted as its tasks
    (``count_task``) and the tables added in a tree on its workers (``merge_counts``); ``workers`` is not used.
    """
    from bpeproof.impl.pre_tokenizers.patterns import compile_pattern, resolve_pattern

    source = resolve_pattern(pattern)
    compile_pattern(source)  # a bad pattern is the caller's error, before any process starts
    count = engine.slots if engine is not None else _check_workers(workers)
    if range_bytes is None:
        range_bytes = _range_size(_sizes(names), count, 4 << 20, 256 << 20)
    if engine is not None:
        plan, total = _plan_ranges(names, range_bytes, cut=True)
        sizes = _on_engine(engine, plan)
        bar = bytes_bar(total, progress, "counting words")
        try:
            table: Counter[bytes] = engine.reduce(count_task, source, plan.tasks, plan.labels, sizes, merge_counts,
                                                  bar)
        finally:
            if bar is not None:
                bar.close()
        return table
    if "-" in names:  # standard input cannot be cut or handed to another process: one process reads everything
        from bpeproof.impl.tokenizer import pattern_splitter
        from bpeproof.impl.trainer import count_words

        return count_words(iter_lines(names), pretokenize=pattern_splitter(source), progress=progress)
    plan, total = _plan_ranges(names, range_bytes, cut=True)
    tables: list[Counter[bytes]] = []
    _run("count", source, plan, count, bytes_bar(total, progress, "counting words"), _ignore, tables.append)
    return merge_counts(tables)


# ---------------------------------------------------------------------------
# Encoding files to a .npy array
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FileTokens:
    """One file of ``encode_files``: its ids are items [start, start + tokens) of the array."""

    name: str
    start: int
    tokens: int
    bytes: int


def encode_files(
    tokenizer: Tokenizer,
    names: Sequence[str],
    output: str | os.PathLike[str],
    *,
    source: TokenizerSource | None = None,
    workers: int | None = None,
    allowed_special: AllowedSpecial = None,
    range_bytes: int | None = None,
    progress: bool | None = None,
    engine: TaskEngine | None = None,
    shard_tokens: int | None = None,
) -> list[FileTokens]:
    """Write ``tokenizer.encode`` of each file (one text per file, ids one file after the other) to ``output`` as a
    .npy array of uint32, encoded in ``workers`` processes (default: all cores); the same ids for any number.
    With ``shard_tokens``, ``output`` is a new (or empty) directory of shards of that many ids with an index
    (``impl.io.token_arrays``).

    The workers rebuild ``tokenizer`` from its parts (its model, pattern, special tokens and pipeline); when they
    cannot be pickled, from ``source`` (("file", path, pattern): a vocabulary file), and without one the files are
    encoded in the calling process (a ``RuntimeWarning`` says so).  Files
    are cut at line cuts when ``line_cuts_are_exact`` (else each file is one task).  The array (or the directory)
    is written next to ``output`` and renamed at the end: on any error nothing is written.  With ``engine`` the
    ranges are encoded as its tasks (``encode_task``) and written here in order; ``workers`` is not used.
    """
    count = engine.slots if engine is not None else _check_workers(workers)
    tokenizer.encode("", allowed_special=allowed_special)  # checks allowed_special before anything starts
    about: dict[str, Any] = {"semantics": tokenizer.semantics, "pattern": tokenizer.pattern_name or tokenizer.pattern,
                             "vocab_size": tokenizer.vocab_size}
    if source is not None and source[0] == "file":
        about["vocab"] = source[1]
    cut = line_cuts_are_exact(tokenizer, allowed_special)
    if range_bytes is None:
        range_bytes = _range_size(_sizes(names), count, 1 << 20, 16 << 20)
    plan, total = _plan_ranges(names, range_bytes, cut=cut)
    sizes = _on_engine(engine, plan) if engine is not None else []
    files: dict[int, list[int]] = {}
    here = engine is None and plan.in_process(count)
    if not here:
        try:
            source = ("model", _tokenizer_parts(tokenizer))
        except Exception as error:  # a pipeline holding a function defined inside another one, …
            if source is None and engine is not None:
                raise ValueError(f"encode_files: this tokenizer cannot be sent to the engine's workers ({error});"
                                 " give source=('file', path, pattern)") from None
            if source is None:
                warnings.warn(f"encode_files: this tokenizer cannot be sent to worker processes ({error}); encoding"
                              " in one process", RuntimeWarning, stacklevel=2)
                here = True
                count = 1
    setup = (tokenizer if here else source, allowed_special, cut)
    writer: NpyWriter | ShardWriter = (NpyWriter(output) if shard_tokens is None
                                       else ShardWriter(output, shard_tokens, {"tokenizer": about}))
    try:
        def on_done(index: int, value: tuple[bytes, int]) -> None:
            data, size = value
            writer.write(data)
            entry = files.setdefault(plan.files[index], [0, 0])
            entry[0] += len(data) // 4
            entry[1] += size

        bar = bytes_bar(total, progress, "encoding")
        if engine is None:
            _run("encode", setup, plan, count, bar, on_done, _ignore, ahead=2 * count + 2)
        else:
            try:
                engine.map_in_order(encode_task, (uuid.uuid4().hex, *setup), plan.tasks, plan.labels, sizes,
                                    on_done, bar)
            finally:
                if bar is not None:
                    bar.close()
        out: list[FileTokens] = []
        start = 0
        for index, name in enumerate(names):
            tokens, size = files.get(index, [0, 0])
            out.append(FileTokens(name, start, tokens, size))
            start += tokens
        writer.commit([{"file": entry.name, "start": entry.start, "tokens": entry.tokens, "bytes": entry.bytes}
                       for entry in out])
    except BaseException:
        writer.abort()
        raise
    return out


# ---------------------------------------------------------------------------
# encode_batch
# ---------------------------------------------------------------------------


def encode_batch(
    tokenizer: Tokenizer,
    texts: Sequence[str],
    *,
    num_workers: int | None = None,
    allowed_special: AllowedSpecial = None,
) -> list[list[int]]:
    """``[tokenizer.encode(text, allowed_special=...) for text in texts]``, computed in ``num_workers`` processes
    (default: all cores).  A batch of less than a million characters is encoded in the calling process, and so is
    one whose tokenizer cannot be sent to another process (a ``RuntimeWarning`` says so)."""
    from bpeproof.spec.types import BPETypeError

    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise BPETypeError(f"texts must be a list of str, not {type(texts).__name__}")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise BPETypeError(f"texts[{index}] must be str, not {type(text).__name__}")
    count = _check_workers(num_workers)
    tokenizer.encode("", allowed_special=allowed_special)  # checks allowed_special before anything starts
    total = sum(map(len, texts))
    if count == 1 or len(texts) < 2 or total < _BATCH_IN_PROCESS:
        return [tokenizer.encode(text, allowed_special=allowed_special) for text in texts]
    try:
        parts = _tokenizer_parts(tokenizer)
    except Exception as error:  # a pipeline holding a function defined inside another one, …
        warnings.warn(f"encode_batch: this tokenizer cannot be sent to worker processes ({error}); encoding in one"
                      " process", RuntimeWarning, stacklevel=3)
        return [tokenizer.encode(text, allowed_special=allowed_special) for text in texts]
    size = total // (4 * count) + 1
    plan = _Plan([], [], [])
    batch: list[str] = []
    chars = 0
    first = 0
    for index, text in enumerate(texts):
        batch.append(text)
        chars += len(text)
        if chars >= size or index == len(texts) - 1:
            plan.add(batch, f"texts[{first}:{index + 1}]", first)
            batch, chars, first = [], 0, index + 1
    out: list[list[int]] = []

    def on_done(index: int, value: list[bytes]) -> None:
        for data in value:
            ids = array("Q")
            ids.frombytes(data)
            out.append(ids.tolist())

    _run("batch", (("model", parts), allowed_special), plan, count, None, on_done, _ignore, ahead=2 * count + 2)
    return out


