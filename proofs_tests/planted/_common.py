"""Small building blocks shared by the planted implementations: one correct pass M_r, rank merging, a byte table.

Each is written independently of ``spec`` (only its data types are used), the way an
implementation under test would be.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

RuleLike = Sequence[int]


def merge_pass(tokens: Sequence[int], a: int, b: int, c: int) -> list[int]:
    """M_r of def-merge, left to right: where ``a`` is followed by ``b`` write ``c`` and skip both."""
    out: list[int] = []
    i = 0
    n = len(tokens)
    while i < n:
        if i + 1 < n and tokens[i] == a and tokens[i + 1] == b:
            out.append(c)
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out


RankTable = dict[tuple[int, int], tuple[int, int]]


def first_rank(rules: Iterable[RuleLike]) -> RankTable:
    """(a, b) → (index, c) of the first rule joining a and b."""
    rank: RankTable = {}
    for j, (a, b, c) in enumerate(rules):
        rank.setdefault((a, b), (j, c))
    return rank


def merge_by_rank(rank: RankTable, data: bytes) -> list[int]:
    """Repeatedly merge the adjacent pair of lowest rank in ``rank``, the leftmost among equals."""
    tokens = list(data)
    while True:
        best: tuple[int, int, int] | None = None
        for i in range(len(tokens) - 1):
            found = rank.get((tokens[i], tokens[i + 1]))
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], found[1], i)
        if best is None:
            return tokens
        _, c, i = best
        tokens[i : i + 2] = [c]


def byte_table(rules: Iterable[RuleLike]) -> dict[int, bytes]:
    """⟨⟨t⟩⟩ for every id of V_m (def-alphabet-vocab), built rule by rule."""
    table = {i: bytes([i]) for i in range(256)}
    for a, b, c in rules:
        table[c] = table[a] + table[b]
    return table


def enc_correct(rules: Iterable[RuleLike], data: bytes) -> list[int]:
    """enc_R of def-bpe: the rules in list order, each one left-to-right pass."""
    tokens = list(data)
    for a, b, c in rules:
        tokens = merge_pass(tokens, a, b, c)
    return tokens


def dec_correct(rules: Iterable[RuleLike], tokens: Iterable[int]) -> bytes:
    """dec of def-alphabet-vocab: the concatenation of the bytes of each token."""
    table = byte_table(rules)
    return b"".join(table[t] for t in tokens)
