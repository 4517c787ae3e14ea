"""Encoding a plan's ranges on threads of the C loop, in the calling process.

A tokenizer whose pipeline a hand-written C scanner cuts (``Tokenizer.encodes_on_threads``; its added and special
tokens found first, ``impl.scanned_text``) encodes many texts at once on several threads with the GIL released
(``Tokenizer.encode_on_threads_uint32``).  ``encode_files`` then needs no worker process: the ranges are read here,
in order, their texts (pieces of at most ``PIECE`` bytes, cut at line cuts) gathered until every thread has a few,
encoded at once, and each range's ids handed on in order, as little-endian uint32 bytes, exactly what a worker
process would have sent.  No tokenizer is sent anywhere and no ids cross a pipe.

A batch the C loop cannot encode (a lone surrogate, a byte without an id, an id of 2**32 or more) is encoded again
by the one-process job (``jobs.JOBS["encode"]``), range after range, so that the error raised is the one a
single process raises for the first failing range.

Reading and writing overlap encoding: a thread of this process reads and decodes the ranges ahead (two at most)
and another hands the ids of the ranges encoded to ``on_done`` (which writes them), while the C loop's threads
encode, with the GIL released.  A range that cannot be read is
handed on as its error, in its place, so that the ranges before it are encoded and written first, as in one
process.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from bpeproof.impl.parallel.cuts import iter_range_texts
from bpeproof.impl.parallel.jobs import JOBS
from bpeproof.impl.parallel.plans import Plan

if TYPE_CHECKING:
    from bpeproof.impl.pipelines.special_tokens import AllowedSpecial
    from bpeproof.impl.tokenizer import Tokenizer

#: The most bytes of one text given to a thread: small, so that the threads finish a batch nearly together.
PIECE = 1 << 16
#: Texts gathered per thread before a batch is encoded, and the most bytes a batch holds.
TEXTS_PER_THREAD = 32
BATCH_BYTES = 32 << 20
#: Ranges read ahead of the one being encoded (a range is at most 16 MB of text: memory stays bounded).
READ_AHEAD = 2


class _Reader:
    """The ranges of a plan read and decoded on a thread of their own, handed over in order (a range's texts and
    bytes of text, or the error reading it raised)."""

    def __init__(self, plan: Plan, cut: bool, on_bytes: Any) -> None:
        self._plan, self._cut, self._on_bytes = plan, cut, on_bytes
        self._ready: queue.Queue[tuple[list[str], int] | BaseException | None] = queue.Queue(READ_AHEAD)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, name="bpeproof-read-ahead", daemon=True)
        self._thread.start()

    def _put(self, item: tuple[list[str], int] | BaseException | None) -> bool:
        while not self._stop.is_set():
            try:
                self._ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _read(self) -> None:
        try:
            for task in self._plan.tasks:
                pieces = list(iter_range_texts(task, cut=self._cut, on_bytes=self._on_bytes, block=PIECE))
                if not self._put(([text for text, _ in pieces], sum(size for _, size in pieces))):
                    return
        except BaseException as error:  # handed over in the range's place, raised there
            self._put(error)
            return
        self._put(None)

    def __iter__(self) -> Iterator[tuple[list[str], int] | BaseException]:
        while True:
            item = self._ready.get()
            if item is None:
                return
            yield item

    def close(self) -> None:
        """Stop reading (on an error or Ctrl-C in the caller) and wait for the thread."""
        self._stop.set()
        self._thread.join()


class _Writer:
    """``on_done`` called on a thread of its own, in the order the results are put; the first error it raises is
    raised again by the next ``put`` or by ``finish``."""

    def __init__(self, on_done: Callable[[int, tuple[bytes, int]], None]) -> None:
        self._on_done = on_done
        self._results: queue.Queue[tuple[int, tuple[bytes, int]] | None] = queue.Queue(4)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._write, name="bpeproof-write-behind", daemon=True)
        self._thread.start()

    def _write(self) -> None:
        while True:
            item = self._results.get()
            if item is None:
                return
            if self._error is None:
                try:
                    self._on_done(*item)
                except BaseException as error:  # raised again in the encoding thread
                    self._error = error

    def put(self, index: int, value: tuple[bytes, int]) -> None:
        if self._error is not None:
            raise self._error
        self._results.put((index, value))

    def finish(self) -> None:
        """Wait until every result is handed on; raise the first error."""
        self.close()
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        if self._thread.is_alive():
            self._results.put(None)
            self._thread.join()


def encode_plan_on_threads(
    tokenizer: Tokenizer,
    plan: Plan,
    threads: int,
    allowed_special: AllowedSpecial,
    cut: bool,
    bar: Any,
    on_done: Callable[[int, tuple[bytes, int]], None],
) -> None:
    """Encode every range of ``plan`` on ``threads`` threads; ``on_done(index, (uint32 ids as bytes, bytes of
    text))`` for each range in order, as the worker processes' results arrive in ``pool.run_tasks`` (called on
    another thread, one call at a time)."""
    on_bytes = bar.update if bar is not None else None
    ranges: list[tuple[int, list[str], int]] = []  # (task index, its texts, its bytes of text)
    held = 0
    writer = _Writer(on_done)

    def encode_held() -> None:
        texts = [text for _, range_texts, _ in ranges for text in range_texts]
        ids = tokenizer.encode_on_threads_uint32(texts, threads, allowed_special=allowed_special)
        if ids is None:  # the C loop could not: the one-process job, for its error (or its ids)
            job = JOBS["encode"]((tokenizer, type(tokenizer), allowed_special, cut, PIECE), None)
            for index, _, _ in ranges:
                writer.put(index, job.run(plan.tasks[index]))
        else:
            start = 0
            for index, range_texts, size in ranges:
                writer.put(index, (b"".join(ids[start : start + len(range_texts)]), size))
                start += len(range_texts)
        ranges.clear()

    reader = _Reader(plan, cut, on_bytes)
    try:
        for index, item in enumerate(reader):
            if isinstance(item, BaseException):
                encode_held()  # the ranges before it first: their error, if any, is the one to raise
                raise item
            texts, size = item
            ranges.append((index, texts, size))
            held += size
            if sum(len(texts) for _, texts, _ in ranges) >= TEXTS_PER_THREAD * threads or held >= BATCH_BYTES:
                encode_held()
                held = 0
        encode_held()
        writer.finish()
    finally:
        writer.close()
        reader.close()
        if bar is not None:
            bar.close()
    if plan.error is not None:
        raise plan.error
