"""Word-count tables on disk: a corpus's distinct words with their frequencies, the input of ``train_counts``.

def-bpe needs only the distinct words of a corpus and how often each occurs (rem-faster-training), so the
counting can be done once and the table trained on many times.  The table is tab-separated UTF-8 text,
gzip-compressed when the file name ends in ``.gz``::

    # pattern: "<the pre-tokenization regular expression, as a JSON string>"
    word_hex	count
    74686520	91734
    ...

``word_hex`` is the word's bytes in lowercase hexadecimal, so that every byte string (tab, newline and bytes
that are not UTF-8 included) is written unambiguously; ``count`` is a decimal integer ≥ 1.  Rows are sorted by
count, largest first, then by the word's bytes, and the gzip header holds no time or name: the same table always
gives the same file.  The first line records the pattern the words were cut with, so that a tokenizer trained on
the table pre-tokenizes as the counting did; other tools skip it as a comment (``pandas.read_csv(path,
sep="\\t", comment="#")``: neither column can hold a ``#``).  Parquet is not written: it would need pyarrow,
which is not a dependency.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Mapping
from pathlib import Path

from bpeproof.impl.atomic import atomic_write_bytes
from bpeproof.impl.errors import FormatError

__all__ = ["HEADER", "read_counts", "write_counts"]

#: The column names, the second line of every table.
HEADER = "word_hex\tcount"

_PATTERN_PREFIX = "# pattern: "
_HEX_DIGITS = frozenset("0123456789abcdef")


def write_counts(path: str | os.PathLike[str], counts: Mapping[bytes, int], pattern: str) -> None:
    """Write ``counts`` (non-empty bytes → count ≥ 1) counted with ``pattern`` (a regular expression) to ``path``,
    atomically; gzip-compressed when the name ends in ``.gz``."""
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    lines = [_PATTERN_PREFIX + json.dumps(pattern, ensure_ascii=False), HEADER]
    lines += [f"{word.hex()}\t{count}" for word, count in rows]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    if os.fspath(path).lower().endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    atomic_write_bytes(path, data)


def read_counts(path: str | os.PathLike[str]) -> tuple[dict[bytes, int], str | None]:
    """The table in ``path`` (plain or gzip) and the pattern it records (None if it has no pattern line).

    A malformed table raises ``FormatError`` naming the file and the line.
    """
    name = os.fspath(path)
    try:
        raw = Path(name).read_bytes()
    except IsADirectoryError:
        raise FormatError(name, None, "is a directory, not a file") from None
    except FileNotFoundError:
        raise FormatError(name, None, "no such file") from None
    except OSError as error:
        raise FormatError(name, None, f"cannot be read: {error.strerror or error}") from None
    if raw[:2] == b"\x1f\x8b" or name.lower().endswith(".gz"):
        try:
            raw = gzip.decompress(raw)
        except (EOFError, zlib.error, gzip.BadGzipFile) as error:
            raise FormatError(name, None, f"corrupt or truncated gzip data: {error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FormatError(name, None, f"not valid UTF-8 at byte {error.start}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    pattern: str | None = None
    first = 0
    if lines and lines[0].startswith(_PATTERN_PREFIX):
        try:
            value = json.loads(lines[0][len(_PATTERN_PREFIX) :])
        except json.JSONDecodeError as error:
            raise FormatError(name, "line 1", f"the pattern is not a JSON string: {error.msg}") from None
        if not isinstance(value, str):
            raise FormatError(name, "line 1", "the pattern is not a JSON string")
        pattern = value
        first = 1
    if len(lines) <= first or lines[first] != HEADER:
        raise FormatError(name, f"line {first + 1}", f"expected the header {HEADER!r}: not a word-count table")
    counts: dict[bytes, int] = {}
    for number, line in enumerate(lines[first + 1 :], start=first + 2):
        word_hex, tab, count_text = line.partition("\t")
        where = f"line {number}"
        if not tab or "\t" in count_text:
            raise FormatError(name, where, "expected two tab-separated fields: word_hex, count")
        if not word_hex or len(word_hex) % 2 or not _HEX_DIGITS.issuperset(word_hex):
            raise FormatError(name, where, f"{word_hex[:40]!r} is not a non-empty word in lowercase hexadecimal")
        if not count_text.isascii() or not count_text.isdigit() or count_text.startswith("0"):
            raise FormatError(name, where, f"the count {count_text[:40]!r} is not an integer >= 1")
        word = bytes.fromhex(word_hex)
        if word in counts:
            raise FormatError(name, where, f"the word {word!r} appears twice")
        counts[word] = int(count_text)
    return counts, pattern
