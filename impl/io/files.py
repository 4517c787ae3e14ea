"""Reading and decompressing files, with every failure turned into ``FormatError``.

This is the one reader of compressed input: a whole file (``read_bytes``, ``decompress``), its first bytes
(``read_head``) or a stream (``open_binary``, for corpora read line by line).  Damaged gzip data (a flipped bit, a
truncated file) is found while the data is decompressed, which for a stream is whenever it is read, long after it
was opened; each of these turns it into one ``FormatError`` naming the file, "corrupt or truncated gzip data: …",
wherever it is found, so that no ``zlib.error`` or ``EOFError`` reaches a command.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, BinaryIO, NoReturn, cast

from bpeproof.impl.io.errors import FormatError, os_problem

#: The two bytes every gzip member starts with.
GZIP_MAGIC = b"\x1f\x8b"

#: A JSON value as ``json.loads`` returns it.
JSON = object

#: What damaged gzip data raises while it is decompressed (``gzip.BadGzipFile`` is an ``OSError``).
GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)


def gzip_error(path: str | os.PathLike[str], error: BaseException) -> FormatError:
    """The one error for damaged gzip data, in the one wording of every command."""
    return FormatError(path, None, f"corrupt or truncated gzip data: {error}")


def is_gzip_name(path: str | os.PathLike[str]) -> bool:
    """True when the file name asks for gzip compression (it ends in ``.gz``)."""
    return os.fspath(path).lower().endswith(".gz")


def read_raw(path: str | os.PathLike[str]) -> bytes:
    """The bytes of ``path``, raising ``FormatError`` when the file cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise FormatError(path, None, os_problem(exc)) from exc


def decompress(path: str | os.PathLike[str], raw: bytes) -> bytes:
    """``raw`` decompressed when it is gzip data (by its name or its first bytes), else unchanged.

    A name ending in ``.gz`` must hold gzip data; data starting with the gzip
    magic bytes is decompressed whatever its name.  Truncated or corrupt gzip
    data raises ``FormatError``.
    """
    if raw.startswith(GZIP_MAGIC):
        return gunzip(path, raw)
    if is_gzip_name(path):
        raise FormatError(path, "byte 0", "the name ends in .gz but the file is not gzip data")
    return raw


def gunzip(path: str | os.PathLike[str], raw: bytes) -> bytes:
    """``raw`` decompressed as gzip data; anything else, truncated or corrupt, raises ``gzip_error``."""
    try:
        return gzip.decompress(raw)
    except (OSError, *GZIP_ERRORS) as exc:
        raise gzip_error(path, exc) from exc


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The content of ``path``, decompressed when it is gzip data."""
    return decompress(path, read_raw(path))


class _CheckedGzip(gzip.GzipFile):
    """A gzip stream whose damaged data raises ``gzip_error`` when it is read, not ``zlib.error``."""

    def __init__(self, source: str | os.PathLike[str], fileobj: IO[bytes]) -> None:
        super().__init__(fileobj=fileobj, mode="rb")
        self._source = source

    def read(self, size: int | None = -1) -> bytes:
        try:
            return super().read(size)
        except GZIP_ERRORS as exc:
            raise gzip_error(self._source, exc) from exc

    def read1(self, size: int = -1) -> bytes:
        try:
            return super().read1(size)
        except GZIP_ERRORS as exc:
            raise gzip_error(self._source, exc) from exc

    def readline(self, size: int | None = -1) -> bytes:
        try:
            return super().readline(size)
        except GZIP_ERRORS as exc:
            raise gzip_error(self._source, exc) from exc

    def peek(self, n: int) -> bytes:
        try:
            return super().peek(n)
        except GZIP_ERRORS as exc:
            raise gzip_error(self._source, exc) from exc


def is_gzip_file(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is read as gzip: its name ends in ``.gz`` or it starts with the gzip magic bytes."""
    if is_gzip_name(path):
        return True
    try:
        with open(path, "rb") as handle:
            return handle.read(2) == GZIP_MAGIC
    except OSError as exc:
        raise FormatError(path, None, os_problem(exc)) from exc


@contextlib.contextmanager
def gzip_stream(path: str | os.PathLike[str], raw: IO[bytes]) -> Iterator[BinaryIO]:
    """The decompressed stream of the open gzip file ``raw``; damaged data raises ``gzip_error`` when read."""
    with _CheckedGzip(path, raw) as handle:
        yield cast(BinaryIO, handle)  # a GzipFile reads as a binary file does


@contextlib.contextmanager
def open_binary(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """``path`` opened for reading, decompressed when it is gzip (``is_gzip_file``); a file that cannot be opened
    raises ``FormatError``, and so does damaged gzip data whenever it is read."""
    gzipped = is_gzip_file(path)
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed below, after the stream that reads it
    except OSError as exc:
        raise FormatError(path, None, os_problem(exc)) from exc
    with raw:
        if not gzipped:
            yield raw
            return
        with gzip_stream(path, raw) as handle:
            yield handle


def read_head(path: str | os.PathLike[str], size: int) -> bytes:
    """The first ``size`` bytes of ``path``'s content, decompressed when it is gzip data, as ``decompress`` decides
    it (by its first bytes; a name ending in ``.gz`` must hold gzip data), without reading the rest."""
    try:
        with open(path, "rb") as raw:
            if raw.read(2) != GZIP_MAGIC:
                if is_gzip_name(path):
                    raise FormatError(path, "byte 0", "the name ends in .gz but the file is not gzip data")
                raw.seek(0)
                return raw.read(size)
            raw.seek(0)
            with gzip_stream(path, raw) as handle:
                return handle.read(size)
    except OSError as exc:
        raise FormatError(path, None, os_problem(exc)) from exc


def decode_utf8(path: str | os.PathLike[str], data: bytes) -> str:
    """``data`` as UTF-8 text; invalid UTF-8 raises ``FormatError`` naming the line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(path, f"line {line}", f"invalid UTF-8 at byte {exc.start}: {exc.reason}") from exc


def _no_duplicate_keys(path: str | os.PathLike[str]) -> Callable[[list[tuple[str, JSON]]], dict[str, JSON]]:
    def hook(pairs: list[tuple[str, JSON]]) -> dict[str, JSON]:
        out = dict(pairs)
        if len(out) == len(pairs):
            return out
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise FormatError(path, f"key {key!r}", "the key occurs twice in one JSON object")
            seen.add(key)
        return out  # pragma: no cover - a shorter dict has a repeated key

    return hook


def _reject_constant(path: str | os.PathLike[str]) -> Callable[[str], NoReturn]:
    def hook(name: str) -> NoReturn:
        raise FormatError(path, None, f"{name} is not valid JSON")

    return hook


def parse_json(path: str | os.PathLike[str], data: bytes) -> JSON:
    """The JSON value in ``data`` (UTF-8); bad JSON and duplicate keys raise ``FormatError``."""
    text = decode_utf8(path, data)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys(path), parse_constant=_reject_constant(path))
    except json.JSONDecodeError as exc:
        raise FormatError(path, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}") from exc
    except RecursionError as exc:
        raise FormatError(path, None, "JSON nested too deeply") from exc
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise FormatError(path, None, f"invalid JSON: {exc}") from exc


def compress_if_gz(path: str | os.PathLike[str], data: bytes) -> bytes:
    """``data`` gzip-compressed (reproducibly: no time stamp, no name) when ``path`` ends in ``.gz``."""
    if is_gzip_name(path):
        return gzip.compress(data, compresslevel=9, mtime=0)
    return data
