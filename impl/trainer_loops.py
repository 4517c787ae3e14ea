"""The trainer's merge loops in Python: def-bpe's steps 2–5 on the distinct words, as rem-faster-training describes.

``bpeproof.impl.trainer`` checks the arguments, counts the words and picks a loop; each loop here takes the
distinct words (bytes) with their frequencies and the number of merges to make (at most N − K), and returns the
rules, exactly those of def-bpe (largest pair count, ties to the smallest pair (a, b) in integer order, new ids
256, 257, …, the left-to-right non-overlapping merge of def-merge).  Both work incrementally:

* a word that occurs f times contributes f to each of its pair counts, exactly as f copies of it do in def-bpe
  step 2 (rem-faster-training);
* an index maps every pair to the words it occurs in; after a merge only the words that contained the chosen
  pair are visited;
* the best pair comes from a heap keyed (−count, pair).  Counts of old pairs only decrease and every new pair
  contains the new id, so each pair has one heap entry, pushed when the pair first appears; an entry whose count
  has dropped is pushed back with its current count when it reaches the top (lazy invalidation).  The top entry
  whose count is current is the maximum.

``train_strings`` (the one used when the C loop of ``impl/_c/_fastbpe.c`` is not built) keeps a word as a ``str``
whose code points are token ids (bytes 0..255 are the Latin-1 characters, id 256 + j is ``chr(256 + j)``), so
that merging a rule into a word is ``str.replace``, which is the left-to-right non-overlapping merge M_r of
def-merge (``"aaa".replace("aa", "c") == "ca"``), and a pair is the two-character string ``a + b``, whose string
order is the integer order of (a, b) that def-bpe step 4 breaks ties by.  In a merged word only the pairs that
touch a merged position change: the pair itself and its left and right neighbours are removed, the neighbours of
the new id are added.  Runs such as a a a a with the rule (a, a) are handled by reading the neighbours off the
merged word, so overlapping occurrences are counted as def-merge counts them.

``train_lists`` is for ids above U+10FFFF, which cannot be characters (more than 1,113,856 merges, and no C
loop): words are lists of ids (merged by ``merge_list``, M_r itself) and a changed word has all its pairs
recomputed.

Nothing here depends on the iteration order of a set or a dict, so the rules do not depend on
``PYTHONHASHSEED``.
"""

from __future__ import annotations

import heapq
from collections import Counter
from itertools import chain, pairwise, repeat
from operator import add, itemgetter
from typing import Protocol

from bpeproof.spec.types import ALPHABET_SIZE, Rule

__all__ = ["Bar", "merge_list", "train_lists", "train_strings"]


class Bar(Protocol):
    """A progress bar of the merges (tqdm's, or None where none is shown)."""

    def update(self, n: int = 1) -> object: ...

    def close(self) -> None: ...


