"""The function checker's result: which claim of the article an implementation's answer breaks, on which input.

``CheckResult`` is what ``check`` returns (and ``bpeproof check --enc/--dec/--train`` prints, or writes as JSON):
the claim's id and statement (``properties.CLAIMS``), the shrunk input, the specification's answer and the
implementation's, the earlier calls a stateful bug needs, and the run's numbers (``result.RunResult``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from bpeproof.proofs_tests.checker.properties import CLAIMS, Failure
from bpeproof.proofs_tests.checker.result import RunResult
from bpeproof.proofs_tests.checker.search import Search
from bpeproof.proofs_tests.checker.worker import SIGNATURES, Call, Target, describe


@dataclass(kw_only=True)
class CheckResult(RunResult):
    """The outcome of a check: ``found`` a difference or not, and if so which claim, on which input."""

    targets: dict[str, str]
    backend: str
    function: str | None = None
    claim: str | None = None
    detail: str | None = None
    hint: str | None = None
    also: tuple[str, ...] = ()
    input: dict[str, Any] | None = None
    expected: Any = None
    actual: Any = None
    earlier_calls: list[Call] = field(default_factory=list)
    state: str | None = None  # None, "earlier-calls" or "process-state"
    found_by: str | None = None  # the property (generator) that found it
    per_property: dict[str, int] = field(default_factory=dict)

    @property
    def claim_text(self) -> str | None:
        """The claim's statement (see ``properties.CLAIMS``)."""
        if not self.claim:
            return None
        return CLAIMS.get(f"{self.claim}/{self.function}", CLAIMS.get(self.claim))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable keys (bytes become lists of ints; ``*_repr`` keys hold Python reprs)."""
        return {
            "found": self.found,
            "ran": self.ran,
            "function": self.function,
            "claim": self.claim,
            "claim_text": self.claim_text,
            "detail": self.detail,
            "hint": self.hint or None,
            "also": list(self.also),
            "input": _jsonable(self.input),
            "input_repr": repr(self.input) if self.input is not None else None,
            "expected": _jsonable(self.expected),
            "expected_repr": repr(self.expected) if self.found else None,
            "actual": _jsonable(self.actual),
            "actual_repr": repr(self.actual) if self.found else None,
            "earlier_calls": [{"function": kind, "args": _jsonable(list(args))} for kind, args in self.earlier_calls],
            "state": self.state,
            "property": self.found_by,
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
            "seconds_to_find": None if self.seconds_to_find is None else round(self.seconds_to_find, 3),
            "examples_per_second": round(self.examples_per_second, 1),
            "per_property": dict(self.per_property),
            "seed": self.seed,
            "backend": self.backend,
            "targets": dict(self.targets),
            "note": self.note,
        }

    def report(self) -> str:
        """A human-readable report: the claim, the shrunk input, the spec's and the implementation's answers."""
        names = ", ".join(f"{kind}={name}" for kind, name in self.targets.items())
        if not self.found:
            return self.nothing_found(f"bpeproof check: {names}", self.per_property)
        assert self.input is not None
        lines = [
            f"bpeproof check: {names}",
            f"FOUND a difference in {self.function} after {self.stats()}{self.first_seen()}",
            f"  claim    : {self.claim}{_statement(self.claim, self.claim_text)}",
            f"  detail   : {self.detail}",
        ]
        if self.hint:
            lines.append(f"  hint     : {self.hint}")
        if self.also:
            lines.append(f"  also     : {', '.join(self.also)}")
        if self.earlier_calls:
            lines.append("  earlier calls in the same process, before the failing one:")
            lines += [f"    {kind}{_short_args(args)}" for kind, args in self.earlier_calls]
        lines.append(f"  call     : {SIGNATURES.get(self.function or '', '')}")
        lines += [f"  {key:<9}: {value!r}" for key, value in self.input.items()]
        lines.append(f"  spec     : {self.expected!r}")
        lines.append(f"  impl     : {self.actual!r}")
        if self.state == "earlier-calls":
            lines.append("  note     : alone in a fresh process this call is answered correctly: the wrong answer"
                         " needs the earlier calls above (state kept between calls, e.g. a cache with a wrong key)")
        elif self.state == "process-state":
            lines.append("  note     : in a fresh process these calls are answered correctly: the wrong answer"
                         " came from state left by earlier calls (e.g. a cache with a wrong key)")
        return "\n".join(lines)


def _statement(claim: str | None, text: str | None) -> str:
    """What follows the claim's id on the report's claim line: " — " and its statement without the id that
    ``CLAIMS`` writes before it (the line names the id once), or nothing when there is no statement."""
    statement = (text or "").removeprefix(f"{claim}:").strip()
    return f" — {statement}" if statement else ""


def _short_args(args: tuple[Any, ...]) -> str:
    text = repr(args)
    return text if len(text) <= 200 else text[:197] + "..."


def _jsonable(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def check_result(targets: dict[str, Target], search: Search[Failure], run_seed: int, backend: str,
                 failure: Failure | None, failure_state: str | None, note: str | None = None) -> CheckResult:
    """The result of a finished search: its numbers, and the failure (already confirmed) if there is one."""
    if failure is None and not search.counts and note is None:
        note = "no example ran within the budget: give more seconds"
    result = CheckResult(
        found=failure is not None,
        targets={kind: describe(target) for kind, target in targets.items()},
        examples=sum(search.counts.values()),
        seconds=time.monotonic() - search.start,
        seed=run_seed,
        backend=backend,
        per_property=dict(search.counts),
        note=note,
    )
    if failure is not None:
        result.function = failure.function
        result.claim = failure.claim
        result.detail = failure.detail
        result.hint = failure.hint or None
        result.also = failure.also
        result.input = failure.input
        result.expected = failure.expected
        result.actual = failure.actual
        result.earlier_calls = list(failure.earlier) if failure_state else []
        result.state = failure_state
        result.found_by = search.source
        result.seconds_to_find = None if search.found_at is None else search.found_at - search.start
    return result
