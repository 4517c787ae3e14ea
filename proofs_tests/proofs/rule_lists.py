"""thm-bpe-roundtrip, prop-bpe-length-monotone and prop-bpe-vocab-size for rule lists of every length: inductions over
the rule list, checked by CrossHair.

``bpeproof.proofs_tests.proofs.induction`` proves lem-merge-step for token lists of every length.  The theorems
users cite are about a whole rule list R = (r_1, …, r_m): enc_R, dec over V_m and |V_m|.  Their definitions are
loops over R (``bpeproof.proofs_tests.proofs.loop_machinery`` says why, and how a loop is an induction); this
module proves each claim by induction over the rule list, with each base case and step a contract that
``crosshair check`` confirms over all paths, the rule list and the token lists of unknown length.

⟨⟨·⟩⟩ over V_k: spellings of earlier tokens are stable under later rules
---------------------------------------------------------------------------
Write S_k(t) for ⟨⟨t⟩⟩ over V_k, ``symbols(R, t, k)``: the scan of the rules r_k, r_{k−1}, … for the one that
made t.  Claim: for t ∈ V_j and every k ≥ j, S_k(t) = S_j(t).  Induction on k:

* base k = j: nothing to show; for bytes, S_0(β) = β (``lemma_spelling_of_a_byte``);
* step k → k + 1: t ∈ V_k and c_{k+1} ∉ V_k (def-merge: the new id is not in the vocabulary), so t ≠ c_{k+1}:
  the scan over V_{k+1} reads r_{k+1}, does not stop there, and goes on at r_k, which is where the scan over V_k
  starts; its value is the hypothesis' S_k(t) (``lemma_spelling_step``, the rule list of unknown length read
  only at index k, a ``Frontier``; ``lemma_spelling_first_rule`` for k = 0, where the scan ends instead).

And the new id: S_j(c_j) = S_{j−1}(a_j) S_{j−1}(b_j) (``lemma_spelling_new_id``, for j of any size: the scan
over V_j stops at r_j at once and spells the parts over V_{j−1}, answered by the hypothesis).  Together, for
every rule r_j of R: S_m(c_j) = S_j(c_j) = S_{j−1}(a_j) S_{j−1}(b_j) = S_m(a_j) S_m(b_j), since a_j, b_j ∈ V_{j−1}.
So (V_m, S_m) is a vocabulary in which every rule of R satisfies def-merge's ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩, and S_m(β) = β.

thm-bpe-roundtrip and prop-bpe-length-monotone (2): the loop of enc_R
------------------------------------------------------------------------
enc_R(s) is the loop ``for rule in rules: tokens = merge(rule, tokens)`` started on the byte tokens of s
(``bpeproof.spec.bpe.enc``).  Induction over the rules the loop has applied, x_0 = the bytes of s, x_{j+1} =
M_{r_{j+1}}(x_j), with the invariant I(x) = "dec over V_m of x is s, |x| ≤ |s|, and s ≠ ε ⇒ |x| ≥ 1":

* base: the loop over no rule leaves the tokens (``lemma_enc_base``); dec over V_m of the bytes of s is s, by
  the induction on |s| of ``induction.lemma_bytes_step`` (dec over V_0 is the identity) and S_m(β) = β;
* step: one iteration replaces x by M_r x, r ∈ R; by lem-merge-step, proved for every length and every
  vocabulary in which ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩ (V_m is one, above), dec(M_r x) = dec(x), |M_r x| ≤ |x| and |x| ≥ 1 ⇒
  |M_r x| ≥ 1: the invariant holds after it (``lemma_enc_step_decodes``, ``lemma_enc_step_length``).

So dec(enc_R s) = s, |enc_R s| ≤ |s| and s ≠ ε ⇒ |enc_R s| ≥ 1, for every valid rule list R and every s.  enc_R
is total: each M_r terminates (its recursion is on shorter lists, ``induction.lemma_recursion_is_on_shorter_lists``)
and the loop runs once per rule.

prop-bpe-vocab-size: V_m is Σ followed by one new id per rule
-------------------------------------------------------------
|V_0| = 256 distinct ids (``lemma_vocabulary_base``, the real code); the loop over R · r adds c to V_R
(``lemma_vocabulary_step``: one rule adds exactly its new id), which is not in V_R (def-merge), so the number of
distinct ids grows by exactly one: |V_m| = 256 + m.

The loops
---------
Each induction over a loop needs the loop to be a fold (``loop_machinery``).  ``lemma_enc_loop_is_a_fold``,
``lemma_symbols_scan_is_a_fold`` and ``lemma_vocabulary_is_a_fold`` check that ``enc_tokens``, ``symbols`` and
``vocabulary`` are written exactly as quoted below; a change to one of them is a refuted condition until the
quoted text (and the proof) is brought up to date.

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.rule_lists
"""

