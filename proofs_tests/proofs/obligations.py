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

from bpeproof.proofs_tests.proofs.crosshair_runs import (
    ENGINE_HEAP_LOOP,
    ENGINE_MERGE_LOOP,
    ENGINE_MERGE_STEP,
    ENGINE_RULE_RANK,
    EQUIVALENCE,
    IMPL,
    INDUCTION,
    MERGE_DIRECTION,
    PAIR_COUNTS,
    PLANTED,
    PLANTED_HEAP_STEPS,
    PLANTED_STEPS,
    RULE_LISTS,
    RULE_RANK,
    SELECTION,
    SPEC,
    TOKEN_LISTS,
    TRAINING,
    TRAINING_COST,
    UNBOUNDED_TRAINING,
)

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
    # Unbounded training is a lemma on the specification kept out of spec/, where crosshair watch would hang on it.
    module = UNBOUNDED_TRAINING if function == "lemma_training_unbounded" else SPEC
    return Obligation(run, module, function, predicates)


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


def _rule_lists(*functions: str) -> tuple[Obligation, ...]:
    return tuple(Obligation("induction", RULE_LISTS, function) for function in functions)


def _token_lists(*functions: str) -> tuple[Obligation, ...]:
    return tuple(Obligation("induction", TOKEN_LISTS, function) for function in functions)


#: Later rules keep the spellings of earlier tokens, and the new id is spelled by its parts: (V_m, ⟨⟨·⟩⟩) satisfies
#: def-merge for every rule of R, for rule lists of every length (induction on k over the vocabularies V_k).
_SPELLINGS = _rule_lists("lemma_symbols_scan_is_a_fold", "lemma_spelling_of_a_byte", "lemma_spelling_first_rule",
                         "lemma_spelling_step", "lemma_spelling_new_id")
_ON_SPELLINGS = ("induction on k over the vocabularies V_k of a rule list of any length: ⟨⟨t⟩⟩ over V_{k+1} is"
                 " ⟨⟨t⟩⟩ over V_k for t ≠ c_{k+1} (the scan reads r_{k+1}, the rest answered by the hypothesis),"
                 " ⟨⟨c_j⟩⟩ over V_j is ⟨⟨a_j⟩⟩⟨⟨b_j⟩⟩ over V_{j−1}; the scan checked to be a fold")
_ON_ENC = ("induction over the rule list (the loop of enc_R, checked to be a fold): the invariant holds for the bytes"
           " of s and each M_r keeps it by lem-merge-step, proved for every length, over V_m, where every rule"
           " satisfies def-merge (spellings stable under later rules)")
#: The merge lemma's claims that each iteration of enc_R uses.
_KEEPS_BYTES = (*(_induction(step, "keeps_bytes") for step in _MERGE_STEPS), _WELL_FOUNDED)
_KEEPS_LENGTH = (*(_induction(step, "never_lengthens", "stays_nonempty") for step in _MERGE_STEPS), _WELL_FOUNDED)

#: The direction of M_r (merge_direction): the leftmost occurrence first, for lists of every length.
_ON_DIRECTION = ("induction on the prefix p before the first occurrence of (a, b): M_r(a b v) = c·M_r(v);"
                 " M_r(t·y) = t·M_r(y) when (t, y_1) is no occurrence, M_r(y) answered by the hypothesis; and on |x|"
                 " for a list with no occurrence (M_r x = x); v, y, x of any length")
#: def-bpe step 2's counts (pair_counts), with the check that count_pairs is the fold the proof goes through.
_PAIR_COUNTS = (Obligation("induction", PAIR_COUNTS, "lemma_*"),
                Obligation("induction", TRAINING, "lemma_count_pairs_is_a_fold"))
_ON_PAIR_COUNTS = ("induction on |x|: the comprehension's items of a word equal to q number cnt_x(q) (t·y lists"
                   " (t, y_1), then y's pairs; cnt unfolded once, cnt_y answered by the hypothesis); sorted keeps"
                   " the items; induction over the sorted list: the grouping loop's entries count each pair's items,"
                   " in increasing order; the loop checked to be a fold")