def train_strings(words: list[bytes], freqs: list[int], merges: int, bar: Bar | None) -> list[Rule]:
    """rem-faster-training on words stored as strings of ids; ``merges`` ≤ N − K, ids ≤ U+10FFFF."""
    toks = [word.decode("latin-1") for word in words]
    counts: dict[str, int] = {}
    where: dict[str, list[int]] = {}

    # Step 2 of def-bpe once: N_0(a, b) = Σ_k f_k · cnt_{w_k}(a, b).  Words are grouped by frequency
    # so that the pairs of a group are counted by Counter in C; the index is built word by word.
    groups: dict[int, list[int]] = {}
    for index, freq in enumerate(freqs):
        groups.setdefault(freq, []).append(index)
    tail = itemgetter(slice(1, None))
    for freq, members in groups.items():
        strings = [toks[i] for i in members]
        pair_counts = Counter(chain.from_iterable(map(map, repeat(add), strings, map(tail, strings))))
        for pair, n in pair_counts.items():
            counts[pair] = counts.get(pair, 0) + n * freq
    for index, s in enumerate(toks):
        for pair in set(map(add, s, s[1:])):
            occurs = where.get(pair)
            if occurs is None:
                where[pair] = [index]
            else:
                occurs.append(index)

    heap = [(-n, pair) for pair, n in counts.items()]
    heapq.heapify(heap)
    heappop, heapreplace, heappush = heapq.heappop, heapq.heapreplace, heapq.heappush
    counts_get = counts.get
    where_get = where.get
    rules: list[Rule] = []
    new_id = ALPHABET_SIZE
    stop = ALPHABET_SIZE + merges
    while new_id < stop and heap:
        # Step 4: the largest count, ties to the smallest pair; stale heap entries are refreshed.
        negative, pair = heap[0]
        n = counts_get(pair, 0)
        if n != -negative:
            if n > 0:
                heapreplace(heap, (-n, pair))
            else:
                heappop(heap)
            continue
        heappop(heap)
        c = chr(new_id)
        rules.append(Rule(ord(pair[0]), ord(pair[1]), new_id))
        # Step 5 on the words that contain the pair; only pairs next to a merged position change.
        created: set[str] = set()
        for index in where.pop(pair):
            s = toks[index]
            if pair not in s:  # the word lost the pair to an earlier merge (lazy index)
                continue
            merged = s.replace(pair, c)
            toks[index] = merged
            freq = freqs[index]
            last = len(merged) - 1
            shift = 0  # merges left of the current one: the old position is the new one plus shift
            j = merged.find(c)
            while j >= 0:
                i = j + shift
                if j:
                    # The left neighbour x: (x, a) becomes (x, c); x may itself be a merged c.
                    old = s[i - 1 : i + 1]
                    counts[old] -= freq
                    new = merged[j - 1 : j + 1]
                    counts[new] = counts_get(new, 0) + freq
                    occurs = where_get(new)
                    if occurs is None:
                        where[new] = [index]
                        created.add(new)
                    elif occurs[-1] != index:
                        occurs.append(index)
                if j < last and merged[j + 1] != c:
                    # The right neighbour y: (b, y) becomes (c, y).  When y is merged too, the pair
                    # between the two merges is handled as that merge's left neighbour.
                    old = s[i + 1 : i + 3]
                    counts[old] -= freq
                    new = merged[j : j + 2]
                    counts[new] = counts_get(new, 0) + freq
                    occurs = where_get(new)
                    if occurs is None:
                        where[new] = [index]
                        created.add(new)
                    elif occurs[-1] != index:
                        occurs.append(index)
                shift += 1
                j = merged.find(c, j + 1)
        del counts[pair]  # M_r leaves no (a, b) behind: its count is now 0
        for new in created:
            heappush(heap, (-counts[new], new))
        new_id += 1
        if bar is not None:
            bar.update()
    return rules


def _word_pairs(tokens: list[int]) -> list[tuple[int, int]]:
    return list(pairwise(tokens))


def merge_list(tokens: list[int], a: int, b: int, c: int) -> list[int]:
    """M_r for r = (a, b ↦ c), left to right and non-overlapping (def-merge)."""
    out: list[int] = []
    i, n = 0, len(tokens)
    while i < n:
        if i + 1 < n and tokens[i] == a and tokens[i + 1] == b:
            out.append(c)
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out


def train_lists(words: list[bytes], freqs: list[int], merges: int, bar: Bar | None) -> list[Rule]:
    """rem-faster-training on words stored as lists of ids, for ids beyond U+10FFFF.

    The same index and heap as ``train_strings``; a changed word has all its
    old pairs subtracted and all its new pairs added.
    """
    toks = [list(word) for word in words]
    counts: dict[tuple[int, int], int] = {}
    where: dict[tuple[int, int], list[int]] = {}
    for index, tokens in enumerate(toks):
        freq = freqs[index]
        for pair in _word_pairs(tokens):
            counts[pair] = counts.get(pair, 0) + freq
        for pair in sorted(set(_word_pairs(tokens))):
            where.setdefault(pair, []).append(index)
    heap = [(-n, pair) for pair, n in counts.items()]
    heapq.heapify(heap)
    rules: list[Rule] = []
    new_id = ALPHABET_SIZE
    while new_id < ALPHABET_SIZE + merges and heap:
        negative, pair = heap[0]
        n = counts.get(pair, 0)
        if n != -negative:
            if n > 0:
                heapq.heapreplace(heap, (-n, pair))
            else:
                heapq.heappop(heap)
            continue
        heapq.heappop(heap)
        a, b = pair
        rules.append(Rule(a, b, new_id))
        created: set[tuple[int, int]] = set()
        for index in where.pop(pair):
            tokens = toks[index]
            old_pairs = _word_pairs(tokens)
            if pair not in old_pairs:
                continue
            merged = merge_list(tokens, a, b, new_id)
            toks[index] = merged
            freq = freqs[index]
            for old in old_pairs:
                counts[old] -= freq
            new_pairs = _word_pairs(merged)
            for new in new_pairs:
                counts[new] = counts.get(new, 0) + freq
            for new in sorted(set(new_pairs)):
                if new_id in new:
                    created.add(new)
                    where.setdefault(new, []).append(index)
        del counts[pair]
        for new in created:
            heapq.heappush(heap, (-counts[new], new))
        new_id += 1
        if bar is not None:
            bar.update()
    return rules
