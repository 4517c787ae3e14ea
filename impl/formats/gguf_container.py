"""GGUF files, llama.cpp's model format: the container, its magic, version and typed key-value pairs.

A GGUF file starts with the magic ``GGUF``, a version (2 or 3), the numbers of tensors and of key-value
pairs, then the key-value pairs (typed scalars, strings and arrays), then the tensors.  Only the key-value
pairs are read here (a multi-gigabyte model file is mapped, never read whole; a ``.gz`` file is decompressed).
The tokenizer stored among them is read by ``bpeproof.impl.formats.gguf_tokenizer``.

The numbers are read with ``struct`` rather than the ``gguf`` package's ``GGUFReader``, which makes a NumPy
array for every string and takes seconds on a vocabulary of 150 000 tokens; the tests check both readers agree.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import struct
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from bpeproof.impl.io.c_readers import c_readers
from bpeproof.impl.io.errors import FormatError, os_problem
from bpeproof.impl.io.files import GZIP_MAGIC, gunzip, is_gzip_name

__all__ = [
    "GGUF_MAGIC",
    "TYPE_NAMES",
    "GGUFMetadata",
    "parse_gguf_metadata",
    "read_gguf_metadata",
]

GGUF_MAGIC = b"GGUF"

#: The value types of GGUF, by their number in the file.
TYPE_NAMES = {0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 6: "f32", 7: "bool", 8: "string",
              9: "array", 10: "u64", 11: "i64", 12: "f64"}
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "B", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
#: llama.cpp's longest string (``GGUF_MAX_STRING_LENGTH``).
_MAX_STRING = 1 << 30


@dataclass(frozen=True)
class GGUFMetadata:
    """The key-value pairs of a GGUF file: ``values`` (Python values; arrays as lists) and ``types``
    (``"u32"``, ``"string"``, ``"array[i32]"``, …) by key, in file order.  Skipped values are absent from
    ``values`` but typed in ``types``.  ``end``: the offset where the pairs end (the tensors' part begins)."""

    path: str
    version: int
    tensor_count: int
    values: dict[str, Any]
    types: dict[str, str]
    end: int = 0


class _Reader:
    """Little-endian fields of a buffer, every overrun a ``FormatError`` naming the byte offset and the key."""

    def __init__(self, path: str, buffer: bytes | mmap.mmap) -> None:
        self.path = path
        self.buffer = buffer
        self.size = len(buffer)
        self.offset = 0
        self.key: str | None = None

    def fail(self, problem: str, at: int | None = None) -> FormatError:
        where = f"byte {self.offset if at is None else at}"
        if self.key is not None:
            where += f", key {self.key!r}"
        return FormatError(self.path, where, problem)

    def take(self, size: int, what: str) -> int:
        start = self.offset
        if size > self.size - start:
            raise self.fail(f"the file ends inside {what} (truncated: {self.size} bytes)")
        self.offset = start + size
        return start

    def scalar(self, code: str, size: int, what: str) -> Any:
        start = self.take(size, what)
        return struct.unpack_from("<" + code, self.buffer, start)[0]

    def string(self, what: str) -> bytes:
        size = self.scalar("Q", 8, f"the length of {what}")
        if size > _MAX_STRING:
            raise self.fail(f"{what} is {size} bytes long, more than llama.cpp reads ({_MAX_STRING})")
        start = self.take(size, what)
        return bytes(self.buffer[start : start + size])


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def _read_value(reader: _Reader, kind: int, keep: bool) -> tuple[str, Any]:
    """(type name, value) of one value of type ``kind``; the value is None when not ``keep``."""
    if kind in _SCALARS:
        code = _SCALARS[kind]
        value = reader.scalar(code, struct.calcsize(code), f"a {TYPE_NAMES[kind]} value")
        return TYPE_NAMES[kind], (bool(value) if kind == 7 else value)
    if kind == _STRING:
        data = reader.string("a string value")
        return "string", _decode(data) if keep else None
    if kind != _ARRAY:
        raise reader.fail(f"unknown value type {kind}")
    item = reader.scalar("I", 4, "the item type of an array")
    count = reader.scalar("Q", 8, "the length of an array")
    if item == _ARRAY:
        raise reader.fail("an array of arrays (llama.cpp does not read nested arrays)")
    if item == _STRING:
        if count > (reader.size - reader.offset) // 8:
            raise reader.fail(f"an array of {count} strings does not fit in the rest of the file (truncated)")
        fast = c_readers()
        if fast is not None:
            texts, offset, number = fast.length_prefixed(reader.buffer, reader.offset, count, keep)
            if offset > reader.size:
                raise reader.fail(f"the file ends inside string {number} of an array of {count} (truncated)")
            reader.offset = offset
            return "array[string]", texts
        buffer = reader.buffer
        unpack = struct.Struct("<Q").unpack_from
        offset = reader.offset
        end = reader.size
        strings: list[bytes] = []
        append = strings.append
        number = 0
        try:
            for number in range(count):  # noqa: B007 - kept for the message
                start = offset + 8
                offset = start + unpack(buffer, offset)[0]
                if keep:
                    append(buffer[start:offset])
        except struct.error:
            offset = end + 1
        if offset > end:
            raise reader.fail(f"the file ends inside string {number} of an array of {count} (truncated)")
        reader.offset = offset
        if not keep:
            return "array[string]", None
        joined = b"\0".join(strings)
        if joined.count(0) == max(count - 1, 0):
            return "array[string]", joined.decode("utf-8", "surrogateescape").split("\0") if count else []
        return "array[string]", [data.decode("utf-8", "surrogateescape") for data in strings]
    if item not in _SCALARS:
        raise reader.fail(f"an array of the unknown value type {item}")
    code = _SCALARS[item]
    width = struct.calcsize(code)
    if count > (reader.size - reader.offset) // width:
        raise reader.fail(f"an array of {count} {TYPE_NAMES[item]} values does not fit in the rest of the file"
                          " (truncated)")
    start = reader.take(count * width, "an array")
    name = f"array[{TYPE_NAMES[item]}]"
    if not keep:
        return name, None
    raw = bytes(reader.buffer[start : start + count * width])
    values = array(code)
    if values.itemsize != width or struct.pack("=H", 1) != struct.pack("<H", 1):  # pragma: no cover - other C
        return name, [bool(v) if item == 7 else v for v in struct.unpack(f"<{count}{code}", raw)]
    values.frombytes(raw)
    return name, ([bool(v) for v in values] if item == 7 else values.tolist())


def parse_gguf_metadata(path: str | os.PathLike[str], buffer: bytes | mmap.mmap,
                        keep: Callable[[str], bool] | None = None) -> GGUFMetadata:
    """The key-value pairs of the GGUF file in ``buffer``, checked as llama.cpp's ``gguf_init_from_file`` does.

    ``keep(key)`` false: the value is walked over, not decoded.  Raises ``FormatError`` for a wrong magic, an
    unsupported version (1, or above 3, or a file of the other byte order), a truncated pair, an unknown type,
    an empty or repeated key, or a ``general.alignment`` that is not a u32 power of two.
    """
    name = os.fspath(path)
    reader = _Reader(name, buffer)
    magic = bytes(buffer[:4])
    if magic != GGUF_MAGIC:
        shown = magic.decode("latin-1").encode("unicode_escape").decode("ascii")
        raise FormatError(name, "byte 0", f"not a GGUF file: the magic is {shown!r}, expected 'GGUF'")
    reader.offset = 4
    version = reader.scalar("I", 4, "the version")
    if version & 0xFFFF == 0:
        raise FormatError(name, "byte 4", f"GGUF version {version} is the byte order of another machine"
                          " (llama.cpp reads files of its own byte order only)")
    if version == 1:
        raise FormatError(name, "byte 4", "GGUF version 1 is no longer read by llama.cpp")
    if version not in (2, 3):
        raise FormatError(name, "byte 4", f"GGUF version {version} is not supported (only 2 and 3)")
    tensor_count = reader.scalar("Q", 8, "the number of tensors")
    kv_count = reader.scalar("Q", 8, "the number of key-value pairs")
    if tensor_count >= 1 << 63 or kv_count >= 1 << 63:
        raise FormatError(name, "byte 8", "the numbers of tensors and of key-value pairs must be below 2**63")
    values: dict[str, Any] = {}
    types: dict[str, str] = {}
    for index in range(kv_count):
        reader.key = None
        start = reader.offset
        raw_key = reader.string(f"the key of pair {index}")
        if not raw_key:
            raise reader.fail(f"key-value pair {index} has an empty key", start)
        key = _decode(raw_key)
        if key in types:
            raise reader.fail(f"the key {key!r} occurs twice", start)
        reader.key = key
        kind = reader.scalar("I", 4, "the value type")
        wanted = keep is None or keep(key)
        type_name, value = _read_value(reader, kind, wanted)
        types[key] = type_name
        if wanted:
            values[key] = value
    reader.key = None
    alignment = types.get("general.alignment")
    if alignment is not None:
        value = values.get("general.alignment")
        if alignment != "u32":
            raise FormatError(name, "key 'general.alignment'", f"must be a u32, not {alignment}")
        if value is not None and (value == 0 or value & (value - 1)):
            raise FormatError(name, "key 'general.alignment'", f"{value} is not a power of 2")
    return GGUFMetadata(name, version, tensor_count, values, types, reader.offset)


@contextlib.contextmanager
def _open_buffer(path: str | os.PathLike[str]) -> Iterator[bytes | mmap.mmap]:
    """The file's bytes: mapped (a model file may be gigabytes; only the front is touched) or decompressed."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - kept open while mapped
    except OSError as exc:
        raise FormatError(path, None, os_problem(exc)) from exc
    with handle:
        head = handle.read(4)
        if head[:2] == GZIP_MAGIC:
            handle.seek(0)
            yield gunzip(path, handle.read())
            return
        if is_gzip_name(path):
            raise FormatError(path, "byte 0", "the name ends in .gz but the file is not gzip data")
        if len(head) < 4:
            handle.seek(0)
            yield handle.read()
            return
        try:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            handle.seek(0)
            yield handle.read()
            return
        try:
            yield mapped
        finally:
            mapped.close()


def read_gguf_metadata(path: str | os.PathLike[str], keep: Callable[[str], bool] | None = None) -> GGUFMetadata:
    """``parse_gguf_metadata`` of the file at ``path`` (plain or gzip-compressed)."""
    with _open_buffer(path) as buffer:
        return parse_gguf_metadata(path, buffer, keep)
