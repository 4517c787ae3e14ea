"""The implementation's production Python paths against the specification, for CrossHair.

The paths are the ones the engine runs when the C extensions are not used: the encoder's whole-token shortcut
followed by the flat-list loop (``Encoder.encode_word_uncached``, which calls ``_merge_short``), the heap loop
for long words (``Encoder._merge_long``), the trainer's ``strings`` backend and the trainer's merge step.  Every
comparison uses two rules, the second one over V_1, so that the rank order, the shortcut's cross-merge check and
merged parts all matter.  The engine's two loops (``impl.merge_loop``) are also compared on their own, with a pair table
that is a list, on every list of three rules over one byte and every run of up to five bytes: a heap entry that is
out of date when it is popped shows only with three rules, and without dictionaries CrossHair exhausts the paths.
The encoder's own parts, its pair table (the code and the join the loops are given) and its whole-token shortcut,
are checked on every pair of rules up to renaming the bytes (``canonical_rule_cases``) by a plain loop in
``test_impl_encoder.py``: symbolic keys in the encoder's dictionaries make a symbolic path far too slow to exhaust, so
CrossHair had been given realized arguments, which only made it enumerate the same 50 concrete cases, in 29 CPU s
instead of a fraction of one.
Two forms, on small inputs (CrossHair explores paths, so the inputs are bounded):

* the equality as a postcondition (``post[]: __return__ == …``) for ``crosshair check``, which stops at the first
  difference and confirms over all paths when it finds none;
* pairs of wrappers for ``crosshair diffbehavior`` (it has no preconditions, so each wrapper returns the same
  ``None`` outside the bounds): ``spec_encode`` against ``impl_encode`` (the word path) and ``impl_encode_heap``
  (the heap loop), ``spec_train_words`` against ``impl_train_words`` (the ``strings`` trainer).

``planted_*`` are wrong variants (each merge scanning from the right end): the CI gate requires CrossHair to
find their difference, so that a "no difference" answer for the implementation means something.

``lemma_impl_roundtrip`` and ``lemma_impl_training`` state the round trip and the N − K bound on the engine's own
enc, dec and ``strings`` trainer, without the specification: searches on dictionary paths, outside CI
(``crosshair_runs --all``).  They are here, not in ``impl/contracts.py``, because ``crosshair watch spec impl``
checks every contract of ``impl/`` on every pass, and these took 11 CPU seconds of each, before any report.
"""

from __future__ import annotations

import bpeproof.impl.encoder
import bpeproof.impl.merge_loop
import bpeproof.impl.trainer
from bpeproof.impl.contracts import rank_code
from bpeproof.spec.bpe import enc_tokens, train
from bpeproof.spec.merge import dec_tokens, merge
from bpeproof.spec.types import ALPHABET_SIZE, Rule

C = ALPHABET_SIZE


def _small_merge(a: int, b: int, x: list[int]) -> bool:
    return 0 <= a <= C and 0 <= b <= C and len(x) <= 5


def _small_encode(a1: int, b1: int, a2: int, b2: int, data: bytes) -> bool:
    return 0 <= a1 < C and 0 <= b1 < C and 0 <= a2 <= C and 0 <= b2 <= C and len(data) <= 4


def _small_diff(a1: int, b1: int, a2: int, b2: int, data: bytes) -> bool:
    return 0 <= a1 < C and 0 <= b1 < C and 0 <= a2 <= C and 0 <= b2 <= C and len(data) <= 3


def _small_corpus(w1: bytes, w2: bytes) -> bool:
    return 1 <= len(w1) <= 3 and 1 <= len(w2) <= 3


def _rules(a1: int, b1: int, a2: int, b2: int) -> list[Rule]:
    return [Rule(a1, b1, C), Rule(a2, b2, C + 1)]


def python_encoder(rules: list[Rule]) -> bpeproof.impl.encoder.Encoder:
    """An encoder on the pure-Python paths: CrossHair's symbolic values cannot enter the compiled loop."""
    return bpeproof.impl.encoder.Encoder(rules, cache_size=0, c_loop=False)