from __future__ import annotations

from typing import cast

from bpeproof.proofs_tests.proofs.induction_machinery import (
    Facts,
    IllFounded,
    NotCovered,
    Segment,
    as_list,
    lemma_holds,
    tail,
)

# The contracts below name these in their conditions: CrossHair evaluates a condition in this module's namespace.
from bpeproof.proofs_tests.proofs.loop_machinery import Frontier, Outcome, scan_outcome, written_as
from bpeproof.spec.bpe import enc_tokens
from bpeproof.spec.merge import SymbolsCall, symbols, vocabulary
from bpeproof.spec.types import ALPHABET_SIZE, Rule

# ---------------------------------------------------------------------------
# The loops, as the proofs below need them written
# ---------------------------------------------------------------------------

#: enc_R: a fold of M_r over the rules, in their order; the tokens are its only state.
ENC_LOOP = """
for rule in rules:
    tokens = merge(rule, tokens)
return tokens
"""

#: ⟨⟨t⟩⟩ over V_end: a scan of the rules from r_end down, its only state the index; the parts of the rule that
#: made t spelled over the rules before it.
SYMBOLS_SCAN = """
spell = symbols if rec is None else rec
end = len(rules) if before is None else before
for index in range(end - 1, -1, -1):
    rule = rules[index]
    if rule.c == token:
        return spell(rules, rule.a, index) + spell(rules, rule.b, index)
if 0 <= token < ALPHABET_SIZE:
    return bytes([token])
"""

#: V_m: Σ, then the new id of each rule, in order.
VOCABULARY = """
return list(range(ALPHABET_SIZE)) + [rule.c for rule in rules]
"""


def lemma_enc_loop_is_a_fold() -> None:
    """enc_R is the fold quoted in ``ENC_LOOP``: the loop over R · r is the loop over R, then M_r.

    post[]: written_as(enc_tokens, ENC_LOOP)
    """


def lemma_symbols_scan_is_a_fold() -> None:
    """⟨⟨t⟩⟩ over V_{k+1} is the scan quoted in ``SYMBOLS_SCAN``: past r_{k+1} it is the scan over V_k.

    post[]: written_as(symbols, SYMBOLS_SCAN)
    """


def lemma_vocabulary_is_a_fold() -> None:
    """V_m is the list quoted in ``VOCABULARY``: V_{R·r} is V_R followed by the new id of r.

    post[]: written_as(vocabulary, VOCABULARY)
    """


# ---------------------------------------------------------------------------
# ⟨⟨·⟩⟩ over V_k for rule lists of every length
# ---------------------------------------------------------------------------

#: A rule list of which no rule can be read: the scan over V_0 reads none.
NO_RULES = Frontier(-1, None)


def parts_of(k: int) -> SymbolsCall:
    """The spelling of a part over V_i, i ≤ k, in a step that spells no part: an opaque value of its own
    (``("part", token)``), never the spelling the step is about; a call over a vocabulary not smaller than V_{k+1}
    is ``IllFounded``."""

    def call(rules: object, token: int, before: int) -> bytes:
        if not before <= k:
            raise IllFounded("a part spelled over a vocabulary that is not smaller")
        return cast(bytes, ("part", token))  # an opaque value, compared, never used as bytes

    return call


