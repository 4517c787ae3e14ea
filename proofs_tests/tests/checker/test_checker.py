"""The checker (``proofs_tests.checker.functions``, ``bpeproof check``) catches every planted bug and flags no correct
variant.

Planted implementations live in ``bpeproof.proofs_tests.planted``; each bug must be reported
with the article id listed there (def-bpe, thm-bpe-roundtrip, def-alphabet-vocab,
prop-bpe-training-termination, …).  The ``test_bpe_impl_*`` tests at the end are
the pytest plugin's checks (``--bpe-impl MOD``); they skip without the option.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bpeproof.proofs_tests.checker.functions import (
    TargetError,
    check,
    check_all,
    check_decoder,
    check_encoder,
    check_trainer,
)
from bpeproof.proofs_tests.planted import BUGGY, CORRECT

ROOT = Path(__file__).resolve().parents[3]

#: Budgets: generous for bugs (each is found within 4.2 s on an idle machine, most in under a second; a found bug
#: ends its run, so the budget only matters on a loaded machine, where a search slice holds fewer examples), short
#: for the correct variants.
BUG_SECONDS = 60.0
CORRECT_SECONDS = 1.0


@pytest.mark.parametrize(("kind", "target", "claims"), BUGGY, ids=[t.split(":")[1] for _, t, _ in BUGGY])
def test_planted_bug_is_caught(kind: str, target: str, claims: str) -> None:
    # explicit=False: the search alone must find it, without the hand-picked first examples
    result = check({kind: target}, seconds=BUG_SECONDS, seed=7, shrink_seconds=0.5, explicit=False)
    assert result.found, result.report()
    assert result.function == kind
    assert result.claim in claims.split("|"), result.report()
    assert result.input is not None and result.expected != result.actual
    assert result.seconds < BUG_SECONDS + 5


@pytest.mark.parametrize(("kind", "target"), CORRECT, ids=[t.replace(":", ".") for _, t in CORRECT])
def test_correct_variant_is_not_flagged(kind: str, target: str) -> None:
    result = check({kind: target}, seconds=CORRECT_SECONDS, seed=11)
    assert not result.found, result.report()
    assert result.examples > 0


def test_report_names_the_tie_break() -> None:
    result = check_trainer("bpeproof.proofs_tests.planted.trainers:train_ties_largest", seconds=BUG_SECONDS, seed=3,
                           shrink_seconds=2)
    assert result.found and result.claim == "def-bpe"
    assert result.detail is not None and "step 4" in result.detail
    assert result.hint == "it takes the largest of the tied pairs"


def test_callables_and_check_all() -> None:
    from bpeproof.proofs_tests.planted.correct import dec_table, enc_fixpoint

    result = check_all(enc=enc_fixpoint, dec=dec_table, seconds=1.5, seed=5)
    assert not result.found, result.report()
    assert set(result.targets) == {"enc", "dec"}
    assert result.to_dict()["found"] is False


def test_exceptions_and_wrong_types_are_findings() -> None:
    from bpeproof.proofs_tests.planted.correct import train_word_counts

    def enc_raises(rules: object, data: bytes) -> list[int]:
        if len(data) > 2:
            raise RuntimeError("boom")
        return list(data)

    def dec_text(rules: object, ids: list[int]) -> str:
        return "".join(map(chr, ids))

    def train_exits(corpus: list[bytes], num_merges: int | None) -> list[tuple[int, int, int]]:
        if len(corpus) > 1:
            os._exit(3)
        return train_word_counts(corpus, num_merges)

    crashed = check_trainer(train_exits, seconds=BUG_SECONDS, seed=1, shrink_seconds=0.5)
    assert crashed.found and crashed.claim == "def-bpe" and "exit code 3" in str(crashed.actual)
    raised = check_encoder(enc_raises, seconds=BUG_SECONDS, seed=1, shrink_seconds=0.5)
    assert raised.found and raised.claim == "def-bpe" and "RuntimeError" in str(raised.actual)
    wrong_type = check_decoder(dec_text, seconds=BUG_SECONDS, seed=1, shrink_seconds=0.5)
    assert wrong_type.found and wrong_type.claim == "def-alphabet-vocab" and "not bytes" in str(wrong_type.actual)


def test_usage_errors() -> None:
    # The budget bounds the worker's start, which imports the module: on a loaded machine that takes over a second,
    # and a usage error comes back as soon as the import has run, so a larger budget costs nothing.
    with pytest.raises(TargetError, match="cannot import module"):
        check_encoder("no_such_module_xyz:enc", seconds=30)
    with pytest.raises(TargetError, match="no attribute"):
        check_encoder("bpeproof.proofs_tests.planted.encoders:no_such_function", seconds=30)
    with pytest.raises(TargetError, match="not callable"):
        check_encoder("bpeproof.proofs_tests.planted:BUGGY", seconds=30)
    with pytest.raises(TargetError, match="signature"):
        check_encoder(lambda data: [], seconds=30)


def _cli(*args: str, cwd: Path = ROOT, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "bpeproof.cli", "check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_cli_bad_import_path_is_a_usage_error() -> None:
    result = _cli("--enc", "no_such_module_xyz:enc", "--seconds", "1")
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "no_such_module_xyz" in result.stderr


def test_cli_user_module_in_current_directory_passes(tmp_path: Path) -> None:
    (tmp_path / "mybpe.py").write_text(
        "def enc(rules, data):\n"
        "    tokens = list(data)\n"
        "    for a, b, c in rules:\n"
        "        out, i = [], 0\n"
        "        while i < len(tokens):\n"
        "            if i + 1 < len(tokens) and tokens[i] == a and tokens[i + 1] == b:\n"
        "                out.append(c); i += 2\n"
        "            else:\n"
        "                out.append(tokens[i]); i += 1\n"
        "        tokens = out\n"
        "    return tokens\n",
        encoding="utf-8",
    )
    result = _cli("--enc", "mybpe:enc", "--seconds", "2", "--seed", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no difference found" in result.stdout


def test_cli_hanging_trainer_is_reported_as_json() -> None:
    start = time.monotonic()
    result = _cli("--train", "bpeproof.proofs_tests.planted.trainers:train_never_stops", "--seconds", "20", "--json",
                  "--seed", "2")
    assert time.monotonic() - start < 40
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert {"found", "function", "claim", "claim_text", "detail", "input", "expected", "actual", "examples",
            "seconds", "seed", "backend", "targets", "also", "hint", "state"} <= set(report)
    assert report["found"] is True and report["function"] == "train"
    assert report["claim"] == "prop-bpe-training-termination"
    assert report["input"]["num_merges"] is None
    assert "did not return" in report["actual"]


# ---------------------------------------------------------------------------
# The pytest plugin (bpeproof.proofs_tests.plugin): pytest --pyargs bpeproof.proofs_tests --bpe-impl MOD
# ---------------------------------------------------------------------------


def _plugin_target(config: pytest.Config, kind: str) -> str:
    module = config.getoption("--bpe-impl", default=None)
    if not module:
        pytest.skip("no --bpe-impl MOD given (see proofs_tests/plugin.py)")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    if not callable(getattr(importlib.import_module(str(module)), kind, None)):
        pytest.skip(f"{module} has no {kind}")
    return f"{module}:{kind}"


def _plugin_check(config: pytest.Config, kind: str) -> None:
    target = _plugin_target(config, kind)
    seconds = float(config.getoption("--bpe-seconds", default=10.0))
    result = check({kind: target}, seconds=seconds, seed=config.getoption("--bpe-seed", default=None))
    assert not result.found, "\n" + result.report()


def test_bpe_impl_enc(pytestconfig: pytest.Config) -> None:
    """MOD.enc equals enc_R (def-bpe, thm-bpe-roundtrip, prop-bpe-length-monotone)."""
    _plugin_check(pytestconfig, "enc")


def test_bpe_impl_dec(pytestconfig: pytest.Config) -> None:
    """MOD.dec equals dec (def-alphabet-vocab)."""
    _plugin_check(pytestconfig, "dec")


def test_bpe_impl_train(pytestconfig: pytest.Config) -> None:
    """MOD.train equals def-bpe's training (prop-bpe-training-termination, prop-bpe-vocab-size)."""
    _plugin_check(pytestconfig, "train")


def test_plugin_runs_the_checks_on_another_module() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-p", "bpeproof.proofs_tests.plugin", "--pyargs",
         "bpeproof.proofs_tests", "--bpe-impl", "bpeproof.proofs_tests.planted.broken", "--bpe-seconds", "3",
         "--bpe-seed", "1", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "2 failed, 1 passed" in result.stdout, result.stdout
    assert "def-bpe" in result.stdout
