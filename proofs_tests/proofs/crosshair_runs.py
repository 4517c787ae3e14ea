"""Every CrossHair run of the test suite, started together and run in parallel, one process per target.

The first test that needs a result starts all runs on a pool of ``os.cpu_count()`` worker threads (each run is a
``crosshair`` subprocess, so they use every core), longest first; each test then waits only for its own run.
CrossHair's per-condition budgets count CPU seconds, so the verdicts do not depend on how loaded the machine is.
``python -m bpeproof.proofs_tests.proofs.crosshair_runs [--all]`` runs them all (with ``--all``, also the runs kept out
of CI)
and prints each verdict.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

#: CPU seconds per condition of a bounded contract: every one confirms well within it on 2 cores.
PROOF_BUDGET = 120

#: CPU seconds per condition where CrossHair can only search (dictionary-based tables defeat exhaustive proof).  The
#: catalogue's mutants of the ``strings`` trainer are found within 1.5 s; 30 s found nothing more.
SEARCH_BUDGET = 10

#: CPU seconds per ``diffbehavior`` run; it always spends its whole budget.
DIFF_BUDGET = 30

#: Wall-clock limit of one run, far above its budgets even on a loaded machine.
RUN_TIMEOUT = 900

SPEC = "bpeproof.spec.contracts"
#: Training with no bound on the merges: out of ``spec/``, where ``crosshair watch spec impl`` would hang on it.
UNBOUNDED_TRAINING = "bpeproof.proofs_tests.proofs.unbounded_training"
PLANTED = "bpeproof.proofs_tests.planted.false_claims"
INDUCTION = "bpeproof.proofs_tests.proofs.induction"
RULE_LISTS = "bpeproof.proofs_tests.proofs.rule_lists"
TOKEN_LISTS = "bpeproof.proofs_tests.proofs.token_lists"
TRAINING = "bpeproof.proofs_tests.proofs.training"
TRAINING_COST = "bpeproof.proofs_tests.proofs.training_cost"
PLANTED_STEPS = "bpeproof.proofs_tests.planted.false_steps"
#: The planted false steps of the heap loop's induction (ENGINE_HEAP_LOOP).
PLANTED_HEAP_STEPS = "bpeproof.proofs_tests.planted.false_heap_steps"
#: The direction of M_r, def-bpe step 2's counts and steps 3–5, for every size.
MERGE_DIRECTION = "bpeproof.proofs_tests.proofs.merge_direction"
PAIR_COUNTS = "bpeproof.proofs_tests.proofs.pair_counts"
SELECTION = "bpeproof.proofs_tests.proofs.selection"
#: Variant (ii) of the encoder, the earliest rule first, equal to enc_R for every size.
RULE_RANK = "bpeproof.proofs_tests.proofs.rule_rank"
EQUIVALENCE = "bpeproof.proofs_tests.proofs.equivalence"
IMPL = "bpeproof.impl.contracts"
#: The engine's merge step and flat-list loop equal to M_r for every length (inductions, like those of INDUCTION).
ENGINE_MERGE_STEP = "bpeproof.proofs_tests.proofs.engine_merge_step"
ENGINE_MERGE_LOOP = "bpeproof.proofs_tests.proofs.engine_merge_loop"
#: The flat-list loop with the pair table of a whole rule list equal to enc_R for every size.
ENGINE_RULE_RANK = "bpeproof.proofs_tests.proofs.engine_rule_rank"
#: The heap loop with the pair table of a whole rule list equal to enc_R for every size.
ENGINE_HEAP_LOOP = "bpeproof.proofs_tests.proofs.engine_heap_loop"


@dataclass(frozen=True)
class Run:
    """One CrossHair subprocess: its arguments after ``crosshair``."""

    args: tuple[str, ...]


def _check(budget: int, *targets: str) -> Run:
    return Run(("check", "--report_all", f"--per_condition_timeout={budget}", *targets))


def _diff(first: str, second: str) -> Run:
    return Run(("diffbehavior", f"--per_condition_timeout={DIFF_BUDGET}", f"{EQUIVALENCE}.{first}",
                f"{EQUIVALENCE}.{second}"))


#: Every run, longest first.
RUNS: dict[str, Run] = {
    "spec.lemma_training": _check(PROOF_BUDGET, f"{SPEC}.lemma_training"),
    "spec.lemma_training_unbounded": _check(PROOF_BUDGET, f"{UNBOUNDED_TRAINING}.lemma_training_unbounded"),
    "equivalence.impl_train": _check(SEARCH_BUDGET, f"{EQUIVALENCE}.impl_train_equals_spec"),
    "spec.lemma_count_pairs": _check(PROOF_BUDGET, f"{SPEC}.lemma_count_pairs"),
    "equivalence.engine_runs": _check(
        PROOF_BUDGET, f"{EQUIVALENCE}.engine_flat_on_runs_equals_spec", f"{EQUIVALENCE}.engine_heap_on_runs_equals_spec"
    ),
    "spec.lemma_merge_step": _check(PROOF_BUDGET, f"{SPEC}.lemma_merge_step"),
    "spec.lemma_merge_step_v2": _check(PROOF_BUDGET, f"{SPEC}.lemma_merge_step_v2"),
    "spec.others": _check(
        PROOF_BUDGET, f"{SPEC}.lemma_decode_concatenates", f"{SPEC}.lemma_roundtrip", f"{SPEC}.lemma_vocabulary_size",
        f"{SPEC}.lemma_rule_rank_is_sequential", f"{SPEC}.lemma_run_length",
    ),
    "impl.lemma_impl_merge_step": _check(PROOF_BUDGET, f"{IMPL}.lemma_impl_merge_step"),
    # The engine's merge loops and merge step on runs of one byte: cheap enough for crosshair watch to check too.
    "impl.merge_loops": _check(
        PROOF_BUDGET, f"{IMPL}.lemma_merge_steps_on_a_run", f"{IMPL}.lemma_loops_skip_stale_pairs"
    ),
    "equivalence.impl_merge": _check(PROOF_BUDGET, f"{EQUIVALENCE}.impl_merge_equals_spec"),
    "equivalence.planted": _check(
        SEARCH_BUDGET, f"{EQUIVALENCE}.planted_merge_equals_spec", f"{EQUIVALENCE}.planted_encode_equals_spec"
    ),
    "planted": _check(PROOF_BUDGET, PLANTED),
    # The lemma for every length (bpeproof.proofs_tests.proofs.induction, about 16 CPU seconds), the inductions over
    # the rule list, on token lists and over training that build on it (rule_lists, token_lists, training,
    # training_cost: about 4), and the planted false steps of all of them (about 5).
    # The direction of M_r, step 2's counts and steps 3–5 (merge_direction, pair_counts, selection: about 2 more);
    # the earliest rule first equal to enc_R (rule_rank: about 1 more).
    "induction": _check(PROOF_BUDGET, INDUCTION, RULE_LISTS, TOKEN_LISTS, TRAINING, TRAINING_COST, MERGE_DIRECTION,
                        PAIR_COUNTS, SELECTION, RULE_RANK),
    "induction.planted": _check(PROOF_BUDGET, PLANTED_STEPS, PLANTED_HEAP_STEPS),
    # The engine's merge step (merge_list) and flat-list loop with one rule equal M_r for every length (about 4 CPU s),
    # and both merge loops with a whole rule list equal to enc_R (engine_rule_rank, engine_heap_loop: about 1 more
    # each).
    "induction.engine": _check(PROOF_BUDGET, ENGINE_MERGE_STEP, ENGINE_MERGE_LOOP, ENGINE_RULE_RANK, ENGINE_HEAP_LOOP),
}

#: Runs outside CI (``python -m bpeproof.proofs_tests.proofs.crosshair_runs --all``): the implementation's own lemmas
# on its
#: dictionary-based paths, implied within the bounds by the equalities above and the spec's confirmed lemmas, and
#: ``diffbehavior``, which did not find the planted right-to-left encoder with two rules in 60 s, so it is no gate.
EXTRA_RUNS: dict[str, Run] = {
    # Searches on the encoder's dictionary paths: in 30 CPU s each they found none of the five encoder mutants of
    # ``mutants.py``, which the confirmed equalities above (engine_runs) and the
    # exhaustive pair-table and shortcut tests of test_impl_encoder.py kill, so they are no CI gate.
    "equivalence.impl_encode_word": _check(30, f"{EQUIVALENCE}.impl_encode_word_equals_spec"),
    "equivalence.impl_encode_long": _check(30, f"{EQUIVALENCE}.impl_encode_long_equals_spec"),
    "equivalence.lemma_impl_roundtrip": _check(SEARCH_BUDGET, f"{EQUIVALENCE}.lemma_impl_roundtrip"),
    "equivalence.lemma_impl_training": _check(SEARCH_BUDGET, f"{EQUIVALENCE}.lemma_impl_training"),
    "diff.impl": _diff("spec_encode", "impl_encode"),
    "diff.impl_long": _diff("spec_encode", "impl_encode_heap"),
    "diff.impl_train": _diff("spec_train_words", "impl_train_words"),
    "diff.planted": _diff("spec_encode", "right_to_left_encode"),
}

#: Which runs a test module needs; a module's first result starts all of its group, in parallel.
GROUPS: dict[str, tuple[str, ...]] = {
    "spec": tuple(name for name in RUNS if name.startswith(("spec.", "planted"))),
    "impl": tuple(name for name in RUNS if name.startswith(("equivalence.", "impl."))),
    "induction": tuple(name for name in RUNS if name.startswith("induction")),
    "extra": tuple(EXTRA_RUNS),
}


@dataclass(frozen=True)
class Result:
    """A finished run: exit code, combined output, wall seconds, and the CPU seconds of the process and its
    children."""

    returncode: int
    output: str
    seconds: float
    cpu_seconds: float = 0.0


#: The CrossHair processes running now, so that ``stop`` can end them.
_running: set[subprocess.Popen[str]] = set()
_lock = threading.Lock()
_stopped = threading.Event()


def run(name: str) -> Result:
    """Run one CrossHair process now (in the current directory, with the current interpreter).

    A run that exceeds ``RUN_TIMEOUT`` (a hang) is killed and reported with exit code -1; after ``stop`` no run
    starts and a running one is ended, also with exit code -1.
    """
    started = time.monotonic()
    command = [sys.executable, "-m", "crosshair", *{**RUNS, **EXTRA_RUNS}[name].args]
    with _lock:
        if _stopped.is_set():
            return Result(-1, "stopped before it started", 0.0)
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        _running.add(process)
    try:
        output, code, cpu = _wait(process)
        if _stopped.is_set() and code < 0:
            output = f"stopped: {output}"
    finally:
        with _lock:
            _running.discard(process)
    return Result(code if code >= 0 else -1, output, time.monotonic() - started, cpu)


def _wait(process: subprocess.Popen[str]) -> tuple[str, int, float]:
    """The process's output, exit code and CPU seconds (its own and its children's, from ``wait4``), killing it
    after ``RUN_TIMEOUT``."""
    assert process.stdout is not None
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.append(process.stdout.read() if process.stdout else ""),
                              daemon=True)
    reader.start()
    reader.join(RUN_TIMEOUT)
    timed_out = reader.is_alive()
    if timed_out:
        process.kill()
        reader.join()
    _pid, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    output = "".join(chunks)
    if timed_out:
        return f"timed out after {RUN_TIMEOUT} s: {output}", -1, usage.ru_utime + usage.ru_stime
    return output, process.returncode, usage.ru_utime + usage.ru_stime


def stop() -> None:
    """End every running CrossHair process and start no more (the session is over; nobody waits for them)."""
    with _lock:
        _stopped.set()
        for process in _running:
            process.kill()


_futures: dict[str, Future[Result]] = {}


def start(group: str, workers: int | None = None) -> None:
    """Start every run of ``group`` (once per process), longest first, on ``workers`` threads (default:
    ``os.cpu_count()``, at least 2)."""
    start_runs(GROUPS[group], workers)


def start_runs(names: Sequence[str], workers: int | None = None) -> None:
    """Start the runs ``names`` that have not started (once per process), in that order, on ``workers`` threads."""
    pending = [name for name in names if name not in _futures and not _served_here(name)]
    if pending:
        pool = ThreadPoolExecutor(max_workers=workers or max(2, os.cpu_count() or 2), thread_name_prefix="crosshair")
        for name in pending:
            _futures[name] = pool.submit(run, name)
        pool.shutdown(wait=False)


def finished(name: str) -> bool:
    """Whether the run ``name`` has finished (here, or in the controller of this pytest-xdist session)."""
    future = _futures.get(name)
    if future is not None:
        return future.done()
    manifest = _manifest()
    return manifest is not None and (manifest.parent / f"{name}.json").exists()


#: The groups a test module needs, by file name; any other ``test_crosshair_*`` module needs all of ``CI_GROUPS``.
TEST_GROUPS: dict[str, tuple[str, ...]] = {
    "test_crosshair_gate.py": ("spec",),
    "test_crosshair_impl.py": ("impl",),
    "test_crosshair_induction.py": ("induction",),
    "test_crosshair_engine_induction.py": ("induction",),
}

#: The groups of the test suite (``extra`` starts only on demand).
CI_GROUPS = ("spec", "impl", "induction")


def groups_for(test_files: set[str]) -> list[str]:
    """The groups the collected test files (by name) need: started together when the tests are collected."""
    needed: list[str] = []
    for file in sorted(test_files):
        if file.startswith("test_crosshair_"):
            for group in TEST_GROUPS.get(file, CI_GROUPS):
                if group not in needed:
                    needed.append(group)
    return needed


#: With pytest-xdist, the controller process runs the CrossHair processes (it starts them when the workers have
#: collected, so that no worker is kept from running tests) and writes each result into this directory, named in
#: the environment the workers inherit; a worker reads the results from there.
RESULTS_VARIABLE = "BPEPROOF_CROSSHAIR_RESULTS"
_MANIFEST = "started.json"
#: Set in the controller, which runs the runs it lists in the manifest (the workers read their results).
_serving = threading.Event()


def serve(group_names: list[str], directory: Path) -> None:
    """Start ``group_names`` here and write each run's result into ``directory`` as it finishes (the controller)."""
    names = [name for group in group_names for name in GROUPS[group]]
    _serving.set()
    _write_json(directory / _MANIFEST, names)
    for group in group_names:
        start(group)
    for name in names:
        _futures[name].add_done_callback(_publisher(directory / f"{name}.json"))


