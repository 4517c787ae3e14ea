"""Merge models: the BPE semantics of each tokenizer library, each as a pair table for the one merge loop.

A model turns one pre-token (its UTF-8 bytes) into ids, exactly as a library does, and knows the bytes of every
id (for decoding).  ``semantics`` names what it runs:

``sequential``  the article's enc_R (def-bpe): rules applied in list order (``SequentialModel``, the project's
                own files and trained tokenizers);
``tiktoken``    tiktoken's encoder for any rank file, proper or not: the whole pre-token if it is a token, else
                repeatedly join the adjacent two parts whose *joined bytes* have the lowest rank, leftmost first
                (``TiktokenModel``; ``bpeproof.spec.variants.enc_tiktoken`` is its definition);
``hf-bpe``      Hugging Face ``tokenizers``' BPE model: pairs of the merge list ranked by their line, the
                joined string's vocabulary id as result, ``ignore_merges`` (whole word first), unknown bytes
                dropped or ``unk`` — on the bytes of a byte-level vocabulary (``HuggingFaceModel``), or on the
                words' strings with a word prefix, an end-of-word suffix, byte fallback, any vocabulary
                (``HuggingFaceTextModel``); ``bpeproof.spec.variants.enc_pair_rank`` and ``enc_hf_bpe`` define them.
``sentencepiece-bpe``  sentencepiece's BPE model on a whole text: its normalization, then characters joined by
                the score of the piece they spell, highest first, unknown characters as byte pieces or ``unk``
                (``SentencePieceModel``; it runs in Python).

Each model runs in C when the optional extension is built (``c_merger``) and in Python otherwise, with the
same ids; the tests compare both with the definitions in ``spec/variants.py`` and with the libraries.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Container, Iterator, Mapping, Sequence
from typing import Any, Protocol

from bpeproof.impl import encoder as _encoder_module

try:
    from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]
except ImportError:  # the C extension is optional: the Python loops give the same ids
    _fastenc = None
from bpeproof.impl.encoder import Encoder
from bpeproof.impl.merge_loop import merge
from bpeproof.impl.normalizers.sentencepiece import SPACE_SYMBOL, SentencePieceNormalizer, longest_prefix
from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError, InvalidTextError, Rule, RuleTriple, is_int

__all__ = [
    "SEMANTICS",
    "HuggingFaceModel",
    "HuggingFaceTextModel",
    "MergeModel",
    "SentencePieceModel",
    "SequentialModel",
    "TiktokenModel",
]

#: The semantics a model can run, with what each follows.
SEMANTICS = {
    "sequential": "the article's enc_R: the rules applied one after another, in list order (def-bpe)",
    "tiktoken": "tiktoken: the whole pre-token if it is a token, else the lowest-ranked joined bytes first",
    "hf-bpe": "Hugging Face BPE model: the lowest-ranked merge line first, its joined string's id as result",
    "sentencepiece-bpe": "sentencepiece's BPE: the normalized text, the pair spelling the highest-scoring piece first"
    " (leftmost among equal scores), unknown characters as <0xXX> byte pieces or unk",
    "llama.cpp": "llama.cpp's BPE tokenizer: its special-token partition and pre-tokenizer, the lowest-ranked merge"
    " of two token strings first (bpeproof.impl.pipelines.llama_cpp)",
}

#: tiktoken stores ranks as 32-bit unsigned ints and reserves the largest for "no merge".
TIKTOKEN_RANK_LIMIT = 2**32 - 1



class MergeModel(Protocol):
    """What a ``Tokenizer`` needs of a semantics: ids for one pre-token and bytes for every id."""

    @property
    def semantics(self) -> str: ...

    @property
    def vocabulary_size(self) -> int: ...

    def encode_word(self, word: bytes) -> tuple[int, ...]: ...

    def token_table(self) -> dict[int, bytes]: ...

    def c_merger(self) -> Any: ...


class SequentialModel:
    """The article's enc_R on a valid rule list (``bpeproof.impl.encoder.Encoder``), bytes shown under ``byte_ids``."""

    semantics = "sequential"

    def __init__(self, rules: Sequence[RuleTriple] | Encoder, byte_ids: Sequence[int] | None = None) -> None:
        self.encoder = rules if isinstance(rules, Encoder) else Encoder(rules, cache_size=0)
        self.byte_ids = None if byte_ids is None else tuple(byte_ids)

    @property
    def rules(self) -> tuple[Rule, ...]:
        return self.encoder.rules

    @property
    def vocabulary_size(self) -> int:
        return self.encoder.vocabulary_size

    def encode_word(self, word: bytes) -> tuple[int, ...]:
        ids = self.encoder.encode_word_uncached(word)
        to_external = self.byte_ids
        if to_external is None:
            return ids
        return tuple(to_external[t] if t < ALPHABET_SIZE else t for t in ids)

    def token_table(self) -> dict[int, bytes]:
        to_external = self.byte_ids
        table = self.encoder.token_table()
        if to_external is None:
            return table
        return {(to_external[t] if t < ALPHABET_SIZE else t): data for t, data in table.items()}

    def c_merger(self) -> Any:
        return self.encoder._c_merger(self.byte_ids)


