"""sentencepiece's BPE model as a merge model: on a whole text, its normalization, then characters joined by the
score of the piece they spell, highest first, unknown characters as byte pieces or ``unk``; it runs in Python, its
merges in C where the extension is built (``bpeproof.impl.models.char_merges``)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from itertools import accumulate, compress, repeat
from operator import eq, is_not
from typing import TYPE_CHECKING, Any

from bpeproof.impl.formats.derive import last_split
from bpeproof.impl.io.c_readers import cut_at
from bpeproof.impl.io.packed_state import PackedState, packed_attributes, restored, unpacked_later
from bpeproof.impl.merge_loop import merge
from bpeproof.impl.models.char_merges import CharMerger, TextPair, char_merger
from bpeproof.impl.models.sentencepiece_pieces import (
    MERGEABLE,
    PIECE_CONTROL,
    PIECE_UNKNOWN,
    PIECE_UNUSED,
    PIECE_USER_DEFINED,
    by_id,
    checked_tables,
    plain_columns,
    plain_tables,
    score_codes,
    score_key,
)
from bpeproof.impl.normalizers.sentencepiece import SPACE_SYMBOL, SentencePieceNormalizer, longest_prefix
from bpeproof.spec.types import ALPHABET_SIZE, BPEValueError

if TYPE_CHECKING:
    from bpeproof.impl.models.steps import Part, PieceSteps

__all__ = ["SentencePieceModel", "score_key"]


#: The pieces whose bytes are not their text's (``token_table``).
_SPECIAL_TYPES = frozenset({PIECE_CONTROL, PIECE_UNKNOWN})
#: How deep the library splits unused pieces again before it keeps one as it is.
RESEGMENT_DEPTH = 100
#: Texts of this many characters or more are cut where no piece holds two adjacent characters, and the parts
#: merged (and cached) on their own; shorter ones are merged whole.
SEGMENTED_FROM = 256


def _joins(codes: Mapping[str, int]) -> Iterator[TextPair]:
    """sentencepiece's pairs: two texts join when together they spell a piece (every cut of every piece into two
    pieces or characters), ranked by that piece's score code."""
    for text, code in codes.items():
        for cut in range(1, len(text)):
            left, right = text[:cut], text[cut:]
            if (len(left) == 1 or left in codes) and (len(right) == 1 or right in codes):
                yield left, right, text, code


def _join_text(x: str, y: str, code: int) -> str:
    return x + y


