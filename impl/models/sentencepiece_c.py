"""sentencepiece's merges in C: a segment's characters joined by the score of the piece they spell, run by the
``_fastenc`` merge loop over the segment's UTF-8 bytes.

The loop joins the adjacent units of the lowest rank, the leftmost first among equals, as sentencepiece joins the
pair of the highest score (``bpeproof.impl.merge_loop``).  Its units start as bytes, so each character is first put
together from its bytes: one pair for each continuation byte, ranked 0, 1, 2 by its place in the character, below
every piece, so that every character is whole before any two join.  Then two units join when their texts spell a
piece, ranked 3 + the piece's score code.  A segment holding a character that no piece holds (other than ASCII,
whose characters are bytes) is left to the Python loop: the character cannot be put together, and it joins with
nothing anyway.

With ``byte_fallback`` the loop also reports ids (``ids``): a unit that spells a piece reports the piece's id;
any other (a character no piece is, or the bytes of one no piece holds, which stay apart: UTF-8 is prefix-free and
no pair joins a continuation byte to another character) reports a mark that stands for the byte pieces of its
bytes, as sentencepiece gives an unknown character.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

from bpeproof.impl.merge_loop import SHORT_WORD

try:
    from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - the extension is optional
    _fastenc = None

__all__ = ["CharMerger", "char_merger"]

#: The ranks below every piece's: a character's bytes are joined at 0, 1, 2 (its second, third, fourth byte).
_PIECE_RANKS_FROM = 3


class CharMerger:
    """The C loop over a model's pieces (``char_merger``): ``merge(segment)`` is the texts of the segment's parts,
    ``ids(segments, cache, limit)`` the ids of segments."""

    def __init__(self, fast: Any, texts: list[str | None], chars: frozenset[str],
                 spelt: dict[int, tuple[int, ...]]) -> None:
        self._fast = fast
        self._texts = texts
        self._chars = chars
        self._spelt = spelt
        self._cache: dict[str, tuple[int, ...]] = {}

    def ids(self, segments: list[str], limit: int) -> list[int] | None:
        """The ids of the segments one after another, each segment's through the loop's own cache (of at most
        ``limit`` entries, the older half dropped when full: its entries hold the marks, so no other loop reads
        them); None when one holds a character that is no Unicode scalar value (the Python loop refuses it by
        name)."""
        try:
            found: list[int] = self._fast.encode_pieces(segments, self._cache, limit)
        except ValueError:
            return None
        if found and min(found) < 0:  # a mark: the byte pieces of the unit's bytes
            spelt = self._spelt
            return [part for token in found for part in (spelt[-1 - token] if token < 0 else (token,))]
        return found

    def merge(self, segment: str) -> list[str] | None:
        """The parts sentencepiece's merge leaves of ``segment``, as texts; None when a character of it is in no
        piece (nor ASCII) or is no Unicode scalar value: the Python loop takes it."""
        if not self._chars.issuperset(segment):
            return None
        try:
            data = segment.encode("utf-8")
        except UnicodeEncodeError:
            return None
        units = array("i")
        units.frombytes(self._fast.merge_each([data], 0 if len(data) <= SHORT_WORD else 1))
        texts = self._texts
        return [texts[unit] for unit in units[:-1]]  # type: ignore[misc]


def char_merger(codes: Mapping[str, int], piece_ids: Mapping[str, int], byte_ids: Sequence[int]) -> CharMerger | None:
    """The C loop for pieces whose texts are ``codes``' keys and their score codes its values (lowest joins
    first), reporting ``piece_ids``' id of each of those texts and, for any other unit, ``byte_ids``' piece of each
    of its bytes (none:
    ``ids`` is not used); None without the extension or when a piece holds a character that is no Unicode scalar
    value."""
    if _fastenc is None:
        return None
    texts: list[str | None] = [chr(byte) if byte < 0x80 else None for byte in range(256)]
    unit_of: dict[str, int] = {chr(byte): byte for byte in range(0x80)}
    pairs_a: list[int] = []
    pairs_b: list[int] = []
    ranks: list[int] = []
    results: list[int] = []
    prefixes: dict[bytes, int] = {}
    chars = set(chain.from_iterable(codes))
    for char in sorted(chars):
        if char in unit_of:
            continue
        try:
            data = char.encode("utf-8")
        except UnicodeEncodeError:
            return None
        unit = data[0]
        for place in range(1, len(data)):  # the character so far, joined with its next byte
            found = prefixes.get(data[: place + 1])
            if found is None:
                found = prefixes[data[: place + 1]] = len(texts)
                texts.append(None)
                pairs_a.append(unit)
                pairs_b.append(data[place])
                ranks.append(place - 1)
                results.append(found)
            unit = found
        texts[unit] = char
        unit_of[char] = unit
    for text in codes:
        if text not in unit_of:
            unit_of[text] = len(texts)
            texts.append(text)
    for text, code in codes.items():
        for cut in range(1, len(text)):
            left, right = unit_of.get(text[:cut]), unit_of.get(text[cut:])
            if left is not None and right is not None:
                pairs_a.append(left)
                pairs_b.append(right)
                ranks.append(_PIECE_RANKS_FROM + code)
                results.append(unit_of[text])
    size = len(texts)
    outputs = [-1 - unit for unit in range(size)]
    for text in codes:
        outputs[unit_of[text]] = piece_ids[text]
    # The bytes of each unit that reports a mark: a byte, a character so far, a character that is no piece.
    spelled = {unit: bytes([unit]) for unit in range(256) if outputs[unit] < 0}
    spelled.update((unit, data) for data, unit in prefixes.items() if outputs[unit] < 0)
    spelt = {unit: tuple(byte_ids[byte] for byte in data) for unit, data in spelled.items()} if byte_ids else {}
    fast = _fastenc.Merger.from_pairs(list(range(256)), pairs_a, pairs_b, ranks, results, outputs, [None] * size)
    return CharMerger(fast, texts, frozenset(chars) | frozenset(map(chr, range(0x80))), spelt)
