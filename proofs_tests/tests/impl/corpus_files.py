"""Files the parallel tests read: texts written as plain or gzip files, and the ``.npy`` arrays of ids the encoder
writes, read back without numpy."""

from __future__ import annotations

import ast
import gzip
import sys
from array import array
from collections.abc import Collection
from pathlib import Path


def write_files(directory: Path, texts: list[str], gzipped: Collection[int] = ()) -> list[str]:
    names = []
    for index, text in enumerate(texts):
        data = text.encode("utf-8")
        path = directory / (f"part{index}.txt.gz" if index in gzipped else f"part{index}.txt")
        path.write_bytes(gzip.compress(data) if index in gzipped else data)
        names.append(str(path))
    return names


def read_npy(path: Path) -> list[int]:
    """A one-dimensional '<u4' .npy file, read without numpy."""
    data = path.read_bytes()
    assert data[:8] == b"\x93NUMPY\x01\x00", data[:8]
    length = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10 : 10 + length].decode("latin-1"))
    assert header["descr"] == "<u4" and header["fortran_order"] is False
    (count,) = header["shape"]
    ids = array("I")
    ids.frombytes(data[10 + length :])
    if sys.byteorder == "big":  # pragma: no cover
        ids.byteswap()
    assert len(ids) == count
    return ids.tolist()
