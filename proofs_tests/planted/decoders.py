"""Planted decoders: each breaks dec of def-alphabet-vocab in one way that real implementations have.

Every function has the signature ``dec(rules, ids) -> bytes``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bpeproof.proofs_tests.planted._common import RuleLike, byte_table

Rules = Sequence[RuleLike]


def dec_each_token_as_text(rules: Rules, ids: Iterable[int]) -> bytes:
    """Decodes every token to text on its own (errors replaced): a token's bytes alone need not be UTF-8.

    Breaks def-alphabet-vocab on tokens that split a character (prop-utf8-boundary).
    """
    table = byte_table(rules)
    return b"".join(table[t].decode("utf-8", errors="replace").encode("utf-8") for t in ids)


def dec_through_text(rules: Rules, ids: Iterable[int]) -> bytes:
    """A str-level wrapper: joins the bytes, decodes to text with errors replaced, encodes again."""
    table = byte_table(rules)
    return b"".join(table[t] for t in ids).decode("utf-8", errors="replace").encode("utf-8")


def dec_contiguous_ids(rules: Rules, ids: Iterable[int]) -> bytes:
    """Keeps the token bytes in a list indexed by id: assumes the new ids are 256, 257, …."""
    vocab = [bytes([i]) for i in range(256)]
    for a, b, _c in rules:
        vocab.append(vocab[a] + vocab[b])
    return b"".join(vocab[t] for t in ids)


_TOKEN_BYTES: dict[int, bytes] = {}


def dec_cache_without_rules(rules: Rules, ids: Iterable[int]) -> bytes:
    """Caches ⟨⟨t⟩⟩ by token id alone, across calls: a second rule list reusing an id gets stale bytes."""
    table: dict[int, bytes] | None = None
    out = bytearray()
    for t in ids:
        if t not in _TOKEN_BYTES:
            if table is None:
                table = byte_table(rules)
            _TOKEN_BYTES[t] = table[t]
        out += _TOKEN_BYTES[t]
    return bytes(out)
