"""Reading and decompressing files, with every failure turned into ``FormatError``."""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from bpeproof.impl.io.errors import FormatError, os_problem

#: The two bytes every gzip member starts with.
GZIP_MAGIC = b"\x1f\x8b"

#: A JSON value as ``json.loads`` returns it.
JSON = object


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
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise FormatError(path, "gzip data", f"corrupt or truncated gzip data: {exc}") from exc
    if is_gzip_name(path):
        raise FormatError(path, "byte 0", "the name ends in .gz but the file is not gzip data")
    return raw


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The content of ``path``, decompressed when it is gzip data."""
    return decompress(path, read_raw(path))


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
