"""The largest size each bounded contract is proved for: ``python -m bpeproof.proofs_tests.proofs.bounds [NAME ...]``.

For each contract of ``bpeproof.spec.contracts`` (and training with no bound on the merges, in
``unbounded_training``) and of the implementation's equalities, one precondition bounds the input size.  This tool
raises that bound one step at a time, in a scratch copy of the tree (the real files are never touched; the copy is
made as the mutant tool makes it), and runs ``crosshair check`` on the contract with the
CI budget (``crosshair_runs.PROOF_BUDGET`` CPU seconds per condition).  A size counts as proved when CrossHair
answers "Confirmed over all paths" for every condition of the contract; the first size where it does not (a
condition "Not confirmed" within the budget, or the run over ``--wall`` seconds) ends the search.  It prints one
Markdown row per contract: the bound, the CI size, the largest size proved and the CPU seconds that took.

A bound text that is no longer in its file is an error, never a silent skip (``test_bounds.py`` checks them all).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bpeproof.proofs_tests.planted.mutants import ROOT, run_in, scratch_copy
from bpeproof.proofs_tests.proofs import crosshair_runs


@dataclass(frozen=True)
class Bound:
    """One bounded contract: its module and function, the precondition line that bounds it (with ``{n}`` for the
    size) and the size CI proves."""

    module: str
    function: str
    template: str
    ci: int

    @property
    def path(self) -> str:
        return self.module.removeprefix("bpeproof.").replace(".", "/") + ".py"

    def line(self, size: int | str) -> str:
        return self.template.format(n=size)


SPEC = "bpeproof.spec.contracts"
UNBOUNDED_TRAINING = "bpeproof.proofs_tests.proofs.unbounded_training"
EQUIVALENCE = "bpeproof.proofs_tests.proofs.equivalence"

#: Every bounded contract whose size has one knob.
BOUNDS: tuple[Bound, ...] = (
    Bound(SPEC, "lemma_merge_step", "    pre: len(x) <= {n}\n", 4),
    Bound(SPEC, "lemma_merge_step_v2", "    pre: len(x) <= {n}\n", 3),
    Bound(SPEC, "lemma_run_length", "    pre: 0 <= length <= {n}\n", 7),
    Bound(SPEC, "lemma_count_pairs", "    pre: 1 <= len(w1) <= 3 and 1 <= len(w2) <= {n}\n", 2),
    Bound(SPEC, "lemma_decode_concatenates", "    pre: len(x) <= {n} and len(y) <= {n}\n", 2),
    Bound(SPEC, "lemma_roundtrip", "    pre: len(data) <= {n}\n", 4),
    Bound(SPEC, "lemma_rule_rank_is_sequential", "    pre: len(data) <= {n}\n", 4),
    Bound(SPEC, "lemma_training", "    pre: 0 <= num_merges <= {n}\n", 2),
    Bound(UNBOUNDED_TRAINING, "lemma_training_unbounded",
          "    pre: 1 <= len(w1) <= {n} and 1 <= len(w2) <= {n}\n", 3),
)


class BoundError(Exception):
    """A bound's precondition is not (or not once) in its contract's source."""


def function_source(text: str, function: str) -> tuple[int, int]:
    """The character range of ``def function`` up to the next top-level statement."""
    start = text.find(f"\ndef {function}(")
    if start < 0:
        raise BoundError(f"{function}: no such function")
    end = len(text)
    for marker in ("\ndef ", "\nclass ", "\n@"):
        found = text.find(marker, start + 1)
        if 0 <= found < end:
            end = found
    return start, end


def with_size(bound: Bound, text: str, size: int) -> str:
    """``text`` (the contract's module) with the bound set to ``size``, only inside the contract's own function."""
    start, end = function_source(text, bound.function)
    body = text[start:end]
    current = bound.line(bound.ci)
    if body.count(current) != 1:
        raise BoundError(f"{bound.function}: the bound {current.strip()!r} is not once in its preconditions")
    return text[:start] + body.replace(current, bound.line(size)) + text[end:]


@dataclass(frozen=True)
class Trial:
    size: int
    proved: bool
    cpu_seconds: float
    detail: str


def trial(bound: Bound, size: int, wall: float) -> Trial:
    """Run CrossHair on the contract at ``size`` in a scratch copy."""
    with tempfile.TemporaryDirectory(prefix="bpeproof-bounds-") as scratch:
        tree = scratch_copy(Path(scratch))
        source = tree / bound.path
        source.write_text(with_size(bound, source.read_text(encoding="utf-8"), size), encoding="utf-8")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        command = (sys.executable, "-m", "crosshair", "check", "--report_all",
                   f"--per_condition_timeout={crosshair_runs.PROOF_BUDGET}", f"{bound.module}.{bound.function}")
        outcome = run_in(tree, command, wall)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if outcome.returncode is None:
            return Trial(size, False, cpu, f"over {wall:.0f} s of wall time")
        found = crosshair_runs.verdicts(outcome.output, source)
        lines = crosshair_runs.condition_lines(source, bound.function)
        missing = {line: found.get(line, "no verdict") for line in sorted(lines)
                   if found.get(line) != crosshair_runs.CONFIRMED}
        if missing:
            line, verdict = next(iter(missing.items()))
            return Trial(size, False, cpu, f"line {line}: {verdict}")
        return Trial(size, True, cpu, "")


def search(bound: Bound, steps: int, wall: float) -> list[Trial]:
    """Trials from the CI size up, until one is not proved or ``steps`` sizes above CI were proved."""
    trials: list[Trial] = []
    for size in range(bound.ci, bound.ci + steps + 1):
        result = trial(bound, size, wall)
        trials.append(result)
        print(f"{bound.function} at {size}: {'proved' if result.proved else 'not proved'} "
              f"({result.cpu_seconds:.0f} CPU s) {result.detail}", file=sys.stderr, flush=True)
        if not result.proved:
            break
    return trials


def row(bound: Bound, trials: list[Trial]) -> str:
    proved = [t for t in trials if t.proved]
    largest = f"{proved[-1].size} ({proved[-1].cpu_seconds:.0f} CPU s)" if proved else "none"
    failed = next((t for t in trials if not t.proved), None)
    beyond = f"{failed.size}: {failed.detail}" if failed else f"not tried above {trials[-1].size}"
    condition = bound.line("n").strip().removeprefix("pre: ")
    return f"| `{bound.function}` | `{condition}` | {bound.ci} | {largest} | {beyond} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bpeproof.proofs_tests.proofs.bounds",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="contracts to measure (default: all)")
    parser.add_argument("--steps", type=int, default=3, help="sizes to try above the CI size (default 3)")
    parser.add_argument("--wall", type=float, default=1800, help="wall seconds per trial (default 1800)")
    args = parser.parse_args(argv)
    chosen = [b for b in BOUNDS if not args.names or b.function in args.names]
    if not chosen:
        parser.error(f"no such contract; choose from {', '.join(b.function for b in BOUNDS)}")
    print("| contract | bound (n) | CI n | largest n proved | first n not proved |")
    print("|---|---|---|---|---|")
    started = time.monotonic()
    for bound in chosen:
        print(row(bound, search(bound, args.steps, args.wall)), flush=True)
    print(f"\n{len(chosen)} contracts in {time.monotonic() - started:.0f} s; budget "
          f"{crosshair_runs.PROOF_BUDGET} CPU s per condition; tree {ROOT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
