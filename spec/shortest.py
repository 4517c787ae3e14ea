"""The shortest segmentation of prop-bpe-greedy-not-optimal, by dynamic programming.

f(0) = 0;  f(i) = 1 + min{ f(i − ℓ) : 1 ≤ ℓ ≤ min(ℓmax, i), s[i−ℓ+1 … i] = ⟨⟨t⟩⟩ for some t ∈ V }.
BPE's greedy encoding need not reach f(n); ``shortest`` does, in O(n·ℓmax)
substring tests.
"""

from __future__ import annotations

from collections.abc import Sequence

from bpeproof.spec.merge import symbols, validate_rules, vocabulary
from bpeproof.spec.types import BPETypeError, RuleTriple


def token_strings(rules: Sequence[RuleTriple]) -> list[tuple[bytes, int]]:
    """(⟨⟨t⟩⟩, t) for every t in V_m; where two ids stand for the same bytes (ex-same-string), both appear."""
    checked = validate_rules(rules)
    return [(symbols(checked, token), token) for token in vocabulary(checked)]


def shortest(rules: Sequence[RuleTriple], data: bytes) -> list[int]:
    """A shortest token list x over V_m with dec(x) = data (prop-bpe-greedy-not-optimal).

    Among equally short lists the one whose last token is shortest wins at each
    step, and among ids standing for the same bytes the smallest; the length,
    which is what the proposition is about, does not depend on these choices.
    """
    if not isinstance(data, (bytes, bytearray)):
        raise BPETypeError(f"data must be bytes, not {type(data).__name__}")
    strings = token_strings(rules)
    lookup: dict[bytes, int] = {}
    for string, token in strings:
        lookup.setdefault(string, token)
    longest = max(len(string) for string, _ in strings)
    n = len(data)
    infinity = n + 1  # longer than any segmentation
    f = [0] + [infinity] * n
    last = [0] * (n + 1)  # ℓ of the token that ends a shortest list for the first i bytes
    for i in range(1, n + 1):
        for length in range(1, min(longest, i) + 1):
            if bytes(data[i - length : i]) in lookup and f[i - length] + 1 < f[i]:
                f[i] = f[i - length] + 1
                last[i] = length
    tokens: list[int] = []
    i = n
    while i > 0:
        tokens.append(lookup[bytes(data[i - last[i] : i])])
        i -= last[i]
    return tokens[::-1]
