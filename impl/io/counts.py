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
sep="\\t", comment="#")``: neither column can hold a ``#``).

A name ending in ``.parquet`` gives a Parquet table instead (with pyarrow installed: ``pip install
'bpeproof[parquet]'``): columns ``word`` (binary, the word's bytes) and ``count`` (int64), the same rows in the same
order, the pattern in the schema's metadata under ``bpeproof.pattern``; ``pandas.read_parquet``, Polars, DuckDB and
Spark read it as it is.  A table is read as Parquet when it starts with Parquet's magic bytes, whatever its name.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bpeproof.impl.io.atomic import atomic_write_bytes
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import gunzip
from bpeproof.impl.optional_libraries import install_hint

__all__ = ["HEADER", "PARQUET_PATTERN_KEY", "is_parquet_name", "read_counts", "require_pyarrow", "write_counts"]

#: The column names, the second line of every table.
HEADER = "word_hex\tcount"

#: The key of the pattern in a Parquet table's schema metadata.
PARQUET_PATTERN_KEY = b"bpeproof.pattern"

_PATTERN_PREFIX = "# pattern: "
_PARQUET_MAGIC = b"PAR1"
_HEX_DIGITS = frozenset("0123456789abcdef")


def write_counts(path: str | os.PathLike[str], counts: Mapping[bytes, int], pattern: str) -> None:
    """Write ``counts`` (non-empty bytes → count ≥ 1) counted with ``pattern`` (a regular expression) to ``path``,
    atomically; gzip-compressed when the name ends in ``.gz``."""
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if is_parquet_name(path):
        atomic_write_bytes(path, _parquet_bytes(os.fspath(path), rows, pattern))
        return
    lines = [_PATTERN_PREFIX + json.dumps(pattern, ensure_ascii=False), HEADER]
    lines += [f"{word.hex()}\t{count}" for word, count in rows]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    if os.fspath(path).lower().endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    atomic_write_bytes(path, data)


def is_parquet_name(path: str | os.PathLike[str]) -> bool:
    """Whether ``write_counts`` writes Parquet to ``path`` (its name ends in ``.parquet``)."""
    return os.fspath(path).lower().endswith(".parquet")


def require_pyarrow(name: str, doing: str) -> Any:
    """The pyarrow module, or ``FormatError`` naming ``name`` and saying how to install it."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise FormatError(name, None, f"{doing} Parquet needs pyarrow, which is not installed:"
                          f" {install_hint('pyarrow')} (or name the table .tsv.gz)") from None
    return pyarrow


def _parquet_bytes(name: str, rows: list[tuple[bytes, int]], pattern: str) -> bytes:
    pyarrow = require_pyarrow(name, "writing")
    table = pyarrow.table(
        {"word": pyarrow.array([word for word, _ in rows], type=pyarrow.binary()),
         "count": pyarrow.array([count for _, count in rows], type=pyarrow.int64())},
        metadata={PARQUET_PATTERN_KEY: pattern.encode("utf-8")},
    )
    sink = pyarrow.BufferOutputStream()
    pyarrow.parquet.write_table(table, sink, compression="zstd")
    data: bytes = sink.getvalue().to_pybytes()
    return data


def _read_parquet(name: str, raw: bytes) -> tuple[dict[bytes, int], str | None]:
    """A Parquet count table: columns ``word`` (binary or UTF-8 string) and ``count`` (integers ≥ 1)."""
    pyarrow = require_pyarrow(name, "reading")
    try:
        table = pyarrow.parquet.read_table(pyarrow.BufferReader(raw))
    except (pyarrow.ArrowException, OSError, ValueError) as error:
        raise FormatError(name, None, f"not a readable Parquet file: {error}") from None
    missing = [column for column in ("word", "count") if column not in table.column_names]
    if missing:
        raise FormatError(name, None, f"a Parquet count table needs the columns word and count; {missing[0]!r}"
                          f" is missing (columns: {', '.join(table.column_names)})")
    words, numbers = table.column("word"), table.column("count")
    types = pyarrow.types
    if not (types.is_binary(words.type) or types.is_large_binary(words.type) or types.is_string(words.type)
            or types.is_large_string(words.type)):
        raise FormatError(name, "column word", f"expected binary (the word's bytes), not {words.type}")
    if not types.is_integer(numbers.type):
        raise FormatError(name, "column count", f"expected integers, not {numbers.type}")
    as_text = types.is_string(words.type) or types.is_large_string(words.type)
    counts: dict[bytes, int] = {}
    for row, (word, count) in enumerate(zip(words.to_pylist(), numbers.to_pylist(), strict=True)):
        where = f"row {row}"
        if word is None or count is None:
            raise FormatError(name, where, "a null word or count")
        data = word.encode("utf-8") if as_text else bytes(word)
        if not data:
            raise FormatError(name, where, "an empty word")
        if count < 1:
            raise FormatError(name, where, f"the count {count} is not an integer >= 1")
        if data in counts:
            raise FormatError(name, where, f"the word {data!r} appears twice")
        counts[data] = count
    metadata = table.schema.metadata or {}
    value = metadata.get(PARQUET_PATTERN_KEY)
    if value is None:
        return counts, None
    try:
        return counts, value.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(name, "metadata bpeproof.pattern", "the pattern is not UTF-8") from None


def read_counts(path: str | os.PathLike[str]) -> tuple[dict[bytes, int], str | None]:
    """The table in ``path`` (plain, gzip or Parquet) and the pattern it records (None if it has none).

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
    if raw[:4] == _PARQUET_MAGIC:
        return _read_parquet(name, raw)
    if raw[:2] == b"\x1f\x8b" or name.lower().endswith(".gz"):
        raw = gunzip(name, raw)
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
