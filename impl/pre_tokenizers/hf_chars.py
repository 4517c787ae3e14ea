"""The character tables of Hugging Face ``tokenizers``, so that the engine classifies characters as the library does.

The library's normalizers and pre-tokenizers do not share one Unicode version: ``Digits`` asks Rust's
``char::is_numeric``, ``Strip`` and ``WhitespaceSplit`` ``char::is_whitespace``, ``Lowercase``
``char::to_lowercase`` (the Unicode of the Rust release that built the library), ``Whitespace`` and added tokens'
``single_word`` the ``regex`` crate's ``\\w`` and ``\\s``, ``Punctuation`` the ``unicode_categories`` crate,
``StripAccents`` and the ``NFC``/``NFD``/``NFKC``/``NFKD`` normalizers ``unicode-normalization-alignments``
(Unicode 9.0).  ``impl/data/tokenizers-classes.txt`` holds each table as the library has it (read off the library
by ``scripts/make_tokenizers_tables.py``; ``proofs_tests/tests/impl/test_hf_pipelines.py`` checks it against the
installed
library), so neither Python's ``unicodedata`` nor the ``regex`` module's tables decide these classes.

The normalization forms are computed with Python's ``unicodedata`` except on the code points the library's tables
do not have (``is_normalization_gap``): to the library those have no decomposition, combining class 0 and no
composition, and ``bpeproof.impl.normalizers.hf`` treats them so.
"""

from __future__ import annotations

import bisect
from functools import cache

__all__ = [
    "CLASSES",
    "class_body",
    "code_points",
    "composition_gaps",
    "composition_parts",
    "is_normalization_gap",
    "lowercase_table",
    "plain_for_normalization",
]

#: The tables of code points in the file, by section name.
CLASSES = ("numeric", "punctuation", "whitespace", "word", "mark")


@cache
def _sections() -> dict[str, tuple[str, ...]]:
    from importlib import resources  # read once, when a table is first asked for (it imports much)

    text = resources.files("bpeproof.impl").joinpath("data/tokenizers-classes.txt").read_text("ascii")
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = sections.setdefault(line[1 : line.index("]")], [])
        elif current is not None:
            current.append(line)
    return {name: tuple(lines) for name, lines in sections.items()}


def tables_digest(*names: str) -> str:
    """A digest of the tables ``names`` as the package holds them: what a table computed from them depends on."""
    import hashlib

    return hashlib.sha256(repr([_sections()[name] for name in names]).encode("ascii")).hexdigest()[:16]


@cache
def _ranges(name: str) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for line in _sections()[name]:
        low, _, high = line.partition("-")
        out.append((int(low, 16), int(high or low, 16)))
    return tuple(out)


@cache
def code_points(name: str) -> frozenset[int]:
    """The code points of a table (``CLASSES``, ``normalization-gaps``, ``composition-gaps``, …)."""
    return frozenset(code for low, high in _ranges(name) for code in range(low, high + 1))


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


@cache
def class_body(name: str) -> str:
    """The table as the inside of a ``regex`` character class: explicit ranges, no Unicode property."""
    return "".join(_escape(low) if low == high else f"{_escape(low)}-{_escape(high)}" for low, high in _ranges(name))


@cache
def lowercase_table() -> dict[int, str]:
    """``char::to_lowercase`` as a ``str.translate`` table: every code point it changes, to its lower case."""
    table: dict[int, str] = {}
    for line in _sections()["lowercase"]:
        code, *lower = line.split()
        table[int(code, 16)] = "".join(chr(int(part, 16)) for part in lower)
    return table


def _merged(names: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    ranges = sorted(item for name in names for item in _ranges(name))
    out: list[tuple[int, int]] = []
    for low, high in ranges:
        if out and low <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return tuple(out)


_GAP_SECTIONS = ("normalization-gaps", "python-unassigned")


@cache
def _gap_ranges() -> tuple[tuple[int, ...], tuple[int, ...]]:
    merged = _merged(_GAP_SECTIONS)
    return tuple(low for low, _ in merged), tuple(high for _, high in merged)


def is_normalization_gap(char: str) -> bool:
    """Whether the library's normalizers have no decomposition, combining class or composition for ``char``
    although Python's Unicode may: a gap of the table, or a code point the table's Python left unassigned."""
    lows, highs = _gap_ranges()
    code = ord(char)
    index = bisect.bisect_right(lows, code) - 1
    return index >= 0 and code <= highs[index]


@cache
def composition_gaps() -> frozenset[str]:
    """Primary composites of Python's Unicode that the library's normalizers do not compose."""
    return frozenset(map(chr, code_points("composition-gaps")))


@cache
def composition_parts() -> frozenset[str]:
    """The characters that Python's Unicode composes into a character the library does not compose: on a text
    holding none of them, nor a gap, Python's normalization forms are the library's."""
    import unicodedata

    candidates = set(composition_gaps()) | set(map(chr, code_points("normalization-gaps")))
    if unicodedata.unidata_version != _sections()["python-unicode"][0]:  # a later Unicode: its additions too
        candidates |= set(map(chr, code_points("python-unassigned")))
    parts: set[str] = set()
    for char in candidates:
        decomposition = unicodedata.decomposition(char)
        if decomposition and not decomposition.startswith("<"):
            parts.update(chr(int(part, 16)) for part in decomposition.split())
    return frozenset(parts)


def plain_for_normalization(text: str) -> bool:
    """Whether ``text`` holds no gap and no part of a composite the library lacks: Python's ``unicodedata``
    normalizes it as the library does."""
    # Each distinct character once, and only those no earlier text had: a text repeats its characters, texts share
    # most of theirs, and a search through the gaps' character class (some 900,000 code points in ranges) cost more
    # than everything else on a page of Japanese.
    chars = set(text)
    chars -= _PLAIN_SEEN
    if not chars:
        return True
    if not composition_parts().isdisjoint(chars):
        return False
    lows, highs = _gap_ranges()
    for char in chars:
        code = ord(char)
        index = bisect.bisect_right(lows, code) - 1
        if index >= 0 and code <= highs[index]:
            return False
    _PLAIN_SEEN.update(chars)
    return True


#: The characters ``plain_for_normalization`` found to be no gap and no part of a composite the library lacks.
_PLAIN_SEEN: set[str] = set()