def impl_encode_word(rules: list[Rule], data: bytes) -> list[int]:
    """The encoder's production path for a word: the whole-token shortcut, else the flat-list loop."""
    return list(python_encoder(rules).encode_word_uncached(bytes(data)))


def impl_encode_long(rules: list[Rule], data: bytes) -> list[int]:
    """The encoder's heap loop for long words, run on a short one."""
    return python_encoder(rules)._merge_long(list(data))


def impl_train_strings(w1: bytes, w2: bytes) -> list[Rule]:
    """The trainer's ``strings`` backend, unbounded, on the corpus (w1, w2)."""
    counts: dict[bytes, int] = {}
    for word in (w1, w2):
        counts[word] = counts.get(word, 0) + 1
    return bpeproof.impl.trainer.train_distinct(counts, None, False, backend="strings")


# --- the equalities as contracts --------------------------------------------------------------------------------


def impl_merge_equals_spec(a: int, b: int, x: list[int]) -> list[int]:
    """bpeproof.impl.trainer.apply_rule = spec M_r (def-merge), for the second rule (a, b ↦ 257) over V_1.

    pre: _small_merge(a, b, x)
    post[]: __return__ == merge(Rule(a, b, C + 1), x)
    """
    return bpeproof.impl.trainer.apply_rule(Rule(a, b, C + 1), x)


def impl_encode_word_equals_spec(a1: int, b1: int, a2: int, b2: int, data: bytes) -> list[int]:
    """Encoder.encode_word_uncached (shortcut and flat-list loop) = spec.enc (def-bpe), two rules.

    pre: _small_encode(a1, b1, a2, b2, data)
    post[]: __return__ == enc_tokens(_rules(a1, b1, a2, b2), list(data))
    """
    return impl_encode_word(_rules(a1, b1, a2, b2), data)


def impl_encode_long_equals_spec(a1: int, b1: int, a2: int, b2: int, data: bytes) -> list[int]:
    """Encoder._merge_long (the heap loop) = spec.enc (def-bpe), two rules.

    pre: _small_encode(a1, b1, a2, b2, data)
    post[]: __return__ == enc_tokens(_rules(a1, b1, a2, b2), list(data))
    """
    return impl_encode_long(_rules(a1, b1, a2, b2), data)


def impl_train_equals_spec(w1: bytes, w2: bytes) -> list[Rule]:
    """The ``strings`` trainer = spec.train (def-bpe) with no bound on the merges.

    pre: 1 <= len(w1) <= 3 and 1 <= len(w2) <= 3
    post[]: __return__ == train([w1, w2], None)
    """
    return impl_train_strings(w1, w2)


# --- the engine's own claims on its dictionary paths: searches, outside CI ---------------------------------------


def lemma_impl_roundtrip(a1: int, b1: int, a2: int, b2: int, data: bytes) -> None:
    """thm-bpe-roundtrip and prop-bpe-length-monotone (2) for the implementation's enc and dec.

    pre: 0 <= a1 < C and 0 <= b1 < C
    pre: 0 <= a2 <= C and 0 <= b2 <= C
    pre: len(data) <= 4
    post[]: bpeproof.impl.encoder.dec(_rules(a1, b1, a2, b2), impl_encode_word(_rules(a1, b1, a2, b2), data)) == data
    post: len(impl_encode_word(_rules(a1, b1, a2, b2), data)) <= len(data)
    """


def lemma_impl_training(w1: bytes, w2: bytes) -> None:
    """prop-bpe-training-termination and prop-bpe-vocab-size for the implementation's unbounded trainer.

    pre: 1 <= len(w1) <= 3 and 1 <= len(w2) <= 3
    post[]: len(impl_train_strings(w1, w2)) <= len(w1) + len(w2) - 2
    post: [rule.c for rule in impl_train_strings(w1, w2)] == list(range(C, C + len(impl_train_strings(w1, w2))))
    """


def _run_rules(a: int, a2: int, b2: int, a3: int, b3: int) -> list[Rule]:
    """(a, a ↦ 256), (a2, b2 ↦ 257), (a3, b3 ↦ 258): a rule list over the one byte a."""
    return [Rule(a, a, C), Rule(a2, b2, C + 1), Rule(a3, b3, C + 2)]


