"""Hugging Face ``tokenizers``' BPE model as merge models: pairs of the merge list ranked by their line, the joined
string's id as result, on the bytes of a byte-level vocabulary (``HuggingFaceModel``) or on the words' strings
(``HuggingFaceTextModel``); ``bpeproof.spec.variants.enc_pair_rank`` and ``enc_hf_bpe`` define them."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from functools import cached_property
from itertools import chain, compress, repeat
from operator import add, floordiv, mod, mul
from typing import TYPE_CHECKING, Any

try:
    from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]
except ImportError:  # the C extension is optional: the Python loops give the same ids
    _fastenc = None
from bpeproof.impl.io.c_readers import c_readers
from bpeproof.impl.io.packed_state import PackedState, packed_attributes, restored, unpacked_later
from bpeproof.impl.merge_loop import merge
from bpeproof.impl.models.char_merges import CharMerger, TextPair, char_merger
from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError, InvalidTextError, is_int

if TYPE_CHECKING:
    from bpeproof.impl.models.steps import Part, PieceSteps

__all__ = ["HuggingFaceModel", "HuggingFaceTextModel"]


def _pair_table(merges: Sequence[tuple[int, int, int]], vocabulary: Container[int], stride: int,
                repeated: list[tuple[int, int, int, int]]) -> dict[int, int]:
    """Hugging Face's merge table: ``a * stride + b`` → ``rank * stride + c`` for each merge ``(a, b, c)`` of the
    list (rank = its line), every id checked against ``vocabulary``; a pair listed twice keeps its last line, and
    the earlier lines go to ``repeated`` as ``(line, a, b, c)`` (the table and they are the whole list)."""
    plain = _plain_pair_table(merges, vocabulary, stride)
    if plain is not None:
        return plain
    table: dict[int, int] = {}
    for rank, merge_ids in enumerate(merges):
        if not (isinstance(merge_ids, tuple) and len(merge_ids) == 3):
            raise BPETypeError(f"merge {rank} must be an (a, b, c) triple of ids, not {merge_ids!r}")
        for token in merge_ids:
            if token not in vocabulary:
                raise BPEValueError(f"merge {rank} {merge_ids!r}: {token!r} is not in the vocabulary")
        a, b, c = merge_ids
        earlier = table.get(a * stride + b)
        if earlier is not None:
            repeated.append((earlier // stride, a, b, earlier % stride))
        table[a * stride + b] = rank * stride + c
    return table


def _plain_pair_table(merges: Sequence[tuple[int, int, int]], vocabulary: Container[int],
                      stride: int) -> dict[int, int] | None:
    """``_pair_table`` of the usual list, distinct pairs of ids all in the vocabulary, made in whole-list passes
    (no Python step per merge); None for any other list, which ``_pair_table`` then reads merge by merge."""
    columns = _plain_columns(merges, vocabulary, stride)
    return None if columns is None else _table_of_columns(columns, stride)


def _plain_columns(merges: Sequence[tuple[int, int, int]], vocabulary: Container[int],
                   stride: int) -> tuple[list[int], list[int], list[int]] | None:
    """The (a, b, c) columns of the usual list, distinct pairs of ids all in the vocabulary, in whole-list passes;
    None for any other list."""
    if not merges:
        return [], [], []
    fast = c_readers()
    if fast is not None and type(merges) is list and isinstance(vocabulary, dict):
        found = fast.merge_columns(merges, list(vocabulary))
        if found is not None:
            a_ids, b_ids, c_ids, distinct = found
            return (a_ids, b_ids, c_ids) if distinct else None
    if set(map(type, merges)) != {tuple} or set(map(len, merges)) != {3}:
        return None
    a_ids, b_ids, c_ids = (list(column) for column in zip(*merges, strict=True))
    if not all(map(vocabulary.__contains__, chain(a_ids, b_ids, c_ids))):
        return None
    keys = set(map(add, map(mul, a_ids, repeat(stride)), b_ids))
    return (a_ids, b_ids, c_ids) if len(keys) == len(a_ids) else None  # a pair listed twice: _pair_table's


def _table_of_columns(columns: tuple[list[int], list[int], list[int]], stride: int) -> dict[int, int]:
    """``a * stride + b`` → ``line * stride + c`` of distinct pairs given as columns."""
    a_ids, b_ids, c_ids = columns
    keys = map(add, map(mul, a_ids, repeat(stride)), b_ids)
    return dict(zip(keys, map(add, map(mul, range(len(a_ids)), repeat(stride)), c_ids), strict=True))


class HuggingFaceModel:
    """The BPE model of Hugging Face ``tokenizers`` on a byte-level vocabulary, with the file's own ids.

    ``tokens``: id → the bytes its string stands for (GPT-2's byte-to-character table); ``merges``: (a, b, c)
    ids in the file's order, c the id of the joined string (the library's table: a pair listed twice keeps its
    last line).  A word starts as the ids of its bytes' one-character tokens; a byte without one is left out,
    or becomes ``unk`` (consecutive ones fused into one with ``fuse_unk``), as the library does.
    ``ignore_merges``: a word that is itself a token is that token.  ``c_loop``: merge in the C loop when it is
    built (False: always in the Python loop).
    """

    semantics = "hf-bpe"
    #: What the compiled-vocabulary cache unpacks only when read (the C loop has its own tables), and what it does
    #: not store: the index of the tokens' bytes and the Python loop's pair table, made again when first read.
    _LATER = ("_bytes", "_columns")
    _DERIVED = ("_by_bytes", "_merges")

    def __init__(
        self,
        tokens: Mapping[int, bytes],
        merges: Sequence[tuple[int, int, int]],
        *,
        ignore_merges: bool = False,
        unk: int | None = None,
        fuse_unk: bool = False,
        c_loop: bool = True,
    ) -> None:
        if not isinstance(tokens, Mapping):
            raise BPETypeError(f"tokens must be a mapping of int to bytes, not {type(tokens).__name__}")
        # Checked in whole-table passes; token by token (naming the first bad one) only when they fail.
        if set(map(type, tokens)) - {int} or set(map(type, tokens.values())) - {bytes} or min(tokens, default=0) < 0:
            for token, data in tokens.items():
                if not is_int(token) or token < 0 or not isinstance(data, bytes):
                    raise BPETypeError(f"token {token!r}: {data!r} must map a non-negative int to bytes")
        self._bytes = dict(tokens)
        ordered = sorted(self._bytes)
        # The token of each byte: the smallest id of the tokens of one byte (found among them at C speed).
        units: list[int | None] = [None] * ALPHABET_SIZE
        single = map((1).__eq__, map(len, map(self._bytes.__getitem__, ordered)))
        for token in compress(ordered, single):
            byte = self._bytes[token][0]
            if units[byte] is None:
                units[byte] = token
        self._units = units  # (``_by_bytes`` is made when first read: the C loop does without it)
        if unk is not None and unk not in self._bytes:
            raise BPEValueError(f"the unknown token {unk} is not in the vocabulary")
        self._unk = unk
        self._fuse_unk = fuse_unk
        self._ignore_merges = ignore_merges
        stride = max(self._bytes, default=0) + 1
        self._stride = stride
        self._repeated: list[tuple[int, int, int, int]] = []  # the lines the table does not keep, for article_steps
        columns = _plain_columns(merges, self._bytes, stride)
        self._plain = columns is not None  # distinct pairs: the columns are the C loop's pairs as they are
        if columns is None:
            self._merges = _pair_table(merges, self._bytes, stride, self._repeated)  # (checks each merge)
            a_ids, b_ids, c_ids = (list(column) for column in zip(*merges, strict=True)) if merges else ([], [], [])
            columns = (a_ids, b_ids, c_ids)
        # (else ``_merges`` is made when first read: the C loop does without it)
        self._columns = columns  # (a, b, c) of every merge
        self._rules: dict[tuple[int, int], list[tuple[int, int]]] | None = None
        self._fast: Any = None
        self._use_c = c_loop and _fastenc is not None

    def packed(self) -> dict[str, Any]:
        """What the compiled-vocabulary cache stores (``bpeproof.impl.io.packed_state.Packable``): all but the index
        of the tokens' bytes and the Python loop's pair table, made again from the others."""
        return packed_attributes(self, derived=self._DERIVED, later=self._LATER)

    @classmethod
    def from_packed(cls, state: PackedState) -> HuggingFaceModel:
        return restored(cls, state, later=cls._LATER)

    @cached_property
    def _bytes(self) -> dict[int, bytes]:
        """id → bytes of every token (``__init__``'s; a model the cache made unpacks it when first read)."""
        found: dict[int, bytes] = unpacked_later(self, "_bytes")
        return found

    @cached_property
    def _columns(self) -> tuple[list[int], list[int], list[int]]:
        """The (a, b, c) columns of every merge (``__init__``'s; a model the cache made unpacks them when first
        read)."""
        found: tuple[list[int], list[int], list[int]] = unpacked_later(self, "_columns")
        return found

    @cached_property
    def _by_bytes(self) -> dict[bytes, int]:
        """bytes → id of every token (the smallest id of the same bytes)."""
        ordered = sorted(self._bytes)
        by_bytes = dict(zip(map(self._bytes.__getitem__, ordered), ordered, strict=True))
        if len(by_bytes) != len(ordered):  # the same bytes under two ids: the smallest keeps them
            by_bytes = {}
            for token in ordered:
                by_bytes.setdefault(self._bytes[token], token)
        return by_bytes

    @cached_property
    def _merges(self) -> dict[int, int]:
        """The Python loop's pair table, made from the merges' columns when first read (``__init__`` makes it of a
        list that is not plain, checking each merge)."""
        if self._plain:
            return _table_of_columns(self._columns, self._stride)
        return _pair_table(list(zip(*self._columns, strict=True)), self._bytes, self._stride, [])

    @property
    def vocabulary_size(self) -> int:
        return len(self._bytes)

    def token_table(self) -> dict[int, bytes]:
        return dict(self._bytes)

    def merge_steps(self, word: bytes) -> PieceSteps:
        """The library's BPE on ``word`` (``impl.models.steps``): the joins by merge line ("merge n", the
        library keeping a pair's last line), ``ignore_merges``' whole-word look-up, the bytes without a token."""
        from bpeproof.impl.models.steps import PieceSteps, traced_steps

        get = self._merges.get
        stride = self._stride
        units, joins = traced_steps(self._initial(word), lambda x, y: get(x * stride + y),
                                    lambda x, y, code: code % stride, self._part, _merge_label(stride))
        whole = self._by_bytes.get(word) if self._ignore_merges else None
        notes: list[str] = []
        missing = sorted({byte for byte in word if self._units[byte] is None})
        if missing:
            kept = "left out" if self._unk is None else f"the unknown token {self._unk}" + (
                " (one for a run: fuse_unk)" if self._fuse_unk else "")
            notes.append(f"bytes without a token ({', '.join(f'0x{byte:02X}' for byte in missing)}): {kept}")
        return PieceSteps(units, joins, self.encode_word(word), None if whole is None else self._part(whole),
                          tuple(notes))

    def article_steps(self, word: bytes) -> PieceSteps:
        """def-bpe with the file's merge list as the rule list, on the same starting units."""
        from bpeproof.impl.models.steps import replay_steps

        if self._rules is None:
            self._rules = _grouped(self._merges, self._stride, self._repeated)
        return replay_steps(self._initial(word), self._rules, self._part, _line_label)

    def _part(self, token: int) -> Part:
        from bpeproof.impl.models.steps import Part, show

        return Part(token, show(self._bytes[token]))

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
        # Dense ids: the vocabulary's ids themselves when they are 0, 1, … with few gaps (an id of a gap is never
        # reached: no unit or pair makes it), else the ids in increasing order; ranks are the merge lines.
        ordered = sorted(self._bytes)
        stride = self._stride
        ranks: Sequence[int]
        columns: tuple[Iterable[int], Iterable[int], Iterable[int]]
        if self._plain:  # distinct pairs: the merges' own columns, ranked by their lines
            columns = self._columns
            ranks = range(len(self._columns[0]))
        else:
            keys, codes = list(self._merges), list(self._merges.values())
            ranks = list(map(floordiv, codes, repeat(stride)))
            columns = (map(floordiv, keys, repeat(stride)), map(mod, keys, repeat(stride)),
                       map(mod, codes, repeat(stride)))
        whole: list[bytes | None]
        if stride <= len(ordered) + len(ordered) // 8 + ALPHABET_SIZE:
            pairs_a, pairs_b, results = (list(column) for column in columns)
            units = [unit for unit in self._units if unit is not None]
            ordered = list(range(stride))
            whole = list(map(self._bytes.get, ordered)) if self._ignore_merges else [None] * stride
        else:
            dense = dict(zip(ordered, range(len(ordered)), strict=True))
            pairs_a, pairs_b, results = (list(map(dense.__getitem__, column)) for column in columns)
            units = [dense[unit] for unit in self._units if unit is not None]
            whole = [None] * len(ordered)
            if self._ignore_merges:
                for data, token in self._by_bytes.items():
                    whole[dense[token]] = data
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
        c_loop: bool = True,
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
        self._repeated: list[tuple[int, int, int, int]] = []  # the lines the table does not keep, for article_steps
        self._merges = _pair_table(merges, strings, stride, self._repeated)
        self._rules: dict[tuple[int, int], list[tuple[int, int]]] | None = None
        self._prefix = prefix or None
        self._suffix = suffix or None
        self._unk_token = unk_token
        self._fuse_unk = fuse_unk
        self._byte_fallback = byte_fallback
        self._ignore_merges = ignore_merges
        self._byte_tokens = [ids.get(f"<0x{byte:02X}>") for byte in range(ALPHABET_SIZE)]
        self._strings: dict[int, str] | None = None  # id → string, for merge_steps (made on first use)
        self._chars = self._char_merger() if c_loop else None

    def _char_merger(self) -> CharMerger | None:
        """The C loop over the strings (``char_merges``), for the vocabularies whose words it encodes as the
        library does: no prefix or suffix, and a character without a token always its bytes' tokens (byte fallback
        with every byte's token, none of which a merge joins); None otherwise, or without the extension."""
        byte_tokens = self._byte_tokens
        if (self._prefix is not None or self._suffix is not None or not self._byte_fallback
                or None in byte_tokens):
            return None
        stride = self._stride
        strings = {token: text for text, token in self._ids.items()}
        fallback = set(byte_tokens)
        joins: list[TextPair] = []
        for key, code in self._merges.items():
            a, b, c = key // stride, key % stride, code % stride
            if a in fallback or b in fallback or c in fallback:
                return None  # a byte's token joins: the C loop keeps bytes apart
            joins.append((strings[a], strings[b], strings[c], code // stride))
        return char_merger(self._ids, joins, [token for token in byte_tokens if token is not None],
                           whole=self._ignore_merges)

    @property
    def vocabulary_size(self) -> int:
        return len(self._bytes)

    def token_table(self) -> dict[int, bytes]:
        return dict(self._bytes)

    def c_merger(self) -> Any:
        return None if self._chars is None else self._chars.fast

    @property
    def reports_spelt(self) -> bool:
        """Whether ``c_merger``'s loop reports a unit as several ids (a character without a token as its bytes'
        tokens, ``char_merges``), which only its ``encode_pieces`` spells out."""
        return self._chars is not None

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

    def merge_steps(self, word: bytes) -> PieceSteps:
        """The library's BPE on the word's string (``impl.models.steps``): the units as the library starts them
        (with the prefix, the suffix, byte fallback or the unknown token), the joins by merge line ("merge n"),
        ``ignore_merges``' whole-word look-up."""
        from bpeproof.impl.models.steps import PieceSteps, traced_steps

        text = word.decode("utf-8", "surrogateescape")
        if not text:
            return PieceSteps((), (), ())
        get = self._merges.get
        stride = self._stride
        units, joins = traced_steps(self.initial_units(text), lambda x, y: get(x * stride + y),
                                    lambda x, y, code: code % stride, self._part, _merge_label(stride))
        whole = self._ids.get(text) if self._ignore_merges else None
        notes: list[str] = []
        last = len(text) - 1
        unknown = [char for index, char in enumerate(text)
                   if (self._prefix if self._prefix is not None and index else "") + char
                   + (self._suffix if self._suffix is not None and index == last else "") not in self._ids]
        if unknown:
            how = ("their UTF-8 bytes' <0xXX> tokens (byte_fallback)" if self._byte_fallback else "")
            if self._unk_token is not None:
                unk = f"the unknown token {self._unk_token!r}" + (" (one for a run: fuse_unk)" * self._fuse_unk)
                how = f"{how}, else {unk}" if how else unk
            notes.append(f"characters without a token ({' '.join(dict.fromkeys(unknown))}): {how or 'left out'}")
        return PieceSteps(units, joins, self.encode_word(word), None if whole is None else self._part(whole),
                          tuple(notes))

    def article_steps(self, word: bytes) -> PieceSteps | None:
        """def-bpe with the file's merge list as the rule list, on the same starting units."""
        from bpeproof.impl.models.steps import PieceSteps, replay_steps

        text = word.decode("utf-8", "surrogateescape")
        if not text:
            return PieceSteps((), (), ())
        if self._rules is None:
            self._rules = _grouped(self._merges, self._stride, self._repeated)
        return replay_steps(self.initial_units(text), self._rules, self._part, _line_label)

    def _part(self, token: int) -> Part:
        from bpeproof.impl.models.steps import Part

        if self._strings is None:
            self._strings = {token: text for text, token in self._ids.items()}
        return Part(token, self._strings[token])


def _merge_label(stride: int) -> Callable[[int, int], tuple[int, str, str]]:
    """A join's priority, label and mark from its pair-table code (``rank * stride + c``): the merge line."""
    return lambda code, token: (code // stride, f"merge {code // stride + 1}", str(code // stride + 1))


def _line_label(line: int) -> tuple[str, str]:
    return f"merge {line + 1}", str(line + 1)


def _grouped(table: Mapping[int, int], stride: int, repeated: Sequence[tuple[int, int, int, int]]
             ) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """The file's merge list as ``replay`` takes it, (a, b) → its lines (line, c) in order, from the pair table
    and the lines it does not keep."""
    grouped: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for key, code in table.items():
        grouped[(key // stride, key % stride)] = [(code // stride, code % stride)]
    for line, a, b, c in repeated:
        grouped[(a, b)].append((line, c))
    for lines in grouped.values():
        lines.sort()
    return grouped
