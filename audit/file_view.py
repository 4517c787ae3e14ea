"""A vocabulary file as the audit reads it (``FileView``), and the token counts and text samples that the
one-process audit (``audit.report`` and its sections) and its corpus tasks (``audit.corpus_tasks``) share, so that
both count and sample a corpus the same way."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

from bpeproof.audit.libraries import Library
from bpeproof.impl.encoder import Encoder
from bpeproof.impl.formats import Conversion, Vocab
from bpeproof.impl.models.variants import MergeTable, variant_functions
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, compile_pattern
from bpeproof.spec.types import ALPHABET_SIZE

__all__ = ["FileView", "count_tokens", "pieces", "sample_starts"]


class FileView:
    """A file's tokens in its own ids, its conversion to rule ids, and the fast variants over its own ids.

    ``variants()`` gives the five variants as the audit runs them on this file (see the module docstring);
    ``sequential`` is (i) on the proper merges; ``file_ids`` maps rule ids back to the file's ids.
    """

    def __init__(self, vocab: Vocab, conversion: Conversion) -> None:
        self.vocab = vocab
        self.conversion = conversion
        special_ids = set(vocab.specials.values())
        self.ordinary: dict[int, bytes] = {
            token: data for token, data in vocab.tokens.items() if token not in special_ids and data
        }
        # rule id -> file id; among several file ids for one byte, the last (sentencepiece lists <0xNN> first)
        self.to_file: dict[int, int] = {}
        for file_id, rule_id in sorted(conversion.id_map.items()):
            self.to_file[rule_id] = file_id
        byte_token: dict[int, int] = {}
        for rule_id in range(ALPHABET_SIZE):
            if rule_id in self.to_file:
                byte_token[rule_id] = self.to_file[rule_id]
        self.byte_token = byte_token
        self.missing_byte_ids = {byte: -1 - byte for byte in range(ALPHABET_SIZE) if byte not in byte_token}
        token_bytes = dict(self.ordinary)
        for byte, placeholder in self.missing_byte_ids.items():
            token_bytes[placeholder] = bytes([byte])
        if vocab.kind == "tiktoken":
            order: list[int] = sorted(self.ordinary)
        elif vocab.kind == "sentencepiece-bpe":
            scores = vocab.scores
            order = sorted(self.ordinary, key=lambda token: (-scores.get(token, 0.0), token))
        else:
            order = [c for _, _, c in vocab.merges]
        known = [merge for merge in vocab.merges if all(part in token_bytes for part in merge)]
        units = self._char_units if vocab.kind == "sentencepiece-bpe" else self._byte_units
        self.char_token: dict[bytes, int] = {}
        if vocab.kind == "sentencepiece-bpe":
            for token, data in sorted(self.ordinary.items()):
                try:
                    if len(data.decode("utf-8")) == 1:
                        self.char_token[data] = token
                except UnicodeDecodeError:
                    continue
        self.table = MergeTable(token_bytes, known, order=order, units=units)
        self.unk = min(vocab.specials.values(), default=-1)
        self.encoder = Encoder(conversion.rules, cache_size=1 << 16)

    def _byte_units(self, word: bytes) -> list[int]:
        table = self.byte_token
        missing = self.missing_byte_ids
        return [table[byte] if byte in table else missing[byte] for byte in word]

    def _char_units(self, word: bytes) -> list[int]:
        out: list[int] = []
        for char in word.decode("utf-8", errors="surrogateescape"):
            data = char.encode("utf-8", errors="surrogateescape")
            token = self.char_token.get(data)
            if token is not None:
                out.append(token)
            elif self.vocab.byte_fallback:
                out += self._byte_units(data)
            else:
                out.append(self.unk)
        return out

    def file_ids(self, rule_ids: Iterable[int]) -> list[int]:
        """Rule ids as file ids (a byte without a token keeps its placeholder id, -1 - byte)."""
        to_file = self.to_file
        missing = self.missing_byte_ids
        return [to_file[t] if t in to_file else missing.get(t, t) for t in rule_ids]

    def sequential(self, word: bytes) -> list[int]:
        """(i) on the proper merges, in file ids."""
        return self.file_ids(self.encoder.encode_word(word))

    def variants(self) -> dict[str, Callable[[bytes], list[int]]]:
        return variant_functions(self.sequential, self.table)


def sample_starts(length: int, limit: int, rng: random.Random) -> tuple[list[int], int] | None:
    """Where ``sample_text`` takes its chunks from a text of ``length`` characters, and their size; None: the whole
    text (no more than ``limit`` characters)."""
    if length <= limit:
        return None
    chunks = 8
    size = limit // chunks
    return sorted(rng.sample(range(0, length - size), chunks)), size


def count_tokens(library: Library | None, view: FileView | None, pattern: str | None, text: str) -> int:
    """The tokens of a corpus's text by the file's library, or without one by the project's encoder (``view``'s,
    on the pre-tokens of ``pattern``, which takes every byte)."""
    if library is not None:
        return library.count_tokens(text)
    assert view is not None
    return sum(len(view.encoder.encode_word(piece)) for piece in pieces(pattern, text))


def pieces(pattern: str | None, text: str) -> list[bytes]:
    """The pre-tokens of ``text`` under ``pattern`` (the specification's word pattern when None), as bytes."""
    compiled = compile_pattern(pattern if pattern is not None else PATTERNS["words"])
    return [match.group().encode("utf-8") for match in compiled.finditer(text)]
