"""The mutant catalogue follows the code, and a few representative mutants die by a fast gate in every test run.

``proofs_tests/planted/mutants.py`` holds the catalogue and runs the full matrix
(``python -m bpeproof.proofs_tests.planted.mutants --all``).
Here, every mutant's patch must still apply to the current sources; and a few spec mutants (eight of them changes past
every size the bounded contracts reach, which only a proof for every size refutes), four mutants of the engine's
Python paths (two past the bounds of their contracts) and one of each C loop are applied to scratch copies of the
tree, where a focused gate must fail on each: a single small CrossHair run that must find a counterexample to the
mutated claim, or one test of the differential suites.  Each such test must pass on the unmutated copy first (one
pytest run for all of them), so that a kill is the mutant's doing and not a broken copy's.  The copies run two at a
time.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from bpeproof.impl import encoder, trainer
from bpeproof.proofs_tests.planted import mutants
from bpeproof.proofs_tests.proofs.crosshair_runs import (
    ENGINE_HEAP_LOOP,
    ENGINE_RULE_RANK,
    EQUIVALENCE,
    MERGE_DIRECTION,
    PAIR_COUNTS,
    RULE_LISTS,
    RULE_RANK,
    SELECTION,
    SPEC,
    TRAINING,
)

# --- the catalogue follows the code -------------------------------------------------------------------------------


@pytest.mark.parametrize("mutant", mutants.MUTANTS, ids=lambda m: m.name)
def test_every_patch_still_applies(mutant: mutants.Mutant) -> None:
    texts = mutants.patched(mutant, mutants.ROOT)
    assert texts, mutant.name
    for path, text in texts.items():
        assert text != (mutants.ROOT / path).read_text(encoding="utf-8"), (mutant.name, path)


def test_catalogue_covers_every_kind_and_names_are_unique() -> None:
    names = [m.name for m in mutants.MUTANTS]
    assert len(names) == len(set(names))
    assert {m.kind for m in mutants.MUTANTS} == set(mutants.GATES) == {"spec", "impl", "c"}
    # The C mutants patch C sources only, the others Python sources only: each kind's gates can see its mutants.
    for m in mutants.MUTANTS:
        for choice in m.choices:
            assert all((patch.path in mutants.C_SOURCES) == (m.kind == "c") for patch in choice), m.name


def test_gates_are_excused_only_from_named_mutants_of_their_kind() -> None:
    """A gate is excused from a mutant only by name, and only from mutants of a kind it guards: the small-scope check
    from the word counter's and from one partition mutant, and from no mutant of the merge loops."""
    for gate, names in mutants.NOT_GATED.items():
        for name in names:
            assert gate in mutants.GATES[mutants.mutant(name).kind], (gate, name)
    excused = {m.name for m in mutants.MUTANTS if m.kind == "c" and not mutants.gate_applies("small scope", m)}
    assert excused == {"c-count-new-word-zero", "c-count-kind-blind", "c-train-partitions-apart"}
    assert mutants.gate_applies("small scope", None)


def test_help_and_unknown_options_run_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert mutants.main(["--help"]) == 0
    assert "python -m bpeproof.proofs_tests.planted.mutants" in capsys.readouterr().out
    assert mutants.main(["--al"]) == 2
    assert "unknown options: --al" in capsys.readouterr().err


def test_a_stale_patch_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "bpe.py").write_text("nothing to patch\n", encoding="utf-8")
    with pytest.raises(mutants.PatchError, match="spec-ties-largest"):
        mutants.patched(mutants.mutant("spec-ties-largest"), tmp_path)


# --- a fast gate kills each representative mutant ----------------------------------------------------------------


@dataclass(frozen=True)
class FastKill:
    """A mutant and the focused gate that must kill it: CrossHair on one function, or one pytest node."""

    mutant: str
    crosshair: str | None = None  # the contract function that must be refuted
    test: str | None = None  # the pytest node that must fail with an assertion


#: Budget of a single CrossHair run: the counterexamples below are found in a second or two.
CROSSHAIR_BUDGET = 20

