"""sentencepiece's normalizer: the text a sentencepiece model merges, as the library's ``Normalizer`` makes it.

The text's UTF-8 bytes are cut from left to right into units, each of them

1. the longest user-defined symbol of the model starting there (kept as it is), else
2. the longest prefix held by the precompiled charsmap (``impl.formats.sentencepiece_model.CharsMap``), replaced
   by its rule's text, else
3. one UTF-8 character as it is; a byte that starts no valid character becomes U+FFFD, one byte consumed.

Then, with ``remove_extra_whitespaces``, leading units that are exactly a space are dropped, the spaces that
start a unit after a unit that ends in a space are dropped, and the space symbols at the end are dropped; the
dummy prefix (a space before the text; after it with ``treat_whitespace_as_suffix``) is added to a text that
is not empty; with ``escape_whitespaces`` every space is written U+2581 (``SPACE_SYMBOL``).  A model without a
charsmap (the ``identity`` rule set) keeps every character.

The trie is searched exactly as darts-clone's ``commonPrefixSearch`` does, unit by unit over the same array,
so any charsmap gives the library's text, not only the built-in ``nmt_nfkc``, ``nfkc``, ``nfkc_cf`` ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import TypeVar

from bpeproof.spec.types import BPEValueError

__all__ = ["SPACE_SYMBOL", "SentencePieceNormalizer", "longest_prefix"]

#: U+2581 LOWER ONE EIGHTH BLOCK, sentencepiece's spelling of the space.
SPACE_SYMBOL = "\u2581"

#: The most prefixes the library considers at one position, the shortest first: the charsmap's
#: (``kMaxTrieResultsSize``) and the user-defined symbols' (``PrefixMatcher``); the longest of them wins.
CHARSMAP_RESULTS = 32
USER_DEFINED_RESULTS = 64

_LABEL = (1 << 31) | 0xFF
_Text = TypeVar("_Text", str, bytes)
_SPACES = re.compile(" {2,}")


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def _char_size(data: bytes, pos: int) -> int:
    """The length of the valid UTF-8 character at ``pos``, 0 when none starts there (the library's DecodeUTF8)."""
    lead = data[pos]
    if lead < 0x80:
        return 1
    size = 2 if 0xC0 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if 0xF0 <= lead < 0xF8 else 0
    if not size or pos + size > len(data):
        return 0
    try:
        data[pos : pos + size].decode("utf-8")
    except UnicodeDecodeError:
        return 0
    return size


def longest_prefix(candidates: Sequence[tuple[_Text, str]], text: _Text, pos: int) -> tuple[_Text, str] | None:
    """The longest of ``candidates`` (``(key, symbol)``, longest key first) whose key starts ``text`` at ``pos``,
    among the shortest ``USER_DEFINED_RESULTS`` that do (the library's ``PrefixMatcher``)."""
    found = [candidate for candidate in candidates if text.startswith(candidate[0], pos)]
    if len(found) <= USER_DEFINED_RESULTS:
        return found[0] if found else None
    return found[len(found) - USER_DEFINED_RESULTS]


class SentencePieceNormalizer:
    """One model's normalizer (its ``normalizer_spec``, ``treat_whitespace_as_suffix`` and user-defined symbols).

    ``units``: the charsmap trie's units (empty: no rules); ``replacements``: the text of every value.  Both come
    from ``bpeproof.impl.formats.sentencepiece_model.parse_charsmap``, which has checked, as the library does, that a
    search stays inside the array.
    """

    def __init__(
        self,
        *,
        units: Sequence[int] = (),
        replacements: Mapping[int, str] | None = None,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        escape_whitespaces: bool = True,
        treat_whitespace_as_suffix: bool = False,
        user_defined: Iterable[str] = (),
    ) -> None:
        self._units = list(units)
        self._replacements = dict(replacements or {})
        self._root = _offset(self._units[0]) if self._units else 0
        root = self._root
        self._starts = bytes(
            int(bool(self._units) and (self._units[root ^ byte] & _LABEL) == byte) for byte in range(256)
        )
        symbols = sorted(set(user_defined))
        for symbol in symbols:
            if not symbol:
                raise BPEValueError("a user-defined symbol is empty")
        by_first: dict[int, list[tuple[bytes, str]]] = {}
        for symbol in symbols:
            key = symbol.encode("utf-8")
            by_first.setdefault(key[0], []).append((key, symbol))
        for candidates in by_first.values():
            candidates.sort(key=lambda item: -len(item[0]))
        self._user_defined = by_first
        # Runs of ASCII characters other than the space that no rule and no symbol replace: each is its own
        # output, so a run is taken at once (white space handling treats it as its characters one by one).  Such
        # a character starts no rule, or only rules of two or more bytes that go on with a non-ASCII byte, and
        # then an ASCII byte (or the end) must follow.
        alone: list[int] = []
        before_ascii: list[int] = []
        for byte in range(0x80):
            if byte == 0x20 or byte in by_first:
                continue
            if not self._starts[byte]:
                alone.append(byte)
            elif not self._continues_in_ascii(byte):
                before_ascii.append(byte)
        choices = [b"[" + b"".join(re.escape(bytes([byte])) for byte in alone) + b"]"] if alone else []
        if before_ascii:
            ascii_next = rb"](?=[\x00-\x7f]|\Z)"
            choices.append(b"[" + b"".join(re.escape(bytes([byte])) for byte in before_ascii) + ascii_next)
        self._plain_run = re.compile(b"(?:" + b"|".join(choices) + b")+") if choices else None
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix

    def _continues_in_ascii(self, byte: int) -> bool:
        """True when the rule search from the one-byte prefix ``byte`` reports it or goes on with an ASCII byte."""
        units = self._units
        node = self._root ^ byte
        unit = units[node]
        if unit & 0x100:
            return True
        base = node ^ _offset(unit)
        return any((units[base ^ following] & _LABEL) == following for following in range(0x80))

    @property
    def has_rules(self) -> bool:
        """True when a charsmap replaces some text (False for the ``identity`` rule set)."""
        return bool(self._units)

    def normalize(self, data: bytes) -> str:
        """The normalized text of ``data`` (any bytes; the library's own result for them)."""
        if not data:
            return ""
        if not self._units:
            try:
                return self._plain(data.decode("utf-8"))
            except UnicodeDecodeError:
                pass
        return self._assemble(self._prefixes(data))

    # -- the units -------------------------------------------------------------------------------------------

    def _rule(self, data: bytes, pos: int) -> tuple[int, str]:
        """The longest charsmap prefix at ``pos`` and its replacement; (0, "") when there is none."""
        units = self._units
        node = self._root
        end = len(data)
        i = pos
        found = best = value = 0
        while i < end:
            byte = data[i]
            node ^= byte
            unit = units[node]
            if (unit & _LABEL) != byte:
                break
            node ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
            i += 1
            if unit & 0x100:
                found += 1
                best = i - pos
                value = units[node] & 0x7FFFFFFF
                if found == CHARSMAP_RESULTS:
                    break
        return (best, self._replacements[value]) if best else (0, "")

    def _prefixes(self, data: bytes) -> Iterator[str]:
        """The output of every unit of ``data``, in order."""
        starts = self._starts
        user_defined = self._user_defined
        plain = self._plain_run.match if self._plain_run is not None else None
        pos = 0
        end = len(data)
        while pos < end:
            run = plain(data, pos) if plain is not None else None
            if run is not None:
                yield run.group().decode("ascii")
                pos = run.end()
                continue
            byte = data[pos]
            candidates = user_defined.get(byte) if user_defined else None
            if candidates:
                symbol = longest_prefix(candidates, data, pos)
                if symbol is not None:
                    yield symbol[1]
                    pos += len(symbol[0])
                    continue
            if starts[byte]:
                length, text = self._rule(data, pos)
                if length:
                    yield text
                    pos += length
                    continue
            if byte < 0x80:
                yield chr(byte)
                pos += 1
                continue
            size = _char_size(data, pos)
            if size:
                yield data[pos : pos + size].decode("utf-8")
                pos += size
            else:
                yield "\ufffd"
                pos += 1

    # -- white space -----------------------------------------------------------------------------------------

    def _space(self) -> str:
        return SPACE_SYMBOL if self.escape_whitespaces else " "

    def _plain(self, text: str) -> str:
        """``_assemble`` for a text whose every character is a unit kept as it is (no charsmap, valid UTF-8)."""
        space = self._space()
        if self.remove_extra_whitespaces:
            text = _SPACES.sub(" ", text.lstrip(" "))
            if not text:
                return ""
        if self.escape_whitespaces:
            text = text.replace(" ", SPACE_SYMBOL)
        if self.add_dummy_prefix and not self.treat_whitespace_as_suffix:
            text = space + text
        if self.remove_extra_whitespaces:
            text = text.rstrip(space)
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            text += space
        return text

    def _assemble(self, outputs: Iterator[str]) -> str:
        """The library's white space handling over the units' outputs."""
        space = self._space()
        remove = self.remove_extra_whitespaces
        first: str | None = None
        for output in outputs:
            if not remove or output != " ":
                first = output
                break
        if first is None:
            return ""
        parts: list[str] = []
        if self.add_dummy_prefix and not self.treat_whitespace_as_suffix:
            parts.append(space)
        previous_space = remove
        escape = self.escape_whitespaces
        for output in chain((first,), outputs):
            if previous_space:
                output = output.lstrip(" ")
            if output:
                parts.append(output.replace(" ", SPACE_SYMBOL) if escape else output)
                previous_space = output.endswith(" ")
            if not remove:
                previous_space = False
        text = "".join(parts)
        if remove:
            text = text.rstrip(space)
        if self.add_dummy_prefix and self.treat_whitespace_as_suffix:
            text += space
        return text
