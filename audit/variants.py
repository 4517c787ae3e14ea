"""The BPE variants of ``bpeproof.spec.variants`` run fast, over any merge table, and the shortest-length DP.

The specification's variants recurse and are for small inputs; the audit runs the same five over the tables of
real files (in the file's own ids) on thousands of words:

- ``rule-rank`` (ii) and ``bytes-rank`` (iii) are the engine's one merge loop (``bpeproof.impl.merge_loop.merge``:
  the adjacent pair of lowest rank first, leftmost among equals), each with its own pair table: the rank of a
  pair is its first merge's position in the file's list (ii), or the rank of the earliest token whose bytes are
  the two parts joined (iii);
- ``whole-word+…`` (iv) looks the word's bytes up among the tokens first (``MergeTable.whole_word``), then runs
  (ii) or (iii);
- ``sequential`` (i) is the project's ``Encoder`` (rank order over the proper rule list, which equals def-bpe's
  sequential application there; see ``bpeproof.impl.encoder``).

None of them is an independent oracle: that is ``bpeproof.spec.variants``, which the audit also runs on small
rule lists (``spec_checked`` in the report) and the tests run against ``fast_variants`` on generated rule lists.
The libraries the audit compares with are the independent side of the comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from bpeproof.impl.encoder import Encoder
from bpeproof.impl.merge_loop import merge
from bpeproof.spec.types import ALPHABET_SIZE, RuleTriple

__all__ = ["VARIANT_NAMES", "MergeTable", "fast_variants", "shortest_length", "variant_functions"]

#: The variants of ``bpeproof.spec.variants``, by the names it uses.
VARIANT_NAMES = ("sequential", "rule-rank", "bytes-rank", "whole-word+rule-rank", "whole-word+bytes-rank")


class MergeTable:
    """The tables the fast variants need: token bytes, the first rule of each pair, the earliest token of each
    string, and how a word is cut into units.

    ``merges`` are ``(a, b, c)`` in priority order; ``order`` lists the joinable tokens by priority for the
    bytes-rank variant (by default the merge results in merge order).  ``units`` cuts a word into its initial
    ids (by default one id per byte, the byte itself).
    """

    def __init__(
        self,
        token_bytes: Mapping[int, bytes],
        merges: Sequence[RuleTriple],
        *,
        order: Sequence[int] | None = None,
        units: Callable[[bytes], list[int]] | None = None,
    ) -> None:
        self.token_bytes: dict[int, bytes] = dict(token_bytes)
        self.pairs: dict[tuple[int, int], tuple[int, int]] = {}
        for rank, (a, b, c) in enumerate(merges):
            self.pairs.setdefault((a, b), (rank, c))
        self.earliest: dict[bytes, tuple[int, int]] = {}
        ranked = list(order) if order is not None else [c for _, _, c in merges]
        for rank, token in enumerate(ranked):
            data = self.token_bytes.get(token)
            if data is not None and len(data) >= 2:
                self.earliest.setdefault(data, (rank, token))
        self.units: Callable[[bytes], list[int]] = units if units is not None else list
        # The engine's pair tables: code(x, y) is the pair's rank or None, join(x, y, rank) the unit it becomes.
        rule_rank = {pair: rank for pair, (rank, _) in self.pairs.items()}.get
        made_by_rule = [c for _, _, c in merges]
        self._rule_code: Callable[[int, int], int | None] = lambda x, y: rule_rank((x, y))
        self._rule_join: Callable[[int, int, int], int] = lambda x, y, rank: made_by_rule[rank]
        bytes_rank = {data: rank for data, (rank, _) in self.earliest.items()}.get
        spelled = self.token_bytes.get

        def bytes_code(x: int, y: int) -> int | None:
            left, right = spelled(x), spelled(y)
            if left is None or right is None:  # a unit without bytes (an unknown token) joins nothing
                return None
            return bytes_rank(left + right)

        self._bytes_code: Callable[[int, int], int | None] = bytes_code
        self._bytes_join: Callable[[int, int, int], int] = lambda x, y, rank: ranked[rank]

    @classmethod
    def from_rules(cls, rules: Sequence[RuleTriple]) -> MergeTable:
        """The table of a valid rule list in the specification's convention (bytes are ids 0..255)."""
        token_bytes = {byte: bytes([byte]) for byte in range(ALPHABET_SIZE)}
        for a, b, c in rules:
            token_bytes[c] = token_bytes[a] + token_bytes[b]
        return cls(token_bytes, rules)

    def rule_rank(self, word: bytes) -> list[int]:
        """(ii): merge the pair of the earliest rule, leftmost among equals, until none is left."""
        return merge(self.units(word), self._rule_code, self._rule_join)

    def bytes_rank(self, word: bytes) -> list[int]:
        """(iii): join the two adjacent parts whose joined bytes are the earliest token, leftmost among equals."""
        return merge(self.units(word), self._bytes_code, self._bytes_join)

    def whole_word(self, word: bytes) -> int | None:
        """The earliest token whose bytes are the whole word (a single unit is its own token), or None."""
        found = self.earliest.get(word)
        if found is not None:
            return found[1]
        units = self.units(word)
        return units[0] if len(units) == 1 else None


def variant_functions(
    sequential: Callable[[bytes], list[int]], table: MergeTable
) -> dict[str, Callable[[bytes], list[int]]]:
    """The five variants of ``bpeproof.spec.variants.VARIANTS`` on one merge table, by name."""

    def whole(fallback: Callable[[bytes], list[int]]) -> Callable[[bytes], list[int]]:
        def run(word: bytes) -> list[int]:
            token = table.whole_word(word) if word else None
            return [token] if token is not None else fallback(word)

        return run

    return {
        "sequential": sequential,
        "rule-rank": table.rule_rank,
        "bytes-rank": table.bytes_rank,
        "whole-word+rule-rank": whole(table.rule_rank),
        "whole-word+bytes-rank": whole(table.bytes_rank),
    }


def fast_variants(rules: Sequence[RuleTriple]) -> dict[str, Callable[[bytes], list[int]]]:
    """The variants of ``bpeproof.spec.variants.VARIANTS`` for a valid rule list, fast: same names, same values."""
    table = MergeTable.from_rules(rules)
    return variant_functions(Encoder(rules, cache_size=0).encode, table)


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
