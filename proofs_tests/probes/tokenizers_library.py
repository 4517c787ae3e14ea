"""What the installed ``tokenizers`` library says of every code point, asked through its own components.

The normalizers and pre-tokenizers of ``tokenizers`` classify characters by tables compiled into the library
(Rust's ``char`` methods, the ``regex`` crate, ``unicode-normalization-alignments``, ``unicode_categories``), each
of its own Unicode version.  These functions recover those tables by running the library's components on strings
holding every code point, so that ``scripts/make_tokenizers_tables.py`` can write them for the engine
(``impl/data/tokenizers-classes.txt``) and the tests can check the engine's copy against the library installed.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

__all__ = [
    "EVERY_CODE_POINT",
    "library_composition_gaps",
    "library_lowercase",
    "library_marks",
    "library_normalization_gaps",
    "library_numeric",
    "library_punctuation",
    "library_whitespace",
    "library_word_classes",
    "ranges",
]

#: Every code point that can be in a Python string given to the library (surrogates excepted), in order.
EVERY_CODE_POINT: tuple[int, ...] = tuple(code for code in range(0x110000) if not 0xD800 <= code < 0xE000)


def _interleaved(separator: str, codes: Iterable[int]) -> str:
    """``separator c separator c … separator``: each code point alone between two separators."""
    return separator + separator.join(map(chr, codes)) + separator


def _split_off(codes: Iterable[int], separator: str, other: str) -> tuple[tuple[str, list[int]], ...]:
    """The code points to probe between ``separator``s, and the separator itself between ``other``s."""
    chosen = list(codes)
    return ((separator, [code for code in chosen if code != ord(separator)]),
            (other, [code for code in chosen if code == ord(separator)]))


def _isolated(pre_tokenizer: Any, codes: Iterable[int]) -> set[int]:
    """The code points that ``pre_tokenizer`` isolates as one-character pieces between separators (``x``, and
    ``y`` around ``x`` itself)."""
    found: set[int] = set()
    for separator, group in _split_off(codes, "x", "y"):
        if not group:
            continue
        pieces = pre_tokenizer.pre_tokenize_str(_interleaved(separator, group))
        found |= {ord(piece) for piece, _ in pieces if len(piece) == 1 and piece != separator}
    return found


def library_numeric(codes: Iterable[int] = EVERY_CODE_POINT) -> set[int]:
    """Rust's ``char::is_numeric`` (the ``Digits`` pre-tokenizer), among ``codes``."""
    from tokenizers import pre_tokenizers

    return _isolated(pre_tokenizers.Digits(individual_digits=True), codes)


def library_punctuation(codes: Iterable[int] = EVERY_CODE_POINT) -> set[int]:
    """ASCII punctuation or ``unicode_categories``' punctuation (the ``Punctuation`` pre-tokenizer)."""
    from tokenizers import pre_tokenizers

    return _isolated(pre_tokenizers.Punctuation(), codes)


def library_whitespace(codes: Iterable[int] = EVERY_CODE_POINT) -> set[int]:
    """Rust's ``char::is_whitespace`` (``WhitespaceSplit``, ``Strip``): the code points it removes."""
    from tokenizers import pre_tokenizers

    found: set[int] = set()
    for separator, group in _split_off(codes, "x", "y"):
        if not group:
            continue
        pieces = pre_tokenizers.WhitespaceSplit().pre_tokenize_str(_interleaved(separator, group))
        left = set(map(ord, "".join(piece for piece, _ in pieces)))
        found |= {code for code in group if code not in left}
    return found


def library_word_classes(codes: Iterable[int] = EVERY_CODE_POINT) -> tuple[set[int], set[int]]:
    """The ``regex`` crate's ``\\w`` and ``\\s`` (the ``Whitespace`` pre-tokenizer, added tokens' ``single_word``).

    ``Whitespace`` keeps ``\\w+`` and ``[^\\w\\s]+`` runs and drops the rest: between two ``a``, a word character
    joins them, a space character separates them, and any other character stands alone.
    """
    from tokenizers import pre_tokenizers

    word: set[int] = set()
    space: set[int] = set()
    for separator, group in _split_off(codes, "a", "b"):
        if not group:
            continue
        text = _interleaved(separator, group)
        kinds = bytearray(len(text))  # 0: in no piece (a space), 1: in a longer piece (a word), 2: a piece alone
        for _, (start, end) in pre_tokenizers.Whitespace().pre_tokenize_str(text):
            if end - start == 1 and start % 2:
                kinds[start] = 2
            else:
                kinds[start:end] = b"\x01" * (end - start)
        found = kinds[1::2]
        word |= {code for code, kind in zip(group, found, strict=True) if kind == 1}
        space |= {code for code, kind in zip(group, found, strict=True) if kind == 0}
    return word, space


