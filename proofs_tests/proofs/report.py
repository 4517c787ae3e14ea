"""The proof report: every claim of ``obligations.PROOFS`` with its scope, status, conditions and CPU seconds.

``claim_reports`` reads the verdicts of the CrossHair runs (``crosshair_runs``) condition by condition.  A claim is
``proved`` when every condition of its obligations is "Confirmed over all paths", ``refuted`` when one got a
counterexample (the report quotes it), and ``unknown`` otherwise (no verdict, a run that timed out or crashed: the
report says which).  A planted false claim must be ``refuted`` (each of its conditions); one that is ``proved``
means the gate proves nothing.  A search (where CrossHair cannot exhaust the paths) says ``no counterexample``, which
is no proof and is never reported as one.  ``bpeproof prove`` prints it; the CI gate (``test_crosshair_report.py``)
asserts it, from the same runs.
"""

from __future__ import annotations

import fnmatch
import inspect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bpeproof.proofs_tests.proofs import crosshair_runs as runs
from bpeproof.proofs_tests.proofs.obligations import PROOFS, Obligation, Proof

Status = str  # "proved", "refuted" or "unknown"


@dataclass
class ClaimReport:
    """One line of the report."""

    id: str
    scope: str
    status: Status
    conditions: int
    cpu_seconds: float
    method: str
    kind: str = "claim"
    why: str = ""
    bounds: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "scope": self.scope_text(), "status": self.status, "conditions": self.conditions,
                "cpu_seconds": round(self.cpu_seconds, 1), "method": self.method, "kind": self.kind,
                "why": self.why or None}

    def scope_text(self) -> str:
        """``every size``, ``searched``, or ``bounded: `` and the bounds of its contracts."""
        if self.scope != "bounded":
            return self.scope
        return "bounded: " + " | ".join(self.bounds) if self.bounds else "bounded"


def runs_of(proofs: Iterable[Proof]) -> list[str]:
    """The CrossHair runs the proofs need, in the order of ``crosshair_runs.RUNS`` (longest first)."""
    needed = {obligation.run for proof in proofs for obligation in proof.obligations}
    return [name for name in runs.RUNS if name in needed]


def functions_of(module: str, pattern: str) -> list[str]:
    """The functions of ``module`` that ``pattern`` names (``*`` globs), in source order."""
    __import__(module)
    import sys

    members = inspect.getmembers(sys.modules[module], inspect.isfunction)
    found = [(function.__code__.co_firstlineno, name) for name, function in members
             if function.__module__ == module and fnmatch.fnmatchcase(name, pattern)]
    return [name for _, name in sorted(found)]


def _post_lines(path: Path, function: str) -> dict[int, str]:
    """Line number → text of each ``post`` condition of ``function``."""
    text = path.read_text(encoding="utf-8").splitlines()
    return {number: text[number - 1].strip() for number in runs.condition_lines(path, function)}


def condition_lines(obligation: Obligation) -> list[int]:
    """The lines of the conditions an obligation takes."""
    path = runs.module_file(obligation.module)
    lines: list[int] = []
    for function in functions_of(obligation.module, obligation.function):
        for number, text in sorted(_post_lines(path, function).items()):
            called = re.match(r"post(?:\[\])?:\s*(\w+)", text)
            if not obligation.predicates or (called is not None and called.group(1) in obligation.predicates):
                lines.append(number)
    return lines


def bounds(obligation: Obligation) -> str:
    """The preconditions of an obligation's functions, as the scope of a bounded proof."""
    path = runs.module_file(obligation.module)
    text = path.read_text(encoding="utf-8").splitlines()
    found: list[str] = []
    for function in functions_of(obligation.module, obligation.function):
        start = next(i for i, line in enumerate(text) if line.startswith(f"def {function}("))
        for line in text[start + 1 :]:
            if line.startswith("def "):
                break
            stripped = line.strip()
            if stripped.startswith("pre:"):
                found.append(stripped.removeprefix("pre:").strip())
    return f"{obligation.function}: " + "; ".join(dict.fromkeys(found)) if found else obligation.function


def _fits(verdict: str, obligation: Obligation) -> bool:
    if obligation.expect == "confirmed":
        return verdict == runs.CONFIRMED
    if obligation.expect == "refuted":
        return verdict.startswith("error:") and " when calling " in verdict
    return verdict.startswith("info:")


