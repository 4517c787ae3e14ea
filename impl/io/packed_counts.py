"""Word-count tables packed into one bytes object: how a worker process hands its table to the parent, and what the
C merge loop trains on (``impl/_c/_fastbpe_tables.h`` reads it, ``_fastenc.WordCounter.pack`` writes it in C).

A packed table is, in the machine's byte order (it travels between processes of one machine)::

    8 bytes    b"bpecnt1\\n"
    int64      n, the number of words
    int64      their bytes in all
    int64[n]   the count of each word (>= 1)
    uint32[n]  the length of each word (>= 1)
    0-4 bytes  zeros, up to a multiple of 8
    bytes      the words one after the other

The words of one table are distinct; several tables may hold the same word (each worker counts its own ranges),
and a reader adds its counts.  A dict of a few hundred thousand words packs into one buffer in a few milliseconds
and crosses a pipe as one message, where a pickled ``Counter`` costs an object per word on both sides.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping

__all__ = ["MAGIC", "pack_counts", "table_counts", "table_lengths", "table_words", "unpack_counts"]

MAGIC = b"bpecnt1\n"
_HEADER = 24


def pack_counts(counts: Mapping[bytes, int]) -> bytes:
    """``counts`` (distinct non-empty words, counts from 1 to 2**63 - 1) as one packed table; ``OverflowError`` for a
    count beyond int64, ``ValueError`` for an empty word or a count below 1."""
    words = list(counts)
    values = array("q", counts.values())
    lengths = array("I", map(len, words))  # C unsigned int: 32 bits wherever CPython runs
    if words and (min(lengths) < 1 or min(values) < 1):
        raise ValueError("a packed count table holds non-empty words with counts >= 1")
    size = sum(lengths)
    padding = b"\0" * (-4 * len(words) % 8)
    return b"".join([MAGIC, array("q", [len(words), size]).tobytes(), values.tobytes(), lengths.tobytes(), padding,
                     *words])


def _layout(table: bytes) -> tuple[int, int, int]:
    """The number of words, where their lengths start and where their bytes start; ``ValueError`` when ``table`` is
    not a packed table."""
    if len(table) < _HEADER or table[:8] != MAGIC:
        raise ValueError("not a packed count table")
    header = array("q")
    header.frombytes(table[8:_HEADER])
    n, size = header
    lengths = _HEADER + 8 * n
    data = lengths + 4 * n + (-4 * n % 8)
    if n < 0 or size < 0 or data + size != len(table):
        raise ValueError("a packed count table whose size does not match its header")
    return n, lengths, data


def table_words(table: bytes) -> int:
    """The number of words in a packed table."""
    return _layout(table)[0]


def table_counts(table: bytes) -> array[int]:
    """The counts of a packed table's words, in order."""
    _, lengths, _ = _layout(table)
    counts = array("q")
    counts.frombytes(table[_HEADER:lengths])
    return counts


def table_lengths(table: bytes) -> array[int]:
    """The lengths of a packed table's words, in order."""
    n, lengths, _ = _layout(table)
    out = array("I")
    out.frombytes(table[lengths : lengths + 4 * n])
    return out


def unpack_counts(tables: Iterable[bytes]) -> Counter[bytes]:
    """The sum of packed tables as one table (a word in several tables counts the sum of its counts)."""
    total: Counter[bytes] = Counter()
    for table in tables:
        _, _, data = _layout(table)
        counts = table_counts(table)
        words: list[bytes] = []
        at = data
        for length in table_lengths(table):
            words.append(table[at : at + length])
            at += length
        if total:
            total.update(dict(zip(words, counts, strict=True)))
        else:
            total = Counter(dict(zip(words, counts, strict=True)))
    return total
