r"""Counting words and encoding text in worker processes, with exactly the results of one process.

Counting (``count_files``).  def-bpe needs only the distinct words of the corpus with their frequencies
(rem-faster-training), and the sum of the count tables of the parts of a corpus is the table of the whole, however
it was cut.  Each plain file is cut into byte ranges (about sixteen per worker; for ``count_tables`` the last ones
four times finer, so that the workers finish together); a range holds the lines that *start* in it
(``impl.io.corpus.iter_range_lines``), so every line is read exactly once and cut into words on its own, exactly as
the one-process ``train`` reads it; a gzip file cannot be cut and is one range.  Each worker counts the ranges it is
given into one table (``trainer.count_words``, the one-process counter), and the parent adds the tables.  Training
on the sum gives the rules of the one-process run, ties included: the trainer's choice at every step (largest count,
then smallest pair, in ``_fastbpe.c``'s heap order and in the Python loops') is a function of the table alone, not
of the order of its words.  Memory: one table per worker and their sum, bounded by the distinct words, never by the
text (ranges are streamed line by line).  ``count_tables`` is the same counting for the trainer: each worker hands
its table over packed in one bytes object (``impl.io.packed_counts``), the parent adds none, and
``trainer.train_tables`` adds them in C on several threads.

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
no lock held by one of its threads), except that ``count_tables``'s are forked on Linux when no other thread runs
(they start in milliseconds rather than a fifth of a second, and need nothing of the parent but the pattern); each
talks to the parent over one pipe: the parent hands out the tasks
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

Modules.  ``cuts`` (line cuts, byte ranges and their texts), ``plans`` (the tasks of a run), ``jobs`` (what a
worker does with a task, and the tokenizer sent to it), ``pool`` (worker processes), ``errors`` (a worker's
failure as data), ``engine`` (``TaskEngine``), ``progress`` (the bar of bytes), ``dask_cluster``.  This module
holds the entry points and the sizes they plan with, and re-exports the names the other packages use.
"""

from __future__ import annotations

import os
import warnings
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bpeproof.impl.io.corpus import iter_lines
from bpeproof.impl.io.packed_counts import pack_counts
from bpeproof.impl.io.token_arrays import NpyWriter, ShardWriter
from bpeproof.impl.parallel.cuts import (
    BLOCK,
    Range,
    iter_range_texts,
    line_cut_positions,
    line_cuts_are_exact,
    words_stop_at_line_cuts,
)
from bpeproof.impl.parallel.engine import TaskEngine
from bpeproof.impl.parallel.errors import WorkerError
from bpeproof.impl.parallel.jobs import TokenizerSource, count_task, encode_task, merge_counts, tokenizer_parts
from bpeproof.impl.parallel.plans import Plan, engine_task_sizes, plan_ranges, taper, total_size
from bpeproof.impl.parallel.pool import check_workers, default_workers, ignore, may_fork, run_tasks
from bpeproof.impl.parallel.progress import bytes_bar
from bpeproof.impl.parallel.threads import encode_plan_on_threads

if TYPE_CHECKING:
    from bpeproof.impl.pipelines.special_tokens import AllowedSpecial
    from bpeproof.impl.tokenizer import Tokenizer

__all__ = [
    "FileTokens",
    "Range",
    "TaskEngine",
    "TokenizerSource",
    "WorkerError",
    "bytes_bar",
    "count_files",
    "count_tables",
    "count_task",
    "default_workers",
    "encode_batch",
    "encode_files",
    "encode_task",
    "iter_range_texts",
    "line_cut_positions",
    "line_cuts_are_exact",
    "merge_counts",
    "plan_engine_ranges",
    "words_stop_at_line_cuts",
]


#: encode_batch encodes a batch of fewer characters in the calling process (starting workers costs more).
_BATCH_IN_PROCESS = 1 << 20

#: The bytes encode_files reads at a time and the size of the pieces it encodes a range in, handed to its workers
#: with each run (``cuts.BLOCK``, here so that a run's block size is chosen where the run is planned).
_BLOCK = BLOCK


