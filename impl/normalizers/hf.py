"""Hugging Face normalizers, executed as the ``tokenizers`` library executes them, on text that keeps its alignment.

A ``Piece`` is a stretch of text as the library's ``NormalizedString`` holds it: the current text, and for each of
its characters where in the original text it comes from (``starts``; ``None`` when no step needs it), and where
the piece itself starts in the original text (``shift``, the library's ``offsets_original().0``, fixed when the
piece is cut out).  Only the ``Metaspace`` pre-tokenizer with ``prepend_scheme: first`` reads that position, but
to read it right every step must move the alignments exactly as the library does: a character the library
inserts takes the alignment of the character before it (the piece's start when it is first), a replaced one
takes the one it replaces (``transform``, the library's ``NormalizedString::transform_range``).

Normalizers (``Normalizer.from_json``; a ``Sequence`` runs its steps in turn):

* ``NFC``, ``NFD``, ``NFKC``, ``NFKD``: the decomposition, canonical ordering and composition of
  ``unicode-normalization-alignments``, step by step (``_decompose``, ``_compose``), on Python's Unicode data
  except where the library's tables have nothing (``bpeproof.impl.pre_tokenizers.hf_chars.is_normalization_gap``: no
  decomposition,
  combining class 0, no composition there);
* ``Lowercase``: ``char::to_lowercase`` of each character on its own (no final-sigma rule), from
  ``bpeproof.impl.pre_tokenizers.hf_chars.lowercase_table``;
* ``Replace``: every match of a string or an Oniguruma regex (as ``bpeproof.impl.pre_tokenizers.hf_splits.SplitStep``
finds them)
  replaced by the content; ``Prepend``: the string before a non-empty text; ``Strip``: leading and/or trailing
  ``char::is_whitespace``; ``StripAccents``: the library's combining marks removed; ``Nmt``: its control
  characters removed and its spaces mapped to U+0020; ``ByteLevel``: every byte as GPT-2's character for it.

Any other normalizer type raises ``ValueError`` naming it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import compress
from typing import Any, Literal

import regex

from bpeproof.impl.io.table_cache import store_table, stored_table
from bpeproof.impl.pre_tokenizers import hf_chars
from bpeproof.spec.types import InvalidTextError

__all__ = ["NORMALIZER_TYPES", "Normalizer", "Piece", "byte_level_piece", "composition_table",
           "computed_composition_table", "normalize_form", "transform"]

#: A normalization form.
Form = Literal["NFC", "NFD", "NFKC", "NFKD"]

#: The normalizer types this module executes.
NORMALIZER_TYPES = (
    "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Replace", "Prepend", "Strip", "StripAccents", "Nmt", "ByteLevel",
    "Sequence",
)


@dataclass(frozen=True)
class Piece:
    """Text with the library's alignment: ``starts[i]`` is where character i comes from in the original text
    (``None``: not tracked), ``shift`` where the piece starts there (code point offsets).

    ``void``: how many characters at the start the library aligns to nothing (inserted by a ``Replace`` whose
    pattern matched the empty text at the start).  The library's transformations of the whole text then lose
    track of the text (they fail, or repeat text): the engine refuses to transform such a piece
    (``check_transformable``)."""

    text: str
    starts: tuple[int, ...] | None
    shift: int
    void: int = 0

    @staticmethod
    def original(text: str, shift: int = 0, track: bool = True) -> Piece:
        """A piece of the original text starting at ``shift``: every character aligned to itself."""
        return Piece(text, tuple(range(shift, shift + len(text))) if track else None, shift)

    def cut(self, start: int, end: int) -> Piece:
        """Characters ``start:end`` as a piece of their own (the library's ``slice``): it starts where its first
        character comes from."""
        void = max(0, min(self.void, end) - start)
        if self.starts is None:
            return Piece(self.text[start:end], None, self.shift, void)
        starts = self.starts[start:end]
        return Piece(self.text[start:end], starts, starts[0] if starts else self.shift, void)

    def check_transformable(self, step: str) -> None:
        """Refuse a transformation of the whole text that the library cannot carry out on this piece."""
        if self.void:
            raise InvalidTextError(
                f"a Replace normalizer matched the empty text at the start of {self.text[:30]!r}, and the library's"
                f" {step} after it loses the alignment of the inserted text (it fails or repeats text); the engine"
                " refuses this text rather than guess"
            )


def transform(piece: Piece, stream: Sequence[tuple[str, int]], initial: int = 0) -> Piece:
    """The library's ``transform``: the new text is the characters of ``stream``; each ``(char, change)`` with
    change > 0 is inserted (the alignment of the character before it, or the piece's start), else it replaces the
    next character and removes ``-change`` more.  ``initial`` characters are removed first."""
    piece.check_transformable("transformation")
    text = "".join(char for char, _ in stream)
    if piece.starts is None:
        return Piece(text, None, piece.shift)
    old = piece.starts
    starts: list[int] = []
    position = initial
    for _, change in stream:
        if change > 0:
            starts.append(old[position - 1] if position >= 1 else piece.shift)
        else:
            starts.append(old[position])
            position += 1 - change
    return Piece(text, tuple(starts), piece.shift)


def _same_starts(piece: Piece, text: str, kept: Iterable[int]) -> Piece:
    """``text`` whose characters come one for one from the characters ``kept`` of ``piece``."""
    if piece.starts is None:
        return Piece(text, None, piece.shift)
    old = piece.starts
    return Piece(text, tuple(old[index] for index in kept), piece.shift)


# -- the normalization forms, as unicode-normalization-alignments computes them ------------------------------


@cache
def _combining_class(char: str) -> int:
    return 0 if hf_chars.is_normalization_gap(char) else unicodedata.combining(char)


@cache
def _decomposition(char: str, compatible: bool) -> str:
    if hf_chars.is_normalization_gap(char):
        return char
    return unicodedata.normalize("NFKD" if compatible else "NFD", char)


@cache
def composition_table() -> dict[tuple[str, str], str]:
    """(first, second) → the primary composite, for Python's data less the library's gaps (Hangul apart).  Made
    from every code point on the first text that needs it (a sixth of a second) and kept on disk between runs
    (``bpeproof.impl.io.table_cache``, keyed by Python's Unicode data and the gap tables)."""
    depends = "compositions-" + hf_chars.tables_digest("normalization-gaps", "composition-gaps")
    stored = stored_table("hf-compositions", depends)
    if stored is not None:
        try:
            triples = stored.decode("utf-8")
        except UnicodeDecodeError:
            triples = ""
        if triples and len(triples) % 3 == 0:
            return {(triples[at], triples[at + 1]): triples[at + 2] for at in range(0, len(triples), 3)}
    table = computed_composition_table()
    store_table("hf-compositions", depends, "".join(a + b + c for (a, b), c in table.items()).encode("utf-8"))
    return table


def computed_composition_table() -> dict[tuple[str, str], str]:
    """``composition_table`` computed from Python's data, not read from the disk."""
    gap = hf_chars.is_normalization_gap
    composition_gaps = hf_chars.composition_gaps()
    table: dict[tuple[str, str], str] = {}
    for block in range(0, 0x110000, 0x10000):  # a plane at a time (a list of every code point took 60 MB)
        chars = [chr(code) for code in range(block, block + 0x10000) if not 0xD800 <= code < 0xE000]
        for char in compress(chars, map(unicodedata.decomposition, chars)):  # those with a decomposition
            decomposition = unicodedata.decomposition(char)
            if decomposition.startswith("<"):
                continue
            parts = [chr(int(part, 16)) for part in decomposition.split()]
            if (len(parts) == 2 and char not in composition_gaps and not gap(char) and not any(map(gap, parts))
                    and unicodedata.normalize("NFC", "".join(parts)) == char):
                table[(parts[0], parts[1])] = char
    return table


_S_BASE, _L_BASE, _V_BASE, _T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
_L_COUNT, _V_COUNT, _T_COUNT = 19, 21, 28
_S_COUNT = _L_COUNT * _V_COUNT * _T_COUNT


def _compose_pair(first: str, second: str) -> str | None:
    a, b = ord(first), ord(second)
    if _L_BASE <= a < _L_BASE + _L_COUNT and _V_BASE <= b < _V_BASE + _V_COUNT:
        return chr(_S_BASE + ((a - _L_BASE) * _V_COUNT + (b - _V_BASE)) * _T_COUNT)
    if (_S_BASE <= a < _S_BASE + _S_COUNT and (a - _S_BASE) % _T_COUNT == 0
            and _T_BASE < b < _T_BASE + _T_COUNT):
        return chr(a + b - _T_BASE)
    return composition_table().get((first, second))


def _decompose(text: str, compatible: bool) -> list[tuple[str, int]]:
    """The library's ``Decompositions``: each character's full decomposition (its first character replaces it,
    the others are inserted), non-starters sorted by combining class (stably) before each starter."""
    out: list[tuple[str, int]] = []
    pending: list[tuple[int, str, int]] = []
    for char in text:
        first = True
        for part in _decomposition(char, compatible):
            combining = _combining_class(part)
            if combining == 0 and pending:
                pending.sort(key=lambda item: item[0])
                out.extend((item[1], item[2]) for item in pending)
                pending = []
            pending.append((combining, part, 0 if first else 1))
            first = False
    pending.sort(key=lambda item: item[0])
    out.extend((item[1], item[2]) for item in pending)
    return out


def _compose(stream: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    """The library's ``Recompositions`` over a decomposed stream: a composed character carries the changes of
    its parts less one."""
    out: list[tuple[str, int]] = []
    held: list[tuple[str, int]] = []  # blocked or uncomposed non-starters after the composee
    composee: tuple[str, int] | None = None
    last: int | None = None  # the combining class of the last held character
    for char, change in stream:
        combining = _combining_class(char)
        if composee is None:
            if combining != 0:
                out.append((char, change))
            else:
                composee = (char, change)
            continue
        if last is not None and last >= combining:
            if combining == 0:  # a starter blocked from the composee: both are done
                out.append(composee)
                out.extend(held)
                held = []
                composee, last = (char, change), None
            else:
                held.append((char, change))
                last = combining
            continue
        composed = _compose_pair(composee[0], char)
        if composed is not None:
            composee = (composed, composee[1] + change - 1)
        elif last is None and combining == 0:
            out.append(composee)
            composee = (char, change)
        else:
            held.append((char, change))
            last = combining
    if composee is not None:
        out.append(composee)
    out.extend(held)
    return out


def normalize_form(piece: Piece, form: Form) -> Piece:
    """NFC, NFD, NFKC or NFKD of a piece, as the library computes it (text and alignment)."""
    piece.check_transformable(form)
    text = piece.text
    if text.isascii():
        return piece
    if piece.starts is None:
        if hf_chars.plain_for_normalization(text):
            return Piece(unicodedata.normalize(form, text), None, piece.shift)
        if "\n" in text:
            # A line break is a starter that nothing composes with, on either side: each line normalizes alone, and
            # only the lines holding a character Python's tables lack take the slow path.
            lines = text.split("\n")
            return Piece("\n".join(normalize_form(Piece(line, None, 0), form).text for line in lines), None,
                         piece.shift)
    stream = _decompose(text, compatible=form in ("NFKC", "NFKD"))
    if form in ("NFC", "NFKC"):
        stream = _compose(stream)
    return transform(piece, stream)


# -- the other normalizers -----------------------------------------------------------------------------------


def lowercase(piece: Piece) -> Piece:
    """``Lowercase``: each character's ``char::to_lowercase``; the characters it adds are aligned to it."""
    piece.check_transformable("Lowercase")
    table = hf_chars.lowercase_table()
    text = piece.text.translate(table)
    if piece.starts is None or len(text) == len(piece.text):
        return Piece(text, piece.starts, piece.shift)
    kept = [index for index, char in enumerate(piece.text) for _ in table.get(ord(char), char)]
    return _same_starts(piece, text, kept)


def _filtered(piece: Piece, keep: Callable[[str], bool]) -> Piece:
    kept = [index for index, char in enumerate(piece.text) if keep(char)]
    return _same_starts(piece, "".join(piece.text[index] for index in kept), kept)


@cache
def _class(name: str) -> Any:
    return regex.compile(f"[{hf_chars.class_body(name)}]")


def strip_accents(piece: Piece) -> Piece:
    """``StripAccents``: the characters the library holds to be combining marks removed."""
    piece.check_transformable("StripAccents")
    marks = _class("mark")
    if not marks.search(piece.text):
        return piece
    return _filtered(piece, lambda char: not marks.match(char))


def strip(piece: Piece, left: bool, right: bool) -> Piece:
    """``Strip``: leading and/or trailing ``char::is_whitespace`` removed."""
    spaces = hf_chars.code_points("whitespace")
    text = piece.text
    start, end = 0, len(text)
    if left:
        while start < end and ord(text[start]) in spaces:
            start += 1
    if right:
        while end > start and ord(text[end - 1]) in spaces:
            end -= 1
    if (start, end) == (0, len(text)):
        return piece
    piece.check_transformable("Strip")
    return _same_starts(piece, text[start:end], range(start, end))


def prepend(piece: Piece, prefix: str) -> Piece:
    """The library's ``prepend``: ``prefix`` before a non-empty text, aligned with the first character."""
    if not piece.text or not prefix:
        return piece
    starts = None if piece.starts is None else (piece.starts[0],) * (len(prefix) + 1) + piece.starts[1:]
    return Piece(prefix + piece.text, starts, piece.shift, len(prefix) + piece.void if piece.void else 0)


def replace(piece: Piece, matches: Sequence[tuple[int, int]], content: str) -> Piece:
    """The library's ``replace``: each match (character spans, in order, not overlapping) becomes ``content``,
    whose characters take the alignment of the match's last character (before an empty match: the character
    before it, or the piece's start)."""
    if not matches or not piece.text:
        return piece  # the library finds no match in an empty text
    text = piece.text
    parts: list[str] = []
    old = piece.starts
    starts: list[int] = []
    previous = 0
    for start, end in matches:
        parts.append(text[previous:start])
        parts.append(content)
        if old is not None:
            starts.extend(old[previous:start])
            starts.extend([old[end - 1] if end >= 1 else piece.shift] * len(content))
        previous = end
    parts.append(text[previous:])
    if old is not None:
        starts.extend(old[previous:])
    return Piece("".join(parts), None if old is None else tuple(starts), piece.shift,
                 _void_after_replace(piece, matches, content))


def _void_after_replace(piece: Piece, matches: Sequence[tuple[int, int]], content: str) -> int:
    """How many characters at the start of the replaced text align to nothing: the content of an empty match at
    the start, and any text or content aligned to a character that did."""
    void = 0
    previous = 0
    for start, end in matches:
        kept = start - previous  # original characters before the match: void while they are among the first
        if previous + kept <= piece.void:
            void += kept
        else:
            return void + max(0, piece.void - previous)
        if content and not (end == 0 or end - 1 < piece.void):
            return void
        void += len(content)
        previous = end
    return void + max(0, min(piece.void, len(piece.text)) - previous)



_NMT_REMOVED = re.compile("[\x01-\x08\x0b\x0e-\x1f\x7f\x8f\x9f]")
_NMT_SPACES = str.maketrans({code: " " for code in (
    0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF, 0xFFFD)})


def nmt(piece: Piece) -> Piece:
    """``Nmt``: its control characters removed, then its spaces (tab, line breaks, U+200B–U+200F, …) mapped to
    U+0020."""
    piece.check_transformable("Nmt")
    if _NMT_REMOVED.search(piece.text):
        piece = _filtered(piece, lambda char: not _NMT_REMOVED.match(char))
    return Piece(piece.text.translate(_NMT_SPACES), piece.starts, piece.shift)


@cache
def _byte_chars() -> tuple[str, ...]:
    from bpeproof.impl.formats.vocab import bytes_to_unicode

    table = bytes_to_unicode()
    return tuple(table[byte] for byte in range(256))


def byte_level_piece(piece: Piece) -> Piece:
    """Every byte of the text's UTF-8 as GPT-2's character for it, aligned with the character it is part of
    (``ByteLevel``, normalizer and pre-tokenizer)."""
    piece.check_transformable("ByteLevel")
    chars = _byte_chars()
    text = piece.text
    if text.isascii() and piece.starts is None:
        return Piece("".join(chars[byte] for byte in text.encode("ascii")), None, piece.shift)
    out: list[str] = []
    kept: list[int] = []
    for index, char in enumerate(text):
        data = char.encode("utf-8", "surrogateescape")
        out.extend(chars[byte] for byte in data)
        kept.extend([index] * len(data))
    return _same_starts(piece, "".join(out), kept)


# -- normalizers from a tokenizer.json file ------------------------------------------------------------------


def _string(value: Mapping[str, Any], key: str, kind: str) -> str:
    found = value.get(key)
    if not isinstance(found, str):
        raise ValueError(f"the {kind} normalizer's {key!r} must be a string, not {found!r}")
    return found


def _flag(value: Mapping[str, Any], key: str, kind: str) -> bool:
    found = value.get(key)
    if not isinstance(found, bool):
        raise ValueError(f"the {kind} normalizer's {key!r} must be true or false, not {found!r}")
    return found


def _replace_step(value: Mapping[str, Any]) -> Callable[[Piece], Piece]:
    from bpeproof.impl.pre_tokenizers.hf_splits import SplitStep

    pattern = value.get("pattern")
    content = _string(value, "content", "Replace")
    if isinstance(pattern, Mapping) and isinstance(pattern.get("String"), str):
        source = re.escape(pattern["String"])
    elif isinstance(pattern, Mapping) and isinstance(pattern.get("Regex"), str):
        source = pattern["Regex"]
    else:
        raise ValueError(f"the Replace normalizer's pattern must be {{'String': ...}} or {{'Regex': ...}}, not"
                         f" {pattern!r}")
    finder = SplitStep(source)
    return lambda piece: replace(piece, finder.matches(piece.text), content)


def _step(value: object) -> list[tuple[str, Callable[[Piece], Piece]]]:
    if not isinstance(value, Mapping):
        raise ValueError(f"a normalizer must be an object, not {value!r}")
    kind = value.get("type")
    if kind == "Sequence":
        inner = value.get("normalizers")
        if not isinstance(inner, list):
            raise ValueError("a Sequence normalizer needs a list 'normalizers'")
        return [step for item in inner for step in _step(item)]
    return [(str(kind), _one(value, kind))]


def _one(value: Mapping[str, Any], kind: object) -> Callable[[Piece], Piece]:
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        form: Form = kind
        return lambda piece: normalize_form(piece, form)
    if kind == "Lowercase":
        return lowercase
    if kind == "Replace":
        return _replace_step(value)
    if kind == "Prepend":
        prefix = _string(value, "prepend", "Prepend")
        return lambda piece: prepend(piece, prefix)
    if kind == "Strip":
        left, right = _flag(value, "strip_left", "Strip"), _flag(value, "strip_right", "Strip")
        return lambda piece: strip(piece, left, right)
    if kind == "StripAccents":
        return strip_accents
    if kind == "Nmt":
        return nmt
    if kind == "ByteLevel":
        return lambda piece: byte_level_piece(piece) if piece.text else piece
    raise ValueError(f"the normalizer {kind!r} is not supported")


class Normalizer:
    """A tokenizer.json normalizer (``from_json``): its steps, applied in turn to a piece."""

    def __init__(self, steps: Sequence[Callable[[Piece], Piece]], kinds: Sequence[str] = ()) -> None:
        self._steps = tuple(steps)
        #: The types of the steps, in order (a Sequence's steps in its place).
        self.kinds = tuple(kinds)

    @classmethod
    def from_json(cls, value: object) -> Normalizer:
        """The normalizer of a tokenizer.json ``normalizer`` value (null: none); ``ValueError`` for a type it
        does not execute or malformed parameters."""
        steps = [] if value is None else _step(value)
        return cls([step for _, step in steps], [kind for kind, _ in steps])

    def __bool__(self) -> bool:
        return bool(self._steps)

    def normalize(self, piece: Piece) -> Piece:
        for step in self._steps:
            piece = step(piece)
        return piece

    def normalize_str(self, text: str) -> str:
        """The normalized text alone (the library's ``normalize_str``)."""
        return self.normalize(Piece(text, None, 0)).text
