"""``bpeproof prove`` is the CrossHair gate: its report, built from the suite's own runs, must hold.

Every claim of ``obligations.PROOFS`` must be proved and every planted false claim refuted; every condition
that a run checks must belong to some proof (so the table cannot leave a contract out); and the report must say
``refuted`` or ``unknown`` when a run gives a counterexample or no verdict, or it would prove nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from bpeproof import cli
from bpeproof.proofs_tests.proofs import crosshair_runs as runs
from bpeproof.proofs_tests.proofs import report
from bpeproof.proofs_tests.proofs.obligations import PROOFS, Obligation, Proof

TIMEOUT = runs.RUN_TIMEOUT + 60


def _checked_lines(name: str) -> dict[str, set[int]]:
    """Module → the condition lines that the CI run ``name`` checks (its targets: modules or functions)."""
    checked: dict[str, set[int]] = {}
    for target in runs.RUNS[name].args:
        if not target.startswith("bpeproof."):
            continue
        module, _, function = target.rpartition(".")
        try:
            path = runs.module_file(target)
            module, function = target, ""
        except ImportError:
            path = runs.module_file(module)
        checked.setdefault(module, set()).update(runs.condition_lines(path, function or None))
    return checked


@pytest.mark.parametrize("name", sorted(runs.RUNS))
def test_every_checked_condition_belongs_to_a_proof(name: str) -> None:
    covered: dict[str, set[int]] = {}
    for proof in PROOFS:
        for obligation in proof.obligations:
            if obligation.run == name:
                covered.setdefault(obligation.module, set()).update(report.condition_lines(obligation))
    for module, lines in _checked_lines(name).items():
        assert lines, (name, module)
        left = lines - covered.get(module, set())
        assert not left, f"run {name}: conditions of {module} at lines {sorted(left)} belong to no proof"


def _fake(outputs: dict[str, str], code: int = 0) -> Callable[[str], runs.Result]:
    return lambda name: runs.Result(code, outputs.get(name, ""), 1.0, 1.0)


def _verdict_lines(obligation: Obligation, verdict: str) -> str:
    path = runs.module_file(obligation.module)
    return "\n".join(f"{path}:{line}: {verdict}" for line in report.condition_lines(obligation))


def test_report_says_proved_refuted_or_unknown() -> None:
    """The report's status follows the verdicts: all confirmed is proved; one counterexample is refuted, quoted;
    a run that ended without a verdict is unknown; a planted claim that is confirmed is not what it must be."""
    variant = next(p for p in PROOFS if p.claim == "variants(rule-rank = sequential)")
    obligation = next(o for o in variant.obligations if o.function == "lemma_rule_rank_is_sequential")
    proof = Proof(variant.claim, "bounded", "contract over all paths within the bounds", (obligation,))
    confirmed = _verdict_lines(obligation, runs.CONFIRMED)
    assert report.claim_report(proof, _fake({obligation.run: confirmed})).status == "proved"
    wrong = _verdict_lines(obligation, "error: false when calling lemma_rule_rank_is_sequential(0, 0, 0, 0, b'')")
    refuted = report.claim_report(proof, _fake({obligation.run: wrong}))
    assert refuted.status == "refuted" and "lemma_rule_rank_is_sequential(0, 0, 0, 0, b'')" in refuted.why
    silent = report.claim_report(proof, _fake({obligation.run: "timed out"}, code=-1))
    assert silent.status == "unknown" and "did not finish" in silent.why
    planted = Proof("planted", "bounded", "must be refuted", (Obligation(obligation.run, obligation.module,
                    obligation.function, expect="refuted"),), kind="planted")
    assert report.claim_report(planted, _fake({obligation.run: confirmed})).status == "proved"
    assert report.claim_report(planted, _fake({obligation.run: wrong})).status == "refuted"
    assert not report.all_hold([report.claim_report(planted, _fake({obligation.run: confirmed}))])


def test_bounded_scope_names_the_preconditions() -> None:
    proof = next(p for p in PROOFS if p.claim == "variants(rule-rank = sequential)")
    obligation = next(o for o in proof.obligations if o.function == "lemma_rule_rank_is_sequential")
    assert report.bounds(obligation) == (
        "lemma_rule_rank_is_sequential: _is_byte(a1) and _is_byte(b1); 0 <= a2 <= C and 0 <= b2 <= C; len(data) <= 4")


@pytest.mark.timeout(TIMEOUT)
def test_prove_reports_every_claim_proved(capsys: pytest.CaptureFixture[str]) -> None:
    """``bpeproof prove --json`` on the suite's runs: exit 0, every claim proved, named as in the article."""
    code = cli.main(["prove", "--json"])
    printed = json.loads(capsys.readouterr().out)
    claims = {claim["id"]: claim for claim in printed["claims"]}
    assert set(claims) == {proof.claim for proof in PROOFS}
    must = {"claim": "proved", "planted": "refuted", "search": "no counterexample"}
    wrong = {name: claim for name, claim in claims.items() if claim["status"] != must[claim["kind"]]}
    assert not wrong and code == 0, wrong
    every_size = ("lem-merge-step(1)", "thm-bpe-roundtrip", "prop-bpe-length-monotone(enc_R)", "def-alphabet-vocab",
                  "def-merge(later rules keep spellings)", "exr-run-length", "prop-bpe-vocab-size",
                  "def-merge(leftmost)", "def-bpe(step 2)", "def-bpe(steps 3-5)", "variants(rule-rank = sequential)",
                  "impl: flat loop = enc_R", "impl: heap loop = enc_R")
    assert {claims[claim]["scope"] for claim in every_size} == {"every size"}
    assert re.match(r"bounded: engine_flat_on_runs_equals_spec: ", claims["impl: merge loops on runs = enc_R"]["scope"])
    assert all(claim["conditions"] > 0 and claim["cpu_seconds"] > 0 for claim in claims.values())


@pytest.mark.parametrize(("argv", "message"), [
    (["prove", "--claim", "no-such-claim"], "no such claim"),
    (["prove", "--jobs", "0"], "--jobs must be at least 1"),
])
def test_prove_refuses_bad_arguments(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