def _range_size(total: int, workers: int, low: int, high: int) -> int:
    """Bytes per range: about four ranges per worker, kept within [low, high]."""
    return max(low, min(high, total // max(4 * workers, 1) + 1))


def plan_engine_ranges(engine: TaskEngine, names: Sequence[str], *, cut: bool) -> list[tuple[Range, int]]:
    """The ranges of files as tasks of ``engine`` (cut at line cuts with ``cut``, else a file each; sized as
    ``encode_files`` sizes them), each with the index of its file; read them with ``iter_range_texts``."""
    plan, _ = plan_ranges(names, _range_size(total_size(names), engine.slots, 1 << 20, 16 << 20), cut=cut)
    engine_task_sizes(plan)
    return list(zip(plan.tasks, plan.files, strict=True))


def _counting_ranges(names: Sequence[str], workers: int) -> int:
    """Bytes per range when counting: about sixteen ranges per worker, so that the last ones, which a worker may
    count while the others have nothing left, are short (one core counts about 20 MB a second)."""
    return _range_size(total_size(names), 4 * workers, 1 << 20, 256 << 20)


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
    (``trainer.count_words(impl.io.corpus.iter_lines(names), pretokenize=splitter.pattern_splitter(pattern))``: the
    words a tokenizer with that pattern encodes), counted in ``workers`` processes (default: all cores) over byte
    ranges of about ``range_bytes`` bytes.

    ``progress``: a bar of the bytes read (None: on a terminal, after a second).  A file that cannot be read, or a
    worker that dies, raises ``FormatError`` naming the file.  With ``engine`` the ranges are counted as its tasks
    (``count_task``) and the tables added in a tree on its workers (``merge_counts``); ``workers`` is not used.
    """
    from bpeproof.impl.pre_tokenizers.patterns import compile_pattern, resolve_pattern

    source = resolve_pattern(pattern)
    compile_pattern(source)  # a bad pattern is the caller's error, before any process starts
    count = engine.slots if engine is not None else check_workers(workers)
    if range_bytes is None:
        range_bytes = _counting_ranges(names, count)
    if engine is not None:
        plan, total = plan_ranges(names, range_bytes, cut=True)
        sizes = engine_task_sizes(plan)
        bar = bytes_bar(total, progress, "counting words")
        try:
            table: Counter[bytes] = engine.reduce(count_task, source, plan.tasks, plan.labels, sizes, merge_counts,
                                                  bar)
        finally:
            if bar is not None:
                bar.close()
        return table
    if "-" in names:  # standard input cannot be cut or handed to another process: one process reads everything
        return _count_here(names, source, progress)
    plan, total = plan_ranges(names, range_bytes, cut=True)
    tables: list[Counter[bytes]] = []
    run_tasks("count", source, plan, count, bytes_bar(total, progress, "counting words"), ignore, tables.append)
    return merge_counts(tables)


def _count_here(names: Sequence[str], source: str, progress: bool | None) -> Counter[bytes]:
    from bpeproof.impl.pre_tokenizers.splitter import pattern_splitter
    from bpeproof.impl.trainer import count_words

    return count_words(iter_lines(names), pretokenize=pattern_splitter(source), progress=progress)


def count_tables(
    names: Sequence[str],
    pattern: str,
    *,
    workers: int | None = None,
    range_bytes: int | None = None,
    progress: bool | None = None,
) -> list[bytes]:
    """``count_files`` for the trainer: the same words and counts, as packed tables (``impl.io.packed_counts``), one
    per worker, which may share words (their sum is ``count_files``'s table; ``trainer.train_tables`` adds them in
    C).  A worker hands its table over as one bytes object, and the parent adds none."""
    from bpeproof.impl.pre_tokenizers.patterns import compile_pattern, resolve_pattern

    source = resolve_pattern(pattern)
    compile_pattern(source)
    count = check_workers(workers)
    if "-" in names:
        return [pack_counts(_count_here(names, source, progress))]
    plan, total = plan_ranges(names, range_bytes or _counting_ranges(names, count), cut=True)
    if range_bytes is None:
        plan = taper(plan, count)
    tables: list[bytes] = []
    run_tasks("count-packed", source, plan, count, bytes_bar(total, progress, "counting words"), ignore,
              tables.append)
    return tables


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
    .npy array of uint32, encoded by ``workers`` workers (default: all cores); the same ids for any number.  The
    workers are threads of the C loop in this process when the tokenizer's texts all go through it
    (``Tokenizer.encodes_on_threads``, ``impl.parallel.threads``), else processes.
    With ``shard_tokens``, ``output`` is a new (or empty) directory of shards of that many ids with an index
    (``impl.io.token_arrays``).

    The workers rebuild ``tokenizer`` from its parts (its model, pattern, special tokens and pipeline); when they
    cannot be pickled, from ``source`` (("file", path, pattern): a vocabulary file), and without one the files are
    encoded in the calling process (a ``RuntimeWarning`` says so).  Files
    are cut at line cuts when ``line_cuts_are_exact`` (else each file is one task).  The array (or the directory)
    is written next to ``output`` and renamed at the end: on any error nothing is written.  With ``engine`` the
    ranges are encoded as its tasks (``encode_task``) and written here in order; ``workers`` is not used.
    """
    count = engine.slots if engine is not None else check_workers(workers)
    tokenizer.encode("", allowed_special=allowed_special)  # checks allowed_special before anything starts
    about: dict[str, Any] = {"semantics": tokenizer.semantics, "pattern": tokenizer.pattern_name or tokenizer.pattern,
                             "vocab_size": tokenizer.vocab_size}
    if source is not None and source[0] == "file":
        about["vocab"] = source[1]
    cut = line_cuts_are_exact(tokenizer, allowed_special)
    if range_bytes is None:
        range_bytes = _range_size(total_size(names), count, 1 << 20, 16 << 20)
    plan, total = plan_ranges(names, range_bytes, cut=cut)
    sizes = engine_task_sizes(plan) if engine is not None else []
    files: dict[int, list[int]] = {}
    # A tokenizer whose texts all go through the C loop encodes on threads of this process (impl.parallel.threads).
    threaded = (engine is None and "-" not in plan.labels
                and tokenizer.encodes_on_threads(allowed_special))
    here = engine is None and (threaded or plan.in_process(count))
    if not here:
        try:
            source = ("model", tokenizer_parts(tokenizer))
        except Exception as error:  # a pipeline holding a function defined inside another one, …
            if source is None and engine is not None:
                raise ValueError(f"encode_files: this tokenizer cannot be sent to the engine's workers ({error});"
                                 " give source=('file', path, pattern)") from None
            if source is None:
                warnings.warn(f"encode_files: this tokenizer cannot be sent to worker processes ({error}); encoding"
                              " in one process", RuntimeWarning, stacklevel=2)
                here = True
                count = 1
    setup = (tokenizer if here else source, type(tokenizer), allowed_special, cut)
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
        if threaded:
            encode_plan_on_threads(tokenizer, plan, count, allowed_special, cut, bar, on_done)
        elif engine is None:
            run_tasks("encode", (*setup, _BLOCK), plan, count, bar, on_done, ignore, ahead=2 * count + 2)
        else:
            try:
                engine.map_in_order(encode_task, (os.urandom(16).hex(), *setup), plan.tasks, plan.labels, sizes,
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


def encode_batch(
    tokenizer: Tokenizer,
    texts: Sequence[str],
    *,
    num_workers: int | None = None,
    allowed_special: AllowedSpecial = None,
) -> list[list[int]]:
    """``[tokenizer.encode(text, allowed_special=...) for text in texts]``, computed by ``num_workers`` workers
    (default: all cores).  Where a hand-written C scanner cuts the text (``Tokenizer.encodes_on_threads``) the
    workers are threads of the C loop, with the GIL released (``Tokenizer.encode_on_threads``); otherwise they are
    processes.  A batch of less than a million characters is then encoded in the calling
    process, and so is one whose tokenizer cannot be sent to another process (a ``RuntimeWarning`` says so)."""
    from bpeproof.impl.pipelines.text_pipeline import check_texts

    check_texts(texts)
    count = check_workers(num_workers)
    tokenizer.encode("", allowed_special=allowed_special)  # checks allowed_special before anything starts
    on_threads = tokenizer.encode_on_threads(texts, count, allowed_special=allowed_special)
    if on_threads is not None:
        return on_threads
    total = sum(map(len, texts))
    if count == 1 or len(texts) < 2 or total < _BATCH_IN_PROCESS:
        return [tokenizer.encode(text, allowed_special=allowed_special) for text in texts]
    source: Any = tokenizer  # forked workers have it already, its tables and caches made: nothing is sent
    if not may_fork("batch"):
        try:
            source = ("model", tokenizer_parts(tokenizer))
        except Exception as error:  # a pipeline holding a function defined inside another one, …
            warnings.warn(f"encode_batch: this tokenizer cannot be sent to worker processes ({error}); encoding in"
                          " one process", RuntimeWarning, stacklevel=3)
            return [tokenizer.encode(text, allowed_special=allowed_special) for text in texts]
    size = total // (4 * count) + 1
    plan = Plan([], [], [])
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

    run_tasks("batch", (source, type(tokenizer), allowed_special), plan, count, None, on_done, ignore,
              ahead=2 * count + 2)
    return out
