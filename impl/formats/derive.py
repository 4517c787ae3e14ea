"""Recovering a merge list from ranks, for formats that store only the tokens (tiktoken, sentencepiece).

A rank file lists tokens in priority order but not which two tokens make
each one.  The merge that makes token T (rank r) is the one the tokenizer
itself would apply last when it encodes T's bytes: run the byte-pair merge of
T's units (bytes, or characters for sentencepiece), always joining the
adjacent pair whose join has the lowest rank — leftmost on ties, as tiktoken
and sentencepiece do — but only with tokens of rank below r, until two parts
remain.  Those are T's parts.  When no pair of rank below r can be joined
before two parts remain, T has no split: the tokenizer can never produce it
from its units, and it is reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

Unit = TypeVar("Unit", str, bytes)


def last_split(piece: Unit, ranks: Mapping[Unit, int], limit: int) -> tuple[Unit, Unit] | None:
    """The two parts the rank-restricted byte-pair merge of ``piece`` ends with, or None.

    ``piece`` starts as its single units (``piece[i:i+1]``); a join is allowed
    when the joined string has a rank below ``limit`` in ``ranks``.  Single
    units need no rank.  Returns None for a piece of fewer than two units or
    when joining stops with more than two parts.
    """
    if len(piece) < 2:
        return None
    parts = [piece[i : i + 1] for i in range(len(piece))]
    if len(parts) == 2:
        return parts[0], parts[1]
    # pair_ranks[i] = rank of parts[i] + parts[i + 1], or limit when that join is not allowed
    get = ranks.get
    pair_ranks = []
    for i in range(len(parts) - 1):
        rank = get(parts[i] + parts[i + 1], limit)
        pair_ranks.append(rank if rank < limit else limit)
    while len(parts) > 2:
        best = min(pair_ranks)
        if best >= limit:
            return None
        at = pair_ranks.index(best)  # leftmost on ties
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
        del pair_ranks[at]
        if at > 0:
            rank = get(parts[at - 1] + parts[at], limit)
            pair_ranks[at - 1] = rank if rank < limit else limit
        if at < len(parts) - 1:
            rank = get(parts[at] + parts[at + 1], limit)
            pair_ranks[at] = rank if rank < limit else limit
    return parts[0], parts[1]


def derive_merges(
    ordered: Sequence[tuple[int, Unit]], ids: Mapping[Unit, int], ranks: Mapping[Unit, int]
) -> tuple[list[tuple[int, int, int]], list[int]]:
    """Merges ``(a, b, c)`` for the tokens of two or more units, in rank order, and the ids with no split.

    ``ordered`` lists ``(id, piece)`` for the mergeable tokens in rank order;
    ``ids`` maps every usable piece (mergeable tokens and single units) to its
    id; ``ranks`` maps mergeable pieces to their rank.  A split whose single
    unit part has no id (a byte or character that is not a token) counts as no
    split.
    """
    merges: list[tuple[int, int, int]] = []
    unsplit: list[int] = []
    for token_id, piece in ordered:
        if len(piece) < 2:
            continue
        split = last_split(piece, ranks, ranks[piece])
        if split is None or split[0] not in ids or split[1] not in ids:
            unsplit.append(token_id)
            continue
        merges.append((ids[split[0]], ids[split[1]], token_id))
    return merges, unsplit
