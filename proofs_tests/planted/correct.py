"""Correct alternative implementations: written differently from ``spec``, equal to it on every input.

The checker must never report a difference for any of these.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence

from bpeproof.proofs_tests.planted._common import RuleLike, byte_table, first_rank, merge_by_rank, merge_pass

Rules = Sequence[RuleLike]


def enc_rank_order(rules: Rules, data: bytes) -> list[int]:
    """Rank order: repeatedly merge the adjacent pair of lowest rule index (the first rule for a repeated
    pair), the leftmost among equal ranks.  Equal to enc_R (def-bpe): a pair, once its rule has run,
    never forms again, since every later id is new."""
    return merge_by_rank(first_rank(rules), data)


def enc_fixpoint(rules: Rules, data: bytes) -> list[int]:
    """Applies each rule until nothing changes.  After one left-to-right pass M_r no (a, b) is left, so the
    second pass is the identity and this equals enc_R (def-merge, def-bpe)."""
    tokens = list(data)
    for a, b, c in rules:
        while True:
            merged = merge_pass(tokens, a, b, c)
            if merged == tokens:
                break
            tokens = merged
    return tokens


def dec_table(rules: Rules, ids: Iterable[int]) -> bytes:
    """dec (def-alphabet-vocab) through a table of token bytes built rule by rule."""
    table = byte_table(rules)
    return b"".join(table[t] for t in ids)


def train_word_counts(corpus: Sequence[bytes], num_merges: int | None) -> list[tuple[int, int, int]]:
    """def-bpe over a frequency table: distinct words with their counts (rem-faster-training)."""
    freq = Counter(bytes(w) for w in corpus)
    words = [list(w) for w in freq]
    weights = list(freq.values())
    rules: list[tuple[int, int, int]] = []
    while num_merges is None or len(rules) < num_merges:
        counts: Counter[tuple[int, int]] = Counter()
        for word, weight in zip(words, weights, strict=True):
            for pair in itertools.pairwise(word):
                counts[pair] += weight
        if not counts:
            break
        best = max(counts.values())
        a, b = min(pair for pair, n in counts.items() if n == best)
        c = 256 + len(rules)
        rules.append((a, b, c))
        words = [merge_pass(w, a, b, c) for w in words]
    return rules