def _list_join(rules: list[Rule]) -> bpeproof.impl.merge_loop.Join[int]:
    """The unit that replaces a pair of code (rank) k: the new id of rule k."""

    def join(x: int, y: int, rank: int) -> int:
        return rules[rank].c

    return join


def engine_flat_on_runs_equals_spec(a: int, a2: int, b2: int, a3: int, b3: int, n: int) -> list[int]:
    """impl.merge_loop.merge_short = spec.enc (def-bpe) on a^n, n ≤ 5, for every list of three rules over the byte a.

    pre: 0 <= a < C and 0 <= n <= 5
    pre: a2 in (a, C) and b2 in (a, C)
    pre: a3 in (a, C, C + 1) and b3 in (a, C, C + 1)
    post[]: __return__ == enc_tokens(_run_rules(a, a2, b2, a3, b3), [a] * n)
    """
    rules = _run_rules(a, a2, b2, a3, b3)
    return bpeproof.impl.merge_loop.merge_short([a] * n, rank_code(rules), _list_join(rules))


def engine_heap_on_runs_equals_spec(a: int, a2: int, b2: int, a3: int, b3: int, n: int) -> list[int]:
    """impl.merge_loop.merge_long = spec.enc (def-bpe) on a^n, n ≤ 5, for every list of three rules over the byte a.

    With (a, a ↦ 256), (256, a ↦ 257), (256, 256 ↦ 258) on a a a a, the entry (257's rank, 0) pushed after the
    first merge is out of date once the second merge makes the pair (256, 256): the loop must skip it.

    pre: 0 <= a < C and 0 <= n <= 5
    pre: a2 in (a, C) and b2 in (a, C)
    pre: a3 in (a, C, C + 1) and b3 in (a, C, C + 1)
    post[]: __return__ == enc_tokens(_run_rules(a, a2, b2, a3, b3), [a] * n)
    """
    rules = _run_rules(a, a2, b2, a3, b3)
    return bpeproof.impl.merge_loop.merge_long([a] * n, rank_code(rules), _list_join(rules))


#: The ids of V_2 over the bytes the canonical rule lists use.
_CANONICAL_IDS = (0, 1, 2, 3, C, C + 1)


def canonical_rule_cases() -> list[tuple[int, int, int]]:
    """Every (b1, a2, b2) of ``canonical_rules``: 0 ≤ b1 ≤ 1, 0 ≤ a2, b2 ≤ 4 (50 cases)."""
    return [(b1, a2, b2) for b1 in range(2) for a2 in range(5) for b2 in range(5)]


def canonical_rules(b1: int, a2: int, b2: int) -> list[Rule]:
    """(0, b1 ↦ 256), (a2, b2 ↦ 257), with 4 standing for 256.

    The encoder uses bytes only as ids, so a pair of rules behaves as any other with the same equalities among its
    four parts; the first part is 0 and the bytes 0..3 give every pattern of equalities.
    """
    return [Rule(0, b1, C), Rule(C if a2 == 4 else a2, C if b2 == 4 else b2, C + 1)]


def impl_pair_table_equals_rule_ranks(b1: int, a2: int, b2: int) -> bool:
    """The encoder's pair table is the one the engine's loops are proved with: for every pair (x, y) of ids, a code
    exactly when some rule joins x, y; codes ordered as the ranks of the first rules joining them; the join the id of
    that rule (``Encoder._code``, ``Encoder._join`` against ``rank_code``, ``_list_join``)."""
    rules = canonical_rules(b1, a2, b2)
    encoder = python_encoder(rules)
    rank, join = rank_code(rules), _list_join(rules)
    pairs = [(x, y) for x in _CANONICAL_IDS for y in _CANONICAL_IDS]
    codes = {pair: encoder._code(*pair) for pair in pairs}
    if any((codes[pair] is None) != (rank(*pair) is None) for pair in pairs):
        return False
    found = sorted((code, pair) for pair, code in codes.items() if code is not None)
    ranks = [r for _, pair in found if (r := rank(*pair)) is not None]
    return (
        len(ranks) == len(found)
        and ranks == sorted(ranks)
        and all(encoder._join(x, y, code) == join(x, y, r) for (code, (x, y)), r in zip(found, ranks, strict=True))
    )


