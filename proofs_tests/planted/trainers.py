"""Planted trainers: each breaks a step of def-bpe (or prop-bpe-training-termination) in one way.

Every function has the signature ``train(corpus, num_merges) -> list of (a, b, c)``.
They share one loop, ``_train``, with the step that goes wrong passed in.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence

from bpeproof.proofs_tests.planted._common import merge_pass

Pair = tuple[int, int]
Words = list[list[int]]
Counts = Callable[[Words], Counter[Pair]]
Choose = Callable[[Counter[Pair], Words], Pair]


def count_inside_words(words: Words) -> Counter[Pair]:
    """N_j(a, b) of def-bpe step 2: overlapping occurrences inside each word."""
    counts: Counter[Pair] = Counter()
    for word in words:
        counts.update(itertools.pairwise(word))
    return counts


def choose_smallest(counts: Counter[Pair], words: Words) -> Pair:
    """def-bpe step 4: the largest count, ties to the smallest pair."""
    best = max(counts.values())
    return min(pair for pair, n in counts.items() if n == best)


def _train(
    corpus: Sequence[bytes],
    num_merges: int | None,
    count: Counts = count_inside_words,
    choose: Choose = choose_smallest,
    min_count: int = 1,
) -> list[tuple[int, int, int]]:
    words: Words = [list(w) for w in corpus]
    rules: list[tuple[int, int, int]] = []
    while num_merges is None or len(rules) < num_merges:
        counts = +count(words)
        if not counts or max(counts.values()) < min_count:
            break
        a, b = choose(counts, words)
        c = 256 + len(rules)
        rules.append((a, b, c))
        words = [merge_pass(w, a, b, c) for w in words]
    return rules


def train_across_words(corpus: Sequence[bytes], num_merges: int | None) -> list[tuple[int, int, int]]:
    """Counts pairs across word boundaries too (def-bpe step 2 counts inside words only)."""

    def across(words: Words) -> Counter[Pair]:
        joined = [t for w in words for t in w]
        return Counter(itertools.pairwise(joined))

    return _train(corpus, num_merges, count=across)


def train_ties_first_seen(corpus: Sequence[bytes], num_merges: int | None) -> list[tuple[int, int, int]]:
    """Breaks ties by the pair seen first in the corpus (def-bpe step 4: the smallest pair)."""

    def first_seen(counts: Counter[Pair], words: Words) -> Pair:
        best = max(counts.values())
        return next(pair for pair, n in counts.items() if n == best)

    return _train(corpus, num_merges, choose=first_seen)


def train_ties_largest(corpus: Sequence[bytes], num_merges: int | None) -> list[tuple[int, int, int]]:
    """Breaks ties by the largest pair (def-bpe step 4: the smallest pair)."""

    def largest(counts: Counter[Pair], words: Words) -> Pair:
        best = max(counts.values())
        return max(pair for pair, n in counts.items() if n == best)

    return _train(corpus, num_merges, choose=largest)


def train_non_overlapping(corpus: Sequence[bytes], num_merges: int | None) -> list[tuple[int, int, int]]:
    """Counts non-overlapping occurrences (rep instead of cnt): a a a counts (a, a) once (def-bpe step 2)."""

    def non_overlapping(words: Words) -> Counter[Pair]:
        counts: Counter[Pair] = Counter()
        for word in words:
            for pair in set(itertools.pairwise(word)):
                i = 0
                while i + 1 < len(word):
                    if (word[i], word[i + 1]) == pair:
                        counts[pair] += 1
                        i += 2
                    else:
                        i += 1
        return counts

    return _train(corpus, num_merges, count=non_overlapping)


def train_stops_at_one(corpus: Sequence[bytes], num_merges: int | None) -> list[tuple[int, int, int]]:
    """Stops when the best count is 1 (def-bpe step 3 stops only when every count is 0)."""
    return _train(corpus, num_merges, min_count=2)


def train_distinct_words(corpus: Sequence[bytes], num_merges: int | None) -> list[tuple[int, int, int]]:
    """Deduplicates the words first, losing their frequencies (def-bpe: a corpus is a list, repeats count)."""
    return _train(list(dict.fromkeys(bytes(w) for w in corpus)), num_merges)


def train_stale_counts(corpus: Sequence[bytes], num_merges: int | None) -> list[tuple[int, int, int]]:
    """Incremental counts that forget the neighbours of a merge: (x, a), (b, y) and the new (x, c), (c, y)."""
    words: Words = [list(w) for w in corpus]
    counts = count_inside_words(words)
    rules: list[tuple[int, int, int]] = []
    while num_merges is None or len(rules) < num_merges:
        live = {pair: n for pair, n in counts.items() if n > 0}
        if not live:
            break
        best = max(live.values())
        a, b = min(pair for pair, n in live.items() if n == best)
        c = 256 + len(rules)
        rules.append((a, b, c))
        words = [merge_pass(w, a, b, c) for w in words]
        del counts[(a, b)]
    return rules


def train_never_stops(corpus: Sequence[bytes], num_merges: int | None) -> list[tuple[int, int, int]]:
    """Without a bound, waits for a pair that never comes (prop-bpe-training-termination)."""
    words: Words = [list(w) for w in corpus]
    rules: list[tuple[int, int, int]] = []
    while num_merges is None or len(rules) < num_merges:
        counts = count_inside_words(words)
        if not counts:
            if num_merges is None:
                continue
            break
        a, b = choose_smallest(counts, words)
        c = 256 + len(rules)
        rules.append((a, b, c))
        words = [merge_pass(w, a, b, c) for w in words]
    return rules


def train_pads_to_bound(corpus: Sequence[bytes], num_merges: int | None) -> list[tuple[int, int, int]]:
    """Fills up to num_merges with rules on (0, 0) once nothing is left: more than N − K merges."""
    rules = _train(corpus, num_merges)
    if num_merges is not None:
        while len(rules) < num_merges:
            rules.append((0, 0, 256 + len(rules)))
    return rules


def train_ties_by_bytes(corpus: Sequence[bytes], num_merges: int | None) -> list[tuple[int, int, int]]:
    """Breaks ties by the pair's bytes ⟨⟨a⟩⟩, ⟨⟨b⟩⟩ instead of the ids (def-bpe step 4 compares ids)."""
    table: dict[int, bytes] = {i: bytes([i]) for i in range(256)}
    words: Words = [list(w) for w in corpus]
    rules: list[tuple[int, int, int]] = []
    while num_merges is None or len(rules) < num_merges:
        counts = count_inside_words(words)
        if not counts:
            break
        best = max(counts.values())
        a, b = min((pair for pair, n in counts.items() if n == best), key=lambda p: (table[p[0]], table[p[1]]))
        c = 256 + len(rules)
        table[c] = table[a] + table[b]
        rules.append((a, b, c))
        words = [merge_pass(w, a, b, c) for w in words]
    return rules
