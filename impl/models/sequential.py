"""The article's semantics as a merge model: enc_R (def-bpe), the rules applied one after another in list order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bpeproof.impl.encoder import Encoder
from bpeproof.spec.types import ALPHABET_SIZE, Rule, RuleTriple

__all__ = ["SequentialModel"]


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
        return self.encoder.c_merger(self.byte_ids)