def impl_shortcut_equals_spec(b1: int, a2: int, b2: int) -> bool:
    """The whole-token shortcut (``Encoder.is_reachable``) is exactly enc_R(⟨⟨t⟩⟩) = (t) (def-bpe) for the token
    t = 257 of every pair of rules: its cross-merge check included."""
    rules = canonical_rules(b1, a2, b2)
    own = enc_tokens(rules, list(dec_tokens(rules, [C + 1]))) == [C + 1]
    return python_encoder(rules).is_reachable(C + 1) == own


def _merge_from_right(rule: Rule, x: list[int]) -> list[int]:
    out: list[int] = []
    i = len(x) - 1
    while i >= 0:
        if i >= 1 and (x[i - 1], x[i]) == (rule.a, rule.b):
            out.append(rule.c)
            i -= 2
        else:
            out.append(x[i])
            i -= 1
    return out[::-1]


def planted_merge_equals_spec(a: int, b: int, x: list[int]) -> list[int]:
    """The planted right-to-left merge claimed equal to the spec: CrossHair must refute it.

    pre: _small_merge(a, b, x)
    post[]: __return__ == merge(Rule(a, b, C + 1), x)
    """
    return _merge_from_right(Rule(a, b, C + 1), x)


def planted_encode_equals_spec(a1: int, b1: int, a2: int, b2: int, data: bytes) -> list[int]:
    """Two rules applied in order, each merge scanning from the right, claimed equal to the spec: must be refuted.

    pre: _small_encode(a1, b1, a2, b2, data)
    post[]: __return__ == enc_tokens(_rules(a1, b1, a2, b2), list(data))
    """
    tokens = list(data)
    for rule in _rules(a1, b1, a2, b2):
        tokens = _merge_from_right(rule, tokens)
    return tokens


# --- diffbehavior pairs ----------------------------------------------------------------------------------------


def spec_encode(a1: int, b1: int, a2: int, b2: int, data: bytes) -> list[int] | None:
    """spec.enc with two rules on short data, None outside the bounds."""
    if not _small_diff(a1, b1, a2, b2, data):
        return None
    return enc_tokens(_rules(a1, b1, a2, b2), list(data))


def impl_encode(a1: int, b1: int, a2: int, b2: int, data: bytes) -> list[int] | None:
    """The encoder's production path under the same bounds as ``spec_encode``."""
    if not _small_diff(a1, b1, a2, b2, data):
        return None
    return impl_encode_word(_rules(a1, b1, a2, b2), data)


def impl_encode_heap(a1: int, b1: int, a2: int, b2: int, data: bytes) -> list[int] | None:
    """The encoder's heap loop under the same bounds as ``spec_encode``."""
    if not _small_diff(a1, b1, a2, b2, data):
        return None
    return impl_encode_long(_rules(a1, b1, a2, b2), data)


def spec_train_words(w1: bytes, w2: bytes) -> list[Rule] | None:
    """spec.train, unbounded, on the corpus (w1, w2) of short words; None outside the bounds."""
    if not _small_corpus(w1, w2):
        return None
    return train([w1, w2], None)


def impl_train_words(w1: bytes, w2: bytes) -> list[Rule] | None:
    """The ``strings`` trainer under the same bounds as ``spec_train_words``."""
    if not _small_corpus(w1, w2):
        return None
    return impl_train_strings(w1, w2)


def right_to_left_encode(a1: int, b1: int, a2: int, b2: int, data: bytes) -> list[int] | None:
    """A planted bug: each merge scanning from the right end."""
    if not _small_diff(a1, b1, a2, b2, data):
        return None
    tokens = list(data)
    for rule in _rules(a1, b1, a2, b2):
        tokens = _merge_from_right(rule, tokens)
    return tokens