def _per_character(normalize: Callable[[str], str], codes: Iterable[int]) -> dict[int, str]:
    """``normalize`` applied to each code point on its own (NUL separates them, and ``|`` separates NULs)."""
    chosen = list(codes)
    found: dict[int, str] = {}
    for separator, group in (("\x00", [code for code in chosen if code != 0]), ("|", [code for code in chosen
                                                                                         if code == 0])):
        if group:
            pieces = normalize(_interleaved(separator, group)).split(separator)[1:-1]
            assert len(pieces) == len(group)
            found.update(zip(group, pieces, strict=True))
    return found


def library_lowercase(codes: Iterable[int] = EVERY_CODE_POINT) -> dict[int, str]:
    """The ``Lowercase`` normalizer (Rust's ``char::to_lowercase``) of every code point it changes."""
    from tokenizers import normalizers

    lowered = _per_character(normalizers.Lowercase().normalize_str, codes)
    return {code: text for code, text in lowered.items() if text != chr(code)}


def library_marks(codes: Iterable[int] = EVERY_CODE_POINT) -> set[int]:
    """The code points ``StripAccents`` removes (``unicode-normalization-alignments``' ``is_combining_mark``)."""
    from tokenizers import normalizers

    stripped = _per_character(normalizers.StripAccents().normalize_str, codes)
    return {code for code, text in stripped.items() if text == ""}


@cache
def _python_compositions() -> dict[tuple[str, str], str]:
    """Python's canonical compositions: (first, second) → the primary composite, Hangul included."""
    table: dict[tuple[str, str], str] = {}
    for code in EVERY_CODE_POINT:
        char = chr(code)
        decomposition = unicodedata.decomposition(char)
        if not decomposition or decomposition.startswith("<"):
            continue
        parts = [chr(int(part, 16)) for part in decomposition.split()]
        if len(parts) == 2 and unicodedata.normalize("NFC", "".join(parts)) == char:
            table[(parts[0], parts[1])] = char
    return table


def library_normalization_gaps(codes: Iterable[int] = EVERY_CODE_POINT) -> set[int]:
    """The code points whose decomposition or combining class the library does not know as Python does.

    Decompositions are compared one code point at a time (NFD and NFKD); combining classes by the reordering
    of ``a U+0345 c`` (class 240 before ``c``) and ``a c U+0334`` (class 1 after it), which puts ``c`` in
    another place whenever its class differs.
    """
    from tokenizers import normalizers

    chosen = list(codes)
    gaps: set[int] = set()
    for name in ("NFD", "NFKD", "NFC", "NFKC"):
        library = _per_character(getattr(normalizers, name)().normalize_str, chosen)
        gaps |= {code for code, text in library.items() if text != unicodedata.normalize(name, chr(code))}
    nfd = normalizers.NFD()
    for before, after in (("a\u0345", ""), ("a", "\u0334")):
        group = [code for code in chosen if code != 0]
        text = "\x00".join(before + chr(code) + after for code in group)
        library_pieces = nfd.normalize_str(text).split("\x00")
        python_pieces = unicodedata.normalize("NFD", text).split("\x00")
        gaps |= {code for code, ours, theirs in zip(group, python_pieces, library_pieces, strict=True)
                 if ours != theirs}
    return gaps


def library_composition_gaps() -> set[int]:
    """The primary composites of Python's data that the library's NFC does not compose from their two parts."""
    from tokenizers import normalizers

    pairs = sorted(_python_compositions().items())
    text = "\x00".join(first + second for (first, second), _ in pairs)
    composed = normalizers.NFC().normalize_str(text).split("\x00")
    return {ord(result) for ((_, _), result), got in zip(pairs, composed, strict=True) if got != result}


def ranges(codes: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted inclusive ranges covering exactly ``codes``."""
    out: list[tuple[int, int]] = []
    for code in sorted(set(codes)):
        if out and out[-1][1] == code - 1:
            out[-1] = (out[-1][0], code)
        else:
            out.append((code, code))
    return out
