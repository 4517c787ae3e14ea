"""llama.cpp's BPE as a merge model: the adjacent pair listed first joined first, on the tokens of a GGUF file
(``llm_tokenizer_bpe_session``), on bytes for a byte-level vocabulary (``LlamaCppModel``) or on characters for one
spelt as text (``LlamaCppTextModel``); the rest of llama.cpp's tokenizer is ``bpeproof.impl.pipelines.llama_cpp``
and ``bpeproof.impl.pipelines.llama_cpp_spm``."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from itertools import repeat
from typing import TYPE_CHECKING, Any

try:
    from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]
except ImportError:  # the C extension is optional: the Python loop gives the same ids
    _fastenc = None
from bpeproof.impl.io.packed_state import PackedState, packed_attributes, restored, unpacked_later
from bpeproof.impl.merge_loop import merge
from bpeproof.impl.models.llama_cpp_spm import utf8_symbols
from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError

if TYPE_CHECKING:
    from bpeproof.impl.models.steps import Part, PieceSteps

__all__ = ["LlamaCppModel", "LlamaCppTextModel"]

#: Bytes no UTF-8 encoding of a code point contains (llama.cpp's pieces are always such encodings).
_NEVER_IN_UTF8 = frozenset((0xC0, 0xC1, *range(0xF5, 0x100)))


def _listed_merges(ranks: Mapping[tuple[bytes, bytes], int], lookup: Mapping[bytes, int]
                   ) -> Iterable[tuple[int, int | None, int | None, int | None]]:
    """The merge lines (the first of each pair) in file order, as (line, left id, right id, joined id), an id
    None where its text is no token: the rule list of the article's def-bpe."""
    return ((line, lookup.get(left), lookup.get(right), lookup.get(left + right))
            for (left, right), line in sorted(ranks.items(), key=lambda item: item[1]))


def _merge_label(line: int) -> tuple[str, str]:
    """How a merge line is named in a report, and its mark in the tree (1-based, as a file's lines are read)."""
    return f"merge {line + 1}", str(line + 1)