def spelled_over_next(k: int, a: int, b: int, c: int, t: int, w: int) -> Outcome:
    """S_{k+1}(t) on a rule list whose rule r_{k+1} = (a, b ↦ c) is at index k: the real scan, and where it goes on
    at index k − 1, the scan over V_k, whose value the hypothesis gives: S_k(t) = (w,)."""
    got = scan_outcome(Frontier(k, Rule(a, b, c)), t, k + 1, rec=parts_of(k))
    return ("spelled", (w,)) if got == ("continue", k - 1) else got


def lemma_spelling_of_a_byte(beta: int) -> None:
    """S_0(β) = β: over V_0 = Σ a byte spells itself, whatever rules come after.

    pre: 0 <= beta < ALPHABET_SIZE
    post[]: scan_outcome(NO_RULES, beta, 0) == ("spelled", bytes([beta]))
    """


def lemma_spelling_first_rule(a: int, b: int, c: int, t: int) -> None:
    """S_1(t) = S_0(t) for t ∈ V_0: r_1 = (a, b ↦ c) with c ∉ V_0 (def-merge) does not change a byte's spelling.

    pre: c >= ALPHABET_SIZE
    pre: 0 <= t < ALPHABET_SIZE
    post[]: scan_outcome(Frontier(0, Rule(a, b, c)), t, 1) == scan_outcome(Frontier(0, Rule(a, b, c)), t, 0)
    """


def lemma_spelling_step(k: int, a: int, b: int, c: int, t: int, w: int) -> None:
    """S_{k+1}(t) = S_k(t) for t ≠ c_{k+1}, k ≥ 1, the rule list of ANY length (only r_{k+1} is read).

    t ∈ V_k and c_{k+1} ∉ V_k give t ≠ c_{k+1}.  ``w`` is the atom of S_k(t), the induction hypothesis.  The
    second condition says that the scan over V_k starts at index k − 1, where the scan over V_{k+1} went on.

    pre: k >= 1
    pre: t != c
    post[]: spelled_over_next(k, a, b, c, t, w) == ("spelled", (w,))
    post: scan_outcome(Frontier(k, Rule(a, b, c)), t, k) == ("continue", k - 1)
    """


def spelled_new_id(j: int, a: int, b: int, c: int, sa: int, sb: int) -> Outcome:
    """S_j(c_j) with r_j = (a, b ↦ c) at index j − 1, the parts' spellings over V_{j−1} answered by the hypothesis
    (S_{j−1}(a) = (sa,), S_{j−1}(b) = (sb,)); a part spelled over another vocabulary is not covered."""
    rules = Frontier(j - 1, Rule(a, b, c))
    known = [(a, (sa,)), (b, (sb,))]

    def call(other: object, token: int, before: int) -> bytes:
        if not before < j:
            raise IllFounded("a part spelled over a vocabulary that is not smaller")
        if other is not rules or before != j - 1:
            raise NotCovered("a part spelled over another vocabulary than V_{j-1}")
        for known_token, word in known:
            if token == known_token:
                return cast(bytes, word)  # an atom where a byte string stands (see induction_machinery)
        raise NotCovered("a token that is not a part of the rule")

    return scan_outcome(rules, c, j, rec=call)


def lemma_spelling_new_id(j: int, a: int, b: int, c: int, sa: int, sb: int) -> None:
    """S_j(c_j) = S_{j−1}(a_j) S_{j−1}(b_j) for the rule r_j = (a, b ↦ c), j ≥ 1 of ANY size (def-merge).

    pre: j >= 1
    pre: a != b or sa == sb
    post[]: spelled_new_id(j, a, b, c, sa, sb) == ("spelled", (sa, sb))
    """


