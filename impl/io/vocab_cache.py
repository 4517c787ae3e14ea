"""The compiled-vocabulary cache: what loading a vocabulary file computed, kept on disk so that the next load of
the same file reads it instead of computing it again.

Where: the directory ``BPEPROOF_CACHE_DIR`` names, else ``vocabs`` in the user's cache directory as
``platformdirs.user_cache_dir("bpeproof")`` gives it (``~/.cache/bpeproof/vocabs`` on Linux).  Off:
``BPEPROOF_NO_CACHE=1`` in the environment, ``--no-cache`` on the command line, ``cache=False`` in Python.

Key.  An entry is found by the SHA-256 of everything its content depends on: the file's bytes as stored (read
whole; compressed files are not decompressed for it; the caller may key a large file by the part that matters,
as ``bpeproof.impl.pipelines.compiled_vocab`` does for a GGUF model), the options that change the result (the
path as given, the pattern, ...), the
cache format (``FORMAT``), whether the C extension runs, Python's version, the byte order, and the engine's code
(the name, size and time of every module of ``bpeproof.impl``, so that an entry written by other code is never
read).  Changing one byte of the file finds another entry.

Entry.  One file ``<key>.bpv``: the magic ``MAGIC``, the length of a JSON header (8 bytes, little-endian), the
header (the key, the kind of record, the sections' places, the description of the value:
``bpeproof.impl.io.packed_state``), the sections, and the CRC-32 of everything before it (which catches a damaged
or truncated entry, several times faster than a SHA-256 over tens of megabytes; the key, which must not collide,
is a SHA-256).  Nothing in it is code, nor the name of any: unpacking makes only the classes the caller gives
for the entry's kind of record (as class objects, imported by the caller's code).

Safety.  An entry is written to a temporary file in the same directory and renamed over its name
(``os.replace``), so that readers see a whole entry or none, and two processes writing the same entry at once
each rename a whole file of their own.  Reading checks the magic, the length, the CRC, the key and the
unpacking; an entry that fails any of these (truncated, damaged, another key's, another format's) is ignored and
removed, and the vocabulary is loaded from its file.  A directory that cannot be created or written only means
no cache: no error is raised, loading works as without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bpeproof.impl.io.packed_state import UnpackableError, pack, unpack

__all__ = [
    "DIRECTORY_VARIABLE",
    "FORMAT",
    "MAGIC",
    "OFF_VARIABLE",
    "CacheEntry",
    "cache_directory",
    "caching_enabled",
    "file_digest",
]

#: The cache format: changed whenever the layout of an entry or of its descriptions changes (4: classes named by
#: their place among the record's kind's, objects stored by their ``packed()``).
FORMAT = 4
#: The first bytes of every entry.
MAGIC = b"BPEPVOC\x04"
#: The environment variables: the cache's directory, and any value but "" or "0" to turn it off.
DIRECTORY_VARIABLE = "BPEPROOF_CACHE_DIR"
OFF_VARIABLE = "BPEPROOF_NO_CACHE"
_CHECK = 4
_CODE: str | None = None


def caching_enabled(cache: bool = True) -> bool:
    """Whether a load may use the cache: ``cache`` and not turned off by ``BPEPROOF_NO_CACHE``."""
    return cache and os.environ.get(OFF_VARIABLE, "") in ("", "0")


def cache_directory() -> Path | None:
    """The directory of the entries (not created here); None when no user cache directory can be named."""
    named = os.environ.get(DIRECTORY_VARIABLE)
    if named:
        return Path(named)
    try:
        import platformdirs
    except ImportError:  # pragma: no cover - a dependency; without it there is no cache
        return None
    return Path(platformdirs.user_cache_dir("bpeproof", appauthor=False)) / "vocabs"


def file_digest(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, as stored; ``OSError`` when it cannot be read."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _code_fingerprint() -> str:
    """The engine's code as the key sees it: the relative name, size and time of every module of
    ``bpeproof.impl`` (Python and compiled), folder by folder in order."""
    global _CODE
    if _CODE is None:
        found: list[str] = []
        folders = [(str(Path(__file__).resolve().parents[1]), "")]
        while folders:
            folder, prefix = folders.pop()
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
            for entry in entries:
                if entry.is_dir():
                    if entry.name != "__pycache__":
                        folders.append((entry.path, f"{prefix}{entry.name}/"))
                elif entry.name.endswith((".py", ".so", ".pyd")):
                    status = entry.stat()
                    found.append(f"{prefix}{entry.name}:{status.st_size}:{status.st_mtime_ns}")
        _CODE = hashlib.sha256("\n".join(found).encode()).hexdigest()
    return _CODE


def _places(sections: list[bytes]) -> list[list[int]]:
    """Where each section starts after the header, and its length."""
    places: list[list[int]] = []
    offset = 0
    for section in sections:
        places.append([offset, len(section)])
        offset += len(section)
    return places


class CacheEntry:
    """The entry of one vocabulary, under the key of its content and options, in ``directory``."""

    def __init__(self, directory: Path, content: str, options: Mapping[str, Any]) -> None:
        material = {"format": FORMAT, "content": content, "options": dict(options), "code": _code_fingerprint(),
                    "python": list(sys.version_info[:2]), "byteorder": sys.byteorder}
        self.key = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
        self.path = directory / f"{self.key[:40]}.bpv"

    def read(self, classes_of: Callable[[str], Sequence[type]]) -> Any:
        """The value stored under this key, or None when there is none that holds together (removed then);
        ``classes_of``: the classes an entry of a kind may hold (as ``write`` was given them), by the kind the
        entry names (``KeyError`` for a kind there is not)."""
        try:
            data = self.path.read_bytes()
        except OSError:
            return None
        try:
            return self._parse(memoryview(data), classes_of)
        except (UnpackableError, ValueError, KeyError, TypeError, IndexError):
            self.remove()
            return None

    def _parse(self, data: memoryview, classes_of: Callable[[str], Sequence[type]]) -> Any:
        head = len(MAGIC) + 8
        if len(data) < head + _CHECK or data[: len(MAGIC)] != MAGIC:
            raise ValueError("not an entry of this format")
        if zlib.crc32(data[:-_CHECK]).to_bytes(_CHECK, "little") != data[-_CHECK:]:
            raise ValueError("damaged or truncated")
        size = int.from_bytes(data[len(MAGIC) : head], "little")
        header = json.loads(bytes(data[head : head + size]))
        if header["key"] != self.key:
            raise ValueError("another key's entry")
        body = head + size
        end = len(data) - _CHECK
        sections = []
        for offset, length in header["sections"]:
            if offset < 0 or length < 0 or body + offset + length > end:
                raise ValueError("a section outside the entry")
            sections.append(data[body + offset : body + offset + length])
        kind = header["kind"]
        if not isinstance(kind, str):
            raise ValueError("an entry of no kind")
        return unpack(header["value"], sections, classes_of(kind))

    def write(self, value: Any, kind: str, classes: Sequence[type]) -> bool:
        """Store ``value`` under this key, as a record of ``kind`` whose objects are of ``classes`` (``read`` is
        given them again by that kind); False (and nothing stored) when it cannot be packed or written."""
        try:
            description, sections = pack(value, classes)
            header = json.dumps({"key": self.key, "kind": kind, "sections": _places(sections), "value": description},
                                separators=(",", ":")).encode()
        except (UnpackableError, ValueError):
            return False
        check = 0
        parts = [MAGIC, len(header).to_bytes(8, "little"), header, *sections]
        for part in parts:
            check = zlib.crc32(part, check)
        parts.append(check.to_bytes(_CHECK, "little"))
        return self._store(parts)

    def _store(self, parts: list[bytes]) -> bool:
        temporary = self.path.with_name(f".{self.path.name}.{os.urandom(8).hex()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(temporary, "xb") as handle:
                handle.writelines(parts)
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            return False
        return True

    def remove(self) -> None:
        """Remove the entry (a damaged one); nothing happens when it cannot be removed."""
        with contextlib.suppress(OSError):
            os.unlink(self.path)
