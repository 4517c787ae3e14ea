"""CrossHair on the implementation's production Python paths: no difference from the spec, and live canaries.

* ``crosshair check`` on the equalities of ``proofs_tests/proofs/equivalence.py``: the trainer's merge step is confirmed
  equal to M_r over all paths, the engine's two merge loops equal to enc_R on runs under every list of three
  rules over one byte (the encoder's pair table and whole-token shortcut, a finite enumeration, are checked by a
  loop in ``test_impl_encoder.py``); the ``strings`` trainer, whose dictionaries keep CrossHair from
  exhausting the paths, must have no counterexample; the planted right-to-left variants must be refuted with the
  same budget.  (The searches on the encoder's dictionary paths found none of the encoder mutants of
  ``mutants.py`` in 30 s each, so they run outside CI.)
* ``crosshair check`` on ``bpeproof.impl.contracts``: the lemma's claims on the trainer's list-based merge step, and
  the merge loops and that step on runs of one byte, are confirmed over all paths.  The other runs (the
  implementation's own round trip and N − K bound, and ``crosshair diffbehavior``) are outside CI:
  ``python -m bpeproof.proofs_tests.proofs.crosshair_runs --all``.
"""

from __future__ import annotations

import pytest

from bpeproof.proofs_tests.proofs import crosshair_runs as runs

TIMEOUT = runs.RUN_TIMEOUT + 60


def _verdicts(name: str, module: str, function: str) -> list[str]:
    """CrossHair's verdict on each condition of ``function``, "no verdict" where it reported none."""
    path = runs.module_file(module)
    found = runs.verdicts(runs.result(name).output, path)
    lines = sorted(runs.condition_lines(path, function))
    assert lines, function
    return [found.get(line, "no verdict") for line in lines]


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize(
    ("name", "module", "function"),
    [
        ("equivalence.impl_merge", runs.EQUIVALENCE, "impl_merge_equals_spec"),
        ("equivalence.engine_runs", runs.EQUIVALENCE, "engine_flat_on_runs_equals_spec"),
        ("equivalence.engine_runs", runs.EQUIVALENCE, "engine_heap_on_runs_equals_spec"),
        ("impl.lemma_impl_merge_step", runs.IMPL, "lemma_impl_merge_step"),
        ("impl.merge_loops", runs.IMPL, "lemma_merge_steps_on_a_run"),
        ("impl.merge_loops", runs.IMPL, "lemma_loops_skip_stale_pairs"),
    ],
)
def test_list_based_paths_confirmed(name: str, module: str, function: str) -> None:
    verdicts = _verdicts(name, module, function)
    assert all(v == runs.CONFIRMED for v in verdicts), (verdicts, runs.result(name).output)


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize(
    ("name", "module", "function"),
    [
        ("equivalence.impl_train", runs.EQUIVALENCE, "impl_train_equals_spec"),
    ],
)
def test_dictionary_paths_have_no_counterexample(name: str, module: str, function: str) -> None:
    verdicts = _verdicts(name, module, function)
    assert all(v.startswith("info:") for v in verdicts), (verdicts, runs.result(name).output)
    assert runs.result(name).returncode == 0


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("function", ["planted_merge_equals_spec", "planted_encode_equals_spec"])
def test_planted_equalities_refuted(function: str) -> None:
    verdicts = _verdicts("equivalence.planted", runs.EQUIVALENCE, function)
    assert all(v.startswith("error: false when calling") for v in verdicts), verdicts
