"""Token ids on disk: one ``.npy`` array of uint32, or a directory of such arrays (shards) with an index.

``encode_files`` (``impl.parallel``) writes through a writer of this module: ``NpyWriter`` for one array,
``ShardWriter`` for shards.  Both write next to the target and put it in place only at ``commit``, so that a run
that fails or is stopped leaves nothing behind (``abort``).  numpy is not needed to write them.

One array (``tokens.npy``): format 1.0 of numpy's ``.npy``, a one-dimensional little-endian uint32 array, its
header padded to 128 bytes (``numpy.load``, or ``numpy.memmap(path, dtype="<u4", mode="r", offset=128)``).

Shards (``tokens/``): the ids cut into arrays of ``shard_tokens`` ids each (the last one shorter), named
``shard-00000.npy``, ``shard-00001.npy``, …, and ``index.json``::

    {"format": "bpeproof-token-shards", "version": 1, "dtype": "uint32", "tokens": 250000000,
     "shard_tokens": 100000000,
     "shards": [{"file": "shard-00000.npy", "start": 0, "tokens": 100000000}, ...],
     "files": [{"file": "a.txt", "start": 0, "tokens": 1234, "bytes": 5678}, ...],
     "tokenizer": {...}}

Every id has one place: id ``i`` of the whole is item ``i - start`` of the shard whose ``[start, start + tokens)``
holds it; ``files`` gives each input file's ids in the same numbering (a shard may end inside a file, as the
shards of pre-training datasets do).  ``read_shard_index`` checks an index against its shards.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bpeproof.impl.io.atomic import naming
from bpeproof.impl.io.errors import FormatError

__all__ = [
    "INDEX_NAME",
    "NPY_HEADER_BYTES",
    "SHARD_FORMAT",
    "NpyWriter",
    "Shard",
    "ShardWriter",
    "npy_header",
    "read_shard_index",
    "shard_name",
]

#: The .npy header is padded to this many bytes, so that it can be rewritten with the final length.
NPY_HEADER_BYTES = 128

#: The name and version of a shard directory's index.
SHARD_FORMAT = "bpeproof-token-shards"
SHARD_VERSION = 1
INDEX_NAME = "index.json"


def npy_header(length: int) -> bytes:
    """A .npy (format 1.0) header for a one-dimensional little-endian uint32 array of ``length`` items."""
    body = f"{{'descr': '<u4', 'fortran_order': False, 'shape': ({length},), }}"
    padded = body.ljust(NPY_HEADER_BYTES - 10 - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + len(padded).to_bytes(2, "little") + padded.encode("latin-1")


def shard_name(number: int) -> str:
    """The file name of shard ``number`` (from 0)."""
    return f"shard-{number:05d}.npy"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class NpyWriter:
    """Appends uint32 ids (little-endian bytes) to a temporary file next to ``path``; ``commit`` writes the length
    into the header and renames the file to ``path``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise IsADirectoryError(21, "is a directory, not a file", os.fspath(path))
        directory = self.path.parent if str(self.path.parent) else Path(".")
        try:
            import tempfile

            fd, self.temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=directory)
        except OSError as error:
            raise naming(error, path) from None
        self.handle = os.fdopen(fd, "wb")
        self.handle.write(npy_header(0))
        self.length = 0

    def write(self, data: bytes | memoryview) -> None:
        self.handle.write(data)
        self.length += len(data) // 4

    def commit(self, files: object = None) -> None:
        """Put the array in place (``files`` is for ``ShardWriter``'s index; one array has none)."""
        self.handle.seek(0)
        self.handle.write(npy_header(self.length))
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.handle.close()
        os.chmod(self.temporary, 0o666 & ~_umask())
        os.replace(self.temporary, self.path)

    def abort(self) -> None:
        with contextlib.suppress(OSError):
            self.handle.close()
        with contextlib.suppress(OSError):
            os.unlink(self.temporary)


