"""Which CrossHair conditions prove which claim of the article: the table behind ``bpeproof prove`` and the CI gate.

A ``Proof`` names an article claim, the scope it is proved for (``every size``, or bounded by the contracts'
preconditions), how (a contract over all paths within bounds; an induction whose base cases and steps are
contracts), and its ``Obligation``s: the conditions of one run of ``crosshair_runs`` that must all get the
expected verdict.  An obligation names the function whose ``post`` conditions it takes and, where one function
states several claims, the predicates of the conditions that state this one.

The planted false claims and steps (``proofs_tests/planted``) are proofs that must fail: each of their conditions
must be refuted with the same budget, or the gate proves nothing.  ``test_crosshair_report.py`` checks that every
condition of every module the runs check belongs to some obligation, so the table cannot leave one out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bpeproof.proofs_tests.proofs.crosshair_runs import EQUIVALENCE, IMPL, INDUCTION, PLANTED, PLANTED_STEPS, SPEC

Expect = Literal["confirmed", "refuted", "no counterexample"]
#: A claim to prove; a planted false claim, which must be refuted; a search for a counterexample where CrossHair
#: cannot exhaust the paths, which must find none (no proof, and reported as such).
Kind = Literal["claim", "planted", "search"]

EVERY_SIZE = "every size"


@dataclass(frozen=True)
class Obligation:
    """The ``post`` conditions of ``function`` in ``module`` (those calling one of ``predicates``, when given),
    checked by the run ``run``, each of which must get the verdict ``expect``."""

    run: str
    module: str
    function: str
    predicates: tuple[str, ...] = ()
    expect: Expect = "confirmed"


@dataclass(frozen=True)
class Proof:
    """One claim of the article and the obligations that prove it (or, planted, that must refute it)."""

    claim: str
    scope: str  # EVERY_SIZE, "bounded" (the bounds are the obligations' preconditions) or "searched"
    method: str
    obligations: tuple[Obligation, ...]
    kind: Kind = "claim"


def _spec(function: str, *predicates: str) -> Obligation:
    run = {"lemma_training": "spec.lemma_training", "lemma_training_unbounded": "spec.lemma_training_unbounded",
           "lemma_count_pairs": "spec.lemma_count_pairs", "lemma_merge_step": "spec.lemma_merge_step",
           "lemma_merge_step_v2": "spec.lemma_merge_step_v2"}.get(function, "spec.others")
    return Obligation(run, SPEC, function, predicates)


def _induction(function: str, *predicates: str) -> Obligation:
    return Obligation("induction", INDUCTION, function, predicates)


#: The induction on |x| (lem-merge-step): both base cases, both steps, and that every recursion is on a shorter list.
_MERGE_STEPS = ("lemma_base_empty", "lemma_base_single", "lemma_step_match", "lemma_step_skip")
_WELL_FOUNDED = _induction("lemma_recursion_is_on_shorter_lists")
_ON_M_R = ("strong induction on |x|: the base cases ε and (t1), the steps t1 t2 u (a match, a skip), each recursive"
           " call answered by the hypothesis only; every recursion is on a shorter list")


def _by_induction(claim: str, *predicates: str, bounded: tuple[Obligation, ...] = ()) -> Proof:
    steps = tuple(_induction(step, *predicates) for step in _MERGE_STEPS)
    return Proof(claim, EVERY_SIZE, _ON_M_R, (*steps, _WELL_FOUNDED, *bounded))


PROOFS: tuple[Proof, ...] = (
    _by_induction("lem-merge-step(1)", "keeps_bytes",
                  bounded=(_spec("lemma_merge_step", "merge_keeps_bytes"),
                           _spec("lemma_merge_step_v2", "merge_keeps_bytes"))),
    _by_induction("lem-merge-step(2)", "shortens_by_rep",
                  bounded=(_spec("lemma_merge_step", "merge_shortens_by_rep"),
                           _spec("lemma_merge_step_v2", "merge_shortens_by_rep"))),
    _by_induction("lem-merge-step(3)", "rep_nonnegative", "rep_at_most_cnt", "rep_positive_if_cnt_positive",
                  bounded=(_spec("lemma_merge_step", "rep_at_most_cnt", "rep_positive_if_cnt_positive"),
                           _spec("lemma_merge_step_v2", "rep_at_most_cnt", "rep_positive_if_cnt_positive"))),
    _by_induction("lem-merge-step(4)", "rep_equals_cnt_if_distinct",
                  bounded=(_spec("lemma_merge_step", "rep_equals_cnt_if_distinct"),
                           _spec("lemma_merge_step_v2", "rep_equals_cnt_if_distinct"))),
    _by_induction("prop-bpe-length-monotone(M_r)", "never_lengthens", "stays_nonempty",
                  bounded=(_spec("lemma_merge_step", "merge_never_lengthens"),)),
    Proof("prop-bpe-length-monotone(enc_R)", "bounded", "contract over all paths within the bounds",
          (_spec("lemma_roundtrip", "encoding_length_bounded"),)),
    Proof("def-merge(leftmost)", "bounded", "contract over all paths within the bounds",
          (_spec("lemma_merge_step", "merge_leftmost_first"), _spec("lemma_merge_step_v2", "merge_leftmost_first"))),
    Proof("def-merge(symbols)", EVERY_SIZE,
          "induction on the rule list: ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩ for the new id whatever the rules before it",
          (_induction("lemma_symbols_new_id"),)),
    Proof("thm-bpe-roundtrip(base)", EVERY_SIZE,
          "induction on |u|: the byte tokens of any string decode to it (dec of V0 is the identity)",
          (_induction("lemma_bytes_base"), _induction("lemma_bytes_step"))),
    Proof("thm-bpe-roundtrip", "bounded", "contract over all paths within the bounds",
          (_spec("lemma_roundtrip", "roundtrip"),)),
    Proof("def-alphabet-vocab", "bounded", "contract over all paths within the bounds: dec(xy) = dec(x)dec(y)",
          (_spec("lemma_decode_concatenates"),)),
    Proof("prop-bpe-vocab-size", "bounded", "contract over all paths within the bounds",
          (_spec("lemma_vocabulary_size"),)),
    Proof("exr-run-length", "bounded", "contract over all paths within the bounds", (_spec("lemma_run_length"),)),
    Proof("def-bpe(step 2)", "bounded", "contract over all paths within the bounds: pairs counted inside words",
          (_spec("lemma_count_pairs"),)),
    Proof("def-bpe(steps 3-5)", "bounded", "contract over all paths within the bounds (one condition with the"
          " training claims)", (_spec("lemma_training"), _spec("lemma_training_unbounded"))),
    Proof("prop-bpe-training-termination(variant)", EVERY_SIZE,
          "induction on the words of the corpus: the variant T − K drops by Σ rep, by at least 1 when the pair"
          " occurs, never below 0; and over the iterations: v_j ≤ v_0 − j",
          (Obligation("induction", INDUCTION, "lemma_corpus_empty"), Obligation("induction", INDUCTION,
           "lemma_corpus_step"), Obligation("induction", INDUCTION, "lemma_training_iteration"))),
    Proof("prop-bpe-training-termination", "bounded", "contract over all paths within the bounds (m unbounded)",
          (_spec("lemma_training"), _spec("lemma_training_unbounded"))),
    Proof("prop-bpe-training-cost", "bounded", "contract over all paths within the bounds",
          (_spec("lemma_training"), _spec("lemma_training_unbounded"))),
    Proof("variants(rule-rank = sequential)", "bounded", "contract over all paths within the bounds",
          (_spec("lemma_rule_rank_is_sequential"),)),
    Proof("impl: merge step = M_r", "bounded", "equality with the specification over all paths within the bounds",
          (Obligation("equivalence.impl_merge", EQUIVALENCE, "impl_merge_equals_spec"),
           Obligation("impl.lemma_impl_merge_step", IMPL, "lemma_impl_merge_step"))),
    Proof("impl: merge loops on runs = enc_R", "bounded",
          "equality with the specification over all paths within the bounds",
          (Obligation("equivalence.engine_runs", EQUIVALENCE, "engine_flat_on_runs_equals_spec"),
           Obligation("equivalence.engine_runs", EQUIVALENCE, "engine_heap_on_runs_equals_spec"))),
    Proof("impl: trainer = def-bpe", "searched",
          "search for a counterexample (dictionaries keep CrossHair from exhausting the paths; Hypothesis checks"
          " beyond)",
          (Obligation("equivalence.impl_train", EQUIVALENCE, "impl_train_equals_spec", expect="no counterexample"),),
          kind="search"),
    Proof("planted: false claims on the spec", "bounded", "each must be refuted", (
        Obligation("planted", PLANTED, "*", expect="refuted"),), kind="planted"),
    Proof("planted: false induction steps", EVERY_SIZE, "each must be refuted at its step and pass at the others", (
        Obligation("induction.planted", PLANTED_STEPS, "planted_*", expect="refuted"),
        Obligation("induction.planted", PLANTED_STEPS, "passes_*")), kind="planted"),
    Proof("planted: wrong implementations", "bounded", "each equality must be refuted", (
        Obligation("equivalence.planted", EQUIVALENCE, "planted_merge_equals_spec", expect="refuted"),
        Obligation("equivalence.planted", EQUIVALENCE, "planted_encode_equals_spec", expect="refuted")),
        kind="planted"),
)