FAST_KILLS = (
    FastKill("spec-merge-right-to-left", crosshair=f"{SPEC}.lemma_run_length"),
    FastKill("spec-ties-largest", test="proofs_tests/tests/spec/test_article_examples.py::test_training_trace_table"),
    # Changes past every bounded size, refuted by the proofs for every size: the step S_{k+1}(t) = S_k(t) of the
    # spellings (at k = 4), and the checks that V_m, def-bpe step 2 and the training loop are the folds the
    # inductions over the rules, the words and the merges go through.
    FastKill("spec-symbols-stride", crosshair=f"{RULE_LISTS}.lemma_spelling_step"),
    FastKill("spec-vocabulary-first-5", crosshair=f"{RULE_LISTS}.lemma_vocabulary_is_a_fold"),
    FastKill("spec-count-pairs-first-5", crosshair=f"{TRAINING}.lemma_count_pairs_is_a_fold"),
    FastKill("spec-train-first-5-words", crosshair=f"{TRAINING}.lemma_training_loop_is_a_fold"),
    # M_r from the right past 8 tokens, step 2 off by one past 5 entries, ties to the largest past 5 tokens: refuted
    # by the steps of the proofs of the direction of M_r, of step 2's counts and of steps 3–5, which run the code.
    FastKill("spec-merge-right-past-8", crosshair=f"{MERGE_DIRECTION}.lemma_first_at_start"),
    FastKill("spec-count-pairs-past-5-entries", crosshair=f"{PAIR_COUNTS}.lemma_grouping_counts_step"),
    FastKill("spec-ties-largest-long-words", crosshair=f"{SELECTION}.lemma_iteration_step"),
    # Variant (ii) merging the rightmost of the earliest rule's pairs past 6 tokens: refuted by the step of the scan
    # of positions of its proof for every size, which runs the code.
    FastKill("spec-rule-rank-rightmost-past-6", crosshair=f"{RULE_RANK}.lemma_rank_scan_step"),
    # The flat loop leaving a stale rank left of a join past 8 units: refuted by its step with a whole rule list.
    FastKill("impl-short-left-stale-past-8", crosshair=f"{ENGINE_RULE_RANK}.lemma_flat_loop_joins_the_least"),
    # The heap loop pushing no entry for the pair left of a join past 8 units: refuted by its join step.
    FastKill("impl-long-left-push-past-8", crosshair=f"{ENGINE_HEAP_LOOP}.lemma_heap_loop_joins_the_least"),
    FastKill("impl-apply-rule-skip", crosshair=f"{EQUIVALENCE}.impl_merge_equals_spec"),
    FastKill("impl-short-rightmost",
             test="proofs_tests/tests/impl/test_impl_encoder.py::test_repeated_pair_never_fires"),
    FastKill("c-enc-short-rightmost", test="proofs_tests/tests/impl/test_impl_encoder.py::test_c_runs_of_one_byte"),
    FastKill("c-train-ties-largest", test="proofs_tests/tests/impl/test_impl_trainer.py::test_article_trace"),
)


def _control(tree: Path) -> mutants.Outcome:
    """Every focused pytest gate on the unmutated copy, in one run."""
    tests = [kill.test for kill in FAST_KILLS if kill.test is not None]
    return mutants.run_in(tree, mutants.pytest_command(*tests, timeout=60), 300)


def _kill(kill: FastKill) -> mutants.Outcome:
    """Apply the mutant to a fresh copy (rebuilding a C extension it patches) and run its focused gate there."""
    with tempfile.TemporaryDirectory(prefix="bpeproof-mutant-") as scratch:
        tree = mutants.scratch_copy(Path(scratch))
        try:
            mutants.apply(mutants.mutant(kill.mutant), tree)
        except mutants.BuildError as error:
            return mutants.Outcome(None, 0.0, f"the mutant did not build: {error}")
        if kill.crosshair is not None:
            command = (sys.executable, "-m", "crosshair", "check", "--report_all",
                       f"--per_condition_timeout={CROSSHAIR_BUDGET}", kill.crosshair)
            return mutants.run_in(tree, command, 300)
        assert kill.test is not None
        return mutants.run_in(tree, mutants.pytest_command(kill.test, timeout=60), 300)


@pytest.fixture(scope="module")
def outcomes() -> Iterator[dict[str, Future[mutants.Outcome]]]:
    """The control run and every mutant's gate, started together, two at a time."""
    with tempfile.TemporaryDirectory(prefix="bpeproof-control-") as scratch:
        tree = mutants.scratch_copy(Path(scratch))
        with ThreadPoolExecutor(max_workers=2) as pool:
            started = {"control": pool.submit(_control, tree)}
            started.update({kill.mutant: pool.submit(_kill, kill) for kill in FAST_KILLS})
            yield started


@pytest.mark.timeout(600)
def test_focused_gates_pass_unmutated(outcomes: dict[str, Future[mutants.Outcome]]) -> None:
    done = outcomes["control"].result()
    assert done.returncode == 0, done.output


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kill", FAST_KILLS, ids=lambda k: k.mutant)
def test_fast_gate_kills(kill: FastKill, outcomes: dict[str, Future[mutants.Outcome]]) -> None:
    if mutants.mutant(kill.mutant).kind == "c" and not (encoder.HAVE_C_LOOP and trainer.HAVE_C_LOOP):
        pytest.skip("the C extensions are not built here, so a C mutant cannot be built either")
    done = outcomes[kill.mutant].result()
    if kill.crosshair is not None:
        # A counterexample to the mutated claim (exit 1), not a crash or a usage error (exit 2).
        function = kill.crosshair.rsplit(".", 1)[1]
        assert done.returncode == 1, done.output
        assert f"error: false when calling {function}(" in done.output, done.output
    else:
        assert kill.test is not None
        # The focused test fails on its assertion: not a collection error, not a timeout.
        assert done.returncode == 1, done.output
        assert f"FAILED {kill.test}" in done.output, done.output
        assert "AssertionError" in done.output or "assert " in done.output, done.output
        assert "Timeout" not in done.output, done.output
