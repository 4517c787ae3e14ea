"""CrossHair on the implementation: no difference from the spec on small inputs, and live canaries.

* ``crosshair diffbehavior`` compares the spec's and the implementation's merge step and encoder
  (``proofs_tests/equivalence.py``) and must find no difference, while the same command with the same budget
  must find the difference of a planted right-to-left merge.
* ``crosshair check`` on the equalities written as contracts: the merge step must be confirmed over all paths,
  the encoder must have no counterexample, and the planted variants must be refuted.
* ``crosshair check`` on ``impl.contracts`` (the lemma's claims on the implementation's own functions) must
  find no counterexample.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from proofs_tests import equivalence
from proofs_tests.test_crosshair_gate import condition_lines, run_gate, verdicts

#: CPU seconds per diffbehavior run; the planted right-to-left encoder is found at about 30–60 s.
DIFF_BUDGET = 90

#: CPU seconds per condition where CrossHair can only search (dict-based tables defeat exhaustive proof).
SEARCH_BUDGET = 30

E = "proofs_tests.equivalence"


def diffbehavior(first: str, second: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "crosshair", "diffbehavior", f"--per_condition_timeout={DIFF_BUDGET}",
         f"{E}.{first}", f"{E}.{second}"],
        capture_output=True, text=True, timeout=1800, check=False,
    )


def test_diffbehavior_spec_against_impl_with_canaries() -> None:
    pairs = [
        ("spec_merge", "impl_merge"),
        ("spec_merge", "right_to_left_merge"),
        ("spec_encode", "impl_encode"),
        ("spec_encode", "right_to_left_encode"),
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(pairs, pool.map(lambda pair: diffbehavior(*pair), pairs), strict=True))
    for pair, result in results.items():
        output = result.stdout + result.stderr
        if pair[1].startswith("impl"):
            assert result.returncode == 0 and "No differences found" in output, (pair, output)
        else:
            assert result.returncode == 1 and "returns" in output, (pair, output)


def test_equalities_as_contracts() -> None:
    result = run_gate(E, timeout=SEARCH_BUDGET)
    output = result.stdout + result.stderr
    path = Path(equivalence.__file__).resolve()
    found = verdicts(output, path)
    lines = sorted(condition_lines(path))
    by_function = dict(zip(["impl_merge", "impl_encode", "planted_merge", "planted_encode"], lines, strict=True))
    assert found.get(by_function["impl_merge"]) == "info: Confirmed over all paths.", output
    assert found.get(by_function["impl_encode"], "").startswith("info:"), output  # no counterexample
    assert found.get(by_function["planted_merge"], "").startswith("error: false when calling"), output
    assert found.get(by_function["planted_encode"], "").startswith("error: false when calling"), output


def test_implementation_contracts_have_no_counterexample() -> None:
    import impl.contracts

    result = run_gate("impl.contracts", timeout=SEARCH_BUDGET)
    output = result.stdout + result.stderr
    path = Path(impl.contracts.__file__).resolve()
    found = verdicts(output, path)
    assert set(found) == condition_lines(path), output
    assert all(verdict.startswith("info:") for verdict in found.values()), output
    assert result.returncode == 0, output
