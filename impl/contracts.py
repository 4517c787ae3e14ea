"""The article's claims as CrossHair contracts on the implementation's own functions.

The same claims as ``bpeproof.spec.contracts``, stated without the specification (the
engine never calls it): the number of replacements of a merge step is
|x| − |M_r x| (lem-merge-step (2) read as a definition), and the occurrences
of a pair are counted inline.  Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.impl.contracts

The merge step is list-based and confirmed over all paths; the encoder's and trainer's dictionaries keep
CrossHair from exhausting the paths of the others, which must show no counterexample.
"""

from __future__ import annotations

# The contracts in the docstrings below use these names; nothing else in this module does.
import bpeproof.impl.encoder
from bpeproof.impl.encoder import Encoder, dec
from bpeproof.impl.trainer import apply_rule, train_distinct
from bpeproof.spec.types import ALPHABET_SIZE, Rule

C = ALPHABET_SIZE


def _is_byte(value: int) -> bool:
    return 0 <= value < ALPHABET_SIZE


def _in_v1(tokens: list[int]) -> bool:
    return all(0 <= t <= C for t in tokens)


def occurrences(x: list[int], a: int, b: int) -> int:
    """cnt_x(a, b) (def-merge): positions i with (x_i, x_{i+1}) = (a, b), overlapping ones included."""
    return sum(1 for i in range(len(x) - 1) if x[i] == a and x[i + 1] == b)


def replacements(a: int, b: int, x: list[int]) -> int:
    """rep_r(x) of the implementation's merge step, as |x| − |M_r x|."""
    return len(x) - len(apply_rule(Rule(a, b, C), x))


def enc(rules: list[Rule], data: bytes) -> list[int]:
    """The encoder's production Python path for a word (whole-token shortcut, then the flat-list loop).

    CrossHair's symbolic values cannot enter the compiled merge loop, so it is switched off.
    """
    saved = bpeproof.impl.encoder.USE_C_LOOP
    bpeproof.impl.encoder.USE_C_LOOP = False
    try:
        encoder = Encoder(rules, cache_size=0)
    finally:
        bpeproof.impl.encoder.USE_C_LOOP = saved
    return list(encoder.encode_word_uncached(bytes(data)))


def train_unbounded(corpus: list[bytes]) -> list[Rule]:
    """The implementation's unbounded trainer on its ``strings`` backend, the one used without the C loop."""
    counts: dict[bytes, int] = {}
    for word in corpus:
        counts[word] = counts.get(word, 0) + 1
    return train_distinct(counts, None, False, backend="strings")


def lemma_impl_merge_step(a: int, b: int, x: list[int]) -> None:
    """lem-merge-step (3), (4) and prop-bpe-length-monotone (1) for the trainer's M_r, r = (a, b ↦ 256).

    Lists only, so CrossHair confirms it over all paths; claim (1) needs the encoder's token table and is
    checked with the round trip.

    pre: _is_byte(a) and _is_byte(b)
    pre: len(x) <= 4
    pre: _in_v1(x)
    post[]: 0 <= replacements(a, b, x) <= occurrences(x, a, b)
    post: occurrences(x, a, b) == 0 or replacements(a, b, x) >= 1
    post: a == b or replacements(a, b, x) == occurrences(x, a, b)
    """


def lemma_impl_roundtrip(a1: int, b1: int, a2: int, b2: int, data: bytes) -> None:
    """thm-bpe-roundtrip and prop-bpe-length-monotone (2) for the implementation's enc and dec.

    pre: _is_byte(a1) and _is_byte(b1)
    pre: 0 <= a2 <= C and 0 <= b2 <= C
    pre: len(data) <= 4
    post[]: dec([Rule(a1, b1, C), Rule(a2, b2, C + 1)], enc([Rule(a1, b1, C), Rule(a2, b2, C + 1)], data)) == data
    post: len(enc([Rule(a1, b1, C), Rule(a2, b2, C + 1)], data)) <= len(data)
    """


def lemma_impl_training(w1: bytes, w2: bytes) -> None:
    """prop-bpe-training-termination and prop-bpe-vocab-size for the implementation's unbounded trainer.

    pre: 1 <= len(w1) <= 3 and 1 <= len(w2) <= 3
    post[]: len(train_unbounded([w1, w2])) <= len(w1) + len(w2) - 2
    post: [rule.c for rule in train_unbounded([w1, w2])] == list(range(C, C + len(train_unbounded([w1, w2]))))
    """