_ON_SELECTION = ("induction over the iterations of training (the loop checked to be a fold): one iteration of the"
                 " real loop stops exactly at j = m or an empty table, else makes (a, b ↦ 256 + j) with the selected"
                 " pair and j + 1; select_pair's loops keep the largest count and, on the table's increasing order"
                 " (step 2), the smallest pair with it")

#: Variant (ii), the earliest rule's pair first (rule_rank), on the direction of M_r and the loop of enc_R.
_ON_RULE_RANK = ("strong induction on |x| along the recursion of merge_by_rule_rank (its loops and F's checked to"
                 " be the quoted folds): F(t, t') is the first rule joining (t, t'), the scan keeps the least (rank,"
                 " position); a call returns x, or recurses once on x with that pair merged, one token shorter,"
                 " answered by the hypothesis; enc_R of the two lists is the same (induction over enc_R's loop, M_r"
                 " answered by the direction of M_r: an earlier rule's pair occurs in neither, the ranked rule makes"
                 " both p·c·M_r(v)); rules and lists of any length")
_RULE_RANK = (Obligation("induction", RULE_RANK, "lemma_*"), *_rule_lists("lemma_enc_loop_is_a_fold", "lemma_enc_base"),
              Obligation("induction", MERGE_DIRECTION, "lemma_*"),
              _induction("lemma_recursion_is_on_shorter_lists", "merge_recurses_on_shorter"))


def _engine(module: str, *functions: str) -> tuple[Obligation, ...]:
    return tuple(Obligation("induction.engine", module, function) for function in functions)


_ON_MERGE_LIST = ("induction on the tokens left to scan, n − i (the loop checked to be the quoted scan of positions):"
                  " the loop from (out, i) returns out · M_r(tokens[i:]); one iteration of its body, the rest"
                  " answered by the hypothesis, against one unfolding of M_r recursing on the same tokens[i':]")
_ON_FLAT_LOOP = ("induction on |v| for units = q · v, no pair at a position < |q| being (a, b) (merge_short"
                 " checked to be the quoted loop; pair table of one rule (a, b ↦ c), c ∉ {a, b}): the loop returns"
                 " q · M_r(v); a skip re-splits the state, a match runs one iteration of the body on lists of unknown"
                 " length and leaves the state the hypothesis on u needs")
_ON_FLAT_LOOP_RULES = ("strong induction on |x| for a state (units = x, found = the ranks of its pairs), the pair table"
                       " of a whole rule list (checked to be the scan for the first rule joining a pair, as F):"
                       " with no ranked pair the loop leaves x; else min and index find the least (rank, position)"
                       " (i, q) and one iteration of the body, on lists of unknown length, leaves the state of x with"
                       " that pair joined into c_i, from which the hypothesis gives RR of it, which is RR(x) = enc_R(x)"
                       " (variants(rule-rank = sequential))")
