"""Reading corpora: UTF-8 text files, plain or gzip, streamed by line or read whole; one wording for every failure.

``train``, ``trace`` and ``audit --corpus`` read their text here.  Every problem is a ``FormatError`` naming the
file: "no such file", "is a directory, not a file", "cannot be read: …", "corrupt or truncated gzip data: …",
"not valid UTF-8 at byte N".  ``-`` is standard input.
"""

from __future__ import annotations

import gzip
import os
import sys
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from bpeproof.impl.errors import FormatError

__all__ = ["iter_lines", "read_text"]

_GZIP_MAGIC = b"\x1f\x8b"


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
            return handle.read(2) == _GZIP_MAGIC
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
        try:
            with (gzip.open(path, "rb") if _is_gzip(path) else path.open("rb")) as handle:
                for raw in handle:
                    try:
                        yield raw.decode("utf-8")
                    except UnicodeDecodeError as error:
                        raise FormatError(name, None, f"not valid UTF-8 at byte {offset + error.start}") from None
                    offset += len(raw)
        except (EOFError, zlib.error, gzip.BadGzipFile) as error:
            raise FormatError(name, None, f"corrupt or truncated gzip data: {error}") from None
        except OSError as error:
            raise FormatError(name, None, f"cannot be read: {error.strerror or error}") from None


def read_text(name: str | os.PathLike[str]) -> str:
    """The whole text of one file (``-``: standard input)."""
    text = os.fspath(name)
    return "".join(iter_lines([text]))
