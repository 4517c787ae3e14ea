"""Hypothesis strategies that reach the hard cases of BPE.

Bugs in BPE code hide where inputs are repetitive: tiny alphabets, long runs
(a a a a), rules whose two parts are equal, ids that are not 256, 257, …,
pairs that two rules share, corpora where many pairs tie.  Wide random bytes
almost never reach them, so every strategy here draws from a small alphabet
most of the time and from all 256 bytes only sometimes.

Inputs stay far below ``spec.MAX_SPEC_LENGTH`` so that the recursive
specification can judge them.
"""

from __future__ import annotations

from hypothesis import strategies as st

from bpeproof.spec.types import ALPHABET_SIZE, Rule

#: Alphabets: mostly 1–4 symbols, sometimes all bytes (UTF-8 lead and continuation bytes included).
alphabets: st.SearchStrategy[list[int]] = st.one_of(
    st.lists(st.sampled_from(b"abcd"), min_size=1, max_size=4, unique=True),
    st.lists(st.integers(0, ALPHABET_SIZE - 1), min_size=1, max_size=4, unique=True),
    st.just(list(range(ALPHABET_SIZE))),
)


@st.composite
def runs_over(draw: st.DrawFn, alphabet: list[int], max_size: int = 40, min_size: int = 0) -> bytes:
    """Bytes over ``alphabet`` built from runs, so that a a a a and a b a b occur often."""
    out = bytearray()
    target = draw(st.integers(min_size, max_size))
    while len(out) < target:
        symbol = draw(st.sampled_from(alphabet))
        length = draw(st.integers(1, max(1, min(8, target - len(out)))))
        if draw(st.booleans()) and out:
            # repeat an earlier stretch: periodic inputs (a b a b …)
            start = draw(st.integers(0, len(out) - 1))
            out += out[start : start + length]
        else:
            out += bytes([symbol]) * length
    return bytes(out[: max(target, min_size)])


@st.composite
def data_bytes(draw: st.DrawFn, max_size: int = 40, min_size: int = 0) -> bytes:
    """A byte string s ∈ Σ* over a small alphabet with long runs."""
    return draw(runs_over(draw(alphabets), max_size=max_size, min_size=min_size))


@st.composite
def words(draw: st.DrawFn, max_size: int = 10) -> bytes:
    """A word w ∈ Σ⁺."""
    return draw(data_bytes(max_size=max_size, min_size=1))


@st.composite
def corpora(draw: st.DrawFn, max_distinct: int = 5, max_repeat: int = 4, max_word: int = 8) -> list[bytes]:
    """A corpus (w_1, …, w_K): a few distinct words over one small alphabet, each repeated, shuffled.

    Shared alphabets and repeated words make many pairs tie, which is where
    tie-breaking and frequency bugs show.
    """
    alphabet = draw(alphabets.filter(lambda a: len(a) <= 4))
    distinct = draw(st.lists(runs_over(alphabet, max_size=max_word, min_size=1), min_size=1, max_size=max_distinct))
    corpus: list[bytes] = []
    for word in distinct:
        corpus += [word] * draw(st.integers(1, max_repeat))
    return draw(st.permutations(corpus))


@st.composite
def fresh_ids(draw: st.DrawFn, count: int) -> list[int]:
    """``count`` distinct new ids ≥ 256: sometimes 256, 257, …, often with gaps, out of order or large."""
    style = draw(st.sampled_from(["contiguous", "gaps", "shuffled", "large"]))
    if style == "contiguous":
        return list(range(ALPHABET_SIZE, ALPHABET_SIZE + count))
    if style == "large":
        return draw(st.lists(st.integers(ALPHABET_SIZE, 2**40), min_size=count, max_size=count, unique=True))
    ids = draw(st.lists(st.integers(ALPHABET_SIZE, ALPHABET_SIZE + 4 * count + 8), min_size=count, max_size=count,
                        unique=True))
    return ids if style == "shuffled" else sorted(ids)


@st.composite
def rule_lists_over(draw: st.DrawFn, alphabet: list[int], max_rules: int = 6) -> list[Rule]:
    """A valid hand-written rule list over ``alphabet``: each rule over V_{j-1}, parts often equal,
    pairs sometimes repeated, ids fresh but not necessarily 256, 257, …"""
    count = draw(st.integers(0, max_rules))
    ids = draw(fresh_ids(count))
    known = list(alphabet)
    rules: list[Rule] = []
    for c in ids:
        shape = draw(st.sampled_from(["any", "equal", "recent", "repeat"]))
        if shape == "repeat" and rules:
            previous = draw(st.sampled_from(rules))
            a, b = previous.a, previous.b
        elif shape == "equal":
            a = b = draw(st.sampled_from(known))
        elif shape == "recent":
            a = draw(st.sampled_from(known[-3:]))
            b = draw(st.sampled_from(known))
        else:
            a = draw(st.sampled_from(known))
            b = draw(st.sampled_from(known))
        rules.append(Rule(a, b, c))
        known.append(c)
    return rules


@st.composite
def rules_and_data(draw: st.DrawFn, max_rules: int = 6, max_size: int = 40) -> tuple[list[Rule], bytes]:
    """A hand-written rule list and a byte string over the same small alphabet, so that the rules fire."""
    alphabet = draw(alphabets)
    small = alphabet if len(alphabet) <= 4 else draw(st.lists(st.sampled_from(alphabet), min_size=1, max_size=4,
                                                               unique=True))
    rules = draw(rule_lists_over(small, max_rules=max_rules))
    data = draw(runs_over(small if draw(st.integers(0, 9)) else alphabet, max_size=max_size))
    return rules, data


@st.composite
def rule_lists(draw: st.DrawFn, max_rules: int = 6) -> list[Rule]:
    """A valid hand-written rule list over a small alphabet."""
    return draw(rule_lists_over(draw(alphabets.filter(lambda a: len(a) <= 4)), max_rules=max_rules))


@st.composite
def rules_and_tokens(draw: st.DrawFn, max_rules: int = 6, max_size: int = 30) -> tuple[list[Rule], list[int]]:
    """A rule list and a token list over its vocabulary V_m (new ids appear often)."""
    rules = draw(rule_lists(max_rules=max_rules))
    ids = [rule.c for rule in rules] + [rule.a for rule in rules] + [rule.b for rule in rules]
    pool = st.sampled_from(ids) if ids else st.integers(0, ALPHABET_SIZE - 1)
    tokens = draw(st.lists(st.one_of(pool, st.integers(0, ALPHABET_SIZE - 1)), max_size=max_size))
    return rules, tokens


@st.composite
def single_rule_and_tokens(draw: st.DrawFn, max_size: int = 30) -> tuple[Rule, list[int]]:
    """A rule r = (a, b ↦ c) (often a = b) and a token list x over V' with runs of a and b."""
    a = draw(st.integers(0, 3))
    b = a if draw(st.booleans()) else draw(st.integers(0, 3))
    c = draw(st.integers(ALPHABET_SIZE, ALPHABET_SIZE + 3))
    x = list(draw(runs_over([a, b, (a + 1) % 4], max_size=max_size)))
    if draw(st.booleans()) and x:
        x[draw(st.integers(0, len(x) - 1))] = c
    return Rule(a, b, c), x


def texts(max_size: int = 30) -> st.SearchStrategy[str]:
    """Text with spaces, ASCII and multi-byte characters (2-, 3- and 4-byte UTF-8 forms)."""
    return st.text(st.sampled_from(list("ab  \nあい数é😀")), max_size=max_size) | st.text(max_size=max_size)