class LlamaCppModel:
    """llama.cpp's BPE (``llm_tokenizer_bpe_session``) on the tokens of a GGUF file, over the one merge loop
    (``impl.merge_loop.merge``, or its C version) like the other models of ``impl.models``; ``semantics`` "llama.cpp".

    ``lookup``: bytes → id of every token merging can form (llama.cpp looks pieces up among all tokens, the
    special ones too).  ``merges``, either

    - (left, right) byte pairs in rank order: the general semantics.  A word starts as its bytes; the adjacent
      pair listed first is joined (leftmost first), whatever the joined bytes are; at the end each piece is
      its token or, when it has none, the tokens of its bytes one by one, a byte without a token left out;
    - or (a, b, c) id triples in rank order, one per pair, ``lookup``'s bytes of a and b joining into c's, for
      a file where no other merge can ever apply (the caller's claim, as
      ``bpeproof.impl.formats.gguf_file.byte_level_tables`` establishes it): the same ids from a pair table over ids,
      run in C when the extension is built.  A byte without a token stays in the word as a unit that joins
      nothing and gives no id, as in llama.cpp.

    ``table``: id → bytes of the ids the model reports as its own (a tokenizer's special tokens are left out
    and decode by their text).  ``ignore_merges``: a word that is itself a token is that token.  ``c_loop``: merge
    the id triples in the C loop when it is built (False: always in the Python loop).
    """

    semantics = "llama.cpp"
    #: What the compiled-vocabulary cache unpacks only when read (the C loop has its own tables), and what it does
    #: not store: the pair table of the Python loop, made again from the triples.
    _LATER = ("_lookup", "_ranks", "_triples", "_unit_of")
    _DERIVED = ("_pairs",)

    #: The id the C loop reports for a byte without a token; the tokenizer drops it.
    BARRIER = -1

    def __init__(
        self,
        lookup: Mapping[bytes, int],
        merges: Sequence[tuple[bytes, bytes]] | Sequence[tuple[int, int, int]],
        table: Mapping[int, bytes],
        *,
        ignore_merges: bool = False,
        c_loop: bool = True,
    ) -> None:
        if not isinstance(lookup, Mapping) or not isinstance(table, Mapping):
            raise BPETypeError("lookup and table must be mappings")
        self._start(dict(lookup), dict(table), ignore_merges, c_loop)
        if merges and len(merges[0]) == 3:
            a_ids, b_ids, c_ids = (list(column) for column in zip(*merges, strict=True))
            self._setup_pairs(a_ids, b_ids, c_ids, checked=False)
        else:
            for rank, pair in enumerate(merges):
                if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(x, bytes) for x in pair)):
                    raise BPETypeError(f"merge {rank} must be a (left, right) pair of bytes, not {pair!r}")
                self._ranks.setdefault(pair, rank)  # type: ignore[arg-type]

    def _start(self, lookup: dict[bytes, int], table: dict[int, bytes], ignore_merges: bool, c_loop: bool) -> None:
        """The tables every model has, ``lookup`` and ``table`` kept as they are (the model's own)."""
        self._lookup = lookup
        self._table = table
        self._ignore_merges = ignore_merges
        self._units: list[int | None] = [self._lookup.get(bytes([byte])) for byte in range(ALPHABET_SIZE)]
        self._ranks = {}
        self._triples = None  # (and ``_pairs`` is made from them when first read)
        self._fast: Any = None
        self._use_c = c_loop and _fastenc is not None
        self._rules: dict[tuple[int, int], list[tuple[int, int]]] | None = None  # for article_steps
        self._by_id: dict[int, bytes] | None = None  # for article_steps

    @classmethod
    def from_columns(cls, lookup: Mapping[bytes, int], a_ids: list[int], b_ids: list[int], c_ids: list[int],
                     table: Mapping[int, bytes], *, ignore_merges: bool = False, checked: bool = False,
                     owned: bool = False, c_loop: bool = True) -> LlamaCppModel:
        """The model of the id triples ``zip(a_ids, b_ids, c_ids)``; ``checked``: the caller has made sure that
        they are distinct pairs of tokens whose bytes join into the result's (``byte_level_tables`` does), and
        the pair table of the Python loop is then made when first used; ``owned``: ``lookup`` and ``table`` are
        dicts the model may keep (the caller's own, not changed after), not copies; ``c_loop``: as the
        constructor's."""
        if not isinstance(lookup, Mapping) or not isinstance(table, Mapping):
            raise BPETypeError("lookup and table must be mappings")
        model = cls.__new__(cls)
        keep = owned and type(lookup) is dict and type(table) is dict
        model._start(lookup if keep else dict(lookup), table if keep else dict(table),  # type: ignore[arg-type]
                     ignore_merges, c_loop)
        model._setup_pairs(a_ids, b_ids, c_ids, checked=checked)
        return model

    def packed(self) -> dict[str, Any]:
        """What the compiled-vocabulary cache stores (``bpeproof.impl.io.packed_state.Packable``): all but the pair
        table of the Python loop, made again from the triples."""
        return packed_attributes(self, derived=self._DERIVED, later=self._LATER)

    @classmethod
    def from_packed(cls, state: PackedState) -> LlamaCppModel:
        return restored(cls, state, later=cls._LATER)

    @cached_property
    def _lookup(self) -> dict[bytes, int]:
        """bytes → id of every token merging can form (a model the cache made unpacks it when first read)."""
        found: dict[bytes, int] = unpacked_later(self, "_lookup")
        return found

    @cached_property
    def _ranks(self) -> dict[tuple[bytes, bytes], int]:
        """The rank of each (left, right) pair of bytes, for the general semantics (a model the cache made
        unpacks it when first read)."""
        found: dict[tuple[bytes, bytes], int] = unpacked_later(self, "_ranks")
        return found

    @cached_property
    def _triples(self) -> tuple[list[int], list[int], list[int]] | None:
        """The (a, b, c) columns of the id triples, None for the general semantics (a model the cache made
        unpacks them when first read)."""
        found: tuple[list[int], list[int], list[int]] | None = unpacked_later(self, "_triples")
        return found

    @cached_property
    def _unit_of(self) -> list[int]:
        """Each byte's unit: its token, or the barrier (a model the cache made unpacks them when first read)."""
        found: list[int] = unpacked_later(self, "_unit_of")
        return found

    @cached_property
    def _pairs(self) -> dict[int, int] | None:
        """The Python loop's pair table: ``a * stride + b`` → ``line * stride + c`` of each triple (made when
        first read of checked triples, and by a model the cache made)."""
        return self._pair_table()

    def _pair_table(self) -> dict[int, int] | None:
        """The Python loop's pair table: ``a * stride + b`` → ``line * stride + c`` of each triple."""
        if self._triples is None:
            return None
        a_ids, b_ids, c_ids = self._triples
        stride = self._stride
        keys = map(operator.add, map(operator.mul, a_ids, repeat(stride)), b_ids)
        codes = map(operator.add, map(operator.mul, range(len(a_ids)), repeat(stride)), c_ids)
        return dict(zip(keys, codes, strict=True))

    def _setup_pairs(self, a_ids: list[int], b_ids: list[int], c_ids: list[int], *, checked: bool) -> None:
        if not checked:
            by_id = dict(zip(self._lookup.values(), self._lookup.keys(), strict=True))
            try:
                joined = list(map(operator.add, map(by_id.__getitem__, a_ids), map(by_id.__getitem__, b_ids)))
                valid = len(a_ids) == len(b_ids) == len(c_ids) and joined == list(map(by_id.__getitem__, c_ids))
            except (KeyError, TypeError):
                valid = False
            if not valid:
                raise BPEValueError("merge triples must be tokens whose bytes join into the result token's")
        # The units: ids of the tokens, and one more for a byte without a token (it joins nothing).
        self._barrier = max(self._lookup.values(), default=0) + 1
        self._stride = self._barrier + 1
        self._unit_of = [self._barrier if unit is None else unit for unit in self._units]
        self._triples = (a_ids, b_ids, c_ids)
        if checked:
            return  # (``_pairs`` is made when first read)
        self._pairs = self._pair_table()
        if len(self._pairs or ()) != len(a_ids):
            raise BPEValueError("merge triples must be distinct pairs (one line per pair, the first one)")

    @property
    def vocabulary_size(self) -> int:
        return len(self._table)

    @property
    def has_barrier(self) -> bool:
        """True when a byte that can occur in a piece has no token: the C loop then reports ``BARRIER`` for it."""
        return self._fast is not None and any(
            self._units[byte] is None for byte in range(ALPHABET_SIZE) if byte not in _NEVER_IN_UTF8)

    def token_table(self) -> dict[int, bytes]:
        return dict(self._table)

    def encode_word(self, word: bytes) -> tuple[int, ...]:
        lookup = self._lookup
        if self._ignore_merges:
            whole = lookup.get(word)
            if whole is not None:
                return (whole,)
        pairs = self._pairs
        if pairs is not None:
            stride = self._stride
            get = pairs.get
            unit_of = self._unit_of
            ids = merge([unit_of[byte] for byte in word], lambda x, y: get(x * stride + y),
                        lambda x, y, code: code % stride)
            barrier = self._barrier
            return tuple(token for token in ids if token != barrier)
        ranks = self._ranks.get
        parts = merge([word[i : i + 1] for i in range(len(word))], lambda x, y: ranks((x, y)),
                      lambda x, y, code: x + y)
        out: list[int] = []
        for part in parts:
            token = lookup.get(part)
            if token is not None:
                out.append(token)
                continue
            out += [unit for unit in (self._units[byte] for byte in part) if unit is not None]
        return tuple(out)

    def c_merger(self) -> Any:
        """The C loop over the pair table (``_fastenc.Merger.from_pairs``), None for the general semantics."""
        if self._fast is not None or self._triples is None or not self._use_c:
            return self._fast
        # Dense ids: the tokens' ids themselves and the barrier (the largest id) when they are 0, 1, … with few
        # gaps (an id of a gap is never reached: no unit or pair makes it), else the ids in increasing order then
        # the barrier; in whole-list passes.
        ordered = sorted(set(self._lookup.values()))
        ordered.append(self._barrier)
        a_ids, b_ids, c_ids = self._triples
        units = self._unit_of
        if self._barrier < len(ordered) + len(ordered) // 8 + ALPHABET_SIZE:
            columns = (a_ids, b_ids, c_ids)
            ordered = list(range(self._barrier + 1))
        else:
            dense = dict(zip(ordered, range(len(ordered)), strict=True)).__getitem__
            columns = (list(map(dense, a_ids)), list(map(dense, b_ids)), list(map(dense, c_ids)))
            units = list(map(dense, units))
        outputs: list[int] = ordered[:-1]
        outputs.append(self.BARRIER)
        whole: list[bytes | None] = [None] * len(ordered)
        if self._ignore_merges:
            by_id = dict(zip(self._lookup.values(), self._lookup.keys(), strict=True))
            whole = list(map(by_id.get, ordered))
        self._fast = _fastenc.Merger.from_pairs(units, columns[0], columns[1], range(len(a_ids)), columns[2], outputs,
                                                whole)
        return self._fast

    # -- reports (impl.models.steps) ------------------------------------------------------------------------

    def merge_steps(self, word: bytes) -> PieceSteps:
        """llama.cpp's BPE on ``word`` (``impl.models.steps``): the joins by merge line ("merge n"), each unit with
        its bytes; the parts without a token spelt as their bytes' tokens, the bytes without one left out."""
        from bpeproof.impl.models.steps import Part, PieceSteps, show, traced_steps

        def label(code: int, unit: tuple[int | None, bytes]) -> tuple[int, str, str]:
            line = code // self._stride if self._pairs is not None else code
            return line, *_merge_label(line)

        barrier = self._barrier if self._pairs is not None else None

        def part(unit: tuple[int | None, bytes]) -> Part:
            return Part(None if unit[0] == barrier else unit[0], show(unit[1]))

        if self._pairs is not None:
            get, stride = self._pairs.get, self._stride
            units, joins = traced_steps(
                [(self._unit_of[byte], bytes([byte])) for byte in word],
                lambda x, y: get(x[0] * stride + y[0]), lambda x, y, code: (code % stride, x[1] + y[1]), part, label)
        else:
            ranks = self._ranks.get
            units, joins = traced_steps(
                [(self._lookup.get(word[i : i + 1]), word[i : i + 1]) for i in range(len(word))],
                lambda x, y: ranks((x[1], y[1])), lambda x, y, code: (self._lookup.get(x[1] + y[1]), x[1] + y[1]),
                part, label)
        whole = self._lookup.get(word) if self._ignore_merges else None
        notes: list[str] = []
        if any(item.token is None for item in PieceSteps(units, joins, ()).parts()):
            notes.append("parts without a token are spelt as their bytes' tokens, a byte without one left out")
        return PieceSteps(units, joins, self.encode_word(word), None if whole is None else Part(whole, show(word)),
                          tuple(notes))

    def article_steps(self, word: bytes) -> PieceSteps | None:
        """def-bpe with the file's merge list (as token ids) as the rule list, on the tokens of the word's bytes;
        None when a byte has no token."""
        from bpeproof.impl.models.steps import Part, replay_steps, show

        units = [self._lookup.get(word[i : i + 1]) for i in range(len(word))]
        if None in units:
            return None
        if self._rules is None:
            self._rules = {}
            lookup = self._lookup
            listed: Iterable[tuple[int, int | None, int | None, int | None]]
            if self._triples is not None:
                listed = zip(range(len(self._triples[0])), *self._triples, strict=False)
            else:
                listed = _listed_merges(self._ranks, lookup)
            for line, a, b, c in listed:
                if a is not None and b is not None and c is not None:
                    self._rules.setdefault((a, b), []).append((line, c))
        by_id = self._table_of_ids()
        return replay_steps([unit for unit in units if unit is not None], self._rules,
                            lambda token: Part(token, show(by_id[token])), _merge_label)

    def _table_of_ids(self) -> dict[int, bytes]:
        if self._by_id is None:
            self._by_id = {token: data for data, token in self._lookup.items()}
        return self._by_id