def claim_report(proof: Proof, result: Callable[[str], runs.Result]) -> ClaimReport:
    """The status of one proof from the runs' results (``result(name)``)."""
    conditions = 0
    counterexamples: list[str] = []
    missing: list[str] = []
    for obligation in proof.obligations:
        done = result(obligation.run)
        path = runs.module_file(obligation.module)
        found = runs.verdicts(done.output, path)
        lines = condition_lines(obligation)
        if not lines:
            missing.append(f"{obligation.function} has no condition")
        for line in lines:
            conditions += 1
            verdict = found.get(line, "no verdict")
            if _fits(verdict, obligation):
                continue
            if obligation.expect != "refuted" and verdict.startswith("error:"):
                counterexamples.append(f"{path.name}:{line}: {verdict}")
            elif verdict == "no verdict" and done.returncode < 0:
                missing.append(f"run {obligation.run} did not finish: {done.output[:200]}")
            else:
                missing.append(f"{path.name}:{line}: {verdict}")
    cpu = sum(result(name).cpu_seconds for name in dict.fromkeys(o.run for o in proof.obligations))
    status, why = _status(proof, counterexamples, missing)
    scope_bounds = [] if proof.scope != "bounded" else [bounds(o) for o in proof.obligations]
    return ClaimReport(proof.claim, proof.scope, status, conditions, cpu, proof.method, proof.kind, why,
                       list(dict.fromkeys(scope_bounds)))


#: The status each kind of proof must reach.
GOOD: dict[str, str] = {"claim": "proved", "planted": "refuted", "search": "no counterexample"}


def _status(proof: Proof, counterexamples: list[str], missing: list[str]) -> tuple[Status, str]:
    """The status of a proof, and why when it is not the one its kind must reach.

    ``counterexamples``: conditions that must hold and were refuted; ``missing``: every other condition without
    the verdict it must get."""
    if proof.kind == "planted":
        if not counterexamples and not missing:
            return "refuted", ""
        proved = [reason for reason in missing if runs.CONFIRMED in reason]
        if proved:
            return "proved", f"a planted false claim was proved: {proved[0]}"
        return "unknown", (counterexamples or missing)[0]
    if counterexamples:
        return "refuted", counterexamples[0]
    if missing:
        return "unknown", missing[0]
    return GOOD[proof.kind], ""


def claim_reports(proofs: Sequence[Proof], result: Callable[[str], runs.Result]) -> list[ClaimReport]:
    return [claim_report(proof, result) for proof in proofs]


def select(claim: str | None) -> list[Proof]:
    """The proofs of one claim (its id, or an id without the part in parentheses), or all of them."""
    if claim is None:
        return list(PROOFS)
    return [proof for proof in PROOFS if proof.claim == claim or proof.claim.split("(")[0] == claim]


def all_hold(reports: Iterable[ClaimReport]) -> bool:
    """Every claim proved, every planted false claim refuted, every search without a counterexample."""
    return all(report.status == GOOD[report.kind] for report in reports)


def text_lines(reports: Sequence[ClaimReport]) -> list[str]:
    """The report as aligned lines: claim, scope, status, conditions, CPU seconds (and why, when not proved)."""
    width = max((len(r.id) for r in reports), default=10)
    scope_width = max((len(r.scope) for r in reports), default=10)
    status_width = max((len(r.status) for r in reports), default=8)
    lines = []
    for r in reports:
        line = (f"{r.id:<{width}}  {r.scope:<{scope_width}}  {r.status:<{status_width}} {r.conditions:>3} conditions"
                f" {r.cpu_seconds:7.1f} CPU s")
        if r.scope == "bounded" and r.bounds:
            line += f"  [{' | '.join(r.bounds)}]"
        if r.why:
            line += f"\n    {r.why}"
        lines.append(line)
    return lines


def summary(reports: Sequence[ClaimReport]) -> str:
    """One line: how many claims are proved (for every size), planted false claims refuted, searches clean."""
    claims = [r for r in reports if r.kind == "claim"]
    every = sum(r.scope == "every size" and r.status == "proved" for r in claims)
    proved = sum(r.status == "proved" for r in claims)
    planted = [r for r in reports if r.kind == "planted"]
    refuted = sum(r.status == "refuted" for r in planted)
    searches = [r for r in reports if r.kind == "search"]
    clean = sum(r.status == GOOD["search"] for r in searches)
    return (f"{proved} of {len(claims)} claims proved ({every} for every size); {refuted} of {len(planted)} planted"
            f" false claims refuted; {clean} of {len(searches)} searches without a counterexample")


def scope_of(proof: Proof) -> str:
    """A proof's scope without running it: ``every size``, ``searched``, or ``bounded: `` and its preconditions."""
    if proof.scope != "bounded":
        return proof.scope
    return "bounded: " + " \\| ".join(dict.fromkeys(bounds(o) for o in proof.obligations))


def markdown_table(proofs: Sequence[Proof]) -> str:
    """The claims as the manual's table (docs/proofs.md): claim, scope, how it is proved."""
    rows = ["| claim | scope | how |", "|---|---|---|"]
    for proof in proofs:
        scope = scope_of(proof).replace("|", "\\|").replace("\\\\|", "\\|")
        rows.append(f"| `{proof.claim}` | {scope} | {proof.method.replace('|', chr(92) + '|')} |")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m bpeproof.proofs_tests.proofs.report``: print the manual's table of claims."""
    print(markdown_table(PROOFS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