def _publisher(path: Path) -> Callable[[Future[Result]], None]:
    def publish(future: Future[Result]) -> None:
        _write_json(path, vars(future.result()))

    return publish


def _write_json(path: Path, value: object) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(value), encoding="utf-8")
    os.replace(temporary, path)  # a reader sees the whole file or none


def _manifest() -> Path | None:
    """The list of runs this pytest-xdist session's controller started, if this process is one of its workers."""
    shared = os.environ.get(RESULTS_VARIABLE)
    manifest = Path(shared) / _MANIFEST if shared else None
    return manifest if manifest is not None and manifest.exists() else None


def _served_here(name: str) -> bool:
    """Whether the controller of this pytest-xdist session runs ``name`` (and this process is not that one)."""
    manifest = None if _serving.is_set() else _manifest()
    return manifest is not None and name not in _futures and name in json.loads(manifest.read_text(encoding="utf-8"))


def _served(name: str) -> Result | None:
    """The result the controller wrote for ``name``, waiting for it; None when this process is no worker of a
    session whose controller runs ``name``."""
    manifest = _manifest()
    if manifest is None or not _served_here(name):
        return None
    path = manifest.parent / f"{name}.json"
    deadline = time.monotonic() + RUN_TIMEOUT + 60
    while not path.exists():
        if time.monotonic() > deadline:
            return Result(-1, f"the session's CrossHair run {name} wrote no result within {RUN_TIMEOUT + 60} s", 0.0)
        time.sleep(0.2)
    return Result(**json.loads(path.read_text(encoding="utf-8")))


