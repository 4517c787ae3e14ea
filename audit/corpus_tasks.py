"""The audit's corpus statistics as tasks of an engine (``audit --corpus ... --engine dask``).

With an engine (``bpeproof.impl.parallel.TaskEngine``, e.g. ``bpeproof.impl.parallel.dask_cluster.DaskEngine``) the
audit
does not read the corpora into memory: each corpus is cut into byte ranges (``parallel.plan_engine_ranges``), and
for each range a task on the engine's workers measures what the one-process audit measures on the whole text
(``stats_task``): its bytes, its characters, whether it holds a byte the file has no token for, and its token
count by the file's library (``file_view.count_tokens``, the one-process audit's own count).  The sums are the
one-process numbers, because a range is cut only where the count of the whole is the sum of the counts of the
parts: at line cuts (``parallel.line_cut_positions``) for the libraries that cut text into words with a named
pattern and encode each word alone (tiktoken, the project's own tokenizer with ``line_cuts_are_exact``, and
the project's encoder used in their stead); a file for the others (``tokenizers`` and sentencepiece see the whole
text).  A corpus with a byte the file has no token for is counted again, range by range, with the project's
encoder, as the one-process audit counts it.

The word sample and the project's comparison take the same characters as ``sampling.sample_text`` takes from the
whole text: the same random starts (``file_view.sample_starts``, drawn from the same generator, knowing the
corpus's length in characters from the statistics), the chunks fetched from the ranges that hold them
(``sample_task``).  So the whole report is the one-process report, timings aside.

The workers open the vocabulary file at the path given (and its library) once per run and thread.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bpeproof.impl.parallel import (
    Range,
    TaskEngine,
    bytes_bar,
    iter_range_texts,
    line_cuts_are_exact,
    plan_engine_ranges,
    words_stop_at_line_cuts,
)
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS

if TYPE_CHECKING:
    import random

    from bpeproof.audit.file_view import FileView
    from bpeproof.audit.libraries import Library

__all__ = ["EngineCorpus", "RangeStats", "StatsSetup", "engine_corpora", "ranges_are_exact"]


@dataclass(frozen=True)
class StatsSetup:
    """What every task of one audit needs: the vocabulary file and its pattern, whether the file's library
    opened on the client (the workers open it too), the bytes the file has no token for, and whether the ranges
    are cut at line cuts."""

    run: str
    path: str
    pattern: str | None
    library: bool
    missing: frozenset[int]
    cut: bool


@dataclass(frozen=True)
class RangeStats:
    """One range: its bytes and characters, whether it holds a byte of ``missing``, and its token count by the
    library (None when there is no library or the range holds such a byte) and by the project's encoder (only
    when there is no library, or when asked: ``project_task``)."""

    bytes: int
    chars: int
    missing: bool
    library_tokens: int | None
    project_tokens: int | None


class _Worker:
    """A worker thread's vocabulary, library and encoder for one run (the encoder built only when needed)."""

    def __init__(self, setup: StatsSetup) -> None:
        from bpeproof.audit.libraries import open_library
        from bpeproof.impl.formats import load

        self.setup = setup
        self.vocab = load(setup.path, pattern=setup.pattern)
        self.library: Library | None = open_library(self.vocab, setup.pattern) if setup.library else None
        self._view: FileView | None = None

    def project_tokens(self, text: str) -> int:
        from bpeproof.audit.file_view import FileView, count_tokens
        from bpeproof.impl.formats import convert

        if self._view is None:
            self._view = FileView(self.vocab, convert(self.vocab))
        return count_tokens(None, self._view, self.setup.pattern, text)


_LOCAL = threading.local()


def _worker(setup: StatsSetup) -> _Worker:
    held: _Worker | None = getattr(_LOCAL, "audit", None)
    if held is None or held.setup.run != setup.run:
        held = _Worker(setup)
        _LOCAL.audit = held
    return held


def stats_task(setup: StatsSetup, task: Range) -> RangeStats:
    """The statistics of one range (a task of the engine): the numbers the one-process audit takes of a text."""
    from bpeproof.audit.file_view import count_tokens

    worker = _worker(setup)
    size = chars = 0
    missing = False
    library_tokens = 0
    project_tokens = 0
    probes = [bytes([byte]) for byte in setup.missing]
    for text, length in iter_range_texts(task, cut=setup.cut):
        size += length
        chars += len(text)
        if not missing and probes:
            data = text.encode("utf-8")
            missing = any(probe in data for probe in probes)
        if worker.library is None:
            project_tokens += worker.project_tokens(text)
        elif not missing:
            library_tokens += count_tokens(worker.library, None, setup.pattern, text)
    return RangeStats(size, chars, missing, library_tokens if worker.library is not None and not missing else None,
                      project_tokens if worker.library is None else None)


def project_task(setup: StatsSetup, task: Range) -> int:
    """The project encoder's token count of one range (a corpus with a byte the library has no token for)."""
    worker = _worker(setup)
    return sum(worker.project_tokens(text) for text, _ in iter_range_texts(task, cut=setup.cut))


