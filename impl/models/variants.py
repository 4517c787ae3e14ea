"""The BPE merge variants of ``bpeproof.spec.variants``, run fast over any merge table, by name.

One definition of each way a tokenizer merges a word, for everyone who runs them on real files: the checker names
a port's difference by the variant that reproduces its ids, the audit tells which variant a file's library follows.
Each is the engine's one merge loop (``bpeproof.impl.merge_loop.merge``: the adjacent pair of lowest rank first,
leftmost among equals) with its own pair table, as the engine's models are (``bpeproof.impl.models``):

- ``rule-rank`` (ii): the rank of a pair is its first rule's position in the list (Hugging Face's BPE model);
- ``bytes-rank`` (iii): the rank of two parts is that of the earliest token whose bytes are the two joined
  (tiktoken; sentencepiece by piece score);
- ``whole-word+…`` (iv): the word's bytes looked up among the tokens first, then (ii) or (iii) (tiktoken,
  ``ignore_merges``);
- ``sequential`` (i): def-bpe, which equals (ii) on every valid rule list (``spec/variants.py``); over the proper
  rules the project's ``Encoder`` runs it (``fast_variants``);
- ``longest-first``: no merging at all, the longest token at each position, as a greedy port encodes.

A table without a rule list (a rank file) recovers a pair's rule when a word needs it: the rule of a token is the
pair of parts that (iii), with only the ranks below the token's, leaves of its bytes (what
``formats.tiktoken_rules`` derives for the whole file, which takes seconds on cl100k).  A token can be left out of
the vocabulary for one run (``without``): a port whose bundled vocabulary lacks it.

None of them is an independent oracle: that is ``bpeproof.spec.variants``, against which the tests run these.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from bpeproof.impl.encoder import Encoder
from bpeproof.impl.merge_loop import merge
from bpeproof.spec.types import ALPHABET_SIZE, RuleTriple

__all__ = ["MERGE_VARIANTS", "VARIANT_NAMES", "VARIANT_TEXT", "MergeTable", "fast_variants", "variant_functions"]

#: What each variant is, for reports (spec/variants.py).
VARIANT_TEXT = {
    "sequential": "(i) def-bpe: the rules in order, each left to right",
    "rule-rank": "(ii) lowest-rank pair first, by rule (Hugging Face tokenizers' BPE)",
    "bytes-rank": "(iii) lowest rank of the joined bytes (tiktoken's merge)",
    "whole-word+rule-rank": "(iv) a whole-word token first, else (ii)",
    "whole-word+bytes-rank": "(iv) a whole-word token first, else (iii) (tiktoken)",
    "longest-first": "no merging: the longest token at each position, left to right (a greedy port)",
}
#: The variants of ``bpeproof.spec.variants.VARIANTS``, by the names it uses.
VARIANT_NAMES = ("sequential", "rule-rank", "bytes-rank", "whole-word+rule-rank", "whole-word+bytes-rank")
#: The merge variants a port's difference is explained by ("sequential" is "rule-rank" on every valid rule list).
MERGE_VARIANTS = ("bytes-rank", "whole-word+bytes-rank", "rule-rank", "whole-word+rule-rank", "longest-first")

#: ``code(x, y)`` and ``join(x, y, code)`` of the merge loop over ids.
_Code = Callable[[int, int], "int | None"]
_Join = Callable[[int, int, int], int]


class MergeTable:
    """The tables the variants need: token bytes, the first rule of each pair, the earliest token of each string,
    and how a word is cut into units.

    ``merges`` are ``(a, b, c)`` in priority order, or None for a rank file (each pair's rule is then recovered
    when needed, see the module docstring); ``order`` lists the joinable tokens by priority for the bytes-rank
    variant (by default the merge results in merge order, or the ids in order without merges).  A word's initial
    units are ``byte_units[b]`` for each byte (a word with a byte that has none has no encoding: ``encode`` gives
    None), else ``units(word)``, by default one id per byte, the byte itself.
    """

    def __init__(
        self,
        token_bytes: Mapping[int, bytes],
        merges: Sequence[RuleTriple] | None,
        *,
        order: Sequence[int] | None = None,
        units: Callable[[bytes], list[int]] | None = None,
        byte_units: Mapping[int, int] | None = None,
    ) -> None:
        self.token_bytes: dict[int, bytes] = dict(token_bytes)
        self.recovering = merges is None
        rules = merges if merges is not None else ()
        self.pairs: dict[tuple[int, int], tuple[int, int]] = {}
        for rank, (a, b, c) in enumerate(rules):
            self.pairs.setdefault((a, b), (rank, c))
        if order is not None:
            ranked = list(order)
        elif merges is not None:
            ranked = [c for _, _, c in rules]
        else:
            ranked = sorted(self.token_bytes)
        #: bytes → (rank, token) of the earliest token of two bytes or more spelling them.
        self.earliest: dict[bytes, tuple[int, int]] = {}
        for rank, token in enumerate(ranked):
            data = self.token_bytes.get(token)
            if data is not None and len(data) >= 2:
                self.earliest.setdefault(data, (rank, token))
        self.byte_units = None if byte_units is None else dict(byte_units)
        if self.byte_units is not None:
            unit_of = self.byte_units.__getitem__
            self.units: Callable[[bytes], list[int]] = lambda word: list(map(unit_of, word))
        else:
            self.units = units if units is not None else list
        self._recovered: dict[tuple[int, int], tuple[int, int] | None] = {}
        # The merge loop's tables without a token left out: code(x, y) is the pair's rank or None, join(x, y, rank)
        # the unit it becomes.
        rule_rank = {pair: rank for pair, (rank, _) in self.pairs.items()}.get
        made_by_rule = [c for _, _, c in rules]
        self._rule_code: _Code = lambda x, y: rule_rank((x, y))
        self._rule_join: _Join = lambda x, y, rank: made_by_rule[rank]
        bytes_rank = {data: rank for data, (rank, _) in self.earliest.items()}.get
        spelled = self.token_bytes.get

        def bytes_code(x: int, y: int) -> int | None:
            left, right = spelled(x), spelled(y)
            if left is None or right is None:  # a unit without bytes (an unknown token) joins nothing
                return None
            return bytes_rank(left + right)

        self._bytes_code: _Code = bytes_code
        self._bytes_join: _Join = lambda x, y, rank: ranked[rank]

    @classmethod
    def from_rules(cls, rules: Sequence[RuleTriple]) -> MergeTable:
        """The table of a valid rule list in the specification's convention (bytes are ids 0..255)."""
        token_bytes = {byte: bytes([byte]) for byte in range(ALPHABET_SIZE)}
        for a, b, c in rules:
            token_bytes[c] = token_bytes[a] + token_bytes[b]
        return cls(token_bytes, rules)

    @classmethod
    def of_tokens(cls, token_bytes: Mapping[int, bytes], merges: Sequence[RuleTriple] | None) -> MergeTable:
        """The table of a vocabulary in its own ids: each byte starts as its one-byte token (the last listed)."""
        byte_units = {data[0]: token for token, data in token_bytes.items() if len(data) == 1}
        return cls(token_bytes, merges, byte_units=byte_units)

    # -- the pair tables ---------------------------------------------------------------------------------------

    def pair(self, a: int, b: int) -> tuple[int, int] | None:
        """(rank, id) of the rule joining ``a`` and ``b``: the table's own, or (a rank file) the recovered one."""
        if not self.recovering:
            return self.pairs.get((a, b))
        key = (a, b)
        if key not in self._recovered:
            self._recovered[key] = self._recover(a, b)
        return self._recovered[key]

    def _recover(self, a: int, b: int) -> tuple[int, int] | None:
        left, right = self.token_bytes.get(a), self.token_bytes.get(b)
        if left is None or right is None:
            return None
        found = self.earliest.get(left + right)
        if found is None:
            return None
        parts = self._merge_bytes(left + right, None, found[0])  # (iii) with the ranks below the token's
        return found if parts == [a, b] else None

    def _rule_tables(self, without: int | None) -> tuple[_Code, _Join]:
        if without is None and not self.recovering:
            return self._rule_code, self._rule_join
        pair = self.pair

        def code(x: int, y: int) -> int | None:
            found = pair(x, y)
            return None if found is None or found[1] == without else found[0]

        def join(x: int, y: int, rank: int) -> int:
            found = pair(x, y)
            assert found is not None
            return found[1]

        return code, join

    def _merge_bytes(self, word: bytes, without: int | None, below: int | None = None) -> list[int]:
        """(iii) on ``word``, the token ``without`` left out, only ranks under ``below`` joined."""
        if without is None and below is None:
            return merge(self.units(word), self._bytes_code, self._bytes_join)
        plain = self._bytes_code
        earliest = self.earliest
        spelled = self.token_bytes

        def code(x: int, y: int) -> int | None:
            rank = plain(x, y)
            if rank is None or (below is not None and rank >= below):
                return None
            if without is not None and earliest[spelled[x] + spelled[y]][1] == without:
                return None
            return rank

        return merge(self.units(word), code, self._bytes_join)

    # -- the variants ------------------------------------------------------------------------------------------

    def rule_rank(self, word: bytes, without: int | None = None) -> list[int]:
        """(ii): merge the pair of the earliest rule, leftmost among equals, until none is left."""
        code, join = self._rule_tables(without)
        return merge(self.units(word), code, join)

    def bytes_rank(self, word: bytes, without: int | None = None) -> list[int]:
        """(iii): join the two adjacent parts whose joined bytes are the earliest token, leftmost among equals."""
        return self._merge_bytes(word, without)

    def whole_word(self, word: bytes, without: int | None = None) -> int | None:
        """The earliest token whose bytes are the whole word (a single unit is its own token), or None."""
        found = self.earliest.get(word)
        if found is not None:
            return found[1] if found[1] != without else None
        units = self.units(word)
        return units[0] if len(units) == 1 else None

    def longest_first(self, word: bytes, without: int | None = None) -> list[int]:
        """``word`` as the longest token at each position, left to right (a byte alone is its unit)."""
        earliest = self.earliest
        out: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start + 1 and (word[start:end] not in earliest or earliest[word[start:end]][1] == without):
                end -= 1
            out += [earliest[word[start:end]][1]] if end > start + 1 else self.units(word[start:end])
            start = end
        return out

    def covers(self, word: bytes) -> bool:
        """Whether every byte of ``word`` has a unit to start from."""
        return self.byte_units is None or all(byte in self.byte_units for byte in word)

    def encode(self, name: str, word: bytes, without: int | None = None) -> list[int] | None:
        """``word`` merged by the variant ``name`` (a key of ``VARIANT_TEXT``; ``sequential`` is run as
        ``rule-rank``, its equal on every valid rule list), the token ``without`` left out of the vocabulary; None
        when a byte has no unit."""
        if not self.covers(word):
            return None
        if name in ("sequential", "rule-rank"):
            return self.rule_rank(word, without)
        if name == "bytes-rank":
            return self.bytes_rank(word, without)
        if name == "longest-first":
            return self.longest_first(word, without)
        if name not in ("whole-word+rule-rank", "whole-word+bytes-rank"):
            raise ValueError(f"no merge variant is named {name!r} (the variants: {', '.join(VARIANT_TEXT)})")
        token = self.whole_word(word, without) if word else None
        if token is not None:
            return [token]
        return self.rule_rank(word, without) if name == "whole-word+rule-rank" else self.bytes_rank(word, without)

    def agreeing(self, word: bytes, ids: list[int]) -> list[str]:
        """The names of ``VARIANT_TEXT`` whose encoding of ``word`` is ``ids``."""
        return [name for name in VARIANT_TEXT if self.encode(name, word) == ids]


def variant_functions(
    sequential: Callable[[bytes], list[int]], table: MergeTable
) -> dict[str, Callable[[bytes], list[int]]]:
    """The five variants of ``bpeproof.spec.variants.VARIANTS`` on one merge table, by name, ``sequential`` given
    (the audit's runs over the proper rules with the project's ``Encoder``)."""

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
