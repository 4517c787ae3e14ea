"""The report's ``greedy_gap`` section: prop-bpe-greedy-not-optimal on the sampled corpus words, BPE's token count
against the shortest segmentation over the vocabulary's strings."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bpeproof.audit.entries import EXAMPLES, show
from bpeproof.audit.file_view import FileView

__all__ = ["greedy_gap_section", "shortest_length"]


def greedy_gap_section(
    view: FileView,
    words: Sequence[bytes],
    counts: Mapping[bytes, int],
    library_ids: Mapping[bytes, list[int]],
    library_input: Callable[[bytes], bytes | None],
) -> dict[str, Any]:
    """prop-bpe-greedy-not-optimal on the sampled corpus words: BPE's length (the library's where it ran, else
    (i)) against the shortest segmentation over the vocabulary's strings, weighted by the word counts."""
    strings = {data: 0 for data in view.table.token_bytes.values()}
    longest = max((len(data) for data in strings), default=1)
    bpe_total = shortest_total = occurrences = shorter = 0
    gaps: list[tuple[int, int, bytes, list[int], list[bytes]]] = []
    for word in words:
        target = library_input(word)
        if target is None:
            continue
        ids = library_ids.get(word)
        if ids is None:
            ids = view.sequential(target)
        best, pieces = shortest_length(strings, longest, target)
        if not pieces:
            continue
        count = counts.get(word, 1)
        occurrences += count
        bpe_total += len(ids) * count
        shortest_total += best * count
        if best < len(ids):
            shorter += 1
            gaps.append((len(ids) - best, count, word, ids, pieces))
    gaps.sort(key=lambda item: (-item[0], -item[1], item[2]))
    table = view.table.token_bytes
    worst = [
        {"word": show(word), "count": count, "bpe": len(ids), "shortest": len(pieces),
         "bpe_pieces": [show(table.get(t, b"?")) for t in ids], "shortest_pieces": [show(p) for p in pieces]}
        for _, count, word, ids, pieces in gaps[:EXAMPLES]
    ]
    return {
        "words": len(words),
        "occurrences": occurrences,
        "bpe_tokens": bpe_total,
        "shortest_tokens": shortest_total,
        "saved_percent": 100.0 * (bpe_total - shortest_total) / bpe_total if bpe_total else 0.0,
        "words_shorter": shorter,
        "worst": worst,
    }


def shortest_length(lengths_at: Mapping[bytes, int], longest: int, word: bytes) -> tuple[int, list[bytes]]:
    """prop-bpe-greedy-not-optimal's dynamic programme: the fewest tokens whose bytes join to ``word``.

    ``lengths_at`` holds every token string (the value is unused); ``longest`` is ℓmax.  Returns the length and
    one shortest segmentation; (len(word) + 1, []) when no segmentation exists (a byte without a token).
    """
    n = len(word)
    infinity = n + 1
    f = [0] + [infinity] * n
    last = [0] * (n + 1)
    for i in range(1, n + 1):
        for length in range(1, min(longest, i) + 1):
            if f[i - length] + 1 < f[i] and word[i - length : i] in lengths_at:
                f[i] = f[i - length] + 1
                last[i] = length
    if f[n] >= infinity:
        return infinity, []
    pieces: list[bytes] = []
    i = n
    while i > 0:
        pieces.append(word[i - last[i] : i])
        i -= last[i]
    return f[n], pieces[::-1]