class ShardWriter:
    """Appends uint32 ids to shards of ``shard_tokens`` ids in a temporary directory next to ``path``; ``commit``
    writes ``index.json`` and renames the directory to ``path``, which must not exist or be an empty directory."""

    def __init__(self, path: str | os.PathLike[str], shard_tokens: int, about: Mapping[str, Any]) -> None:
        if not isinstance(shard_tokens, int) or isinstance(shard_tokens, bool) or shard_tokens < 1:
            raise ValueError(f"shard_tokens must be an int >= 1, not {shard_tokens!r}")
        self.path = Path(path)
        self.shard_tokens = shard_tokens
        self.about = dict(about)
        if self.path.exists() and not self.path.is_dir():
            raise FileExistsError(17, "exists and is not a directory", os.fspath(path))
        if self.path.is_dir() and any(self.path.iterdir()):
            raise FileExistsError(17, "is a directory that is not empty (shards go into a new or empty one)",
                                  os.fspath(path))
        parent = self.path.parent if str(self.path.parent) else Path(".")
        try:
            import tempfile

            self.temporary = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=parent))
        except OSError as error:
            raise naming(error, path) from None
        self.shards: list[tuple[str, int]] = []
        self._current: NpyWriter | None = None

    def _close_current(self) -> None:
        if self._current is not None:
            self._current.commit()
            self.shards.append((self._current.path.name, self._current.length))
            self._current = None

    def write(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while len(view):
            if self._current is not None and self._current.length >= self.shard_tokens:
                self._close_current()
            if self._current is None:
                self._current = NpyWriter(self.temporary / shard_name(len(self.shards)))
            part = view[: (self.shard_tokens - self._current.length) * 4]
            self._current.write(part)
            view = view[len(part) :]

    def commit(self, files: object = None) -> None:
        """Write the index (with ``files``, the input files' entries) and put the directory in place."""
        self._close_current()
        shards, start = [], 0
        for name, tokens in self.shards:
            shards.append({"file": name, "start": start, "tokens": tokens})
            start += tokens
        index = {"format": SHARD_FORMAT, "version": SHARD_VERSION, "dtype": "uint32", "tokens": start,
                 "shard_tokens": self.shard_tokens, "shards": shards, "files": files or [], **self.about}
        with (self.temporary / INDEX_NAME).open("w", encoding="utf-8") as handle:
            handle.write(json.dumps(index, indent=2, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(self.temporary, 0o777 & ~_umask())
        try:
            os.replace(self.temporary, self.path)  # an empty directory at path is replaced
        except OSError as error:
            raise naming(error, self.path) from None

    def abort(self) -> None:
        if self._current is not None:
            self._current.abort()
        import shutil

        shutil.rmtree(self.temporary, ignore_errors=True)


@dataclass(frozen=True)
class Shard:
    """One shard of a directory: its ids are items [start, start + tokens) of the whole."""

    path: Path
    start: int
    tokens: int


def _npy_length(path: Path) -> int:
    """The length of a one-dimensional '<u4' .npy array as written by ``NpyWriter`` (header and size checked)."""
    name = os.fspath(path)
    try:
        with path.open("rb") as handle:
            head = handle.read(NPY_HEADER_BYTES)
            size = os.fstat(handle.fileno()).st_size
    except FileNotFoundError:
        raise FormatError(name, None, "no such file (named in the index)") from None
    except OSError as error:
        raise FormatError(name, None, f"cannot be read: {error.strerror or error}") from None
    text = head[10:].decode("latin-1", "replace")
    if head[:8] != b"\x93NUMPY\x01\x00" or "'descr': '<u4'" not in text or "'shape': (" not in text:
        raise FormatError(name, None, "not a one-dimensional uint32 .npy array")
    shape = text.split("'shape': (", 1)[1].split(",", 1)[0]
    if not shape.isdigit():
        raise FormatError(name, None, "not a one-dimensional uint32 .npy array")
    length = int(shape)
    if size != NPY_HEADER_BYTES + 4 * length:
        raise FormatError(name, None, f"holds {size - NPY_HEADER_BYTES} bytes of ids, its header says {length} ids")
    return length


def read_shard_index(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[Shard]]:
    """The index of a shard directory and its shards, checked: the format, every shard's file and length, and
    that the shards and the files each number the ids from 0 without a gap.  ``FormatError`` otherwise."""
    directory = Path(path)
    name = os.fspath(directory / INDEX_NAME)
    try:
        index = json.loads((directory / INDEX_NAME).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FormatError(name, None, "no such file: not a shard directory") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise FormatError(name, None, f"cannot be read as JSON: {error}") from None
    if not isinstance(index, dict) or index.get("format") != SHARD_FORMAT:
        raise FormatError(name, "format", f"not {SHARD_FORMAT!r}")
    if index.get("version") != SHARD_VERSION or index.get("dtype") != "uint32":
        raise FormatError(name, "version", f"version {index.get('version')!r} of dtype {index.get('dtype')!r}"
                          f" is not version {SHARD_VERSION} of uint32")
    shards: list[Shard] = []
    start = 0
    for number, entry in enumerate(index.get("shards") or []):
        where = f"shards[{number}]"
        if not isinstance(entry, dict) or entry.get("file") != shard_name(number) or entry.get("start") != start:
            raise FormatError(name, where, f"expected file {shard_name(number)!r} starting at id {start}")
        tokens = _npy_length(directory / shard_name(number))
        if entry.get("tokens") != tokens:
            raise FormatError(name, where, f"says {entry.get('tokens')!r} ids, the file holds {tokens}")
        shards.append(Shard(directory / shard_name(number), start, tokens))
        start += tokens
    if index.get("tokens") != start:
        raise FormatError(name, "tokens", f"says {index.get('tokens')!r} ids, the shards hold {start}")
    covered = 0
    for number, entry in enumerate(index.get("files") or []):
        if not isinstance(entry, dict) or entry.get("start") != covered or not isinstance(entry.get("tokens"), int):
            raise FormatError(name, f"files[{number}]", f"expected the file's ids to start at id {covered}")
        covered += entry["tokens"]
    if index.get("files") and covered != start:
        raise FormatError(name, "files", f"the files hold {covered} ids, the shards {start}")
    return index, shards
