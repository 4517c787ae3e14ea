"""llama.cpp's SPM tokenizer as a merge model (``llm_tokenizer_spm_session``): the symbols of one text joined
where their joined text is a token, the highest score first; the rest of llama.cpp's SPM tokenizer (the
special-token partition, the space prefix, spaces written U+2581) is ``bpeproof.impl.pipelines.llama_cpp_spm``.

llama.cpp's SPM is its own algorithm, not sentencepiece's (``bpeproof.impl.models.sentencepiece``), though both
rank pairs by the score of the piece they spell:

- the text is cut into symbols by the length its lead byte announces (``unicode_len_utf8``: 0xC0..0xDF two
  bytes, 0xE0..0xEF three, 0xF0..0xFF four, any other byte one; the last symbol cut short at the end), without
  checking the bytes that follow: invalid UTF-8 is taken as it comes, never replaced;
- two adjacent symbols join when their joined text is *any* token (control, unknown, byte and unused ones
  too), with that token's score; the highest score first, the leftmost among equal scores (floats compared as
  floats: -0.0 equals 0.0);
- a final symbol that is a token gives that token (whatever its type); any other gives, byte by byte, the token
  ``<0xXX>`` or else the token whose text is that one byte (ASCII); a byte with neither makes llama.cpp fail
  (``std::out_of_range``, uncaught), so it raises ``InvalidTextError``;
- no normalization, no unknown token, no resegmentation of unused tokens.

Merges never cross a place where two adjacent symbols occur side by side in no token, so a long text is cut
there and each part merged on its own (and cached): the same ids, as llama.cpp's queue orders merges of different
parts independently.  The report of ``bpeproof explain`` (``merge_steps``) traces the same loop over the whole
text, which is llama.cpp's one queue: the joins in the order llama.cpp makes them.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from itertools import compress, repeat
from typing import TYPE_CHECKING, Any

from bpeproof.impl.formats.derive import last_split
from bpeproof.impl.io.packed_state import PackedState, packed_attributes, restored, unpacked_later
from bpeproof.impl.merge_loop import merge
from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError, InvalidTextError

if TYPE_CHECKING:
    from bpeproof.impl.models.steps import PieceSteps

__all__ = ["LlamaCppSpmModel", "utf8_symbols"]

#: How many bytes llama.cpp's ``unicode_len_utf8`` takes for a symbol, by the lead byte's upper four bits.
_SYMBOL_LENGTH = (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4)


def _join(x: bytes, y: bytes, code: int) -> bytes:
    return x + y


def utf8_symbols(data: bytes) -> list[bytes]:
    """``data`` cut as llama.cpp cuts a text into symbols: each as long as its lead byte announces (the last one
    cut short at the end), the following bytes unchecked; valid UTF-8 gives its characters."""
    try:
        return [char.encode("utf-8") for char in data.decode("utf-8")]
    except UnicodeDecodeError:
        pass
    symbols: list[bytes] = []
    position = 0
    while position < len(data):
        size = _SYMBOL_LENGTH[data[position] >> 4]
        symbols.append(data[position : position + size])
        position += size
    return symbols


#: Texts of this many symbols or more are cut where no token holds two adjacent symbols, and the parts merged
#: (and cached) on their own; shorter ones are merged whole.
SEGMENTED_FROM = 256


class LlamaCppSpmModel:
    """llama.cpp's SPM session on the tokens of a GGUF file; ``semantics`` "llama.cpp-spm".

    ``texts``: every token's text, index = id; ``scores``: their float32 scores; ``table``: id → the bytes of
    the ids the model reports as its own (the pipeline leaves the special tokens out: they decode by their
    text).  ``encode_word`` takes one text whose spaces are already written U+2581 (with the space prefix),
    as llama.cpp's session takes it.  ``BPEValueError`` for a NaN score of a token that two symbols can spell
    (llama.cpp's queue then has no order).
    """

    semantics = "llama.cpp-spm"
    #: What the compiled-vocabulary cache unpacks only when read (the token table, for decoding), and what it does
    #: not store: the pairs of adjacent characters, made again when a long text is first encoded.
    _LATER = ("_table",)
    _DERIVED = ("_adjacent",)

    def __init__(self, texts: Sequence[str], scores: Sequence[float], table: Mapping[int, bytes], *,
                 cache_size: int = 1 << 16) -> None:
        if len(texts) != len(scores):
            raise BPETypeError(f"{len(texts)} token texts but {len(scores)} scores")
        # In whole-list passes: the tokens of two characters or more (one character is one symbol, never spelt
        # by two of them) and their scores.
        encoded = list(map(str.encode, texts))
        self._lookup = dict(zip(encoded, range(len(texts)), strict=True))
        self._table = dict(table)
        longer = list(map(operator.le, repeat(2), map(len, texts)))
        values = list(map(float, compress(scores, longer)))
        if any(map(float.__ne__, values, values)):  # a NaN: named
            token = next(token for token in compress(range(len(texts)), longer) if math.isnan(float(scores[token])))
            raise BPEValueError(f"token {token} {texts[token]!r} has the score NaN: llama.cpp's order of merges is"
                                " then unspecified")
        keys = dict(zip(compress(encoded, longer), values, strict=True))
        #: The distinct scores, highest first: a pair's code is its score's place here.
        self._ranked_scores = sorted(set(keys.values()), reverse=True)
        ranked = dict(zip(self._ranked_scores, range(len(self._ranked_scores)), strict=True))
        self._codes = dict(zip(keys, map(ranked.__getitem__, keys.values()), strict=True))
        # (``_adjacent`` is made when a long text is first encoded)
        self._text_codes: dict[str, int] | None = None  # for article_steps
        self._longest = 1  # for article_steps: the most characters of a token two symbols can spell
        self._texts: dict[int, bytes] | None = None  # for article_steps: id → text
        self._byte_tokens: list[int | None] = []
        for byte in range(ALPHABET_SIZE):
            found = self._lookup.get(f"<0x{byte:02X}>".encode("ascii"))
            if found is None and 0 < byte < 0x80:
                found = self._lookup.get(bytes([byte]))  # llama.cpp's fallback: the byte itself as a string
            self._byte_tokens.append(found)
        self._cache: dict[bytes, tuple[int, ...]] = {}
        self._cache_size = cache_size

    def packed(self) -> dict[str, Any]:
        """What the compiled-vocabulary cache stores (``bpeproof.impl.io.packed_state.Packable``): all but the pairs
        of adjacent characters, made again when a long text is first encoded."""
        return packed_attributes(self, derived=self._DERIVED, later=self._LATER)

    @classmethod
    def from_packed(cls, state: PackedState) -> LlamaCppSpmModel:
        return restored(cls, state, later=cls._LATER)

    @cached_property
    def _table(self) -> dict[int, bytes]:
        """id → bytes of the ids the model reports as its own (a model the cache made unpacks it when first
        read)."""
        found: dict[int, bytes] = unpacked_later(self, "_table")
        return found

    @property
    def vocabulary_size(self) -> int:
        return len(self._table)

    def token_table(self) -> dict[int, bytes]:
        return dict(self._table)

    def c_merger(self) -> Any:
        return None

    def byte_token(self, byte: int) -> int | None:
        """The token llama.cpp gives a byte of a symbol that is no token (``byte_to_token``), None for none."""
        return self._byte_tokens[byte]

    def encode_word(self, word: bytes) -> tuple[int, ...]:
        """The ids of one text (spaces already written U+2581), as llama.cpp's SPM session gives them."""
        out: list[int] = []
        cache = self._cache
        for part in self._parts(utf8_symbols(word)):
            key = b"".join(part)
            ids = cache.get(key)
            if ids is None:
                ids = self._merge(part)
                if len(cache) >= self._cache_size:
                    cache.clear()
                if self._cache_size:
                    cache[key] = ids
            out += ids
        return tuple(out)

    @cached_property
    def _adjacent(self) -> set[bytes]:
        """The pairs of adjacent characters (UTF-8) in the tokens two symbols can spell (``_parts``)."""
        texts = [data.decode("utf-8") for data in self._codes]
        return {text[i : i + 2].encode("utf-8") for text in texts for i in range(len(text) - 1)}

    def _parts(self, symbols: list[bytes]) -> Iterator[list[bytes]]:
        """``symbols`` cut between every two adjacent ones that no token holds side by side; fewer than
        ``SEGMENTED_FROM`` symbols are left whole (the same ids: no merge crosses such a place)."""
        if len(symbols) < SEGMENTED_FROM:
            if symbols:
                yield symbols
            return
        adjacent = self._adjacent
        start = 0
        for i in range(1, len(symbols)):
            if symbols[i - 1] + symbols[i] not in adjacent:
                yield symbols[start:i]
                start = i
        if symbols:
            yield symbols[start:]

    def _merge(self, symbols: list[bytes]) -> tuple[int, ...]:
        get = self._codes.get
        lookup = self._lookup
        out: list[int] = []
        for symbol in merge(symbols, lambda x, y: get(x + y), _join):
            token = lookup.get(symbol)
            if token is not None:
                out.append(token)
                continue
            for byte in symbol:
                fallback = self._byte_tokens[byte]
                if fallback is None:
                    raise InvalidTextError(f"the byte 0x{byte:02X} of {symbol!r} has no token <0x{byte:02X}>:"
                                           " llama.cpp fails on this text")
                out.append(fallback)
        return tuple(out)

    # -- reports (impl.models.steps) ------------------------------------------------------------------------

    def merge_steps(self, word: bytes) -> PieceSteps:
        """llama.cpp's SPM session on one text (``impl.models.steps``): its symbols, the joins by the score of the
        token they spell ("score s", highest first, the leftmost among equal scores) in the order of llama.cpp's
        one queue over the whole text, and the byte tokens of the symbols left that are no token."""
        from bpeproof.impl.models.steps import Part, PieceSteps, show, traced_steps

        get = self._codes.get
        lookup = self._lookup

        def label(code: int, joined: bytes) -> tuple[int, str, str]:
            score = f"{self._ranked_scores[code]:g}"
            return code, f"score {score}", score

        units, joins = traced_steps(utf8_symbols(word), lambda x, y: get(x + y), _join,
                                    lambda symbol: Part(lookup.get(symbol), show(symbol)), label)
        ids = self.encode_word(word)
        notes: list[str] = []
        unknown = [part.text for part in PieceSteps(units, joins, ids).parts() if part.token is None]
        if unknown:
            notes.append(f"parts that are no token ({' '.join(dict.fromkeys(unknown))}): their bytes' <0xXX> tokens"
                         " (byte fallback)")
        return PieceSteps(units, joins, ids, None, tuple(notes))

    def article_steps(self, word: bytes) -> PieceSteps | None:
        """def-bpe over the text's symbols with the rules recovered from the scores (``impl.formats.derive``): each
        token of two symbols or more found in the text, made of the two parts its own merge with the
        higher-scoring tokens ends in, highest score first (the lower id first among equal scores); None when a
        symbol is no token (then the text is no valid UTF-8 or holds a character without a token)."""
        from bpeproof.impl.models.steps import Part, replay_steps, show, substrings

        lookup = self._lookup
        symbols = utf8_symbols(word)
        tokens = [lookup.get(symbol) for symbol in symbols]
        if None in tokens:
            return None
        text = word.decode("utf-8")  # every symbol is a token's text: valid UTF-8, one character each
        if self._text_codes is None:
            self._text_codes = {data.decode("utf-8"): code for data, code in self._codes.items()}
            self._longest = max(map(len, self._text_codes), default=1)
        codes = self._text_codes
        found = sorted(({text[start:stop] for start, stop in substrings(text, self._longest)} & codes.keys()),
                       key=lambda piece: (codes[piece], lookup[piece.encode("utf-8")]))
        rules: dict[tuple[int, int], list[tuple[int, int]]] = {}
        names: list[str] = []
        for piece in found:
            split = last_split(piece, codes, codes[piece])
            if split is None:
                continue
            left, right = (lookup.get(side.encode("utf-8")) for side in split)
            if left is not None and right is not None:
                rules.setdefault((left, right), []).append((len(names), lookup[piece.encode("utf-8")]))
                names.append(f"{self._ranked_scores[codes[piece]]:g}")
        if self._texts is None:
            self._texts = {token: data for data, token in lookup.items()}
        texts = self._texts
        return replay_steps([token for token in tokens if token is not None], rules,
                            lambda token: Part(token, show(texts[token])),
                            lambda index: (f"score {names[index]}", names[index]))