class TiktokenModel:
    """tiktoken's encoder on a rank file ``token bytes → rank`` (the rank is the id), proper or not.

    The empty token (a rank file line ``= 50256``) is an id that decodes to nothing and that no non-empty
    pre-token produces.  A single byte with no rank is allowed in the file, as tiktoken allows it, but a text
    whose encoding needs it raises ``InvalidTextError`` (tiktoken fails on such a text too).
    """

    semantics = "tiktoken"

    def __init__(self, ranks: Mapping[bytes, int]) -> None:
        if not isinstance(ranks, Mapping):
            raise BPETypeError(f"ranks must be a mapping of bytes to int, not {type(ranks).__name__}")
        decoder: dict[int, bytes] = {}
        for token, rank in ranks.items():
            if not isinstance(token, bytes):
                raise BPETypeError(f"rank file token {token!r} must be bytes")
            if not is_int(rank) or not 0 <= rank < TIKTOKEN_RANK_LIMIT:
                raise BPEValueError(f"rank of {token!r} must be an int in 0..2**32-2 (tiktoken's ranks), not {rank!r}")
            if rank in decoder:
                raise BPEValueError(f"the tokens {decoder[rank]!r} and {token!r} share the rank {rank}")
            decoder[rank] = token
        self._ranks: dict[bytes, int] = dict(ranks)
        self._decoder = decoder
        self._fast: Any = None
        self._use_c = _encoder_module.USE_C_LOOP and _fastenc is not None  # decided when the model is made

    @property
    def ranks(self) -> dict[bytes, int]:
        """A copy of the rank table."""
        return dict(self._ranks)

    @property
    def vocabulary_size(self) -> int:
        return len(self._ranks)

    def token_table(self) -> dict[int, bytes]:
        return dict(self._decoder)

    def encode_word(self, word: bytes) -> tuple[int, ...]:
        ranks = self._ranks
        whole = ranks.get(word)
        if whole is not None:
            return (whole,)
        get = ranks.get
        parts = merge([word[i : i + 1] for i in range(len(word))], lambda x, y: get(x + y), _join_bytes)
        try:
            return tuple(ranks[part] for part in parts)
        except KeyError:
            missing = next(part for part in parts if part not in ranks)
            raise InvalidTextError(
                f"byte 0x{missing[0]:02x} has no rank in the rank file and no token covers it here; tiktoken"
                " fails on this text as well"
            ) from None

    def c_merger(self) -> Any:
        if self._fast is None and self._use_c:
            multi = sorted((rank, token) for token, rank in self._ranks.items() if len(token) > 1)
            if len(multi) < _encoder_module.C_RULE_LIMIT:
                outputs: list[int | None] = [self._ranks.get(bytes([byte])) for byte in range(ALPHABET_SIZE)]
                outputs += [rank for rank, _ in multi]
                self._fast = _fastenc.Merger.from_ranks([token for _, token in multi], outputs)
        return self._fast


def _join_bytes(x: bytes, y: bytes, code: int) -> bytes:
    return x + y