class LlamaCppTextModel:
    """llama.cpp's BPE session on tokens spelt as text (``byte_encode`` false: ``gemma4``, ``sarvam-moe``), over
    the one merge loop; ``semantics`` "llama.cpp".

    A word (UTF-8, spaces already written U+2581) starts as its symbols, cut as llama.cpp cuts them
    (``bpeproof.impl.models.llama_cpp_spm.utf8_symbols``: a character each); the adjacent pair of symbols listed
    first in ``merges`` ((left, right) texts as bytes, in rank order, the first line of a pair kept) is joined,
    leftmost first, whatever the joined text is; at the end a symbol that is a token (``lookup``: every token's
    text → id) gives it, any other gives its bytes' ``<0xXX>`` tokens, a byte without one left out.
    ``newline_runs``: a word of newlines only that is a token is that token (llama.cpp's fix for Gemma 4);
    ``ignore_merges``: a word that is a token is that token.  ``table``: id → bytes of the ids the model reports
    as its own.
    """

    semantics = "llama.cpp"
    #: What the compiled-vocabulary cache unpacks only when read: the table of ids' bytes (decoding's); encoding
    #: reads the texts' look-up and the merges' ranks.
    _LATER = ("_table",)

    def __init__(self, lookup: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]],
                 table: Mapping[int, bytes], *, newline_runs: bool = False, ignore_merges: bool = False) -> None:
        self._lookup = dict(lookup)
        self._table = dict(table)
        self._size = len(self._table)
        # Each pair's first line: the lines from the last, each written over by the earlier ones of its pair.
        lines = range(len(merges) - 1, -1, -1)
        self._ranks: dict[tuple[bytes, bytes], int] = dict(zip(reversed(merges), lines, strict=True))
        self._byte_tokens = [self._lookup.get(f"<0x{byte:02X}>".encode("ascii")) for byte in range(ALPHABET_SIZE)]
        self._newline_runs = newline_runs
        self._ignore_merges = ignore_merges
        self._rules: dict[tuple[int, int], list[tuple[int, int]]] | None = None  # for article_steps
        self._by_id: dict[int, bytes] | None = None  # for article_steps

    def packed(self) -> dict[str, Any]:
        """What the compiled-vocabulary cache stores (``bpeproof.impl.io.packed_state.Packable``): every table."""
        return packed_attributes(self, later=self._LATER)

    @classmethod
    def from_packed(cls, state: PackedState) -> LlamaCppTextModel:
        return restored(cls, state, later=cls._LATER)

    @cached_property
    def _table(self) -> dict[int, bytes]:
        """id → bytes of the ids the model reports as its own (a model the cache made unpacks it when first
        read)."""
        found: dict[int, bytes] = unpacked_later(self, "_table")
        return found

    @property
    def vocabulary_size(self) -> int:
        return self._size

    def token_table(self) -> dict[int, bytes]:
        return dict(self._table)

    def c_merger(self) -> Any:
        return None

    def _whole(self, word: bytes) -> int | None:
        """The token ``encode_word`` gives ``word`` whole, before merging (``ignore_merges``, ``newline_runs``)."""
        whole = self._lookup.get(word)
        return whole if whole is not None and (
            self._ignore_merges or (self._newline_runs and not word.strip(b"\n"))) else None

    def encode_word(self, word: bytes) -> tuple[int, ...]:
        lookup = self._lookup
        whole = self._whole(word)
        if whole is not None:
            return (whole,)
        ranks = self._ranks.get
        out: list[int] = []
        for symbol in merge(utf8_symbols(word), lambda x, y: ranks((x, y)), lambda x, y, code: x + y):
            token = lookup.get(symbol)
            if token is not None:
                out.append(token)
                continue
            out += [unit for unit in map(self._byte_tokens.__getitem__, symbol) if unit is not None]
        return tuple(out)

    # -- reports (impl.models.steps) ------------------------------------------------------------------------

    def merge_steps(self, word: bytes) -> PieceSteps:
        """llama.cpp's BPE over text on ``word`` (``impl.models.steps``): its characters, the joins by merge line
        ("merge n"), the whole-word look-up where it decides, and the byte tokens of the parts that are no token."""
        from bpeproof.impl.models.steps import Part, PieceSteps, show, traced_steps

        lookup = self._lookup
        ranks = self._ranks.get
        units, joins = traced_steps(
            [(lookup.get(symbol), symbol) for symbol in utf8_symbols(word)], lambda x, y: ranks((x[1], y[1])),
            lambda x, y, code: (lookup.get(x[1] + y[1]), x[1] + y[1]), lambda unit: Part(unit[0], show(unit[1])),
            lambda line, joined: (line, *_merge_label(line)))
        whole = self._whole(word)
        parts = [part.token for part in PieceSteps(units, joins, ()).parts()]
        notes: list[str] = []
        if whole is not None and parts != [whole] and not self._ignore_merges:
            notes.append("a run of newlines that is a token is that token (llama.cpp's rule for Gemma 4)")
        elif whole is None and None in parts:
            notes.append("parts without a token are spelt as their bytes' <0xXX> tokens, a byte without one left out")
        return PieceSteps(units, joins, self.encode_word(word), None if whole is None else Part(whole, show(word)),
                          tuple(notes))

    def article_steps(self, word: bytes) -> PieceSteps | None:
        """def-bpe with the file's merge list (as token ids) as the rule list, on the tokens of the word's
        characters; None when one has no token."""
        from bpeproof.impl.models.steps import Part, replay_steps, show

        lookup = self._lookup
        units = [lookup.get(symbol) for symbol in utf8_symbols(word)]
        if None in units:
            return None
        if self._rules is None:
            self._rules = {}
            for line, a, b, c in _listed_merges(self._ranks, lookup):
                if a is not None and b is not None and c is not None:
                    self._rules.setdefault((a, b), []).append((line, c))
        if self._by_id is None:
            self._by_id = {token: data for data, token in lookup.items()}
        by_id = self._by_id
        return replay_steps([unit for unit in units if unit is not None], self._rules,
                            lambda token: Part(token, show(by_id[token])), _merge_label)
