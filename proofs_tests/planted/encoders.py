"""Planted encoders: each breaks def-bpe's enc_R in one way that real implementations have.

Every function has the signature ``enc(rules, data) -> list[int]``.  The module
docstring of ``bpeproof.proofs_tests.planted`` lists which claim each one breaks.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

from bpeproof.proofs_tests.planted._common import (
    RuleLike,
    byte_table,
    enc_correct,
    first_rank,
    merge_by_rank,
    merge_pass,
)

Rules = Sequence[RuleLike]


def enc_right_to_left(rules: Rules, data: bytes) -> list[int]:
    """Each rule scans from the right: (a, a ↦ c) on a a a gives a c instead of c a (def-merge)."""
    tokens = list(data)
    for a, b, c in rules:
        out: list[int] = []
        i = len(tokens) - 1
        while i >= 0:
            if i >= 1 and tokens[i - 1] == a and tokens[i] == b:
                out.append(c)
                i -= 2
            else:
                out.append(tokens[i])
                i -= 1
        tokens = out[::-1]
    return tokens


def enc_rightmost_first(rules: Rules, data: bytes) -> list[int]:
    """Rank order, but the rightmost of the lowest-rank pairs is merged first (def-merge: leftmost)."""
    rank = first_rank(rules)
    tokens = list(data)
    while True:
        best: tuple[int, int, int] | None = None
        for i in range(len(tokens) - 1):
            found = rank.get((tokens[i], tokens[i + 1]))
            if found is not None and (best is None or found[0] <= best[0]):
                best = (found[0], found[1], i)
        if best is None:
            return tokens
        _, c, i = best
        tokens[i : i + 2] = [c]


def enc_overlap_from_end(rules: Rules, data: bytes) -> list[int]:
    """Runs a a a … under (a, a ↦ c) are paired from the end, leaving the odd a in front (def-merge)."""
    tokens = list(data)
    for a, b, c in rules:
        if a != b:
            tokens = merge_pass(tokens, a, b, c)
            continue
        out: list[int] = []
        i = 0
        while i < len(tokens):
            if tokens[i] != a:
                out.append(tokens[i])
                i += 1
                continue
            j = i
            while j < len(tokens) and tokens[j] == a:
                j += 1
            run = j - i
            out += [a] * (run % 2) + [c] * (run // 2)
            i = j
        tokens = out
    return tokens


def enc_bytes_rank(rules: Rules, data: bytes) -> list[int]:
    """tiktoken style: merge the adjacent pair whose *joined bytes* have the lowest rank (not rule identity).

    Differs from enc_R where two ids stand for the same bytes (ex-same-string) or where
    the byte ranks order the merges differently from the rules.
    """
    table = byte_table(rules)
    rank: dict[bytes, int] = {}
    ident: dict[bytes, int] = {}
    for j, (a, b, c) in enumerate(rules):
        joined = table[a] + table[b]
        if joined not in rank:
            rank[joined] = j
            ident[joined] = c
    parts = [bytes([x]) for x in data]
    while True:
        best: tuple[int, int] | None = None
        for i in range(len(parts) - 1):
            found = rank.get(parts[i] + parts[i + 1])
            if found is not None and (best is None or found < best[0]):
                best = (found, i)
        if best is None:
            break
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return [ident[p] if len(p) > 1 else p[0] for p in parts]


def enc_contiguous_ids(rules: Rules, data: bytes) -> list[int]:
    """Assumes the new ids are 256, 257, …: writes 256 + j for rule j (def-merge allows any fresh id)."""
    tokens = list(data)
    for j, (a, b, _c) in enumerate(rules):
        tokens = merge_pass(tokens, a, b, 256 + j)
    return tokens


def _chunked(rules: Rules, data: bytes, size: int) -> list[int]:
    out: list[int] = []
    for start in range(0, len(data), size):
        out += enc_correct(rules, data[start : start + size])
    return out


def enc_chunks_64(rules: Rules, data: bytes) -> list[int]:
    """Encodes 64-byte chunks separately: misses merges across chunk borders (def-bpe)."""
    return _chunked(rules, data, 64)


def enc_chunks_1024(rules: Rules, data: bytes) -> list[int]:
    """Encodes 1024-byte chunks separately: only inputs longer than the spec's 800-token guard show it."""
    return _chunked(rules, data, 1024)


_BY_LENGTH: dict[tuple[int, int], list[int]] = {}
_BY_FIRST_BYTE: dict[tuple[tuple[tuple[int, ...], ...], bytes], list[int]] = {}
_BY_DATA: dict[bytes, list[int]] = {}


def enc_cache_by_length(rules: Rules, data: bytes) -> list[int]:
    """Caches answers under (number of rules, length of data): a wrong key."""
    key = (len(rules), len(data))
    if key not in _BY_LENGTH:
        _BY_LENGTH[key] = enc_correct(rules, data)
    return list(_BY_LENGTH[key])


def enc_cache_by_first_byte(rules: Rules, data: bytes) -> list[int]:
    """Caches answers under (rules, first byte): a wrong key."""
    key = (tuple(tuple(r) for r in rules), data[:1])
    if key not in _BY_FIRST_BYTE:
        _BY_FIRST_BYTE[key] = enc_correct(rules, data)
    return list(_BY_FIRST_BYTE[key])


def enc_cache_without_rules(rules: Rules, data: bytes) -> list[int]:
    """Caches answers under the data alone: a second rule list gets the first one's answer."""
    key = bytes(data)
    if key not in _BY_DATA:
        _BY_DATA[key] = enc_correct(rules, data)
    return list(_BY_DATA[key])


def enc_drops_equal_parts(rules: Rules, data: bytes) -> list[int]:
    """Skips rules (a, a ↦ c) as if they were malformed (def-merge allows a = b)."""
    return enc_correct([r for r in rules if r[0] != r[1]], data)


def enc_by_frequency(rules: Rules, data: bytes) -> list[int]:
    """Applies the rule whose pair is most frequent next, instead of the rules in list order (def-bpe)."""
    tokens = list(data)
    pending = list(rules)
    while pending:
        pairs = Counter(itertools.pairwise(tokens))
        best = max(range(len(pending)), key=lambda k: (pairs[(pending[k][0], pending[k][1])], -k))
        a, b, c = pending.pop(best)
        tokens = merge_pass(tokens, a, b, c)
    return tokens


def enc_duplicate_pair_last(rules: Rules, data: bytes) -> list[int]:
    """Rank order with a dict that keeps the *last* rule for a repeated pair (def-bpe: the first one fires)."""
    return merge_by_rank({(a, b): (j, c) for j, (a, b, c) in enumerate(rules)}, data)


_BY_RULE_SET: dict[tuple[frozenset[tuple[int, ...]], bytes], list[int]] = {}


def enc_cache_by_rule_set(rules: Rules, data: bytes) -> list[int]:
    """Caches answers under (set of rules, data): two orders of the same rules share an answer."""
    key = (frozenset(tuple(r) for r in rules), bytes(data))
    if key not in _BY_RULE_SET:
        _BY_RULE_SET[key] = enc_correct(rules, data)
    return list(_BY_RULE_SET[key])


def enc_splits_on_space(rules: Rules, data: bytes) -> list[int]:
    """Pre-tokenizes: encodes the pieces between spaces separately (def-bpe's enc_R merges across them)."""
    out: list[int] = []
    pieces = data.split(b" ")
    for index, piece in enumerate(pieces):
        out += enc_correct(rules, piece)
        if index < len(pieces) - 1:
            out.append(0x20)
    return out
