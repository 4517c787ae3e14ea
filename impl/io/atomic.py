"""Atomic file writes: a temporary file in the same folder, renamed over the target, or nothing written.

A file written with ``atomic_write_bytes`` is either the complete new content
or, if anything fails on the way, the old file untouched: the data goes to a
temporary file in the same directory, is flushed and fsynced, and only then
renamed over the target with ``os.replace`` (atomic on POSIX and Windows when
both names are on one file system).  The directory is fsynced afterwards where
the platform allows it, so that the rename itself survives a crash.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from bpeproof.impl.io.errors import MissingFolderError

__all__ = ["atomic_write_bytes", "atomic_write_files", "atomic_write_text", "naming"]


def _fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable; a no-op where directories cannot be opened (Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _create_temporary(directory: Path, name: str) -> tuple[int, str]:
    """Open a new, uniquely named file next to the target; mode 0o666 less the umask, like ``open``."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        temp_name = str(directory / f".{name}.{os.urandom(8).hex()}.tmp")
        try:
            return os.open(temp_name, flags, 0o666), temp_name
        except FileExistsError:
            continue


def naming(error: OSError, path: str | os.PathLike[str]) -> OSError:
    """The same error about the file asked for, not the temporary file next to it."""
    if error.errno is None:
        return error
    parent = Path(path).parent
    if isinstance(error, FileNotFoundError) and not parent.is_dir():
        # The temporary file is created next to the target: what is missing is the target's folder.
        return MissingFolderError(error.errno, error.strerror, os.fspath(path))
    return type(error)(error.errno, error.strerror, os.fspath(path))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace the file at ``path`` by ``data`` all at once: readers see the old or the new file, never a part.

    On any error (including a full disk or an interrupted write) the temporary
    file is removed, the old file is left as it was, and the error propagates.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, not {type(data).__name__}")
    atomic_write_files([(path, bytes(data))])


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    """``atomic_write_bytes`` for text, encoded with ``encoding`` (UTF-8 by default, strict)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_files(files: list[tuple[str | os.PathLike[str], bytes]]) -> None:
    """Write several files that belong together (GPT-2's ``encoder.json`` and ``vocab.bpe``): every content goes to
    its temporary file and is fsynced first, and only then are they renamed over their targets, one right after
    the other.  A failure before the renames leaves every old file as it was; only a kill between two renames
    (microseconds apart) could pair a new file with an old one."""
    written: list[tuple[Path, str, Path]] = []
    try:
        for path, data in files:
            target = Path(os.fspath(path))
            directory = target.parent if str(target.parent) else Path(".")
            if target.is_dir():
                raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", os.fspath(path))
            try:
                fd, temp_name = _create_temporary(directory, target.name)
            except OSError as error:
                raise naming(error, path) from None
            written.append((target, temp_name, directory))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            if target.exists():
                with contextlib.suppress(OSError):
                    os.chmod(temp_name, target.stat().st_mode & 0o7777)
        for target, temp_name, _ in written:
            os.replace(temp_name, target)
    except BaseException as error:
        for _, temp_name, _ in written:
            with contextlib.suppress(OSError):
                os.unlink(temp_name)
        named = {temp_name: target for target, temp_name, _ in written}
        if isinstance(error, OSError) and error.filename in named:
            raise naming(error, named[error.filename]) from None  # the file asked for, not the temporary one
        raise
    for directory in {directory for _, _, directory in written}:
        _fsync_directory(directory)
