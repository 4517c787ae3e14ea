"""Strategies for the checker: *sequences* of calls that reach where BPE implementations go wrong.

Built on ``bpeproof.proofs_tests.checker.strategies`` (tiny alphabets, runs, a = b rules, fresh ids).
Three additions matter most for catching real bugs:

* **Rules that fire.**  ``firing_rules`` builds each rule from a pair that is
  adjacent in the current encoding of a sample (like training, but the pair is
  drawn, not the most frequent).  Deep merge trees follow, and with them ids that
  stand for the same bytes (ex-same-string) and byte-rank orders that differ from
  rule order: the tiktoken-style bug needs both.
* **Call sequences.**  An example is a list of calls (several rule lists, several
  inputs, the same data twice, two inputs of the same length or first byte).
  A cache with a wrong key answers one call with another's result; it shows only
  when two calls meet in one process.  They shrink to a single call.
* **Structure.**  Every part is its own composite strategy, so that Hypothesis
  sees the parts (a run, a rule, a word) and its mutator can copy one part over
  another: equal inputs, equal words and repeated pairs come from that.  (Plain
  functions drawing only integers run more examples a second but take several
  times longer to find the tiktoken-style and pre-tokenizing bugs.)
* **Long inputs.**  ``long_enc_calls`` makes 300–2100 bytes over 1–3 symbols, so
  that a pair straddles any chunk border of 64, 128, 256, 1024 or 2048 bytes.  The
  checker judges them with the specification's own functions with the
  ``MAX_SPEC_LENGTH`` guard lifted (see ``properties.spec_enc``).
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from bpeproof.proofs_tests.checker.strategies import alphabets, corpora, fresh_ids, rule_lists_over, runs_over, texts
from bpeproof.spec.bpe import train
from bpeproof.spec.merge import merge, validate_rules
from bpeproof.spec.types import ALPHABET_SIZE, Rule

Call = tuple[str, tuple[Any, ...]]

#: Alphabets of 1–4 symbols: letters, any bytes (UTF-8 lead and continuation bytes included), spaces.
small_alphabets: st.SearchStrategy[list[int]] = st.one_of(
    st.lists(st.sampled_from(b"ab"), min_size=1, max_size=2, unique=True),
    st.lists(st.sampled_from(b"abcd"), min_size=1, max_size=4, unique=True),
    st.lists(st.integers(0, ALPHABET_SIZE - 1), min_size=1, max_size=4, unique=True),
    st.lists(st.sampled_from(b"a b\n\xe3\x81"), min_size=2, max_size=4, unique=True),  # spaces, UTF-8 pieces
)


@st.composite
def firing_rules(draw: st.DrawFn, alphabet: list[int], sample: bytes, max_rules: int = 8) -> list[Rule]:
    """A valid rule list whose rules mostly join pairs adjacent in the current encoding of ``sample``.

    The ids are fresh but not always 256, 257, …; some rules have a = b, some repeat an
    earlier pair, some join ids that never meet (def-merge allows all of these).
    """
    count = draw(st.integers(0, max_rules))
    ids = draw(fresh_ids(count))
    tokens = list(sample)
    known = list(dict.fromkeys([*alphabet, *sample]))
    rules: list[Rule] = []
    for c in ids:
        shape = draw(st.sampled_from(["fire", "fire", "fire", "equal", "repeat", "any"]))
        if shape == "fire" and len(tokens) >= 2:
            i = draw(st.integers(0, len(tokens) - 2))
            a, b = tokens[i], tokens[i + 1]
        elif shape == "repeat" and rules:
            previous = draw(st.sampled_from(rules))
            a, b = previous.a, previous.b
        elif shape == "equal":
            a = b = draw(st.sampled_from(known))
        else:
            a = draw(st.sampled_from(known))
            b = draw(st.sampled_from(known))
        rule = Rule(a, b, c)
        rules.append(rule)
        known.append(c)
        tokens = merge(rule, tokens)
    return rules


@st.composite
def trained_rules(draw: st.DrawFn, alphabet: list[int]) -> list[Rule]:
    """Rules that def-bpe learns (ids 256, 257, …) from a small corpus over ``alphabet``."""
    words = draw(st.lists(runs_over(alphabet, max_size=10, min_size=1), min_size=1, max_size=4))
    return train(words, draw(st.integers(0, 8)))


def rule_lists_for(alphabet: list[int], sample: bytes) -> st.SearchStrategy[list[Rule]]:
    """Rule lists over ``alphabet``: firing on ``sample``, hand-written, or learned."""
    return st.one_of(firing_rules(alphabet, sample), rule_lists_over(alphabet, max_rules=6), trained_rules(alphabet))


@st.composite
def variant_of(draw: st.DrawFn, base: bytes, alphabet: list[int], max_size: int) -> bytes:
    """An input related to ``base``: itself, one byte changed (same length, same first byte), a slice,
    base twice, or a fresh string over the alphabet."""
    how = draw(st.sampled_from(["same", "mutate", "slice", "twice", "fresh"]))
    if how == "same" or (how in ("mutate", "slice") and not base):
        return base
    if how == "mutate":
        i = draw(st.integers(0, len(base) - 1))
        return base[:i] + bytes([draw(st.sampled_from(alphabet))]) + base[i + 1 :]
    if how == "slice":
        i = draw(st.integers(0, len(base) - 1))
        return base[i : draw(st.integers(i, len(base)))]
    if how == "twice":
        return base + base
    return draw(runs_over(alphabet, max_size=max_size))


@st.composite
def rules_variant_of(draw: st.DrawFn, rules: list[Rule]) -> list[Rule]:
    """A rule list close to ``rules``: a prefix, two neighbouring rules swapped, or one rule more.

    A cache keyed by the set of rules, their number or their last rule mistakes one for the other.
    """
    how = draw(st.sampled_from(["prefix", "permute", "extend"]))
    if how == "prefix" and rules:
        return rules[: draw(st.integers(0, len(rules) - 1))]
    if how == "permute":
        # swap two neighbouring rules where the later one does not build on the earlier one
        swappable = [i for i in range(len(rules) - 1) if rules[i].c not in (rules[i + 1].a, rules[i + 1].b)]
        if swappable:
            i = draw(st.sampled_from(swappable))
            return [*rules[:i], rules[i + 1], rules[i], *rules[i + 2 :]]
    fresh = max([ALPHABET_SIZE - 1, *(r.c for r in rules)]) + 1
    a = draw(st.sampled_from([*(r.c for r in rules), 97]))
    return [*rules, Rule(a, a, fresh)]


@st.composite
def enc_calls(draw: st.DrawFn, max_size: int = 40) -> list[Call]:
    """A sequence of calls enc(rules, data): 1–3 rule lists over one small alphabet, 1–3 related inputs."""
    alphabet = draw(small_alphabets)
    base = draw(runs_over(alphabet, max_size=max_size))
    wide = draw(st.integers(0, 9)) == 0
    rule_lists = draw(st.lists(rule_lists_for(alphabet, base), min_size=1, max_size=3))
    variant = draw(st.integers(0, 3)) == 0
    if variant:
        rule_lists.append(draw(rules_variant_of(rule_lists[0])))
    data = [base] + draw(
        st.lists(variant_of(base, list(range(ALPHABET_SIZE)) if wide else alphabet, max_size), max_size=2)
    )
    picks = draw(
        st.lists(st.tuples(st.integers(0, len(rule_lists) - 1), st.integers(0, len(data) - 1)), min_size=1, max_size=4)
    )
    if variant:  # the variant and the original on the same input, one after the other
        picks += [(0, picks[0][1]), (len(rule_lists) - 1, picks[0][1])]
    return [("enc", (rule_lists[r], data[d])) for r, d in picks]


_BORDERS = [n + d for n in (512, 1024, 2048) for d in (1, 3, 40)]


@st.composite
def long_enc_calls(draw: st.DrawFn, min_size: int = 300, max_size: int = 2100) -> list[Call]:
    """One call enc(rules, data) on 300–2100 bytes over 1–3 symbols, with at most 4 rules that fire.

    Random bytes (not runs) over a tiny alphabet put a mergeable pair across any chunk border
    with good probability; a = b runs alone would not (an even border splits no pair a a).
    The length is drawn first (``binary()`` alone stays near its minimum), often just past a power of two.
    """
    alphabet = draw(st.one_of(st.lists(st.sampled_from(b"abc"), min_size=1, max_size=3, unique=True),
                              st.lists(st.integers(0, ALPHABET_SIZE - 1), min_size=1, max_size=3, unique=True)))
    borders = [n for n in _BORDERS if min_size <= n <= max_size] or [max_size]
    length = draw(st.one_of(st.integers(min_size, max_size), st.sampled_from(borders)))
    raw = draw(st.binary(min_size=length, max_size=length))
    data = bytes(alphabet[x % len(alphabet)] for x in raw)
    rules = draw(firing_rules(alphabet, data[:24], max_rules=4))
    return [("enc", (rules, data))]


_TEXT16 = texts(max_size=16)
_TEXT6 = texts(max_size=6)


@st.composite
def utf8_bytes(draw: st.DrawFn, short: bool = False) -> bytes:
    """The UTF-8 bytes of a short text with 1- to 4-byte characters (def-utf8)."""
    return draw(_TEXT6 if short else _TEXT16).encode("utf-8")


@st.composite
def dec_calls(draw: st.DrawFn, max_size: int = 30) -> list[Call]:
    """A sequence of calls dec(rules, ids), ids in V_m: encodings of inputs and arbitrary ids.

    Inputs are often UTF-8 text, so that tokens split characters (prop-utf8-boundary).
    """
    if draw(st.booleans()):
        base = draw(utf8_bytes())
        alphabet = sorted(set(base)) or [0x61]
    else:
        alphabet = draw(st.one_of(small_alphabets, alphabets))
        base = draw(runs_over(alphabet, max_size=max_size))
    small = alphabet if len(alphabet) <= 4 else sorted(set(base))[:8] or alphabet[:4]
    rule_lists = draw(st.lists(rule_lists_for(small, base), min_size=1, max_size=3))
    calls: list[Call] = []
    for _ in range(draw(st.integers(1, 3))):
        rules = rule_lists[draw(st.integers(0, len(rule_lists) - 1))]
        if draw(st.booleans()):
            data = draw(st.one_of(st.just(base), variant_of(base, alphabet, max_size)))
            tokens = list(data)
            for rule in rules:
                tokens = merge(rule, tokens)
        else:
            vocab = [*alphabet, *(rule.c for rule in rules)]
            pool = st.sampled_from(vocab) if draw(st.booleans()) else st.integers(0, ALPHABET_SIZE - 1)
            tokens = draw(st.lists(st.one_of(pool, st.sampled_from(vocab)), max_size=max_size))
        calls.append(("dec", (rules, tokens)))
    return calls


@st.composite
def wide_corpora(draw: st.DrawFn) -> list[bytes]:
    """Corpora with more and longer repeated words, over letters, any bytes or UTF-8 text."""
    kind = draw(st.sampled_from(["letters", "bytes", "text"]))
    if kind == "text":
        words = [w for w in draw(st.lists(utf8_bytes(short=True), min_size=1, max_size=5)) if w] or [b"a"]
    else:
        alphabet = draw(st.lists(st.sampled_from(b"abc") if kind == "letters" else st.integers(0, 255),
                                 min_size=1, max_size=3, unique=True))
        words = draw(st.lists(runs_over(alphabet, max_size=16, min_size=1), min_size=1, max_size=6))
    corpus: list[bytes] = []
    for word in words:
        corpus += [word] * draw(st.integers(1, 6))
    return draw(st.permutations(corpus))


_CORPORA = st.one_of(corpora(), wide_corpora())


@st.composite
def train_calls(draw: st.DrawFn) -> list[Call]:
    """One or two calls train(corpus, num_merges): tie-heavy corpora with repeated words, m small or None."""
    calls: list[Call] = []
    for _ in range(draw(st.integers(1, 2))):
        num_merges = draw(st.one_of(st.integers(0, 12), st.none()))
        calls.append(("train", (draw(_CORPORA), num_merges)))
    return calls


@st.composite
def unbounded_train_calls(draw: st.DrawFn) -> list[Call]:
    """One call train(corpus, None): training must stop by itself (prop-bpe-training-termination)."""
    return [("train", (draw(corpora(max_distinct=3, max_word=6)), None))]


#: Hand-picked first examples: the article's hard cases, tried before the search (def-merge, ex-same-string).
_SAME_STRING = [Rule(97, 98, 256), Rule(98, 99, 257), Rule(256, 99, 258), Rule(97, 257, 259)]
EXPLICIT: dict[str, list[list[Call]]] = {
    "enc": [
        [("enc", ([Rule(97, 97, 256)], b"aaa"))],
        [("enc", (_SAME_STRING, b"abcabc"))],
        [("enc", ([Rule(98, 99, 300), Rule(97, 98, 301), Rule(301, 99, 302)], b"abc"))],
        [("enc", ([Rule(97, 98, 1000), Rule(1000, 1000, 500)], b"ababab"))],
    ],
    "dec": [
        [("dec", ([Rule(97, 98, 300), Rule(300, 300, 260)], [260, 300, 97]))],
        [("dec", ([Rule(0xE3, 0x81, 256)], [256, 0x82, 256, 0x84]))],
    ],
    "train": [
        [("train", ([b"ab"], None))],
        [("train", ([b"aaaa", b"abab", b"abab"], None))],
        [("train", ([b"slow"] * 4 + [b"slower"] * 2 + [b"lowest"] * 3 + [b"newest"] * 3, 5))],
    ],
}


# ---------------------------------------------------------------------------
# Fast batches: many independent enc calls per example, drawn with ``random`` (not Hypothesis)
# ---------------------------------------------------------------------------

_FAST_ALPHABETS = [b"ab", b"abc", b"abcd", b"a b\n", b"\xe3\x81\x82\x84", bytes(range(256))]


def _fast_rules(rng: random.Random, alphabet: bytes, sample: bytes) -> list[Rule]:
    """A valid rule list like ``firing_rules``: mostly pairs adjacent in the current encoding of ``sample``."""
    count = rng.randint(0, 8)
    next_id = ALPHABET_SIZE + rng.choice([0, 0, 1, 7, 300])
    tokens = list(sample)
    known = list(dict.fromkeys([*alphabet, *sample]))
    rules: list[Rule] = []
    for _ in range(count):
        shape = rng.choice(["fire", "fire", "fire", "equal", "repeat", "any"])
        if shape == "fire" and len(tokens) >= 2:
            i = rng.randrange(len(tokens) - 1)
            a, b = tokens[i], tokens[i + 1]
        elif shape == "repeat" and rules:
            a, b = rng.choice(rules)[:2]
        elif shape == "equal":
            a = b = rng.choice(known)
        else:
            a, b = rng.choice(known), rng.choice(known)
        rule = Rule(a, b, next_id)
        rules.append(rule)
        known.append(next_id)
        tokens = merge(rule, tokens)
        next_id += rng.choice([1, 1, 1, 2, 50])
    return rules


def fast_enc_calls(seed: int, count: int = 64, max_size: int = 40) -> list[Call]:
    """``count`` independent calls enc(rules, data) from one seed: small alphabets, runs, firing rules, a = b
    rules, repeated pairs, non-contiguous fresh ids (as ``enc_calls``, without the call sequences)."""
    rng = random.Random(seed)
    calls: list[Call] = []
    for _ in range(count):
        source = rng.choice(_FAST_ALPHABETS)
        alphabet = bytes(rng.sample(list(source), rng.randint(1, min(4, len(source)))))
        pieces = []
        for _ in range(rng.randint(0, 6)):
            pieces.append(bytes([rng.choice(alphabet)]) * rng.choice([1, 1, 2, 3, 5, 8]))
        data = b"".join(pieces)[: rng.randint(0, max_size)]
        calls.append(("enc", (_fast_rules(rng, alphabet, data), data)))
    for index in range(1, count):
        if rng.random() < RELATED_SHARE:
            calls[index] = _related_call(rng, calls[rng.randrange(index)], calls[rng.randrange(index)])
    if rng.random() < LONG_SHARE:
        calls[rng.randrange(count)] = _fast_long_call(rng)
    return calls


#: The share of calls that repeat an earlier call of the batch with one thing changed: a cache with a wrong
#: key (length, first byte, the rule set without its order, the data alone) answers them with the earlier answer.
RELATED_SHARE = 0.15


def _related_call(rng: random.Random, earlier: Call, other: Call) -> Call:
    """``earlier`` with its rules reordered, its data changed at one place, or ``other``'s rules."""
    rules, data = earlier[1]
    how = rng.choice(["reorder", "reorder", "one byte", "other rules"])
    if how == "reorder" and len(rules) >= 2:
        shuffled = list(rules)
        rng.shuffle(shuffled)
        if _valid_rules(shuffled):
            return ("enc", (shuffled, data))
    if how == "one byte" and data:
        at = rng.randrange(len(data))
        changed = data[:at] + bytes([rng.choice([*set(data), rng.randrange(ALPHABET_SIZE)])]) + data[at + 1 :]
        return ("enc", (rules, changed))
    return ("enc", (other[1][0], data))


def _valid_rules(rules: list[Rule]) -> bool:
    try:
        validate_rules(rules)
    except ValueError:
        return False
    return True


#: The share of batches that carry one long call: chunking bugs live beyond the spec's guard.
LONG_SHARE = 0.25
_FAST_BORDERS = [n + d for n in (512, 1024, 2048, 4096) for d in (1, 2, 3, 17)]


def _fast_long_call(rng: random.Random) -> Call:
    """One enc call on 300–4200 random bytes over 1–3 symbols (often just past a power of two), rules that fire.

    Random bytes over a tiny alphabet put a mergeable pair across any chunk border with good probability.
    """
    source = rng.choice(_FAST_ALPHABETS)
    alphabet = bytes(rng.sample(list(source), rng.randint(1, min(3, len(source)))))
    length = rng.choice(_FAST_BORDERS) if rng.random() < 0.5 else rng.randint(300, 4200)
    data = bytes(rng.choice(alphabet) for _ in range(length))
    return ("enc", (_fast_rules(rng, alphabet, data[:24]), data))
