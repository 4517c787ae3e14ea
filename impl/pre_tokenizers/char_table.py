"""The C pre-tokenizer's inputs: which patterns ``impl/_c/_fastenc_scan.h`` writes out by hand, and its table of
code point classes.

For tiktoken's patterns (cl100k, o200k, r50k) the pre-tokenizer is written out by hand in C
(``split_pattern`` in ``impl/_c/_fastenc_scan.h``, part of the extension ``impl/_c/_fastenc.c``), reading each
code point's classes of Unicode 16.0 from a table (``char_table``, built with
``bpeproof.impl.pre_tokenizers.unicode_classes``); the tests check it against ``regex.findall`` on the same
classes.  The table is computed with the ``regex`` module over every code point, once per process, and kept on
disk between runs, keyed by the versions it depends on and checked by its SHA-256.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bpeproof.impl.io.atomic import atomic_write_bytes
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.pre_tokenizers.unicode_classes import UNICODE_VERSION, pin_pattern

__all__ = ["HAND_WRITTEN", "char_table"]

_CHAR_TABLE: bytes | None = None

#: The patterns that ``impl/_c/_fastenc_scan.h`` (part of ``impl/_c/_fastenc.c``) writes out by hand, and its
#: number for each.
HAND_WRITTEN = {PATTERNS["cl100k"]: 0, PATTERNS["o200k"]: 1, PATTERNS["r50k"]: 2}


def char_table() -> bytes:
    """For every code point, its classes in Unicode 16.0, as ``split_pattern`` in ``_c/_fastenc_scan.h`` reads them.

    Two planes of 0x110000 bytes.  First plane: bit 0 ``\\p{L}``, bit 1 ``\\p{N}``, bit 2 ``\\s``,
    bits 3–6 which letter of "sdmtlver" (1–8) the code point matches under ``(?i:…)``, 0 for none.
    Second plane: bit 0 ``[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]``, bit 1 ``[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]``
    (o200k's classes).  Computed with the regex module on the classes written out as code point ranges of
    ``UNICODE_VERSION`` (``bpeproof.impl.pre_tokenizers.unicode_classes.pin_pattern``), so that the hand-written
    pre-tokenizers classify exactly as the patterns do under ``stand_ins``.  Built once per process, kept on disk.
    """
    global _CHAR_TABLE
    if _CHAR_TABLE is None:
        _CHAR_TABLE = _cached_char_table()
    if _CHAR_TABLE is None:
        import array

        import regex

        size = 0x110000
        points = array.array("I", range(size))
        if points.itemsize == 4 and sys.byteorder == "little":  # chr of every code point, quickly
            everything = points.tobytes().decode("utf-32-le", "surrogatepass")
        else:  # pragma: no cover - platforms with another int size or byte order
            everything = "".join(map(chr, range(size)))
        planes: list[bytearray] = []
        for classes in (
            ((1, r"\p{L}+"), (2, r"\p{N}+"), (4, r"(?:(?!\p{Cn})\s)+")),
            ((1, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"), (2, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]+")),
        ):
            combined = 0
            for flag, expression in classes:
                layer = bytearray(size)
                # The classes as UNICODE_VERSION has them (explicit ranges), not the regex module's own tables.
                for match in regex.finditer(pin_pattern(expression), everything):
                    layer[match.start() : match.end()] = bytes([flag]) * (match.end() - match.start())
                combined |= int.from_bytes(layer, "little")  # the flags are distinct bits: OR the layers at once
            planes.append(bytearray(combined.to_bytes(size, "little")))
        for index, letter in enumerate("sdmtlver", start=1):
            for match in regex.finditer(f"(?i:{letter})", everything):
                planes[0][match.start()] |= index << 3
        _CHAR_TABLE = bytes(planes[0] + planes[1])
        _store_char_table(_CHAR_TABLE)
    return _CHAR_TABLE


def _char_table_path() -> Path:
    """Where the code point table is kept between runs: keyed by the regex module's and Python's Unicode versions."""
    import hashlib
    import unicodedata

    import regex

    key = f"{regex.__version__}-{unicodedata.unidata_version}-{sys.version_info[:2]}-unicode-{UNICODE_VERSION}"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bpeproof"
    return base / f"chars-{hashlib.sha256(key.encode()).hexdigest()[:16]}.bin"


def _cached_char_table() -> bytes | None:
    """The table from the cache, if a complete one is there (its SHA-256 is stored after it and checked)."""
    import hashlib

    try:
        data = _char_table_path().read_bytes()
    except OSError:
        return None
    table, digest = data[:-32], data[-32:]
    if len(table) != 2 * 0x110000 or hashlib.sha256(table).digest() != digest:
        return None
    return table


def _store_char_table(table: bytes) -> None:
    """Keep the table for the next run; a cache that cannot be written is only slower."""
    import hashlib

    try:
        path = _char_table_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, table + hashlib.sha256(table).digest())
    except OSError:
        pass