class SentencePieceModel:
    """sentencepiece's BPE model on the whole normalized text, with the model's own ids (its pieces' positions).

    ``pieces``: ``(text, score, type)`` in id order, or ``columns``: their texts, scores and types as three
    lists (what the parser gives, without a tuple per piece); ``cache_size`` bounds the cache of segments;
    ``c_loop``: the merges run in C where the extension is built (``char_merges``; False: always in Python);
    the other keyword arguments are the model's ``normalizer_spec`` and ``trainer_spec`` (the charsmap as
    ``bpeproof.impl.formats.sentencepiece_model.parse_charsmap`` decodes it).
    ``encode_word`` takes a whole text, as ``SentencePieceProcessor.encode`` does (sentencepiece 0.2.3), and:

    1. normalizes it (``bpeproof.impl.normalizers.sentencepiece``: rules, white space, the dummy prefix, ``▁``);
    2. cuts it into units: a user-defined symbol where one starts (never merged), else one character;
    3. runs the one merge loop (``bpeproof.impl.merge_loop.merge``): the code of a pair is the rank of the score of the
       normal, user-defined or unused piece spelt by the pair's joined text, highest score first, equal
       scores leftmost first as the library's queue orders them (``score_key``); the parts need not be pieces;
    4. splits an unused piece among the results again into the two parts it was last looked up as (the
       library's ``rev_merge``, replayed in the library's order), or gives it ``unk`` when it has none;
    5. gives each part its piece's id, ``unk`` for a text that is no normal, user-defined or unused piece;
       an unknown part becomes its UTF-8 bytes' ``<0xXX>`` pieces with ``byte_fallback``, else consecutive
       unknown parts are one ``unk``.

    Without unused pieces the text is first cut where two adjacent characters occur together in no piece:
    no merge can cross such a place, so the parts are merged on their own (and cached) with the same ids.
    The constructor refuses what the library refuses to load (``BPEValueError`` naming it): a piece defined
    twice, an empty piece, one of 8000 bytes or more, one with a NUL character, two unknown pieces or none
    without ``byte_fallback``, byte pieces without ``byte_fallback`` or not all 256 with it; and NaN scores.
    """

    semantics = "sentencepiece-bpe"
    #: What the compiled-vocabulary cache unpacks only when read: the texts by id (the token table's, made on
    #: decoding) and the scores by id (the labels of merge_steps); encoding needs neither.  And what it does not
    #: store: the pairs of adjacent characters, made again from the pieces when a long text is first encoded, and
    #: the codes and scores by text, made from the ids' dict (its texts, already hashed) and the lists by id.
    _LATER = ("_texts", "_score_of")
    _DERIVED = ("_bigrams", "_codes", "_scores", "_word_starts")

    def __init__(
        self,
        pieces: Sequence[tuple[str, float, int]] = (),
        *,
        columns: tuple[Sequence[str], Sequence[float], Sequence[int]] | None = None,
        byte_fallback: bool = False,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        escape_whitespaces: bool = True,
        treat_whitespace_as_suffix: bool = False,
        charsmap_units: Sequence[int] = (),
        charsmap_replacements: Mapping[int, str] | None = None,
        unk_surface: str = " \u2047 ",
        cache_size: int = 1 << 16,
        c_loop: bool = True,
    ) -> None:
        if columns is not None:  # (the pieces' texts, scores and types as three lists, as a parser gives them)
            tables = plain_columns(*columns, byte_fallback) or checked_tables(list(zip(*columns, strict=True)),
                                                                                 byte_fallback)
        else:
            tables = plain_tables(pieces, byte_fallback) or checked_tables(pieces, byte_fallback)
        texts, types, ids, mergeable, mergeable_scores, unk, byte_ids = tables
        if unk is None and not byte_fallback:
            raise BPEValueError("the model has no unknown piece and no byte_fallback (sentencepiece requires one)")
        if byte_fallback and None in byte_ids:
            raise BPEValueError(f"byte_fallback is set but the byte piece <0x{byte_ids.index(None):02X}> is missing")
        self._texts = texts
        self._types = types
        self._ids = ids
        self._unk = -1 if unk is None else unk
        self._byte_fallback = byte_fallback
        self._byte_ids = [token for token in byte_ids if token is not None]
        self._byte_pieces = [f"<0x{byte:02X}>" for byte in range(ALPHABET_SIZE)]
        codes = score_codes(mergeable_scores)
        self._codes = dict(zip(mergeable, codes, strict=True))
        self._scores = dict(zip(mergeable, mergeable_scores, strict=True))  # for merge_steps' labels
        tokens = list(map(ids.__getitem__, mergeable))
        self._code_of: list[int | None] = by_id(len(texts), tokens, codes, None)  # (what the cache stores)
        self._score_of = by_id(len(texts), tokens, mergeable_scores, 0.0)
        self._longest: int | None = None  # the longest piece, for article_steps (found on first use)
        self._has_unused = PIECE_UNUSED in map(types.__getitem__, ids.values())
        # (``_bigrams`` is made when a long text is first encoded)
        user_defined = list(compress(ids, map(eq, map(types.__getitem__, ids.values()), repeat(PIECE_USER_DEFINED))))
        self.normalizer = SentencePieceNormalizer(
            units=charsmap_units,
            replacements=charsmap_replacements,
            add_dummy_prefix=add_dummy_prefix,
            remove_extra_whitespaces=remove_extra_whitespaces,
            escape_whitespaces=escape_whitespaces,
            treat_whitespace_as_suffix=treat_whitespace_as_suffix,
            user_defined=user_defined,
        )
        first: dict[str, list[tuple[str, str]]] = {}
        for text in sorted(user_defined, key=lambda item: (-len(item.encode("utf-8")), item)):
            first.setdefault(text[0], []).append((text, text))
        self._user_first = first
        self._user_start = re.compile("[" + "".join(map(re.escape, sorted(first))) + "]") if first else None
        self._unk_surface = unk_surface
        #: Each segment's parts, or its ids with byte_fallback (``_fallback_ids``).
        self._cache: dict[str, tuple[Any, ...]] = {}
        self._cache_size = cache_size
        self._use_c = c_loop  # (the C loop is made on the first merge: ``_char_merger``)

    def packed(self) -> dict[str, Any]:
        """What the compiled-vocabulary cache stores (``bpeproof.impl.io.packed_state.Packable``): all but the pairs
        of adjacent characters and the codes and scores by text, made again from the others when first read; the C
        loop's tables with them."""
        self._char_merger  # (made now, so that a cached load does without the pass over the pieces)  # noqa: B018
        return packed_attributes(self, derived=self._DERIVED, later=self._LATER)

    @classmethod
    def from_packed(cls, state: PackedState) -> SentencePieceModel:
        return restored(cls, state, later=cls._LATER)

    @cached_property
    def _texts(self) -> list[str]:
        """Every piece's text, by id (``__init__``'s; a model the cache made unpacks them when first read)."""
        found: list[str] = unpacked_later(self, "_texts")
        return found

    @cached_property
    def _score_of(self) -> list[float]:
        """Every piece's score, by id (``__init__``'s; a model the cache made unpacks them when first read)."""
        found: list[float] = unpacked_later(self, "_score_of")
        return found

    @property
    def vocabulary_size(self) -> int:
        return len(self._texts)

    @property
    def pieces(self) -> list[tuple[str, int]]:
        """``(text, type)`` of every piece, in id order."""
        return list(zip(self._texts, self._types, strict=True))

    def token_table(self) -> dict[int, bytes]:
        """The bytes of every id: a piece's text with ``▁`` as the space, a byte piece's byte, nothing for a
        control piece, the unknown piece as the model's ``unk_surface`` (the texts' bytes in whole-list passes,
        then the few other pieces one by one)."""
        texts = self._texts
        joined = "".join(texts).replace(SPACE_SYMBOL, " ")  # (one character for one: the texts keep their places)
        spaced = cut_at(joined, accumulate(map(len, texts), initial=0))
        try:
            table = dict(zip(range(len(texts)), map(str.encode, spaced), strict=True))
        except UnicodeEncodeError:  # a lone surrogate: only the pieces spelt by their text may not hold one
            table = {token: text.encode() for token, text in enumerate(spaced)
                     if self._types[token] not in _SPECIAL_TYPES and token not in self._byte_ids}
        surface = self._unk_surface.encode("utf-8")
        for token in compress(range(len(texts)), map(_SPECIAL_TYPES.__contains__, self._types)):
            table[token] = b"" if self._types[token] == PIECE_CONTROL else surface
        for byte, token in enumerate(self._byte_ids):
            table[token] = bytes([byte])
        return table

    def c_merger(self) -> Any:
        return None

    def encode_word(self, word: bytes) -> tuple[int, ...]:
        """The ids of a whole text (its UTF-8 bytes, or any bytes), as ``SentencePieceProcessor.encode`` gives."""
        text = self.normalizer.normalize(word)
        if not text:
            return ()
        if self._has_unused:
            return self._ids_of(self._replayed(text))
        if self._byte_fallback:
            return self._fallback_ids(text)
        return self._ids_of(self._parts(text))

    # -- steps -----------------------------------------------------------------------------------------------

    def _piece_id(self, text: str) -> int:
        """The id of a merged part: its piece's when that is normal, user-defined or unused, else ``unk``."""
        token = self._ids.get(text)
        return token if token is not None and self._types[token] in MERGEABLE else self._unk

    def _chunks(self, text: str) -> Iterator[tuple[str, bool]]:
        """``text`` cut at the user-defined symbols, the longest first: (chunk, is a symbol)."""
        finder = self._user_start
        if finder is None:
            yield text, False
            return
        first = self._user_first
        start = pos = 0
        while True:
            found = finder.search(text, pos)
            if found is None:
                break
            at = found.start()
            symbol = longest_prefix(first[text[at]], text, at)
            if symbol is None:
                pos = at + 1
                continue
            if start < at:
                yield text[start:at], False
            yield symbol[0], True
            start = pos = at + len(symbol[0])
        if start < len(text):
            yield text[start:], False

    def _mergeable_by_text(self, by_id: list[Any]) -> dict[str, Any]:
        """``by_id``'s item of each normal, user-defined or unused piece, by its text."""
        texts = list(self._ids)
        found = list(map(by_id.__getitem__, self._ids.values()))
        kept = list(map(is_not, map(self._code_of.__getitem__, self._ids.values()), repeat(None)))
        return dict(zip(compress(texts, kept), compress(found, kept), strict=True))

    @cached_property
    def _codes(self) -> dict[str, int]:
        """The code of each mergeable piece by its text (``__init__``'s; made again for a model the cache made)."""
        return self._mergeable_by_text(self._code_of)

    @cached_property
    def _scores(self) -> dict[str, float]:
        """The score of each mergeable piece by its text, for merge_steps' labels (``__init__``'s; made again for
        a model the cache made)."""
        return self._mergeable_by_text(self._score_of)

    @cached_property
    def _bigrams(self) -> set[str]:
        """The pairs of adjacent characters in the normal, user-defined and unused pieces (``_segments``)."""
        return {text[i : i + 2] for text in self._codes for i in range(len(text) - 1)}

    def _segments(self, chunk: str) -> list[str]:
        """``chunk`` cut between two adjacent characters that no piece holds side by side (the same parts: no merge
        crosses such a place): before each word (``_word_starts``) when no piece holds another character before
        the space symbol, found at once; within a part of ``SEGMENTED_FROM`` characters or more, at every such
        place, found character by character."""
        finder = self._word_starts
        words = finder.split(chunk) if finder is not None else [chunk]
        if max(map(len, words)) < SEGMENTED_FROM:  # (the usual case, found at once)
            return words
        return [segment for word in words
                for segment in ((word,) if len(word) < SEGMENTED_FROM else self._bigram_cuts(word))]

    def _bigram_cuts(self, text: str) -> Iterator[str]:
        """``text`` cut between every two adjacent characters that no piece holds side by side."""
        bigrams = self._bigrams
        start = 0
        for i in range(1, len(text)):
            if text[i - 1 : i + 1] not in bigrams:
                yield text[start:i]
                start = i
        yield text[start:]

    @cached_property
    def _word_starts(self) -> Any:
        """The places before a space symbol that follows another character, when no piece holds another character
        before the symbol (so that no merge crosses them); else None.  Found on the first text cut."""
        symbol = re.escape(SPACE_SYMBOL)
        holds = re.compile(f"[^{symbol}]{symbol}")
        if any(holds.search(text) for text in self._codes):
            return None
        return re.compile(f"(?<=[^{symbol}])(?={symbol})")

    def _merge_segment(self, segment: str) -> tuple[tuple[str, int], ...]:
        merger = self._char_merger
        parts = merger.merge(segment) if merger is not None and len(segment) > 1 else None
        if parts is None:
            get = self._codes.get
            parts = merge(list(segment), lambda x, y: get(x + y), _join_text)
        return tuple((part, self._piece_id(part)) for part in parts)

    @cached_property
    def _char_merger(self) -> CharMerger | None:
        """The C loop over the pieces (``char_merges``), made on the first merge when the model merges in C (None
        without the extension, or when built with ``c_loop=False``); the cache stores it."""
        if not self._use_c:
            return None
        codes = self._codes
        return char_merger({text: self._ids[text] for text in codes}, _joins(codes),
                           self._byte_ids if self._byte_fallback else ())

    def _parts(self, text: str) -> list[tuple[str, int]]:
        """The merged parts of ``text`` and their ids (a model without unused pieces)."""
        out: list[tuple[str, int]] = []
        cache = self._cache
        for chunk, symbol in self._chunks(text):
            if symbol:
                out.append((chunk, self._piece_id(chunk)))
                continue
            for segment in self._segments(chunk):
                parts = cache.get(segment)
                if parts is None:
                    parts = self._remember(segment, self._merge_segment(segment))
                out += parts
        return out

    def _fallback_ids(self, text: str) -> tuple[int, ...]:
        """``_ids_of(_parts(text))`` for a model with ``byte_fallback`` and no unused pieces, where an unknown part
        becomes its bytes whatever stands before it, so that the ids of a text are those of its segments: each
        segment's ids are cached, not its parts; merged and cached in C where the extension is built."""
        out: list[int] = []
        cache = self._cache
        merger = self._char_merger
        for chunk, symbol in self._chunks(text):
            if symbol:
                out += self._ids_of([(chunk, self._piece_id(chunk))])
                continue
            if merger is not None:
                found = merger.ids(self._segments(chunk), self._cache_size)
                if found is not None:
                    out += found
                    continue
            for segment in self._segments(chunk):
                ids = cache.get(segment)
                if ids is None:
                    ids = self._remember(segment, self._new_segment_ids(segment))
                out += ids
        return tuple(out)

    def _new_segment_ids(self, segment: str) -> tuple[int, ...]:
        """The ids of a segment not in the cache, in Python: cut first between bigrams no piece holds, each part
        cached too (the Python loop is slow enough that words' common parts pay)."""
        found: list[int] = []
        for part in self._bigram_cuts(segment) if len(segment) > 1 else (segment,):
            part_ids = self._cache.get(part)
            if part_ids is None:
                part_ids = self._remember(part, self._ids_of(list(self._merge_segment(part))))
            found += part_ids
        return tuple(found)

    def _remember(self, segment: str, value: tuple[Any, ...]) -> tuple[Any, ...]:
        cache = self._cache
        if len(cache) >= self._cache_size:
            cache.clear()
        if self._cache_size:
            cache[segment] = value
        return value

    def _replayed(self, text: str) -> list[tuple[str, int]]:
        """``_parts`` for a model with unused pieces: the whole text in one merge, then the library's pair
        look-ups replayed in its order (the first pairs left to right, then after each merge the pair before
        the result and the pair after it) for the split it keeps of every unused piece."""
        units: list[str] = []
        frozen: list[bool] = []
        for chunk, symbol in self._chunks(text):
            pieces = [chunk] if symbol else list(chunk)
            units += pieces
            frozen += [symbol] * len(pieces)
        get = self._codes.get
        order: list[tuple[int, int]] = []

        def code(x: tuple[int, str], y: tuple[int, str]) -> int | None:
            return None if frozen[x[0]] or frozen[y[0]] else get(x[1] + y[1])

        def join(x: tuple[int, str], y: tuple[int, str], value: int) -> tuple[int, str]:
            order.append((x[0], y[0]))
            return x[0], x[1] + y[1]

        final = merge(list(enumerate(units)), code, join)
        count = len(units)
        texts = list(units)
        following = list(range(1, count + 1))
        preceding = list(range(-1, count - 1))
        split: dict[str, tuple[str, str]] = {}
        ids = self._ids
        types = self._types

        def look(left: int, right: int) -> None:
            if left < 0 or right >= count or frozen[left] or frozen[right]:
                return
            joined = texts[left] + texts[right]
            token = ids.get(joined)
            if token is not None and types[token] == PIECE_UNUSED:
                split[joined] = (texts[left], texts[right])

        for right in range(1, count):
            look(right - 1, right)
        for left, right in order:
            texts[left] += texts[right]
            texts[right] = ""
            following[left] = following[right]
            if following[right] < count:
                preceding[following[right]] = left
            look(preceding[left], left)
            look(left, following[left])
        out: list[tuple[str, int]] = []

        def resegment(part: str, depth: int) -> None:
            token = ids.get(part, self._unk)
            if depth > RESEGMENT_DEPTH:
                out.append((part, token))
            elif token == self._unk or types[token] not in MERGEABLE:
                out.append((part, self._unk))
            elif types[token] != PIECE_UNUSED:
                out.append((part, token))
            elif part not in split:
                out.append((part, self._unk))
            else:
                resegment(split[part][0], depth + 1)
                resegment(split[part][1], depth + 1)

        for _, part in final:
            resegment(part, 0)
        return out

    # -- reports (impl.models.steps) ------------------------------------------------------------------------

    def _units(self, text: str) -> tuple[list[str], list[bool]]:
        """The units the merge starts from: a user-defined symbol where one starts (frozen), else a character."""
        units: list[str] = []
        frozen: list[bool] = []
        for chunk, symbol in self._chunks(text):
            pieces = [chunk] if symbol else list(chunk)
            units += pieces
            frozen += [symbol] * len(pieces)
        return units, frozen

    def _part(self, text: str) -> Part:
        from bpeproof.impl.models.steps import Part

        token = self._ids.get(text)
        return Part(token if token is not None and self._types[token] in MERGEABLE else None, text)

    def merge_steps(self, word: bytes) -> PieceSteps:
        """sentencepiece on a whole text (``impl.models.steps``): the normalized text's characters (user-defined
        symbols whole), the joins by the score of the piece they spell ("score s", highest first), and what becomes
        of the parts that are no piece (byte pieces, ``unk``) or unused pieces (split again)."""
        from bpeproof.impl.models.steps import PieceSteps, traced_steps

        text = self.normalizer.normalize(word)
        if not text:
            return PieceSteps((), (), ())
        units, frozen = self._units(text)
        get = self._codes.get

        def code(x: tuple[int, str], y: tuple[int, str]) -> int | None:
            return None if frozen[x[0]] or frozen[y[0]] else get(x[1] + y[1])

        def label(value: int, joined: tuple[int, str]) -> tuple[int, str, str]:
            score = f"{self._scores[joined[1]]:g}"
            return value, f"score {score}", score

        parts, joins = traced_steps(list(enumerate(units)), code, lambda x, y, value: (x[0], x[1] + y[1]),
                                    lambda unit: self._part(unit[1]), label)
        ids = self.encode_word(word)
        notes = [f"normalized: {text!r}"] if text != word.decode("utf-8", "replace") else []
        merged = PieceSteps(parts, joins, ids).parts()
        unknown = [part.text for part in merged if part.token is None]
        if unknown:
            how = "their UTF-8 bytes' <0xXX> pieces (byte_fallback)" if self._byte_fallback else "unk, one for a run"
            notes.append(f"parts that are no piece ({' '.join(dict.fromkeys(unknown))}): {how}")
        if any(part.token is not None and self._types[part.token] == PIECE_UNUSED for part in merged):
            notes.append("unused pieces are split again into the two parts they were made of")
        return PieceSteps(parts, joins, ids, None, tuple(notes))

    def article_steps(self, word: bytes) -> PieceSteps | None:
        """def-bpe over the normalized text's units with the rules recovered from the scores
        (``impl.formats.derive``): each piece of two units or more found in the text, made of the two parts its own
        merge with the higher-scoring pieces ends in, highest score first; None when a unit is no piece."""
        from bpeproof.impl.models.steps import replay_steps, substrings

        text = self.normalizer.normalize(word)
        units, _ = self._units(text)
        tokens = [self._part(unit).token for unit in units]
        if None in tokens:
            return None
        codes = self._codes
        if self._longest is None:
            self._longest = max(map(len, codes), default=1)
        found = sorted(({text[start:stop] for start, stop in substrings(text, self._longest)} & codes.keys()),
                       key=lambda piece: (codes[piece], self._ids[piece]))
        rules: dict[tuple[int, int], list[tuple[int, int]]] = {}
        names: list[str] = []
        for piece in found:
            split = last_split(piece, codes, codes[piece])
            left, right = (None, None) if split is None else (self._part(split[0]).token, self._part(split[1]).token)
            if left is not None and right is not None:
                rules.setdefault((left, right), []).append((len(names), self._ids[piece]))
                names.append(f"{self._scores[piece]:g}")
        return replay_steps([token for token in tokens if token is not None], rules,
                            lambda token: self._part(self._texts[token]),
                            lambda index: (f"score {names[index]}", names[index]))

    def _ids_of(self, parts: list[tuple[str, int]]) -> tuple[int, ...]:
        """The library's ids for the parts: a control piece as it is, unknown parts as byte pieces with
        ``byte_fallback`` or else one ``unk`` for each run of them."""
        types = self._types
        unk = self._unk
        out: list[int] = []
        previous_unknown = False
        for part, token in parts:
            if token >= 0 and types[token] == PIECE_CONTROL:
                out.append(token)
                previous_unknown = False
                continue
            unknown = token == unk or (token >= 0 and types[token] == PIECE_UNKNOWN)
            if unknown and self._byte_fallback:
                byte_ids = self._byte_ids
                out += [byte_ids[byte] for byte in part.encode("utf-8")]
            elif not (unknown and previous_unknown):
                out.append(token)
            previous_unknown = unknown
        return tuple(out)
