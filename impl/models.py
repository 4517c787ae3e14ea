"""Merge models: the BPE semantics of each tokenizer library, each as a pair table for the one merge loop.

A model turns one pre-token (its UTF-8 bytes) into ids, exactly as a library does, and knows the bytes of every
id (for decoding).  ``semantics`` names what it runs:

``sequential``  the article's enc_R (def-bpe): rules applied in list order (``SequentialModel``, the project's
                own files and trained tokenizers);
``tiktoken``    tiktoken's encoder for any rank file, proper or not: the whole pre-token if it is a token, else
                repeatedly join the adjacent two parts whose *joined bytes* have the lowest rank, leftmost first
                (``TiktokenModel``; ``spec.variants.enc_tiktoken`` is its definition);
``hf-bpe``      Hugging Face ``tokenizers``' BPE model on a byte-level vocabulary: pairs of the merge list
                ranked by their line, the joined string's vocabulary id as result, ``ignore_merges`` (whole
                word first), unknown bytes dropped or ``unk`` (``HuggingFaceModel``;
                ``spec.variants.enc_pair_rank`` is its definition).

Each model runs in C when the optional extension is built (``c_merger``) and in Python otherwise, with the
same ids; the tests compare both with the definitions in ``spec/variants.py`` and with the libraries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from impl import encoder as _encoder_module

try:
    from impl import _fastenc  # type: ignore[attr-defined]
except ImportError:  # the C extension is optional: the Python loops give the same ids
    _fastenc = None
from impl.encoder import Encoder
from impl.engine import merge
from spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError, InvalidTextError, Rule, RuleTriple

__all__ = ["SEMANTICS", "HuggingFaceModel", "MergeModel", "SequentialModel", "TiktokenModel"]

#: The semantics a model can run, with what each follows.
SEMANTICS = {
    "sequential": "the article's enc_R: the rules applied one after another, in list order (def-bpe)",
    "tiktoken": "tiktoken: the whole pre-token if it is a token, else the lowest-ranked joined bytes first",
    "hf-bpe": "Hugging Face BPE model: the lowest-ranked merge line first, its joined string's id as result",
}

#: tiktoken stores ranks as 32-bit unsigned ints and reserves the largest for "no merge".
TIKTOKEN_RANK_LIMIT = 2**32 - 1


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
    """The article's enc_R on a valid rule list (``impl.encoder.Encoder``), bytes shown under ``byte_ids``."""

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
            if not _is_int(rank) or not 0 <= rank < TIKTOKEN_RANK_LIMIT:
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
            if not _is_int(token) or token < 0 or not isinstance(data, bytes):
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
        table: dict[int, int] = {}
        for rank, merge_ids in enumerate(merges):
            if not (isinstance(merge_ids, tuple) and len(merge_ids) == 3):
                raise BPETypeError(f"merge {rank} must be an (a, b, c) triple of ids, not {merge_ids!r}")
            for token in merge_ids:
                if token not in self._bytes:
                    raise BPEValueError(f"merge {rank} {merge_ids!r}: {token!r} is not in the vocabulary")
            a, b, c = merge_ids
            table[a * stride + b] = rank * stride + c  # a pair listed twice keeps its last line
        self._merges = table
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
