"""sentencepiece ``.model`` files (a serialized ``ModelProto``) of BPE type.

The file is parsed here, with a small reader of the protobuf wire format,
rather than through the ``sentencepiece`` package: that package needs the
separate ``protobuf`` package for its model proto, and its C++ loader
reports a corrupt file as a bare ``RuntimeError`` (or worse).  Only the fields
a BPE model needs are read (field numbers from ``sentencepiece_model.proto``):

- ``ModelProto.pieces`` (1): ``piece`` (1, string), ``score`` (2, float),
  ``type`` (3: NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, UNUSED 5, BYTE 6);
- ``ModelProto.trainer_spec`` (2): ``model_type`` (3: UNIGRAM 1, BPE 2, WORD 3,
  CHAR 4), ``treat_whitespace_as_suffix`` (24), ``byte_fallback`` (35),
  ``unk_surface`` (44);
- ``ModelProto.normalizer_spec`` (3): ``name`` (1), ``precompiled_charsmap`` (2),
  ``add_dummy_prefix`` (3, default true), ``remove_extra_whitespaces`` (4,
  default true), ``escape_whitespaces`` (5, default true).

A sub-message given twice is merged and a scalar given twice keeps its last
value, as protobuf does.  The precompiled charsmap (the normalization rules)
is decoded by ``parse_charsmap``: a darts-clone double-array trie from UTF-8
byte strings to their replacements.

The id of a piece is its position.  Byte pieces ``<0xAB>`` stand for one byte;
normal pieces are text with ``▁`` (U+2581) for the space, and stand for that
text's UTF-8 bytes with ``▁`` turned back into a space.  Control, unknown and
user-defined pieces are special tokens; unused pieces are left out.

A BPE model holds no merges: they are implicit in the scores (a higher score
merges first).  They are derived as for tiktoken (``bpeproof.impl.formats.derive``),
over characters instead of bytes: the pieces of one character are the
alphabet whatever their score, and every longer normal piece, in score order
(ties by id), is split into two pieces of higher priority by the
score-restricted merge of its characters.
"""

from __future__ import annotations

import os
import re
import struct
from typing import TYPE_CHECKING, NamedTuple

from bpeproof.impl.io.c_readers import c_readers
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import read_bytes

if TYPE_CHECKING:
    from bpeproof.impl.formats.vocab import Vocab

# The ``Vocab`` and the merge recovery are imported where a ``Vocab`` is made: a tokenizer loaded from a model
# needs neither (nor ``dataclasses``, which their modules import).

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_PIECE_TYPES = {NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE}
#: ``TrainerSpec.ModelType`` by number.
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}
_BYTE_PIECE = re.compile(r"<0x([0-9A-F]{2})>")
_SPACE = "\u2581"

# wire types
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


class Piece(NamedTuple):
    """One ``SentencePiece`` entry of the model."""

    text: str
    score: float
    type: int


class _Wire:
    """A cursor over one protobuf message; every malformation raises ``FormatError`` with the byte offset."""

    def __init__(self, path: str | os.PathLike[str], data: bytes, start: int, end: int, name: str) -> None:
        self.path = path
        self.data = data
        self.pos = start
        self.end = end
        self.name = name

    def fail(self, problem: str) -> FormatError:
        return FormatError(self.path, f"{self.name} at byte {self.pos}", problem)

    def varint(self) -> int:
        result = 0
        for shift in range(0, 70, 7):
            if self.pos >= self.end:
                raise self.fail("truncated varint")
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result & 0xFFFFFFFFFFFFFFFF
        raise self.fail("varint longer than 10 bytes")

    def fields(self) -> list[tuple[int, int, int | bytes | tuple[int, int]]]:
        """All ``(field number, wire type, value)`` of the message; LEN values are ``(start, end)`` offsets."""
        out: list[tuple[int, int, int | bytes | tuple[int, int]]] = []
        while self.pos < self.end:
            key = self.varint()
            number, wire = key >> 3, key & 7
            if number == 0:
                raise self.fail("field number 0")
            value: int | bytes | tuple[int, int]
            if wire == _VARINT:
                value = self.varint()
            elif wire == _I64:
                value = self._take(8)
            elif wire == _I32:
                value = self._take(4)
            elif wire == _LEN:
                length = self.varint()
                if length > self.end - self.pos:
                    raise self.fail(f"field {number} claims {length} bytes, only {self.end - self.pos} remain")
                value = (self.pos, self.pos + length)
                self.pos += length
            else:
                raise self.fail(f"field {number} has the unsupported wire type {wire}")
            out.append((number, wire, value))
        return out

    def _take(self, count: int) -> bytes:
        if self.end - self.pos < count:
            raise self.fail("truncated fixed-size field")
        chunk = self.data[self.pos : self.pos + count]
        self.pos += count
        return chunk


