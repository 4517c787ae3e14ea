"""The article's semantics as a merge model: enc_R (def-bpe), the rules applied one after another in list order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bpeproof.impl.encoder import Encoder
from bpeproof.impl.models.ids import check_byte_ids
from bpeproof.spec.types import ALPHABET_SIZE, Rule, RuleTriple

if TYPE_CHECKING:
    from bpeproof.impl.models.steps import Part, PieceSteps

__all__ = ["SequentialModel"]


class SequentialModel:
    """The article's enc_R on a valid rule list (``bpeproof.impl.encoder.Encoder``), bytes shown under ``byte_ids``."""

    semantics = "sequential"

    def __init__(self, rules: Sequence[RuleTriple] | Encoder, byte_ids: Sequence[int] | None = None) -> None:
        self.encoder = rules if isinstance(rules, Encoder) else Encoder(rules, cache_size=0)
        self.byte_ids = None if byte_ids is None else tuple(byte_ids)
        self._pairs: dict[tuple[int, int], list[tuple[int, int]]] | None = None  # for merge_steps, made on first use

    @classmethod
    def checked(cls, rules: Sequence[RuleTriple], byte_ids: Sequence[int] | None = None, *, c_loop: bool = True
                ) -> SequentialModel:
        """The model of a rule list and byte ids given by a user: the rules checked valid (def-merge) and the byte
        ids 256 distinct non-negative ints, none of them a rule's new id (``BPEValueError`` / ``BPETypeError``);
        ``c_loop``: merge in the C loop when it is built (``Encoder``'s)."""
        encoder = Encoder(rules, cache_size=0, c_loop=c_loop)
        return cls(encoder, check_byte_ids(byte_ids, frozenset(rule.c for rule in encoder.rules)))

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
        return self.encoder.c_merger(self.byte_ids)

    def merge_steps(self, word: bytes) -> PieceSteps:
        """enc_R on ``word`` (``impl.models.steps``): each rule r_k that fires, in list order, labelled "rk"."""
        from bpeproof.impl.models.steps import Part, replay_steps, show

        if self._pairs is None:
            self._pairs = {}
            for index, rule in enumerate(self.rules):
                self._pairs.setdefault((rule.a, rule.b), []).append((index, rule.c))
        encoder = self.encoder
        to_external = self.byte_ids

        def part(token: int) -> Part:
            outer = to_external[token] if to_external is not None and token < ALPHABET_SIZE else token
            return Part(outer, show(encoder.token_bytes(token)))

        return replay_steps(list(word), self._pairs, part, lambda index: (f"r{index + 1}", str(index + 1)))

    def article_steps(self, word: bytes) -> PieceSteps:
        """The article's semantics is this model's: ``merge_steps``."""
        return self.merge_steps(word)