def result(name: str) -> Result:
    """The result of one run, starting all runs of its group if they have not started (or, in a pytest-xdist
    worker, the result the controller's run wrote)."""
    served = _served(name)
    if served is not None:
        return served
    if name not in _futures:
        start(next(group for group, names in GROUPS.items() if name in names))
    return _futures[name].result()


def module_file(module: str) -> Path:
    __import__(module)
    return Path(sys.modules[module].__file__ or "").resolve()


def condition_lines(path: Path, function: str | None = None) -> set[int]:
    """The line numbers of the ``post`` conditions in a module's docstrings (of one function, if given)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    inside = function is None
    found: set[int] = set()
    for number, line in enumerate(lines, start=1):
        if function is not None and line.startswith("def "):
            inside = line.startswith(f"def {function}(")
        if inside and re.match(r"\s*post(\[\])?:", line):
            found.add(number)
    return found


def verdicts(output: str, path: Path) -> dict[int, str]:
    """Line number → CrossHair's verdict, for the lines it reported in the file ``path``."""
    found: dict[int, str] = {}
    pattern = re.compile(r"^(/.+?):(\d+): (\w+): (.*)$")
    for line in output.splitlines():
        match = pattern.match(line)
        # CrossHair names the file as it imported it: through bpeproof/'s links, or by its real path.
        if match and Path(match.group(1)).resolve() == path.resolve():
            found[int(match.group(2))] = f"{match.group(3)}: {match.group(4)}"
    return found


CONFIRMED = "info: Confirmed over all paths."


def main(argv: list[str] | None = None) -> int:
    """Run the CI runs (with ``--all``, the extra ones too) and print each verdict."""
    groups = [*CI_GROUPS, "extra"] if "--all" in (sys.argv[1:] if argv is None else argv) else list(CI_GROUPS)
    for group in groups:
        start(group)
    for group in groups:
        for name in GROUPS[group]:
            done = result(name)
            print(f"{name}: exit {done.returncode} in {done.seconds:.0f} s", flush=True)
            for line in done.output.splitlines():
                if ": info: " in line or ": error: " in line or "differences" in line.lower():
                    print(f"    {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
