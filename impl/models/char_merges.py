"""Merges over characters in C: a word's characters joined by a pair table of texts (sentencepiece's pieces by
score, Hugging Face's merge lines over strings), run by the ``_fastenc`` merge loop over the word's UTF-8 bytes.

The loop joins the adjacent units of the lowest rank, the leftmost first among equals (``bpeproof.impl.merge_loop``),
as sentencepiece joins the pair of the highest score and ``tokenizers``' BPE the pair of the earliest merge line.
Its units start as bytes, so each character is first put together from its bytes: one pair for each continuation
byte, ranked 0, 1, 2 by its place in the character, below every pair of the table, so that every character is whole
before any two join.  Then two units join as the table says, ranked 3 + the pair's code.  A character that no text
of the table holds (other than ASCII, whose characters are bytes) is never put together: its bytes stay apart, and
join with nothing (UTF-8 is prefix-free and no pair joins a continuation byte to another character).

A unit that is a text of the table reports that text's id.  Any other (a character that is no token, or the bytes of
one no text holds) reports the byte tokens of its bytes, as a tuple the loop spells out in its place: what both
libraries give a character without a token when they fall back to bytes.  Without byte tokens it reports a *mark*,
a negative number, and a caller encodes a word that reports one otherwise (``CharMerger.ids`` returns None).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import Any

from bpeproof.impl.io.packed_state import PackedState
from bpeproof.impl.merge_loop import SHORT_WORD

try:
    from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - the extension is optional
    _fastenc = None

__all__ = ["CharMerger", "TextPair", "char_merger"]

#: The ranks below every pair of the table: a character's bytes are joined at 0, 1, 2 (its second, third, fourth
#: byte).
_TABLE_RANKS_FROM = 3

#: A pair of the table: the left and right texts, the text they join into, and the pair's code (lowest first).
TextPair = tuple[str, str, str, int]


class CharMerger:
    """The C loop over a table of texts (``char_merger``): ``fast`` the ``_fastenc.Merger`` itself, whose units
    report the texts' ids (or their bytes' tokens, or marks); ``merge(word)`` the texts of a word's parts,
    ``ids(words, limit)`` the ids of words through a cache of its own."""

    def __init__(self, fast: Any, texts: list[str | None], chars: frozenset[str]) -> None:
        self.fast = fast
        self._texts = texts
        self._chars = chars
        self._cache: dict[str, tuple[int, ...]] = {}

    def packed(self) -> dict[str, Any]:
        """What the compiled-vocabulary cache stores (``bpeproof.impl.io.packed_state.Packable``): the loop's tables
        and the texts, not the words cached so far."""
        return {"fast": self.fast, "texts": self._texts, "chars": self._chars}

    @classmethod
    def from_packed(cls, state: PackedState) -> CharMerger:
        return cls(state["fast"], state["texts"], state["chars"])

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # A worker process gets the loop's tables, not the C object: made again there without the texts' pass.
        return _restored, (self.fast.tables(), self._texts, self._chars)

    def ids(self, words: list[str], limit: int) -> list[int] | None:
        """The ids of the words one after another, each word's through the loop's own cache (of at most ``limit``
        entries, the older half dropped when full); None when one holds a character that is no Unicode scalar
        value (the Python loop refuses it by name), or a mark (no byte tokens to report)."""
        try:
            found: list[int] = self.fast.encode_pieces(words, self._cache, limit)
        except ValueError:
            return None
        return None if found and min(found) < 0 else found

    def merge(self, word: str) -> list[str] | None:
        """The parts the table's merges leave of ``word``, as texts; None when a character of it is in no text (nor
        ASCII) or is no Unicode scalar value: the Python loop takes it."""
        if not self._chars.issuperset(word):
            return None
        try:
            data = word.encode("utf-8")
        except UnicodeEncodeError:
            return None
        units = array("i")
        units.frombytes(self.fast.merge_each([data], 0 if len(data) <= SHORT_WORD else 1))
        texts = self._texts
        return [texts[unit] for unit in units[:-1]]  # type: ignore[misc]


def _restored(tables: tuple[Any, ...], texts: list[str | None], chars: frozenset[str]) -> CharMerger:
    return CharMerger(_fastenc.Merger.from_tables(*tables), texts, chars)


def char_merger(ids: Mapping[str, int], pairs: Iterable[TextPair], byte_ids: Sequence[int], *,
                whole: bool = False) -> CharMerger | None:
    """The C loop whose units report ``ids``' id of each of its texts and join as ``pairs`` say (a pair whose texts
    or joined text are not units is left out: no word reaches it), any other unit reporting ``byte_ids``' token of
    each of its bytes (none: a mark).  ``whole``: a word that is one of ``ids``' texts is that text's unit,
    unmerged (Hugging Face's ``ignore_merges``).  None without the extension or when a text holds a character that
    is no Unicode scalar value."""
    if _fastenc is None:
        return None
    pairs = list(pairs)
    texts: list[str | None] = [chr(byte) if byte < 0x80 else None for byte in range(256)]
    unit_of: dict[str, int] = {chr(byte): byte for byte in range(0x80)}
    pairs_a: list[int] = []
    pairs_b: list[int] = []
    ranks: list[int] = []
    results: list[int] = []
    prefixes: dict[bytes, int] = {}
    chars = set(chain.from_iterable(ids))
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
    for text in ids:
        if text not in unit_of:
            unit_of[text] = len(texts)
            texts.append(text)
    get = unit_of.get
    for left, right, joined, code in pairs:
        a, b, c = get(left), get(right), get(joined)
        if a is not None and b is not None and c is not None:
            pairs_a.append(a)
            pairs_b.append(b)
            ranks.append(_TABLE_RANKS_FROM + code)
            results.append(c)
    size = len(texts)
    outputs: list[int | tuple[int, ...]] = [-1 - unit for unit in range(size)]
    for text, token in ids.items():
        outputs[unit_of[text]] = token
    if byte_ids:  # each unit that is no text of ids (a byte, a character so far or whole) reports its bytes' tokens
        spelled = {unit: bytes([unit]) for unit in range(256)}
        spelled.update((unit, data) for data, unit in prefixes.items())
        for unit, data in spelled.items():
            if outputs[unit] == -1 - unit:
                outputs[unit] = tuple(byte_ids[byte] for byte in data)
    wholes: list[bytes | None] = [None] * size
    if whole:
        for text in ids:
            wholes[unit_of[text]] = text.encode("utf-8")
    fast = _fastenc.Merger.from_pairs(list(range(256)), pairs_a, pairs_b, ranks, results, outputs, wholes)
    return CharMerger(fast, texts, frozenset(chars) | frozenset(map(chr, range(0x80))))