_ON_HEAP_LOOP = ("induction on (|x|, the heap's entries), lexicographically, for a state spelling x whose heap holds"
                 " the entry (code, position) of every ranked pair of alive positions (merge_long checked to be the"
                 " quoted loop; the same pair table, checked as F; heapq's pop returning the least entry taken as an"
                 " axiom): with no entry the loop leaves x; a stale entry is skipped, the state kept, one entry fewer;"
                 " a live one is the least (rank, position), RR's, and one iteration of the body, on arrays of unknown"
                 " length, joins it into c_i, links its neighbours and pushes the entries of the two new pairs: the"
                 " state of x with that pair joined, whose RR is RR(x) = enc_R(x)")

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
    Proof("prop-bpe-length-monotone(enc_R)", EVERY_SIZE, _ON_ENC, (
        *_KEEPS_LENGTH, *_rule_lists("lemma_enc_loop_is_a_fold", "lemma_enc_base", "lemma_enc_step_length"),
        _spec("lemma_roundtrip", "encoding_length_bounded"))),
    Proof("def-merge(leftmost)", EVERY_SIZE, _ON_DIRECTION, (
        Obligation("induction", MERGE_DIRECTION, "lemma_*"),
        _induction("lemma_recursion_is_on_shorter_lists", "merge_recurses_on_shorter"),
        _spec("lemma_merge_step", "merge_leftmost_first"), _spec("lemma_merge_step_v2", "merge_leftmost_first"))),
    Proof("def-merge(symbols)", EVERY_SIZE,
          "induction on the rule list: ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩ for the new id whatever the rules before it",
          (_induction("lemma_symbols_new_id"),)),
    Proof("thm-bpe-roundtrip(base)", EVERY_SIZE,
          "induction on |u|: the byte tokens of any string decode to it (dec of V0 is the identity)",
          (_induction("lemma_bytes_base"), _induction("lemma_bytes_step"))),
    Proof("def-merge(later rules keep spellings)", EVERY_SIZE, _ON_SPELLINGS, _SPELLINGS),
    Proof("thm-bpe-roundtrip", EVERY_SIZE, _ON_ENC, (
        *_KEEPS_BYTES, _induction("lemma_bytes_base"), _induction("lemma_bytes_step"), *_SPELLINGS,
        *_rule_lists("lemma_enc_loop_is_a_fold", "lemma_enc_base", "lemma_enc_step_decodes"),
        _spec("lemma_roundtrip", "roundtrip"))),
    Proof("def-alphabet-vocab", EVERY_SIZE,
          "induction on |x| for every y: dec(ε·y) = dec(y); dec(t·x'·y) = ⟨⟨t⟩⟩·dec(x'·y), answered by the hypothesis"
          " dec(x'·y) = dec(x')·dec(y); every recursion of dec on a shorter list", (
              *_token_lists("lemma_concatenation_base", "lemma_concatenation_step"),
              _induction("lemma_recursion_is_on_shorter_lists", "dec_recurses_on_shorter"),
              _spec("lemma_decode_concatenates"))),
    Proof("prop-bpe-vocab-size", EVERY_SIZE,
          "induction over the rule list (V_m checked to be Σ followed by one new id per rule): |V_0| = 256, and a"
          " rule adds its new id, which def-merge puts outside V_R", (
              *_rule_lists("lemma_vocabulary_is_a_fold", "lemma_vocabulary_base", "lemma_vocabulary_step"),
              _spec("lemma_vocabulary_size"))),
    Proof("exr-run-length", EVERY_SIZE,
          "induction on ℓ in steps of 2: the bases a^0, a^1; a^(ℓ+2) = a a a^ℓ, the recursion on a^ℓ answered by the"
          " hypothesis (cnt unfolded once more); every recursion on a shorter list", (
              *_token_lists("lemma_run_base", "lemma_run_step"),
              _induction("lemma_recursion_is_on_shorter_lists", "merge_recurses_on_shorter", "rep_recurses_on_shorter",
                         "cnt_recurses_on_shorter"),
              _spec("lemma_run_length"))),
    Proof("def-bpe(step 2)", EVERY_SIZE, _ON_PAIR_COUNTS, _PAIR_COUNTS + (_spec("lemma_count_pairs"),)),
    Proof("def-bpe(steps 3-5)", EVERY_SIZE, _ON_SELECTION, (
        *_PAIR_COUNTS, Obligation("induction", SELECTION, "lemma_*"),
        *(Obligation("induction", TRAINING, function) for function in
          ("lemma_select_pair_is_a_fold", "lemma_training_loop_is_a_fold", "lemma_largest_count_step",
           "lemma_maxima_step")),
        _spec("lemma_training"), _spec("lemma_training_unbounded"))),
    Proof("prop-bpe-training-termination(variant)", EVERY_SIZE,
          "induction on the words of the corpus: the variant T − K drops by Σ rep, by at least 1 when the pair"
          " occurs, never below 0; and over the iterations: v_j ≤ v_0 − j",
          (Obligation("induction", INDUCTION, "lemma_corpus_empty"), Obligation("induction", INDUCTION,
           "lemma_corpus_step"), Obligation("induction", INDUCTION, "lemma_training_iteration"))),
    Proof("prop-bpe-training-termination", EVERY_SIZE,
          "the variant above, and the pair training picks occurs (N_j ≥ 1): select_pair returns an entry of the"
          " table (its loops' steps), every entry counts ≥ 1 a pair listed inside a word (the grouping step), such a"
          " pair is counted in its word (induction on its position) and so in the corpus (induction over the"
          " words); the loops checked to be folds", (
              *(_induction(step) for step in _MERGE_STEPS), _WELL_FOUNDED,
              *(Obligation("induction", INDUCTION, function) for function in
                ("lemma_corpus_empty", "lemma_corpus_step", "lemma_training_iteration")),
              Obligation("induction", TRAINING, "lemma_*"),
              _spec("lemma_training"), _spec("lemma_training_unbounded"))),
    Proof("prop-bpe-training-cost", EVERY_SIZE,
          "the steps counted where the work is done: the start's, the count's, the selection's loops add one per"
          " symbol, pair, entry (their bodies' steps); M_r on x ≠ ε takes at most |x| steps (strong induction on"
          " |x|), so at most T_j ≤ N per application (induction over the words); over the iterations cost ≤ N +"
          " 4jN; the loops checked to be folds", (
              Obligation("induction", TRAINING, "lemma_*_is_a_fold"), Obligation("induction", TRAINING_COST, "lemma_*"),
              Obligation("induction", INDUCTION, "lemma_corpus_step", ("variant_never_grows",)),
              _spec("lemma_training"), _spec("lemma_training_unbounded"))),
    Proof("variants(rule-rank = sequential)", EVERY_SIZE, _ON_RULE_RANK, (*_RULE_RANK,
                                                                        _spec("lemma_rule_rank_is_sequential"))),
    Proof("impl: merge step = M_r", EVERY_SIZE, _ON_MERGE_LIST,
          (*_engine(ENGINE_MERGE_STEP, "lemma_merge_list_is_a_loop_on_positions", "lemma_merge_list_base",
                    "lemma_merge_list_step_last", "lemma_merge_list_step"),
           Obligation("equivalence.impl_merge", EQUIVALENCE, "impl_merge_equals_spec"),
           Obligation("impl.lemma_impl_merge_step", IMPL, "lemma_impl_merge_step"),
           Obligation("impl.merge_loops", IMPL, "lemma_merge_steps_on_a_run", ("merge_step_merges_run",)))),
    Proof("impl: merge loops on runs = enc_R", "bounded",
          "equality with the specification over all paths within the bounds",
          (Obligation("equivalence.engine_runs", EQUIVALENCE, "engine_flat_on_runs_equals_spec"),
           Obligation("equivalence.engine_runs", EQUIVALENCE, "engine_heap_on_runs_equals_spec"),
           Obligation("impl.merge_loops", IMPL, "lemma_merge_steps_on_a_run",
                      ("flat_loop_merges_run", "heap_loop_merges_run")),
           Obligation("impl.merge_loops", IMPL, "lemma_loops_skip_stale_pairs"))),
    Proof("impl: flat loop with one rule = M_r", EVERY_SIZE, _ON_FLAT_LOOP,
          _engine(ENGINE_MERGE_LOOP, "lemma_flat_loop_is_quoted", "lemma_flat_loop_base", "lemma_flat_loop_step_skip",
                  "lemma_flat_loop_step_match")),
    Proof("impl: flat loop = enc_R", EVERY_SIZE, _ON_FLAT_LOOP_RULES, (
        *_engine(ENGINE_RULE_RANK, "lemma_*"), *_engine(ENGINE_MERGE_LOOP, "lemma_flat_loop_is_quoted"), *_RULE_RANK,
        Obligation("equivalence.engine_runs", EQUIVALENCE, "engine_flat_on_runs_equals_spec"))),
    Proof("impl: heap loop = enc_R", EVERY_SIZE, _ON_HEAP_LOOP, (
        *_engine(ENGINE_HEAP_LOOP, "lemma_*"), *_engine(ENGINE_RULE_RANK, "lemma_rank_code_*"), *_RULE_RANK,
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
        Obligation("induction.planted", PLANTED_STEPS, "passes_*"),
        Obligation("induction.planted", PLANTED_HEAP_STEPS, "planted_*", expect="refuted"),
        Obligation("induction.planted", PLANTED_HEAP_STEPS, "passes_*")), kind="planted"),
    Proof("planted: wrong implementations", "bounded", "each equality must be refuted", (
        Obligation("equivalence.planted", EQUIVALENCE, "planted_merge_equals_spec", expect="refuted"),
        Obligation("equivalence.planted", EQUIVALENCE, "planted_encode_equals_spec", expect="refuted")),
        kind="planted"),
)