def _pair_table(merges: Sequence[tuple[int, int, int]], vocabulary: Container[int], stride: int) -> dict[int, int]:
    """Hugging Face's merge table: ``a * stride + b`` → ``rank * stride + c`` for each merge ``(a, b, c)`` of the
    list (rank = its line), every id checked against ``vocabulary``; a pair listed twice keeps its last line."""
    table: dict[int, int] = {}
    for rank, merge_ids in enumerate(merges):
        if not (isinstance(merge_ids, tuple) and len(merge_ids) == 3):
            raise BPETypeError(f"merge {rank} must be an (a, b, c) triple of ids, not {merge_ids!r}")
        for token in merge_ids:
            if token not in vocabulary:
                raise BPEValueError(f"merge {rank} {merge_ids!r}: {token!r} is not in the vocabulary")
        a, b, c = merge_ids
        table[a * stride + b] = rank * stride + c
    return table


class HuggingFaceModel:
    """The BPE model of Hugging Face ``tokenizers`` on a byte-level vocabulary, with the file's own ids.

    ``tokens``: id → the bytes its string stands for (GPT-2's byte-to-character table); ``merges``: (a, b, c)
    ids in the file's order, c the id of the joined string (the library's table: a pair listed twice keeps its
    last line).  A word starts as the ids of its bytes' one-character tokens; a byte without one is left out,
    or becomes ``unk`` (consecutive ones fused into one with ``fuse_unk``), as the library does.
    ``ignore_merges``: a word that is itself a token is that token.
    """

    semantics = "hf-bpe"

    def __init__(
        self,
        tokens: Mapping[int, bytes],
        merges: Sequence[tuple[int, int, int]],
        *,
        ignore_merges: bool = False,
        unk: int | None = None,
        fuse_unk: bool = False,
    ) -> None:
        if not isinstance(tokens, Mapping):
            raise BPETypeError(f"tokens must be a mapping of int to bytes, not {type(tokens).__name__}")
        for token, data in tokens.items():
            if not is_int(token) or token < 0 or not isinstance(data, bytes):
                raise BPETypeError(f"token {token!r}: {data!r} must map a non-negative int to bytes")
        self._bytes = dict(tokens)
        by_bytes: dict[bytes, int] = {}
        for token in sorted(self._bytes):
            by_bytes.setdefault(self._bytes[token], token)
        self._by_bytes = by_bytes
        self._units = [by_bytes.get(bytes([byte])) for byte in range(ALPHABET_SIZE)]
        if unk is not None and unk not in self._bytes:
            raise BPEValueError(f"the unknown token {unk} is not in the vocabulary")
        self._unk = unk
        self._fuse_unk = fuse_unk
        self._ignore_merges = ignore_merges
        stride = max(self._bytes, default=0) + 1
        self._stride = stride
        self._merges = _pair_table(merges, self._bytes, stride)
        self._fast: Any = None
        self._use_c = _encoder_module.USE_C_LOOP and _fastenc is not None  # decided when the model is made

    @property
    def vocabulary_size(self) -> int:
        return len(self._bytes)

    def token_table(self) -> dict[int, bytes]:
        return dict(self._bytes)

    def _initial(self, word: bytes) -> list[int]:
        units: list[int] = []
        unk_run = False
        for byte in word:
            unit = self._units[byte]
            if unit is not None:
                units.append(unit)
                unk_run = False
            elif self._unk is not None:
                if not (self._fuse_unk and unk_run):
                    units.append(self._unk)
                unk_run = True
        return units

    def encode_word(self, word: bytes) -> tuple[int, ...]:
        if self._ignore_merges:
            whole = self._by_bytes.get(word)
            if whole is not None:
                return (whole,)
        get = self._merges.get
        stride = self._stride
        return tuple(merge(self._initial(word), lambda x, y: get(x * stride + y), lambda x, y, code: code % stride))

    def c_merger(self) -> Any:
        if self._fast is not None or None in self._units:
            return self._fast
        if not self._use_c:
            return None
        # Dense ids: the vocabulary's ids in increasing order; ranks are the merge lines.
        ordered = sorted(self._bytes)
        dense = {token: index for index, token in enumerate(ordered)}
        stride = self._stride
        pairs_a: list[int] = []
        pairs_b: list[int] = []
        ranks: list[int] = []
        results: list[int] = []
        for key, code in self._merges.items():
            pairs_a.append(dense[key // stride])
            pairs_b.append(dense[key % stride])
            ranks.append(code // stride)
            results.append(dense[code % stride])
        whole: list[bytes | None] = [None] * len(ordered)
        if self._ignore_merges:
            for data, token in self._by_bytes.items():
                whole[dense[token]] = data
        units = [dense[unit] for unit in self._units if unit is not None]
        self._fast = _fastenc.Merger.from_pairs(units, pairs_a, pairs_b, ranks, results, ordered, whole)
        return self._fast


class HuggingFaceTextModel:
    """The BPE model of Hugging Face ``tokenizers`` on the words as strings, exactly as ``BPE::merge_word`` runs.

    For any vocabulary, of characters or byte-level (then the words are already GPT-2's characters, as the
    ``ByteLevel`` pre-tokenizer leaves them).  ``strings``: id → the token's string; ``merges``: ``(a, b, c)`` in
    the file's order (c as the library finds it: the join of a with b less the ``prefix``; a pair listed twice
    keeps its last line); ``token_bytes``: the bytes each id decodes to.  A word (the UTF-8 bytes of its string)
    is encoded thus:

    1. with ``ignore_merges``, a word that is a token is that token;
    2. each character becomes the token of its string, with ``prefix`` before it unless it is the first and
       ``suffix`` after it if it is the last; a character without one becomes the ``<0xAB>`` tokens of that
       string's bytes with ``byte_fallback`` (when all of them are tokens), else the ``unk_token`` (one for a run
       with ``fuse_unk``; an unknown waits until the next known character or the end, so byte tokens found
       meanwhile come before it, as in the library), else nothing;
    3. the one merge loop (``impl.merge_loop.merge``): the pair of the lowest merge line first, leftmost among equals.

    An ``unk_token`` that is not a token fails the word that needs it (``InvalidTextError``), as the library fails.
    """

    semantics = "hf-bpe"

    def __init__(
        self,
        strings: Mapping[int, str],
        merges: Sequence[tuple[int, int, int]],
        token_bytes: Mapping[int, bytes],
        *,
        prefix: str | None = None,
        suffix: str | None = None,
        unk_token: str | None = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
    ) -> None:
        if not isinstance(strings, Mapping):
            raise BPETypeError(f"strings must be a mapping of int to str, not {type(strings).__name__}")
        ids: dict[str, int] = {}
        for token, text in strings.items():
            if not is_int(token) or token < 0 or not isinstance(text, str):
                raise BPETypeError(f"token {token!r}: {text!r} must map a non-negative int to a str")
            if text in ids:
                raise BPEValueError(f"tokens {ids[text]} and {token} are both {text!r}")
            ids[text] = token
        for token, data in token_bytes.items():
            if not is_int(token) or not isinstance(data, bytes):
                raise BPETypeError(f"token {token!r}: {data!r} must map an int to bytes")
        self._ids = ids
        self._bytes = dict(token_bytes)
        stride = max([*strings, *token_bytes, 0]) + 1
        self._stride = stride
        self._merges = _pair_table(merges, strings, stride)
        self._prefix = prefix or None
        self._suffix = suffix or None
        self._unk_token = unk_token
        self._fuse_unk = fuse_unk
        self._byte_fallback = byte_fallback
        self._ignore_merges = ignore_merges
        self._byte_tokens = [ids.get(f"<0x{byte:02X}>") for byte in range(ALPHABET_SIZE)]

    @property
    def vocabulary_size(self) -> int:
        return len(self._bytes)

    def token_table(self) -> dict[int, bytes]:
        return dict(self._bytes)

    def c_merger(self) -> Any:
        return None

    def _unk(self) -> int:
        token = self._ids.get(self._unk_token) if self._unk_token is not None else None
        if token is None:
            raise InvalidTextError(f"the word needs the unknown token {self._unk_token!r}, which is not in the"
                                   " vocabulary; the library fails on this text as well")
        return token

    def initial_units(self, word: str) -> list[int]:
        """Step 2: the ids a word starts as, before any merge."""
        ids = self._ids
        prefix, suffix = self._prefix, self._suffix
        units: list[int] = []
        pending: int | None = None  # the unknown token waiting to be added
        last = len(word) - 1
        for index, char in enumerate(word):
            text = char
            if prefix is not None and index > 0:
                text = prefix + text
            if suffix is not None and index == last:
                text = text + suffix
            token = ids.get(text)
            if token is not None:
                if pending is not None:
                    units.append(pending)
                    pending = None
                units.append(token)
                continue
            if self._byte_fallback:
                found = [self._byte_tokens[byte] for byte in text.encode("utf-8", "surrogateescape")]
                if None not in found:
                    units.extend(token for token in found if token is not None)
                    continue
            if self._unk_token is not None:
                if pending is None:
                    pending = self._unk()
                elif not self._fuse_unk:
                    units.append(pending)
                    pending = self._unk()
        if pending is not None:
            units.append(pending)
        return units

    def encode_word(self, word: bytes) -> tuple[int, ...]:
        text = word.decode("utf-8", "surrogateescape")
        if not text:
            return ()
        if self._ignore_merges:
            whole = self._ids.get(text)
            if whole is not None:
                return (whole,)
        get = self._merges.get
        stride = self._stride
        return tuple(merge(self.initial_units(text), lambda x, y: get(x * stride + y),
                           lambda x, y, code: code % stride))


#: sentencepiece's piece types (``ModelProto.SentencePiece.Type``).
PIECE_NORMAL, PIECE_UNKNOWN, PIECE_CONTROL, PIECE_USER_DEFINED, PIECE_UNUSED, PIECE_BYTE = 1, 2, 3, 4, 5, 6
_PIECE_TYPES = frozenset({PIECE_NORMAL, PIECE_UNKNOWN, PIECE_CONTROL, PIECE_USER_DEFINED, PIECE_UNUSED, PIECE_BYTE})
_MERGEABLE = frozenset({PIECE_NORMAL, PIECE_USER_DEFINED, PIECE_UNUSED})
#: The library refuses pieces of this many bytes or more.
PIECE_LIMIT = 8000
#: How deep the library splits unused pieces again before it keeps one as it is.
RESEGMENT_DEPTH = 100


def _join_text(x: str, y: str, code: int) -> str:
    return x + y


def score_key(score: float) -> int:
    """The order in which sentencepiece ranks a piece's float32 score: its bits as a signed int, negative
    floats reversed, so that -0.0 ranks below +0.0 (the library's ``SymbolPairComparator``)."""
    bits = int(struct.unpack("<i", struct.pack("<f", score))[0])
    return bits if bits >= 0 else -(bits & 0x7FFFFFFF) - 1


class SentencePieceModel:
    """sentencepiece's BPE model on the whole normalized text, with the model's own ids (its pieces' positions).

    ``pieces``: ``(text, score, type)`` in id order; the keyword arguments are the model's ``normalizer_spec``
    and ``trainer_spec`` (the charsmap as ``bpeproof.impl.formats.sentencepiece_model.parse_charsmap`` decodes it).
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

    def __init__(
        self,
        pieces: Sequence[tuple[str, float, int]],
        *,
        byte_fallback: bool = False,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        escape_whitespaces: bool = True,
        treat_whitespace_as_suffix: bool = False,
        charsmap_units: Sequence[int] = (),
        charsmap_replacements: Mapping[int, str] | None = None,
        unk_surface: str = " \u2047 ",
        cache_size: int = 1 << 16,
    ) -> None:
        texts: list[str] = []
        types: list[int] = []
        ids: dict[str, int] = {}
        keys: dict[str, int] = {}
        unk: int | None = None
        byte_ids: list[int | None] = [None] * ALPHABET_SIZE
        for token, piece in enumerate(pieces):
            if not (isinstance(piece, tuple) and len(piece) == 3):
                raise BPETypeError(f"piece {token} must be a (text, score, type) triple, not {piece!r}")
            text, score, kind = piece
            if not isinstance(text, str) or not text:
                raise BPEValueError(f"piece {token}: the text must be a non-empty str, not {text!r}")
            if not isinstance(score, (int, float)) or score != score:
                raise BPEValueError(f"piece {token} {text!r}: the score {score!r} is not a number")
            if kind not in _PIECE_TYPES:
                raise BPEValueError(f"piece {token} {text!r}: unknown piece type {kind!r}")
            if text == "\0" and byte_fallback:
                kind = PIECE_UNUSED  # the library's workaround for converted models that list the NUL byte twice
            texts.append(text)
            types.append(kind)
            if len(text.encode("utf-8")) >= PIECE_LIMIT:
                raise BPEValueError(f"piece {token} is {len(text.encode('utf-8'))} bytes long (the limit is 8000)")
            if text == "\0" and kind == PIECE_UNUSED:
                continue  # left out, as the library leaves it out
            if "\0" in text:
                raise BPEValueError(f"piece {token} {text!r} holds a NUL character")
            if text in ids:
                raise BPEValueError(f"piece {token} {text!r} is already defined as piece {ids[text]}")
            ids[text] = token
            if kind in _MERGEABLE:
                keys[text] = score_key(float(score))
            if kind == PIECE_UNKNOWN:
                if unk is not None:
                    raise BPEValueError(f"piece {token} {text!r}: the unknown piece is already piece {unk}")
                unk = token
            if kind == PIECE_BYTE:
                if not byte_fallback:
                    raise BPEValueError(f"piece {token} is the byte piece {text!r} although byte_fallback is false")
                value = _byte_piece_value(text)
                if value is None:
                    raise BPEValueError(f"piece {token}: {text!r} is not a byte piece <0x00>..<0xFF>")
                byte_ids[value] = token
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
        ranked = {key: code for code, key in enumerate(sorted(set(keys.values()), reverse=True))}
        self._codes = {text: ranked[key] for text, key in keys.items()}
        self._has_unused = any(types[token] == PIECE_UNUSED for token in ids.values())
        self._bigrams = {text[i : i + 2] for text in keys for i in range(len(text) - 1)}
        user_defined = [text for text, token in ids.items() if types[token] == PIECE_USER_DEFINED]
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
        self._cache: dict[str, tuple[tuple[str, int], ...]] = {}
        self._cache_size = cache_size

    @property
    def vocabulary_size(self) -> int:
        return len(self._texts)

    @property
    def pieces(self) -> list[tuple[str, int]]:
        """``(text, type)`` of every piece, in id order."""
        return list(zip(self._texts, self._types, strict=True))

    def token_table(self) -> dict[int, bytes]:
        """The bytes of every id: a piece's text with ``▁`` as the space, a byte piece's byte, nothing for a
        control piece, the unknown piece as the model's ``unk_surface``."""
        table: dict[int, bytes] = {}
        surface = self._unk_surface.encode("utf-8")
        byte_of = {token: byte for byte, token in enumerate(self._byte_ids)}
        for token, (text, kind) in enumerate(zip(self._texts, self._types, strict=True)):
            if token in byte_of:
                table[token] = bytes([byte_of[token]])
            elif kind == PIECE_CONTROL:
                table[token] = b""
            elif kind == PIECE_UNKNOWN:
                table[token] = surface
            else:
                table[token] = text.replace(SPACE_SYMBOL, " ").encode("utf-8")
        return table

    def c_merger(self) -> Any:
        return None

    def encode_word(self, word: bytes) -> tuple[int, ...]:
        """The ids of a whole text (its UTF-8 bytes, or any bytes), as ``SentencePieceProcessor.encode`` gives."""
        text = self.normalizer.normalize(word)
        if not text:
            return ()
        return self._ids_of(self._replayed(text) if self._has_unused else self._parts(text))

    # -- steps -----------------------------------------------------------------------------------------------

    def _piece_id(self, text: str) -> int:
        """The id of a merged part: its piece's when that is normal, user-defined or unused, else ``unk``."""
        token = self._ids.get(text)
        return token if token is not None and self._types[token] in _MERGEABLE else self._unk

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

    def _segments(self, chunk: str) -> Iterator[str]:
        """``chunk`` cut between every two adjacent characters that no piece holds side by side."""
        bigrams = self._bigrams
        start = 0
        for i in range(1, len(chunk)):
            if chunk[i - 1 : i + 1] not in bigrams:
                yield chunk[start:i]
                start = i
        yield chunk[start:]

    def _merge_segment(self, segment: str) -> tuple[tuple[str, int], ...]:
        get = self._codes.get
        parts = merge(list(segment), lambda x, y: get(x + y), _join_text)
        return tuple((part, self._piece_id(part)) for part in parts)

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
                    parts = self._merge_segment(segment)
                    if len(cache) >= self._cache_size:
                        cache.clear()
                    if self._cache_size:
                        cache[segment] = parts
                out += parts
        return out

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
            elif token == self._unk or types[token] not in _MERGEABLE:
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


def _byte_piece_value(text: str) -> int | None:
    """The byte of a byte piece ``<0xAB>`` (two upper-case hex digits, as the library writes them)."""
    digits = text[3:5]
    if len(text) == 6 and text[:3] == "<0x" and text[5] == ">" and all(c in "0123456789ABCDEF" for c in digits):
        return int(digits, 16)
    return None
