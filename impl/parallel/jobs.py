"""Jobs: what a worker (or the parent, with one worker) does with each task — count a range's words (into a
``Counter``, or a packed table for the trainer), encode a range, encode a batch of texts — and the tokenizer sent to
it as data (``TokenizerSource``).

``count_task`` and ``encode_task`` are the same work as single tasks, for another engine's workers
(``bpeproof.impl.parallel.engine.TaskEngine``).
"""

from __future__ import annotations

import io
import pickle
import sys
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

from bpeproof.impl.io.corpus import iter_range_lines
from bpeproof.impl.parallel.cuts import BLOCK, Range, iter_range_texts
from bpeproof.impl.parallel.progress import Progress

if TYPE_CHECKING:
    from bpeproof.impl.pipelines.special_tokens import AllowedSpecial
    from bpeproof.impl.tokenizer import Tokenizer

__all__ = ["JOBS", "TokenizerSource", "count_task", "encode_task", "merge_counts", "tokenizer_parts"]


class _Job(Protocol):
    #: Whether results are kept in the worker until ``final`` (lost if it dies).
    keeps_state: bool

    def run(self, task: Any) -> Any: ...

    def final(self) -> Any: ...


class _CountJob:
    """Count the words of ranges into one table (``word_counts.WordCounts`` over the range's lines)."""

    keeps_state = True

    def __init__(self, pattern: str, on_bytes: Progress) -> None:
        from bpeproof.impl.word_counts import WordCounts

        self._counts = WordCounts(pattern)
        self._on_bytes = on_bytes

    def run(self, task: Range) -> None:
        self._counts.add(_range_lines(task, self._on_bytes))

    def final(self) -> Counter[bytes]:
        return self._counts.counts()


class _PackedCountJob(_CountJob):
    """Count the words of ranges, and hand the table over packed (``impl.io.packed_counts``): one bytes object for
    the pipe and for the C merge loop, which adds the workers' tables itself.  Its workers may be forked
    (``pool``): they need nothing of the parent but the pattern."""

    forks = True

    def final(self) -> bytes:  # type: ignore[override]
        return self._counts.packed()


def _range_lines(task: Range, on_bytes: Progress) -> Iterator[str]:
    return iter_range_lines(task.name, task.start, task.stop, gzipped=task.gzipped, on_bytes=on_bytes)


def count_task(pattern: str, task: Range) -> Counter[bytes]:
    """One range counted on its own (a task of a ``TaskEngine``): the table ``count_files``'s workers add to theirs."""
    from bpeproof.impl.word_counts import WordCounts

    counts = WordCounts(pattern)
    counts.add(_range_lines(task, None))
    return counts.counts()


def merge_counts(tables: Iterable[Mapping[bytes, int]]) -> Counter[bytes]:
    """The sum of count tables: the table of the text they were counted from, however it was cut."""
    merged: Counter[bytes] = Counter()
    for table in sorted(tables, key=len, reverse=True):  # the largest first: the others are added to it
        merged.update(table)
    return merged


#: How a worker gets the tokenizer: ("file", path, pattern) loads a vocabulary file (``Tokenizer.load``);
#: ("model", pickled class and parts) rebuilds an in-memory tokenizer (``tokenizer_parts``).
TokenizerSource = tuple[Literal["file"], str, str | None] | tuple[Literal["model"], bytes]


def _nothing() -> None:
    return None