def _expect(wire: _Wire, number: int, got: int, expected: int) -> None:
    if got != expected:
        raise wire.fail(f"field {number} has wire type {got}, expected {expected}")


def _parse_piece(path: str | os.PathLike[str], data: bytes, span: tuple[int, int], index: int) -> Piece:
    wire = _Wire(path, data, span[0], span[1], f"pieces[{index}]")
    text: str | None = None
    score = 0.0
    piece_type = NORMAL
    for number, kind, value in wire.fields():
        if number == 1:
            _expect(wire, number, kind, _LEN)
            assert isinstance(value, tuple)
            try:
                text = data[value[0] : value[1]].decode("utf-8")
            except UnicodeDecodeError as exc:
                raise wire.fail(f"the piece text is not UTF-8: {exc.reason}") from exc
        elif number == 2:
            _expect(wire, number, kind, _I32)
            assert isinstance(value, bytes)
            score = struct.unpack("<f", value)[0]
        elif number == 3:
            _expect(wire, number, kind, _VARINT)
            assert isinstance(value, int)
            if value not in _PIECE_TYPES:
                raise wire.fail(f"unknown piece type {value}")
            piece_type = value
    if text is None:
        raise FormatError(path, f"pieces[{index}]", "the piece has no text")
    if not text:
        raise FormatError(path, f"pieces[{index}]", "the piece text is empty")
    return Piece(text, score, piece_type)


_UNPACK_FLOAT = struct.Struct("<f").unpack_from


def _quick_piece(data: bytes, span: tuple[int, int]) -> Piece | None:
    """The usual layout of a piece, read at once: text (field 1, shorter than 128 bytes), then the score
    (field 2), then a type (field 3) of one byte if any; None for any other layout (``_parse_piece`` reads it)."""
    start, end = span
    if end - start < 2 or data[start] != 0x0A or data[start + 1] >= 0x80:
        return None
    text_end = start + 2 + data[start + 1]
    if text_end + 5 > end or data[text_end] != 0x15:
        return None
    after = text_end + 5
    if after == end:
        kind = NORMAL
    elif after + 2 == end and data[after] == 0x18 and data[after + 1] in _PIECE_TYPES:
        kind = data[after + 1]
    else:
        return None
    try:
        text = data[start + 2 : text_end].decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text:
        return None
    return Piece(text, _UNPACK_FLOAT(data, text_end + 1)[0], kind)


def _flags(
    path: str | os.PathLike[str],
    data: bytes,
    span: tuple[int, int],
    name: str,
    wanted: dict[int, int],
    strings: dict[int, bytes] | None = None,
) -> dict[int, int]:
    """The varint fields ``wanted`` (number → default) of the sub-message at ``span``; the LEN fields named in
    ``strings`` (number → default) are stored there, as bytes."""
    wire = _Wire(path, data, span[0], span[1], name)
    found = dict(wanted)
    for number, kind, value in wire.fields():
        if number in wanted:
            _expect(wire, number, kind, _VARINT)
            assert isinstance(value, int)
            found[number] = value
        elif strings is not None and number in strings:
            _expect(wire, number, kind, _LEN)
            assert isinstance(value, tuple)
            strings[number] = data[value[0] : value[1]]
    return found


class ModelProto(NamedTuple):
    """The parts of a sentencepiece ``ModelProto`` that ``read_sentencepiece`` and the engine use; the pieces as
    three lists in id order (``texts``, ``scores``, ``types``), and as ``Piece`` objects (``pieces``)."""

    texts: list[str]
    scores: list[float]
    types: list[int]
    model_type: int
    byte_fallback: bool
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool = True
    treat_whitespace_as_suffix: bool = False
    normalizer_name: str = ""
    precompiled_charsmap: bytes = b""
    unk_surface: str = " \u2047 "

    @property
    def pieces(self) -> list[Piece]:
        """The pieces in id order."""
        return list(map(Piece, self.texts, self.scores, self.types))