# ---------------------------------------------------------------------------
# thm-bpe-roundtrip and prop-bpe-length-monotone (2): the loop of enc_R over the rules
# ---------------------------------------------------------------------------


def lemma_enc_base(u: list[int]) -> None:
    """The loop over no rule leaves the tokens, of ANY number, as they are: x_0 = the bytes of s.

    post[]: enc_tokens([], as_list(Segment([], u))) == as_list(Segment([], u))
    """


def decodes_to(f: Facts, s: int) -> bool:
    """dec over V_m of M_r x is s (one atom in the free monoid, as in ``induction_machinery``)."""
    return f.dec_merged == (s,)


def length_within(f: Facts, n: int) -> bool:
    """|M_r x| ≤ n = |s|, and n ≥ 1 ⇒ |M_r x| ≥ 1."""
    return len(f.merged) <= n and (n == 0 or len(f.merged) >= 1)


def lemma_enc_step_decodes(
    a: int, b: int, c: int, length: int, merged: list[int], rep: int, cnt: int, d: int, dm: int, s: int
) -> None:
    """dec(x) = s ⇒ dec(M_r x) = s: one iteration of the loop, r = (a, b ↦ c) any rule of R, x of ANY length.

    The quantities of x are constrained by lem-merge-step (``lemma_holds``, proved for every length over any
    vocabulary with ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩, which V_m is) and by the invariant dec(x) = s (``d`` and ``s`` atoms).

    pre: a != c and b != c
    pre: lemma_holds(Rule(a, b, c), tail(length, merged, rep, cnt, d, dm))
    pre: d == s
    post[]: decodes_to(tail(length, merged, rep, cnt, d, dm), s)
    """


def lemma_enc_step_length(
    a: int, b: int, c: int, length: int, merged: list[int], rep: int, cnt: int, d: int, dm: int, n: int
) -> None:
    """|x| ≤ |s| and (|s| ≥ 1 ⇒ |x| ≥ 1) are kept by one iteration of the loop, x of ANY length.

    pre: a != c and b != c
    pre: lemma_holds(Rule(a, b, c), tail(length, merged, rep, cnt, d, dm))
    pre: length <= n and (n == 0 or length >= 1)
    post[]: length_within(tail(length, merged, rep, cnt, d, dm), n)
    """


# ---------------------------------------------------------------------------
# prop-bpe-vocab-size
# ---------------------------------------------------------------------------


def distinct_ids(ids: list[int]) -> int:
    """|V| for a vocabulary listed as ``ids`` (concrete only)."""
    return len(set(ids))


def new_ids(a: int, b: int, c: int) -> list[int]:
    """What one rule (a, b ↦ c) adds to the vocabulary: the real code on the rule list (r), Σ left out."""
    return vocabulary([Rule(a, b, c)])[ALPHABET_SIZE:]


def distinct_after(size: int, fresh: bool) -> int:
    """|V ∪ {c}| from |V| = ``size`` and whether c ∉ V (``fresh``): one more exactly when c is new."""
    return size + 1 if fresh else size


def lemma_vocabulary_base() -> None:
    """|V_0| = 256: the vocabulary of no rule is Σ, 256 distinct ids.

    post[]: distinct_ids(vocabulary([])) == ALPHABET_SIZE
    """


def lemma_vocabulary_step(a: int, b: int, c: int, m: int, size: int, fresh: bool) -> None:
    """|V_R| = 256 + m ⇒ |V_{R·r}| = 256 + m + 1, R of ANY length m: r adds its new id c, and c ∉ V_R (def-merge).

    ``size`` is |V_R| (the hypothesis) and ``fresh`` says c ∉ V_R (the validity of R · r).

    pre: m >= 0 and size == ALPHABET_SIZE + m
    pre: fresh
    post[]: new_ids(a, b, c) == [c]
    post: distinct_after(size, fresh) == ALPHABET_SIZE + (m + 1)
    """