class _PartsPickler(pickle.Pickler):
    """Pickles a tokenizer's parts with the C merge tables left out (None): the models rebuild them on first use."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj).__module__.endswith("_fastenc"):
            return (_nothing, ())
        return NotImplemented


def tokenizer_parts(tokenizer: Tokenizer) -> bytes:
    """A tokenizer as bytes another process can rebuild it from (``_open_tokenizer``): its class and its parts
    (``Tokenizer.parts``); pickle errors propagate."""
    buffer = io.BytesIO()
    _PartsPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump((type(tokenizer), tokenizer.parts))
    return buffer.getvalue()


def _open_tokenizer(source: TokenizerSource | Tokenizer, kind: type[Tokenizer]) -> Tokenizer:
    """The tokenizer of ``source``: itself in the calling process, else loaded from its file or assembled from its
    parts by ``kind`` (the class of the caller's tokenizer: these jobs never import it, it imports them)."""
    if not isinstance(source, tuple):  # in the calling process
        return source
    if source[0] == "file":
        return kind.load(source[1], source[2])
    assemble, parts = pickle.loads(source[1])
    tokenizer: Tokenizer = assemble.from_parts(parts)
    return tokenizer


def _to_uint32(ids: list[int], name: str) -> array[int]:
    try:
        out = array("I", ids)  # C unsigned int: 32 bits wherever CPython runs
    except OverflowError:
        raise ValueError(f"{name}: a token id is 2**32 or more ({max(ids)}): it does not fit a uint32 array") from None
    if sys.byteorder == "big":  # pragma: no cover - .npy '<u4' is little-endian
        out.byteswap()
    return out


class _EncodeJob:
    """Encode ranges of files: (uint32 ids as bytes, number of text bytes) for each.  ``setup``: the tokenizer or its
    source, the allowed special tokens, whether ranges are cut at line cuts, and the bytes read at a time."""

    keeps_state = False

    def __init__(self, setup: tuple[TokenizerSource | Tokenizer, type[Tokenizer], AllowedSpecial, bool, int],
                 on_bytes: Progress) -> None:
        source, kind, self._allowed, self._cut, self._block = setup
        self._tokenizer = _open_tokenizer(source, kind)
        self._on_bytes = on_bytes

    def run(self, task: Range) -> tuple[bytes, int]:
        encode = self._tokenizer.encode
        out = array("I")
        size = 0
        for text, length in iter_range_texts(task, cut=self._cut, on_bytes=self._on_bytes,
                                                 block=self._block):
            size += length
            out.extend(_to_uint32(encode(text, allowed_special=self._allowed), task.name))
        return out.tobytes(), size

    def final(self) -> None:
        return None


class _BatchJob:
    """Encode batches of texts, each on its own: the ids of each as 64-bit unsigned ints (bytes).  Its workers may be
    forked (``pool.may_fork``): then they are handed the caller's tokenizer itself, its tables and caches made."""

    keeps_state = False
    forks = True

    def __init__(self, setup: tuple[TokenizerSource | Tokenizer, type[Tokenizer], AllowedSpecial],
                 on_bytes: Progress) -> None:
        source, kind, self._allowed = setup
        self._tokenizer = _open_tokenizer(source, kind)

    @staticmethod
    def for_spawn(setup: tuple[TokenizerSource | Tokenizer, type[Tokenizer], AllowedSpecial]
                  ) -> tuple[TokenizerSource, type[Tokenizer], AllowedSpecial]:
        """The setup a spawned worker can be sent: the tokenizer as its parts (a thread started since the caller
        chose to fork makes the pool spawn)."""
        source, kind, allowed = setup
        return (source if isinstance(source, tuple) else ("model", tokenizer_parts(source))), kind, allowed

    def run(self, task: list[str]) -> list[bytes]:
        encode = self._tokenizer.encode
        return [array("Q", encode(text, allowed_special=self._allowed)).tobytes() for text in task]

    def final(self) -> None:
        return None


JOBS: dict[str, Callable[[Any, Progress], _Job]] = {"count": _CountJob, "count-packed": _PackedCountJob,
                                                   "encode": _EncodeJob, "batch": _BatchJob}


#: An engine's worker threads keep the tokenizer of the run they last encoded for (``encode_task``).
_LOCAL = threading.local()


def encode_task(setup: tuple[str, TokenizerSource, type[Tokenizer], AllowedSpecial, bool], task: Range
                ) -> tuple[bytes, int]:
    """One range encoded (a task of a ``TaskEngine``): (uint32 ids as bytes, bytes of text), as ``encode_files``'s
    workers encode it.  ``setup`` is (a name of the run, the tokenizer's source and class, the allowed special
    tokens, whether ranges are cut); each worker thread rebuilds the tokenizer once per run."""
    key, source, kind, allowed, cut = setup
    held: tuple[str, _EncodeJob] | None = getattr(_LOCAL, "encode", None)
    if held is None or held[0] != key:
        held = (key, _EncodeJob((source, kind, allowed, cut, BLOCK), None))
        _LOCAL.encode = held
    return held[1].run(task)