def sample_task(setup: StatsSetup, order: tuple[Range, list[tuple[int, int]]]) -> list[str]:
    """The characters [start, stop) of a range's text for each (start, stop) of ``order`` (a task)."""
    task, spans = order
    pieces: list[list[str]] = [[] for _ in spans]
    offset = 0
    for text, _ in iter_range_texts(task, cut=setup.cut):
        end = offset + len(text)
        for index, (start, stop) in enumerate(spans):
            if start < end and stop > offset:
                pieces[index].append(text[max(start - offset, 0) : stop - offset])
        offset = end
        if all(stop <= offset for _, stop in spans):
            break
    return ["".join(parts) for parts in pieces]


def ranges_are_exact(library: Library | None, pattern: str | None) -> bool:
    """Whether a corpus may be cut at line cuts: the library's token count of a text is then the sum of its
    counts of the parts (see the module docstring)."""
    from bpeproof.audit.libraries import ProjectLibrary

    if library is None:
        return words_stop_at_line_cuts(pattern if pattern is not None else PATTERNS["words"])
    if library.name == "tiktoken":
        return pattern is not None and words_stop_at_line_cuts(pattern)
    if isinstance(library, ProjectLibrary):
        return line_cuts_are_exact(library._tokenizer)
    return False


class EngineCorpus:
    """A corpus file measured by the engine's tasks; it gives its samples (``sample``) and its row of the report
    (``row``) without holding its text."""

    def __init__(self, engine: TaskEngine, setup: StatsSetup, name: str, ranges: list[Range],
                 stats: list[RangeStats]) -> None:
        self.engine = engine
        self.setup = setup
        self.name = name
        self.ranges = ranges
        self.stats = stats
        self.chars = sum(entry.chars for entry in stats)
        self.bytes = sum(entry.bytes for entry in stats)

    def __len__(self) -> int:
        return self.chars

    def text(self, spans: Sequence[tuple[int, int]]) -> list[str]:
        """The characters [start, stop) of the corpus for each span, fetched from the ranges that hold them."""
        orders: list[tuple[Range, list[tuple[int, int]]]] = []
        owners: list[list[int]] = []
        offset = 0
        for task, entry in zip(self.ranges, self.stats, strict=True):
            end = offset + entry.chars
            wanted = [(index, max(start, offset) - offset, min(stop, end) - offset)
                      for index, (start, stop) in enumerate(spans) if start < end and stop > offset]
            if wanted:
                orders.append((task, [(start, stop) for _, start, stop in wanted]))
                owners.append([index for index, _, _ in wanted])
            offset = end
        out: list[list[str]] = [[] for _ in spans]

        def on_done(index: int, value: list[str]) -> None:
            for owner, piece in zip(owners[index], value, strict=True):
                out[owner].append(piece)

        self.engine.map_in_order(sample_task, self.setup, orders, [self.name] * len(orders), [0] * len(orders),
                                 on_done, None)
        return ["".join(parts) for parts in out]

    def sample(self, limit: int, rng: random.Random) -> str:
        """``sampling.sample_text`` of the corpus's text: the same characters, from the same draws of ``rng``."""
        from bpeproof.audit.file_view import sample_starts

        drawn = sample_starts(self.chars, limit, rng)
        if drawn is None:
            return self.text([(0, self.chars)])[0]
        starts, size = drawn
        return "\n".join(self.text([(start, start + size) for start in starts]))

    def tokens(self, library: Library | None) -> tuple[int, str]:
        """The corpus's token count and who counted it, as the one-process audit counts the whole text: the
        library, unless there is none or the corpus holds a byte the file has no token for (then the project's
        encoder)."""
        if library is not None and not any(entry.missing for entry in self.stats):
            return sum(entry.library_tokens or 0 for entry in self.stats), library.name
        if library is None:
            return sum(entry.project_tokens or 0 for entry in self.stats), "project"
        counts: list[int] = []
        self.engine.map_in_order(project_task, self.setup, self.ranges, [self.name] * len(self.ranges),
                                 [task.stop - task.start for task in self.ranges],
                                 lambda _index, value: counts.append(value), None)
        return sum(counts), "project"


def engine_corpora(engine: TaskEngine, names: Sequence[str], path: str, pattern: str | None,
                   library: Library | None, missing: frozenset[int], progress: bool | None = False
                   ) -> list[EngineCorpus]:
    """Each corpus file measured by the engine's tasks (``stats_task``), in the order given; ``progress``: a bar of
    the bytes the workers have measured (``parallel.bytes_bar``)."""
    setup = StatsSetup(uuid.uuid4().hex, path, pattern, library is not None, missing,
                       ranges_are_exact(library, pattern))
    planned = plan_engine_ranges(engine, names, cut=setup.cut)
    tasks = [task for task, _ in planned]
    stats: list[RangeStats] = []
    sizes = [task.stop - task.start for task in tasks]
    bar = bytes_bar(sum(sizes), progress, "measuring the corpora")
    try:
        engine.map_in_order(stats_task, setup, tasks, [task.name for task in tasks], sizes,
                            lambda _index, value: stats.append(value), bar)
    finally:
        if bar is not None:
            bar.close()
    out = []
    for file, name in enumerate(names):
        mine = [index for index, (_, owner) in enumerate(planned) if owner == file]
        out.append(EngineCorpus(engine, setup, name, [tasks[i] for i in mine], [stats[i] for i in mine]))
    return out
