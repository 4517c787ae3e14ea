"""Reading corpora: UTF-8 text files, plain or gzip, streamed by line or read whole; one wording for every failure.

``train``, ``trace`` and ``audit --corpus`` read their text here.  Every problem is a ``FormatError`` naming the
file: "no such file", "is a directory, not a file", "cannot be read: …", "corrupt or truncated gzip data: …",
"not valid UTF-8 at byte N".  ``-`` is standard input.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import GZIP_MAGIC, gzip_stream

__all__ = ["iter_lines", "iter_range_lines", "probe", "read_text"]


def _check(name: str) -> Path:
    path = Path(name)
    if path.is_dir():
        raise FormatError(name, None, "is a directory, not a file")
    if not path.exists():
        raise FormatError(name, None, "no such file")
    return path


def _is_gzip(path: Path) -> bool:
    if path.name.lower().endswith(".gz"):
        return True
    try:
        with path.open("rb") as handle:
            return handle.read(2) == GZIP_MAGIC
    except OSError as error:
        raise FormatError(path, None, f"cannot be read: {error.strerror or error}") from None


def iter_lines(names: Iterable[str]) -> Iterator[str]:
    """The lines of each file in turn (with their line ends), decoded as UTF-8 as they are read."""
    for name in names:
        if name == "-":
            yield from sys.stdin
            continue
        path = _check(name)
        offset = 0
        gzipped = _is_gzip(path)
        try:
            with path.open("rb") as file, (
                gzip_stream(name, file) if gzipped else contextlib.nullcontext(file)
            ) as handle:
                for raw in handle:
                    try:
                        yield raw.decode("utf-8")
                    except UnicodeDecodeError as error:
                        raise FormatError(name, None, f"not valid UTF-8 at byte {offset + error.start}") from None
                    offset += len(raw)
        except OSError as error:
            raise FormatError(name, None, f"cannot be read: {error.strerror or error}") from None


def read_text(name: str | os.PathLike[str]) -> str:
    """The whole text of one file (``-``: standard input)."""
    text = os.fspath(name)
    return "".join(iter_lines([text]))


def probe(name: str) -> tuple[int, bool]:
    """The size in bytes of a corpus file and whether it is read as gzip (a ``.gz`` name or the gzip magic)."""
    path = _check(name)
    gzipped = _is_gzip(path)
    try:
        size = path.stat().st_size
    except OSError as error:
        raise FormatError(name, None, f"cannot be read: {error.strerror or error}") from None
    return size, gzipped


#: Bytes read between two calls of ``iter_range_lines``'s ``on_bytes``.
_REPORT_BYTES = 1 << 20


def _first_line_start(handle: BinaryIO, start: int, stop: int) -> int | None:
    """The first position p in [start, stop) at which a line starts (p = 0, or the byte before p is a newline)."""
    if start == 0:
        return 0
    handle.seek(start - 1)
    position = start - 1
    while position < stop - 1:
        block = handle.read(min(_REPORT_BYTES, stop - 1 - position))
        if not block:
            return None
        found = block.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(block)
    return None


def iter_range_lines(
    name: str, start: int, stop: int, *, gzipped: bool, on_bytes: Callable[[int], None] | None = None
) -> Iterator[str]:
    """The lines (with their line ends) of one byte range of a file, decoded as UTF-8 as ``iter_lines`` decodes them.

    A range holds the lines that start in bytes [start, stop): a line that runs past ``stop`` is read to its end,
    and one that starts before ``start`` belongs to the range before, so consecutive ranges that cover a file
    give each of its lines exactly once.  A gzip file cannot be cut: it is read whole, whatever the range.
    ``on_bytes(n)`` is told every megabyte or so how many more bytes of [start, stop) have been read (for gzip,
    of the compressed file); by the end they add up to stop − start.  Errors as ``iter_lines`` words them.
    """
    path = _check(name)
    reported = 0

    def report(done: int, final: bool = False) -> None:
        nonlocal reported
        done = min(done, stop - start)
        if on_bytes is not None and (final or done - reported >= _REPORT_BYTES) and done > reported:
            on_bytes(done - reported)
            reported = done

    try:
        with path.open("rb") as raw:
            if gzipped:
                offset = 0
                with gzip_stream(name, raw) as handle:  # damaged data: impl.io.files' one error
                    for count, line in enumerate(handle):
                        try:
                            yield line.decode("utf-8")
                        except UnicodeDecodeError as error:
                            raise FormatError(name, None, f"not valid UTF-8 at byte {offset + error.start}") from None
                        offset += len(line)
                        if count & 1023 == 0:
                            report(raw.tell())
            else:
                position = _first_line_start(raw, start, stop)
                if position is not None:
                    raw.seek(position)
                    while position < stop:
                        line = raw.readline()
                        if not line:
                            break
                        try:
                            yield line.decode("utf-8")
                        except UnicodeDecodeError as error:
                            raise FormatError(
                                name, None, f"not valid UTF-8 at byte {position + error.start}"
                            ) from None
                        position += len(line)
                        report(position - start)
            report(stop - start, final=True)
    except OSError as error:
        raise FormatError(name, None, f"cannot be read: {error.strerror or error}") from None
