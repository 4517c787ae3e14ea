"""tiktoken's semantics as a merge model: the whole pre-token if it is a token, else the adjacent two parts whose
joined bytes have the lowest rank joined first, leftmost first (``bpeproof.spec.variants.enc_tiktoken`` defines it)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from bpeproof.impl.encoder import C_RULE_LIMIT

try:
    from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]
except ImportError:  # the C extension is optional: the Python loops give the same ids
    _fastenc = None
from bpeproof.impl.formats.derive import last_split
from bpeproof.impl.io.packed_state import PackedState, packed_attributes, restored
from bpeproof.impl.merge_loop import merge
from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError, InvalidTextError, is_int

if TYPE_CHECKING:
    from bpeproof.impl.models.steps import PieceSteps

__all__ = ["TIKTOKEN_RANK_LIMIT", "TiktokenModel"]

#: tiktoken stores ranks as 32-bit unsigned ints and reserves the largest for "no merge".
TIKTOKEN_RANK_LIMIT = 2**32 - 1


class TiktokenModel:
    """tiktoken's encoder on a rank file ``token bytes → rank`` (the rank is the id), proper or not.

    The empty token (a rank file line ``= 50256``) is an id that decodes to nothing and that no non-empty
    pre-token produces.  A single byte with no rank is allowed in the file, as tiktoken allows it, but a text
    whose encoding needs it raises ``InvalidTextError`` (tiktoken fails on such a text too).  ``c_loop``: merge in
    the C loop when it is built (False: always in the Python loop).
    """

    semantics = "tiktoken"

    def __init__(self, ranks: Mapping[bytes, int], *, c_loop: bool = True) -> None:
        if not isinstance(ranks, Mapping):
            raise BPETypeError(f"ranks must be a mapping of bytes to int, not {type(ranks).__name__}")
        decoder = _checked_decoder(ranks)
        if decoder is None:  # a table that is not plainly valid: checked token by token, the first problem named
            decoder = _decoder(ranks)
        self._ranks = dict(ranks)
        self._decoder = decoder
        self._fast: Any = None
        self._longest: int | None = None  # the longest token, for article_steps (made on first use)
        self._use_c = c_loop and _fastenc is not None

    def packed(self) -> dict[str, Any]:
        """What the compiled-vocabulary cache stores (``bpeproof.impl.io.packed_state.Packable``): all but the rank
        table, the decoder's inverse."""
        return packed_attributes(self, derived=("_ranks",))

    @classmethod
    def from_packed(cls, state: PackedState) -> TiktokenModel:
        return restored(cls, state)

    @cached_property
    def _ranks(self) -> dict[bytes, int]:
        """token → rank, in the decoder's order: the table ``__init__`` keeps, made again from the decoder by a model
        the cache made when first read (the C loop has its own tables)."""
        return dict(zip(self._decoder.values(), self._decoder, strict=True))

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
            decoder = self._decoder
            ordered = sorted(decoder)  # the ranks in order (a rank file's usually are: sorted in one pass)
            multi = [rank for rank, token in zip(ordered, map(decoder.__getitem__, ordered), strict=True)
                     if len(token) > 1]
            if len(multi) < C_RULE_LIMIT:
                outputs: list[int | None] = [self._ranks.get(bytes([byte])) for byte in range(ALPHABET_SIZE)]
                outputs += multi
                self._fast = _fastenc.Merger.from_ranks(list(map(decoder.__getitem__, multi)), outputs)
        return self._fast

    def merge_steps(self, word: bytes) -> PieceSteps:
        """tiktoken on ``word`` (``impl.models.steps``): the joins by the rank of the joined bytes ("rank r"), and
        the whole-piece look-up, which decides when ``word`` is itself a token."""
        from bpeproof.impl.models.steps import Part, PieceSteps, show, traced_steps

        get = self._ranks.get
        units, joins = traced_steps([word[i : i + 1] for i in range(len(word))], lambda x, y: get(x + y),
                                    _join_bytes, lambda data: Part(get(data), show(data)),
                                    lambda rank, data: (rank, f"rank {rank}", str(rank)))
        whole = get(word)
        return PieceSteps(units, joins, self.encode_word(word), None if whole is None else Part(whole, show(word)))

    def article_steps(self, word: bytes) -> PieceSteps | None:
        """def-bpe on the rules recovered from the ranks (``impl.formats.derive``) that can apply to ``word``: each
        token of two bytes or more found in it, made of the two parts its own merge with the lower ranks ends in,
        in rank order; None when a byte of ``word`` has no rank."""
        from bpeproof.impl.models.steps import Part, replay_steps, show, substrings

        ranks = self._ranks
        units = [ranks.get(word[i : i + 1]) for i in range(len(word))]
        if None in units:
            return None
        if self._longest is None:
            self._longest = max(map(len, ranks), default=1)
        rules: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for token in sorted({word[start:stop] for start, stop in substrings(word, self._longest)} & ranks.keys(),
                            key=ranks.__getitem__):
            rank = ranks[token]
            split = last_split(token, ranks, rank)
            if split is not None and split[0] in ranks and split[1] in ranks:
                rules.setdefault((ranks[split[0]], ranks[split[1]]), []).append((rank, rank))
        decoder = self._decoder
        return replay_steps([unit for unit in units if unit is not None], rules,
                            lambda token: Part(token, show(decoder[token])),
                            lambda rank: (f"rank {rank}", str(rank)))


def _checked_decoder(ranks: Mapping[bytes, int]) -> dict[int, bytes] | None:
    """rank → token for a table of bytes to distinct ints in tiktoken's range, checked in whole-table passes; None
    when it is not one (``_decoder`` then names the problem)."""
    if set(map(type, ranks)) - {bytes} or set(map(type, ranks.values())) - {int}:
        return None
    decoder = dict(zip(ranks.values(), ranks, strict=True))
    if len(decoder) != len(ranks) or (decoder and (min(decoder) < 0 or max(decoder) >= TIKTOKEN_RANK_LIMIT)):
        return None
    return decoder


def _decoder(ranks: Mapping[bytes, int]) -> dict[int, bytes]:
    """rank → token, each token and rank checked in turn: the first that is not bytes, not an int in tiktoken's
    range, or a rank given before raises."""
    decoder: dict[int, bytes] = {}
    for token, rank in ranks.items():
        if not isinstance(token, bytes):
            raise BPETypeError(f"rank file token {token!r} must be bytes")
        if not is_int(rank) or not 0 <= rank < TIKTOKEN_RANK_LIMIT:
            raise BPEValueError(f"rank of {token!r} must be an int in 0..2**32-2 (tiktoken's ranks), not {rank!r}")
        if rank in decoder:
            raise BPEValueError(f"the tokens {decoder[rank]!r} and {token!r} share the rank {rank}")
        decoder[rank] = token
    return decoder


def _join_bytes(x: bytes, y: bytes, code: int) -> bytes:
    return x + y