def parse_model_proto(path: str | os.PathLike[str], data: bytes) -> ModelProto:
    """Parse the serialized ``ModelProto`` in ``data``; any malformation raises ``FormatError``.  The C reader
    (``bpeproof.impl.io.c_readers``) reads a model whose pieces all have the usual layout in one pass; any other
    is read here field by field."""
    wire = _Wire(path, data, 0, len(data), "ModelProto")
    texts: list[str] = []
    scores: list[float] = []
    types: list[int] = []
    trainer = {3: 1, 24: 0, 35: 0}
    trainer_strings = {44: " \u2047 ".encode()}
    normalizer = {3: 1, 4: 1, 5: 1}
    normalizer_strings = {1: b"", 2: b""}
    fast = c_readers()
    found = fast.sentencepiece_pieces(data) if fast is not None else None
    if found is not None:
        texts, scores, types, fields = found
    else:
        fields = wire.fields()
    for number, kind, value in fields:
        if number in (1, 2, 3):
            _expect(wire, number, kind, _LEN)
            assert isinstance(value, tuple)
            if number == 1:
                piece = _quick_piece(data, value) or _parse_piece(path, data, value, len(texts))
                texts.append(piece.text)
                scores.append(piece.score)
                types.append(piece.type)
            elif number == 2:
                trainer = _flags(path, data, value, "trainer_spec", trainer, trainer_strings)
            else:
                normalizer = _flags(path, data, value, "normalizer_spec", normalizer, normalizer_strings)
    if not texts:
        raise FormatError(path, "pieces", "the model has no pieces (is this a sentencepiece model?)")
    return ModelProto(
        texts,
        scores,
        types,
        trainer[3],
        bool(trainer[35]),
        bool(normalizer[3]),
        bool(normalizer[4]),
        escape_whitespaces=bool(normalizer[5]),
        treat_whitespace_as_suffix=bool(trainer[24]),
        normalizer_name=normalizer_strings[1].decode("utf-8", "replace"),
        precompiled_charsmap=normalizer_strings[2],
        unk_surface=trainer_strings[44].decode("utf-8", "replace"),
    )


_CHARSMAP = "normalizer_spec.precompiled_charsmap"
_LABEL = (1 << 31) | 0xFF


class CharsMap(NamedTuple):
    """A decoded precompiled charsmap: the double-array trie's units and the replacement text of each value.

    The trie is darts-clone's: a unit holds a label (its low byte; bit 31 set on value units), a leaf flag
    (bit 8) and an offset to its children; a search walks the input's bytes from unit 0 and reports, at each
    unit with the leaf flag, the value of the unit its offset points to.  ``replacements`` maps every value
    to its text: the NUL-terminated bytes at that offset of the blob's string part.
    """

    units: tuple[int, ...]
    replacements: dict[int, str]


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def parse_charsmap(path: str | os.PathLike[str], blob: bytes) -> CharsMap:
    """Decode ``<trie size: 4 bytes, little-endian><trie units><NUL-terminated replacements>``.

    The checks are the library's (``DecodePrecompiledCharsMap`` and darts-clone's ``validate``, so a file it
    refuses is refused here): a trie of whole 1024-byte blocks, a string part ending in NUL, a root without a
    leaf, every unit's children inside the array, every leaf pointing at a value unit, every value inside the
    string part.  A replacement that is not UTF-8 is refused too.  Any problem raises ``FormatError``.
    """
    if len(blob) <= 4:
        raise FormatError(path, _CHARSMAP, "the normalization rules are broken: 4 bytes or fewer")
    size = int.from_bytes(blob[:4], "little")
    if size >= len(blob) - 4:
        raise FormatError(path, _CHARSMAP, f"the trie claims {size} bytes, more than the {len(blob)}-byte blob holds")
    if size < 1024 or size % 1024:
        raise FormatError(path, _CHARSMAP, f"the trie's {size} bytes are not whole blocks of 1024")
    strings = blob[4 + size :]
    if not strings.endswith(b"\0"):
        raise FormatError(path, _CHARSMAP, "the replacement strings do not end with NUL")
    count = size // 4
    units = struct.unpack(f"<{count}I", blob[4 : 4 + size])
    root = units[0]
    if (root & _LABEL) or root >> 8 & 1 or not _offset(root) or (_offset(root) | 0xFF) >= count:
        raise FormatError(path, _CHARSMAP, "the trie's root unit is invalid")
    replacements: dict[int, str] = {}
    for position in range(1, count):
        unit = units[position]
        if not unit >> 31:
            child = position ^ _offset(unit)
            if (child | 0xFF) >= count:
                raise FormatError(path, _CHARSMAP, f"unit {position} points outside the {count}-unit trie")
            if unit >> 8 & 1 and not units[child] >> 31:
                raise FormatError(path, _CHARSMAP, f"unit {position} is a leaf without a value")
        else:
            value = unit & 0x7FFFFFFF
            if value >= len(strings):
                raise FormatError(path, _CHARSMAP, f"the value {value} of unit {position} is outside the strings")
            if value not in replacements:
                try:
                    replacements[value] = strings[value : strings.index(b"\0", value)].decode("utf-8")
                except UnicodeDecodeError:
                    raise FormatError(path, _CHARSMAP, f"the replacement at {value} is not UTF-8") from None
    return CharsMap(units, replacements)


