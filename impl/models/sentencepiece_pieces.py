"""A sentencepiece model's pieces as the tables its BPE model (``bpeproof.impl.models.sentencepiece``) runs on: the
piece types, each piece checked as the library checks it when it loads a model (piece by piece, or in whole-list
passes for the usual model), and the order of the scores."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import compress
from operator import itemgetter
from typing import Any

from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError

__all__ = [
    "MERGEABLE",
    "PIECE_BYTE",
    "PIECE_CONTROL",
    "PIECE_LIMIT",
    "PIECE_NORMAL",
    "PIECE_TYPES",
    "PIECE_UNKNOWN",
    "PIECE_UNUSED",
    "PIECE_USER_DEFINED",
    "Tables",
    "by_id",
    "checked_tables",
    "plain_columns",
    "plain_tables",
    "score_codes",
    "score_key",
]

#: sentencepiece's piece types (``ModelProto.SentencePiece.Type``).
PIECE_NORMAL, PIECE_UNKNOWN, PIECE_CONTROL, PIECE_USER_DEFINED, PIECE_UNUSED, PIECE_BYTE = 1, 2, 3, 4, 5, 6
PIECE_TYPES = frozenset({PIECE_NORMAL, PIECE_UNKNOWN, PIECE_CONTROL, PIECE_USER_DEFINED, PIECE_UNUSED, PIECE_BYTE})
MERGEABLE = frozenset({PIECE_NORMAL, PIECE_USER_DEFINED, PIECE_UNUSED})
#: (``float("inf")``, without importing ``math`` for it.)
_INFINITY = float("inf")
#: The library refuses pieces of this many bytes or more.
PIECE_LIMIT = 8000


def score_key(score: float) -> int:
    """The order in which sentencepiece ranks a piece's float32 score: its bits as a signed int, negative
    floats reversed, so that -0.0 ranks below +0.0 (the library's ``SymbolPairComparator``)."""
    import struct  # (here: only a model read piece by piece ranks one score at a time)

    bits = int(struct.unpack("<i", struct.pack("<f", score))[0])
    return bits if bits >= 0 else -(bits & 0x7FFFFFFF) - 1


#: A model's tables as its constructor reads them from the pieces: the texts and types in id order, text → id,
#: the normal, user-defined and unused pieces (text, then score, in id order), the unknown piece, each byte's piece.
Tables = tuple[list[str], list[int], dict[str, int], list[str], list[float], int | None, list[int | None]]

def checked_tables(pieces: Sequence[tuple[str, float, int]], byte_fallback: bool) -> Tables:
    """The tables, each piece checked in turn: the first that the library refuses raises ``BPEValueError``."""
    texts: list[str] = []
    types: list[int] = []
    ids: dict[str, int] = {}
    mergeable: list[str] = []
    scores: list[float] = []
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
        if kind not in PIECE_TYPES:
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
        if kind in MERGEABLE:
            score_key(float(score))  # (a score beyond float32's range is refused here)
            mergeable.append(text)
            scores.append(float(score))
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
    return texts, types, ids, mergeable, scores, unk, byte_ids


def plain_tables(pieces: Sequence[tuple[str, float, int]], byte_fallback: bool) -> Tables | None:
    """``checked_tables`` of the usual model, in whole-list passes (no Python step per piece): every piece a
    triple (``plain_columns`` on their three columns); None for any other model."""
    if not pieces or set(map(type, pieces)) != {tuple} or set(map(len, pieces)) != {3}:
        return None
    texts, raw_scores, types = (list(map(itemgetter(column), pieces)) for column in range(3))
    return plain_columns(texts, raw_scores, types, byte_fallback)


def plain_columns(texts: Sequence[str], raw_scores: Sequence[float], types: Sequence[int],
                   byte_fallback: bool) -> Tables | None:
    """``checked_tables`` of the usual model given as three columns, in whole-list passes: every piece a
    distinct non-empty text of fewer than 2000 characters without NUL, a float or int score that a float32 holds,
    a known type (an int), at most one unknown piece, byte pieces only with ``byte_fallback``; None for any other
    model, which ``checked_tables`` then reads piece by piece."""
    texts, types = list(texts), list(types)
    if not texts or not len(texts) == len(raw_scores) == len(types):
        return None
    if set(map(type, texts)) != {str} or "" in texts or max(map(len, texts)) * 4 >= PIECE_LIMIT:
        return None
    if not set(map(type, raw_scores)) <= {float, int} or set(map(type, types)) != {int}:
        return None
    scores = list(map(float, raw_scores))
    total = sum(scores)  # (NaN when a score is: NaN or, refused below too, infinities of both signs)
    if total != total or not set(types) <= PIECE_TYPES or "\0" in "".join(texts):
        return None
    single = array("f", scores)  # (a score that float32 cannot hold, which score_key refuses, becomes infinite)
    if _INFINITY in single or -_INFINITY in single:
        return None
    ids = dict(zip(texts, range(len(texts)), strict=True))
    unknown = types.count(PIECE_UNKNOWN)
    if len(ids) != len(texts) or unknown > 1:
        return None
    byte_ids: list[int | None] = [None] * ALPHABET_SIZE
    for token in compress(range(len(types)), map(PIECE_BYTE.__eq__, types)):
        value = _byte_piece_value(texts[token])
        if not byte_fallback or value is None:
            return None
        byte_ids[value] = token
    flags = list(map(MERGEABLE.__contains__, types))
    unk = types.index(PIECE_UNKNOWN) if unknown else None
    return texts, types, ids, list(compress(texts, flags)), list(compress(scores, flags)), unk, byte_ids


def _bits_order(bits: int) -> int:
    """``score_key`` of the float32 whose bits (as a signed int) these are."""
    return bits if bits >= 0 else -(bits & 0x7FFFFFFF) - 1


def score_codes(scores: list[float]) -> list[int]:
    """Each score's rank among the distinct float32 scores, highest first, as ``score_key`` orders them: the
    scores as float32 in one pass, ranked as floats (``score_key``'s order but for -0.0, which ranks below +0.0:
    with both among the scores, by their bits, one step per distinct score)."""
    single = array("f", scores)
    bits = array("i")
    bits.frombytes(single.tobytes())
    keys: list[Any]
    order: list[Any]
    if 0 in bits and -(2**31) in bits:  # +0.0 and -0.0: told apart by their bits
        keys = bits.tolist()
        order = sorted(set(keys), key=_bits_order, reverse=True)
    else:
        keys = single.tolist()
        order = sorted(set(keys), reverse=True)
    ranked: dict[Any, int] = dict(zip(order, range(len(order)), strict=True))
    return list(map(ranked.__getitem__, keys))


def by_id(size: int, tokens: list[int], values: list[Any], missing: Any) -> list[Any]:
    """A list of ``size`` items: ``values[i]`` at ``tokens[i]``, ``missing`` elsewhere."""
    found = [missing] * size
    for token, value in zip(tokens, values, strict=True):
        found[token] = value
    return found



def _byte_piece_value(text: str) -> int | None:
    """The byte of a byte piece ``<0xAB>`` (two upper-case hex digits, as the library writes them)."""
    digits = text[3:5]
    if len(text) == 6 and text[:3] == "<0x" and text[5] == ">" and all(c in "0123456789ABCDEF" for c in digits):
        return int(digits, 16)
    return None
