"""``crosshair watch spec impl`` reports a planted bug, with its contract and counterexample, within its budget.

Watch analyses the files of ``spec/`` and ``impl/`` one at a time, each in a new worker process (one worker on 2
cores), and shows a file's reports only when that file's analysis has ended; on its first pass each condition
stops after five iterations that reach no new code.  So every contract it reaches must end quickly on any input: a
contract that never ended (training with no bound on the merges, on a bug that keeps the chosen pair from being
merged) held the only worker, and watch reported nothing for minutes.

Here watch's worker analysis (``crosshair.watcher.pool_worker_process_item``, with the options of watch's first
pass) runs on the two modules of contracts that watch reaches (``spec/contracts.py``, ``impl/contracts.py``) in a
scratch copy of the tree with two bugs planted: M_r's match case testing (a, a) instead of (a, b)
(``spec/merge.py``), and the engine's heap loop merging a pair whose rank changed since it was pushed
(``impl/merge_loop.py``).  Each module must report a counterexample, naming its contract, and both within the
CPU budget.  The worker is called directly rather than through ``crosshair watch``, which lowers its workers'
priority (``nice 10``), so that the test suite's own load cannot starve it past the deadline.  The other files of
``spec/`` and ``impl/`` hold no contract: watch spends on each only the start of a worker (about 0.25 CPU seconds,
importing CrossHair), which this project cannot change; ``docs/proofs.md`` gives the measured times of the whole
loop.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bpeproof.proofs_tests.planted import mutants

#: The contract modules watch reaches in ``spec/`` and ``impl/``.
MODULES = ("spec/contracts.py", "impl/contracts.py")

#: The issue's bug: M_r's match case compares (t1, t2) with (a, a).
_MATCH = "    if (t1, t2) == (rule.a, rule.{}):\n        return [rule.c] + m_r(rule, u, steps)\n"
MATCH_A_A = mutants.Mutant("spec-merge-pair-a-a", "M_r's match case tests (a, a) instead of (a, b)", "spec",
                           ((mutants.Patch("spec/merge.py", _MATCH.format("b"), _MATCH.format("a")),),))
PLANTED = (MATCH_A_A, mutants.mutant("impl-long-no-stale-check"))

#: CPU seconds both modules' analyses may take together.  Of the minute a report may take, starting the workers of
#: the other 92 files takes about 25 CPU seconds; both modules took 7 (6 the spec's), where a contract that never
#: ended took forever.
CPU_BUDGET = 20.0

#: Wall seconds after which an analysis is stopped: far above its CPU budget on a loaded machine, so that only an
#: analysis that does not end fails by it.
DEADLINE = 120.0

#: One worker as watch starts it for a file (``pool_worker_main``, without its ``nice``): the options of watch's
#: first pass, the audit wall, then the analysis; each report printed as ``crosshair check`` prints it.
WORKER = """
import sys, time
from pathlib import Path
from crosshair.auditwall import engage_auditwall
from crosshair.options import DEFAULT_OPTIONS, AnalysisOptionSet
from crosshair.statespace import MessageType
from crosshair.watcher import pool_worker_process_item

options = AnalysisOptionSet(max_uninteresting_iterations=DEFAULT_OPTIONS.get_max_uninteresting_iterations())
engage_auditwall(DEFAULT_OPTIONS.overlay(options).unblock)
stats, messages = pool_worker_process_item((Path(sys.argv[1]), options, time.time() + 3600))
for message in messages:
    if message.state > MessageType.PRE_UNSAT:
        print(f"{message.filename}:{message.line}: error: {message.message}", flush=True)