def vocab_from_proto(model: ModelProto, *, source: str = "") -> Vocab:
    """The ``Vocab`` of a parsed BPE ``ModelProto``, with merges derived from the scores."""
    from bpeproof.impl.formats.derive import derive_merges
    from bpeproof.impl.formats.vocab import Vocab

    if model.model_type != 2:
        raise FormatError(
            source or "<in memory>",
            "trainer_spec.model_type",
            f"the model type is {MODEL_TYPES.get(model.model_type, model.model_type)!r}, not BPE",
        )
    tokens: dict[int, bytes] = {}
    specials: dict[str, int] = {}
    scores: dict[int, float] = {}
    normal_ids: dict[str, int] = {}
    for token_id, piece in enumerate(model.pieces):
        if piece.type == BYTE:
            match = _BYTE_PIECE.fullmatch(piece.text)
            if not match:
                raise FormatError(source or "<in memory>", f"pieces[{token_id}]", f"byte piece {piece.text!r}")
            tokens[token_id] = bytes([int(match.group(1), 16)])
        elif piece.type == NORMAL:
            if piece.text in normal_ids:
                raise FormatError(
                    source or "<in memory>",
                    f"pieces[{token_id}]",
                    f"the piece {piece.text!r} is already piece {normal_ids[piece.text]}",
                )
            tokens[token_id] = piece.text.replace(_SPACE, " ").encode("utf-8")
            normal_ids[piece.text] = token_id
        elif piece.type in (CONTROL, UNKNOWN, USER_DEFINED):
            specials.setdefault(piece.text, token_id)
        if piece.type != UNUSED:
            scores[token_id] = piece.score
    byte_pieces = sum(1 for piece in model.pieces if piece.type == BYTE)
    if model.byte_fallback and byte_pieces != 256:
        raise FormatError(
            source or "<in memory>",
            "trainer_spec.byte_fallback",
            f"byte_fallback is set but {byte_pieces} byte piece(s) are given, not 256",
        )
    # priority order of the merged pieces: higher score first, then lower id
    ordered = sorted(
        ((token_id, text) for text, token_id in normal_ids.items() if len(text) >= 2),
        key=lambda item: (-scores[item[0]], item[0]),
    )
    ranks = {text: rank for rank, (_, text) in enumerate(ordered)}
    merges, unsplit = derive_merges(ordered, normal_ids, ranks)
    return Vocab(
        tokens=tokens,
        merges=merges,
        specials=specials,
        kind="sentencepiece-bpe",
        source=source,
        byte_fallback=model.byte_fallback,
        unsplit=unsplit,
        scores=scores,
        add_dummy_prefix=model.add_dummy_prefix,
        remove_extra_whitespaces=model.remove_extra_whitespaces,
    )


def read_sentencepiece(path: str | os.PathLike[str]) -> Vocab:
    """Read a sentencepiece BPE ``.model`` file (gzip content is decompressed)."""
    return vocab_from_proto(parse_model_proto(path, read_bytes(path)), source=os.fspath(path))
