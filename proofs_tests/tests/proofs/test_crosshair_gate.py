"""The CrossHair gate on the specification: every bounded contract is proved, every planted false claim refuted.

CrossHair answers "Confirmed over all paths" only when it has explored every path within the preconditions'
bounds; that answer is what the gate requires of every condition in ``bpeproof.spec.contracts`` and of training with
no bound on the merges (``bpeproof.proofs_tests.proofs.unbounded_training``).  Every condition of
``proofs_tests/planted/false_claims.py`` must be refuted by the same command with the same budget:
otherwise the runs prove nothing (a budget too small, a condition never evaluated, …).  The runs are started
together and run in parallel (``bpeproof.proofs_tests.proofs.crosshair_runs``); each test waits for its own.
"""

from __future__ import annotations

import pytest

from bpeproof.proofs_tests.proofs import crosshair_runs as runs

#: The spec's runs, the module of the lemmas each one checks and their functions; together they must cover every
#: lemma of both modules (training with no bound on the merges is kept out of spec/, which crosshair watch reaches).
SPEC_RUNS: dict[str, tuple[str, list[str]]] = {
    "spec.lemma_training": (runs.SPEC, ["lemma_training"]),
    "spec.lemma_training_unbounded": (runs.UNBOUNDED_TRAINING, ["lemma_training_unbounded"]),
    "spec.lemma_count_pairs": (runs.SPEC, ["lemma_count_pairs"]),
    "spec.lemma_merge_step": (runs.SPEC, ["lemma_merge_step"]),
    "spec.lemma_merge_step_v2": (runs.SPEC, ["lemma_merge_step_v2"]),
    "spec.others": (runs.SPEC, [
        "lemma_decode_concatenates", "lemma_roundtrip", "lemma_vocabulary_size", "lemma_rule_rank_is_sequential",
        "lemma_run_length",
    ]),
}


def test_every_spec_lemma_has_a_run() -> None:
    total = 0
    for module in (runs.SPEC, runs.UNBOUNDED_TRAINING):
        path = runs.module_file(module)
        covered = set().union(*(runs.condition_lines(path, f) for mod, functions in SPEC_RUNS.values()
                                for f in functions if mod == module))
        assert covered == runs.condition_lines(path), module
        total += len(covered)
    assert total >= 24, "the spec's contracts lost conditions"


@pytest.mark.timeout(runs.RUN_TIMEOUT + 60)
@pytest.mark.parametrize("name", sorted(SPEC_RUNS))
def test_spec_contracts_confirmed_over_all_paths(name: str) -> None:
    module, functions = SPEC_RUNS[name]
    path = runs.module_file(module)
    done = runs.result(name)
    expected = set().union(*(runs.condition_lines(path, f) for f in functions))
    found = runs.verdicts(done.output, path)
    not_confirmed = {
        line: found.get(line, "no verdict") for line in sorted(expected) if found.get(line) != runs.CONFIRMED
    }
    assert not not_confirmed, f"spec conditions not confirmed: {not_confirmed}\n{done.output}"
    assert done.returncode == 0, done.output


@pytest.mark.timeout(runs.RUN_TIMEOUT + 60)
def test_planted_false_claims_refuted() -> None:
    path = runs.module_file(runs.PLANTED)
    done = runs.result("planted")
    expected = runs.condition_lines(path)
    assert len(expected) >= 3
    found = runs.verdicts(done.output, path)
    not_refuted = {
        line: found.get(line, "no verdict")
        for line in sorted(expected)
        if not found.get(line, "").startswith("error: false when calling")
    }
    assert not not_refuted, f"planted false claims not refuted: {not_refuted}\n{done.output}"
    # A counterexample makes crosshair exit 1; anything else (a crash, a usage error) is a broken gate.
    assert done.returncode == 1, done.output
