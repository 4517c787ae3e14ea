"""Tables the engine computes from the ``regex`` module's Unicode data, kept on disk between runs: the C scanner's
code point classes (``bpeproof.impl.pre_tokenizers.char_table``) and the code points whose category changed since
``UNICODE_VERSION`` (``bpeproof.impl.pre_tokenizers.unicode_classes``).  Computing one takes from tens of
milliseconds to seconds, reading it a millisecond.

Where: ``bpeproof`` in ``$XDG_CACHE_HOME`` (else ``~/.cache``).  Key: the table's name and what the caller says it
depends on, the installed ``regex`` module (the names, sizes and times of its files, found without importing it:
most loads never need the module), Python's Unicode version and Python's version.  A stored table ends with its
SHA-256, checked when it is read; a table that cannot be read or written is only computed again.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from bpeproof.impl.io.atomic import atomic_write_bytes

__all__ = ["store_table", "stored_table"]

_DIGEST = 32


def _regex_files() -> str:
    """The installed ``regex`` package as its files' names, sizes and modification times (its Unicode tables are
    compiled into one of them)."""
    import importlib.util

    spec = importlib.util.find_spec("regex")
    if spec is None or spec.origin is None:
        return "no regex"
    folder = os.path.dirname(spec.origin)
    found = []
    for entry in sorted(os.scandir(folder), key=lambda entry: entry.name):
        if entry.is_file():
            status = entry.stat()
            found.append(f"{entry.name}:{status.st_size}:{status.st_mtime_ns}")
    return f"{folder}|{'|'.join(found)}"


def _path(name: str, depends: str) -> Path:
    import unicodedata

    key = f"{name}|{depends}|{_regex_files()}|{unicodedata.unidata_version}|{sys.version_info[:2]}"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bpeproof"
    return base / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.bin"


def stored_table(name: str, depends: str) -> bytes | None:
    """The table stored under ``name`` for ``depends``, or None when there is no whole one."""
    try:
        data = _path(name, depends).read_bytes()
    except OSError:
        return None
    table, digest = data[:-_DIGEST], data[-_DIGEST:]
    if len(data) < _DIGEST or hashlib.sha256(table).digest() != digest:
        return None
    return table


def store_table(name: str, depends: str, table: bytes) -> None:
    """Keep ``table`` for the next run; a cache that cannot be written is only slower."""
    try:
        path = _path(name, depends)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, table + hashlib.sha256(table).digest())
    except OSError:
        pass
