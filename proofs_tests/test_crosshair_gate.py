"""The CrossHair gate: the spec's bounded contracts are proved, and planted false claims are refuted, in one run.

CrossHair answers "Confirmed over all paths" only when it has explored every
path within the preconditions' bounds; that answer is what the gate requires
of every condition in ``spec.contracts``.  The same command must report a
counterexample for every condition of the planted module: otherwise the run
proved nothing (a budget too small, a condition never evaluated, …).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import spec.contracts
from proofs_tests.fixtures import planted_false_claims

#: Per-condition budget in CPU seconds; every condition confirms well within it on 2 cores.
PER_CONDITION_TIMEOUT = 120


def condition_lines(module_file: Path) -> set[int]:
    """The line numbers of the ``post`` conditions in a module's docstrings."""
    lines = module_file.read_text(encoding="utf-8").splitlines()
    return {number for number, line in enumerate(lines, start=1) if re.match(r"\s*post(\[\])?:", line)}


def run_gate(*modules: str, timeout: int = PER_CONDITION_TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "crosshair", "check", "--report_all", f"--per_condition_timeout={timeout}", *modules],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )


def verdicts(output: str, module_file: Path) -> dict[int, str]:
    """Line number → CrossHair's verdict, for the lines it reported in ``module_file``."""
    found: dict[int, str] = {}
    pattern = re.compile(rf"^{re.escape(str(module_file))}:(\d+): (\w+): (.*)$")
    for line in output.splitlines():
        match = pattern.match(line)
        if match:
            found[int(match.group(1))] = f"{match.group(2)}: {match.group(3)}"
    return found


def test_spec_contracts_confirmed_and_planted_claims_refuted() -> None:
    spec_file = Path(spec.contracts.__file__).resolve()
    planted_file = Path(planted_false_claims.__file__).resolve()
    result = run_gate("spec.contracts", "proofs_tests.fixtures.planted_false_claims")
    output = result.stdout + result.stderr

    spec_expected = condition_lines(spec_file)
    planted_expected = condition_lines(planted_file)
    assert len(spec_expected) >= 13, "the spec's contracts lost conditions"
    assert len(planted_expected) >= 2

    spec_verdicts = verdicts(output, spec_file)
    not_confirmed = {
        line: spec_verdicts.get(line, "no verdict")
        for line in sorted(spec_expected)
        if spec_verdicts.get(line) != "info: Confirmed over all paths."
    }
    assert not not_confirmed, f"spec conditions not confirmed: {not_confirmed}\n{output}"

    planted_verdicts = verdicts(output, planted_file)
    not_refuted = {
        line: planted_verdicts.get(line, "no verdict")
        for line in sorted(planted_expected)
        if not planted_verdicts.get(line, "").startswith("error: false when calling")
    }
    assert not not_refuted, f"planted false claims not refuted: {not_refuted}\n{output}"
    # A counterexample makes crosshair exit 1; anything else (a crash, a usage error) is a broken gate.
    assert result.returncode == 1, output
