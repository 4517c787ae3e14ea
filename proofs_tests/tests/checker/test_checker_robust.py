"""The checker survives the code it checks: imports that hang, exit or print; forks; memory; its own death.

Each test plants one misbehaving module in a temporary directory and runs
``bpeproof check`` on it as a user would (a separate process, the directory as cwd).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bpeproof.proofs_tests.checker.functions import check_encoder

ROOT = Path(__file__).resolve().parents[3]

CORRECT_ENC = (
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
    "    return tokens\n"
)


def _check(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "bpeproof.cli", "check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _module(tmp_path: Path, name: str, head: str) -> None:
    (tmp_path / f"{name}.py").write_text(head + "\n" + CORRECT_ENC, encoding="utf-8")


@pytest.mark.parametrize(
    ("head", "message"),
    [
        ("import time\ntime.sleep(30)", "took over"),
        ("import os\nos._exit(0)", "exit code 0"),
        ("import sys\nsys.exit(3)", "SystemExit"),
    ],
    ids=["sleeps", "os_exit_0", "sys_exit_3"],
)
def test_import_time_misbehaviour_is_exit_2(tmp_path: Path, head: str, message: str) -> None:
    _module(tmp_path, "bad", head)
    start = time.monotonic()
    for option in ("--enc", "--impl"):
        target = "bad:enc" if option == "--enc" else "bad"
        result = _check(tmp_path, option, target, "--seconds", "2")
        assert result.returncode == 2, (option, result.stdout, result.stderr)
        assert result.stdout == "" and message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert time.monotonic() - start < 20


def test_import_time_print_stays_out_of_json(tmp_path: Path) -> None:
    _module(tmp_path, "chatty", "print('hello from import')\nimport sys\nprint('err', file=sys.stderr)")
    result = _check(tmp_path, "--impl", "chatty", "--seconds", "1.5", "--json", "--seed", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["ran"] is True


@pytest.mark.parametrize("seconds", ["nan", "inf", "0", "-1"])
def test_bad_budget_is_exit_2(tmp_path: Path, seconds: str) -> None:
    _module(tmp_path, "ok", "")
    result = _check(tmp_path, "--enc", "ok:enc", "--seconds", seconds)
    assert result.returncode == 2 and "--seconds" in result.stderr


def test_zero_examples_is_never_a_pass(tmp_path: Path) -> None:
    _module(tmp_path, "slowish", "import time\ntime.sleep(1.2)")
    result = _check(tmp_path, "--enc", "slowish:enc", "--seconds", "1.0")
    assert result.returncode == 2, result.stdout + result.stderr


def _sleepers(tag: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_processes_forked_by_the_code_under_test_are_killed(tmp_path: Path) -> None:
    tag = f"bpeproof-sleeper-{os.getpid()}"
    (tmp_path / "forks.py").write_text(
        "import subprocess, sys\n"
        f"TAG = {tag!r}\n"
        "def enc(rules, data):\n"
        "    if len(data) == 3:\n"
        "        subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', TAG])\n"
        + CORRECT_ENC.replace("def enc(rules, data):\n", "    return _enc(rules, data)\ndef _enc(rules, data):\n"),
        encoding="utf-8",
    )
    result = _check(tmp_path, "--enc", "forks:enc", "--seconds", "2", "--seed", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    time.sleep(0.3)
    assert _sleepers(tag) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_worker_dies_with_a_killed_checker(tmp_path: Path) -> None:
    module = tmp_path / "spin.py"
    module.write_text(CORRECT_ENC, encoding="utf-8")
    tag = f"{module}:enc"  # in the command line of the checker and of its forked worker
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    checker = subprocess.Popen([sys.executable, "-m", "bpeproof.cli", "check", "--enc", tag, "--seconds", "60"],
                               cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not [p for p in _sleepers(tag) if p != checker.pid]:
            time.sleep(0.1)
        assert [pid for pid in _sleepers(tag) if pid != checker.pid], "the worker should be running"
        checker.send_signal(signal.SIGKILL)
        checker.wait(10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and [p for p in _sleepers(tag) if p != checker.pid]:
            time.sleep(0.1)
        assert [pid for pid in _sleepers(tag) if pid != checker.pid] == []
    finally:
        if checker.poll() is None:
            checker.kill()


def test_memory_cap_is_a_finding() -> None:
    from bpeproof.proofs_tests.planted._common import enc_correct

    def enc_hungry(rules: list[tuple[int, int, int]], data: bytes) -> list[int]:
        if len(data) > 3:
            block = bytearray(3 * 1024 * 1024 * 1024)
            del block
        return enc_correct(rules, data)

    result = check_encoder(enc_hungry, seconds=8, seed=1, shrink_seconds=0.5, memory_mb=1024)
    assert result.found and "memory cap" in str(result.actual), result.report()


def test_crosshair_reports_no_false_difference_on_correct_code() -> None:
    """Symbolic inputs once reached the engine's C path (SymbolicBytes): a finding is now run again concretely."""
    pytest.importorskip("hypothesis_crosshair_provider")
    from bpeproof.proofs_tests.checker.functions import check

    result = check({"enc": "impl:enc"}, seconds=6, seed=1, backend="crosshair")
    assert not result.found, result.report()