print(f"analyzed {stats['num_paths']} paths", flush=True)
"""

#: A report: the condition's file and line, then the call that breaks it.
REPORT = re.compile(r"^(/\S+\.py):(\d+): error: .*when calling (\w+)\(", re.MULTILINE)


def _log(tree: Path, module: str) -> Path:
    return tree / f"{module.replace('/', '-')}.log"


def analyse(tree: Path, module: str) -> subprocess.Popen[bytes]:
    """Start watch's worker analysis of ``module`` of ``tree``, in its own process group, its output in a file."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    with _log(tree, module).open("wb") as log:
        return subprocess.Popen([sys.executable, "-c", WORKER, str(tree / module)], cwd=tree, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)


def finish(process: subprocess.Popen[bytes], deadline: float) -> tuple[bool, float]:
    """Wait for an analysis until ``deadline`` (monotonic seconds), then kill its process group and reap it: whether
    it ended by itself, and its CPU seconds."""
    ended = True
    pid, status, usage = os.wait4(process.pid, os.WNOHANG)
    while not pid:
        if time.monotonic() >= deadline:
            ended = False
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(process.pid, 0)
            break
        time.sleep(0.1)
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
    process.returncode = os.waitstatus_to_exitcode(status)
    with contextlib.suppress(ProcessLookupError):  # nothing it started may outlive it
        os.killpg(process.pid, signal.SIGKILL)
    return ended, usage.ru_utime + usage.ru_stime


def reports(output: str, tree: Path) -> dict[str, list[str]]:
    """Module (relative to ``tree``) → the contracts of its reported counterexamples."""
    found: dict[str, list[str]] = {}
    for match in REPORT.finditer(output):
        path = Path(match.group(1))
        if path.is_relative_to(tree):
            found.setdefault(path.relative_to(tree).as_posix(), []).append(match.group(3))
    return found


@pytest.mark.timeout(DEADLINE + 60)
def test_watch_reports_each_planted_bug_within_its_budget() -> None:
    with tempfile.TemporaryDirectory(prefix="bpeproof-watch-") as scratch:
        tree = mutants.scratch_copy(Path(scratch).resolve())  # resolved: CrossHair names files by their real path
        for mutant in PLANTED:
            mutants.apply(mutant, tree)
        deadline = time.monotonic() + DEADLINE
        started: dict[str, subprocess.Popen[bytes]] = {}
        try:
            # Both at once: the budget counts CPU seconds, so running them side by side only halves the wait.
            for module in MODULES:
                started[module] = analyse(tree, module)
            done = {module: finish(process, deadline) for module, process in started.items()}
        finally:
            for process in started.values():
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
        outputs = {module: _log(tree, module).read_text(encoding="utf-8", errors="replace") for module in MODULES}
        missing: list[str] = []
        for module in MODULES:
            ended, _cpu = done[module]
            found = reports(outputs[module], tree).get(module, [])
            if not ended:
                missing.append(f"the analysis of {module} did not end within {DEADLINE} s")
            elif not found or not all(contract.startswith("lemma_") for contract in found):
                missing.append(f"no counterexample to a lemma of {module}: {outputs[module]}")
        assert not missing, "\n".join(missing)
        cpu = sum(seconds for _ended, seconds in done.values())
        assert cpu <= CPU_BUDGET, f"{cpu:.1f} CPU s: " + ", ".join(f"{m} {c:.1f}" for m, (_e, c) in done.items())


def test_reports_are_read_as_the_worker_prints_them(tmp_path: Path) -> None:
    """The parser finds a report of a module of the tree, and none of another tree."""
    printed = (f"{tmp_path}/spec/contracts.py:89: error: false when calling lemma_merge_step_v2(0, 0, 205, 206, [6])\n"
               f"{tmp_path}/impl/contracts.py:162: error: false when calling lemma_loops_skip_stale_pairs(0, 4)\n"
               "/elsewhere/spec/contracts.py:12: error: false when calling lemma_x(1)\nanalyzed 9 paths\n")
    assert reports(printed, tmp_path) == {"spec/contracts.py": ["lemma_merge_step_v2"],
                                          "impl/contracts.py": ["lemma_loops_skip_stale_pairs"]}
