"""Nothing the code under check starts outlives the check: not a child in its own session, not a double fork.

The planted ports of ``bpeproof.proofs_tests.planted.escaping`` each leave one process behind (a child that
calls ``setsid()``, or the orphan of a double fork), marked with a tag unique to the test in its command line;
after each check (a normal end, a restart, a checker stopped by a signal or killed) ``/proc`` must hold none.
A program that fails before its hello line is one error line that quotes its stderr.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from bpeproof.proofs_tests.checker.functions import check
from bpeproof.proofs_tests.checker.tokenizer_check import TargetError, check_tokenizer
from bpeproof.proofs_tests.fixtures.vocab import write_rank_file
from bpeproof.proofs_tests.planted.escaping import TAG_VARIABLE

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper and /proc are Linux's")

ROOT = Path(__file__).resolve().parents[3]
HOW = ["setsid", "double-fork"]


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_rank_file(tmp_path_factory.mktemp("vocab") / "trained.tiktoken"))


@pytest.fixture
def tag(monkeypatch: pytest.MonkeyPatch) -> str:
    """A tag unique to the test, in the environment the code under check inherits."""
    value = f"bpeproof-escapee-{uuid.uuid4().hex}"
    monkeypatch.setenv(TAG_VARIABLE, value)
    return value


def _left(tag: str) -> list[int]:
    """The live processes whose command line holds ``tag``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _none_left(tag: str) -> None:
    """Assert that no tagged process is left (waiting a little for the kernel), killing any that is."""
    deadline = time.monotonic() + 2.0
    while _left(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _left(tag)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "processes started by the code under check survived the check"


def _cli(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "bpeproof.cli", "check", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("how", HOW)
def test_tokenizer_worker_leaves_nothing(vocab: str, tag: str, how: str) -> None:
    target = f"bpeproof.proofs_tests.planted.escaping:encode_{how.replace('-', '_')}"
    result = check_tokenizer(target, vocab=vocab, pattern="cl100k", seconds=60, seed=1, examples=128)
    assert result.ran and not result.found, result.report()
    _none_left(tag)


@pytest.mark.parametrize("how", HOW)
def test_program_leaves_nothing(vocab: str, tag: str, how: str, tmp_path: Path) -> None:
    command = f"{sys.executable} -m bpeproof.proofs_tests.planted.escaping {how}"
    process = _cli("--cmd", command, "--vocab", vocab, "--pattern", "cl100k", "--examples", "128", "--seed", "1",
                   "--seconds", "60", cwd=tmp_path)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, out + err
    _none_left(tag)


@pytest.mark.parametrize("how", HOW)
def test_function_worker_leaves_nothing(tag: str, how: str) -> None:
    result = check({"enc": f"bpeproof.proofs_tests.planted.escaping:enc_{how.replace('-', '_')}"}, seconds=2,
                   seed=1)
    assert result.ran and not result.found, result.report()
    _none_left(tag)


def test_replaced_worker_leaves_nothing(vocab: str, tag: str) -> None:
    """Each restart (a fresh process per replay) kills what the replaced process started."""
    target = "bpeproof.proofs_tests.planted.escaping:encode_setsid"
    from bpeproof.proofs_tests.checker.protocol import ENV_VOCAB, Implementation

    impl = Implementation(target, None, None, {ENV_VOCAB: vocab}, 5.0, None)
    try:
        impl.start(30)
        for _ in range(3):
            assert isinstance(impl.encode(["hello world"])[0], list)
            impl.restart()
    finally:
        impl.stop()
    _none_left(tag)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_stopped_checker_leaves_nothing(vocab: str, tag: str, tmp_path: Path, signum: int) -> None:
    """A checker ended by a signal (SIGKILL too: the reaper learns of it from PR_SET_PDEATHSIG) leaves nothing."""
    command = f"{sys.executable} -m bpeproof.proofs_tests.planted.escaping setsid"
    process = _cli("--cmd", command, "--vocab", vocab, "--pattern", "cl100k", "--seconds", "60", cwd=tmp_path)
    try:
        deadline = time.monotonic() + 30
        while not _left(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _left(tag), "the planted port should have left its process by now"
        process.send_signal(signum)
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    _none_left(tag)


def test_program_that_cannot_start_shows_its_stderr(vocab: str, tmp_path: Path) -> None:
    command = f"{sys.executable} -c 'import bpeproof_no_such_module_for_the_test'"
    process = _cli("--cmd", command, "--vocab", vocab, "--pattern", "cl100k", "--seconds", "20", cwd=tmp_path)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "before its hello line" in err
    assert "ModuleNotFoundError: No module named 'bpeproof_no_such_module_for_the_test'" in err


def test_stderr_is_kept_apart_from_the_protocol(vocab: str) -> None:
    """What a program writes to stderr (a lot of it, before and after its hello) never reaches the protocol."""
    script = ("import sys, json; sys.stderr.write('x' * 200000 + '\\n'); sys.stderr.flush();"
              "print(json.dumps({'protocol': 'bpeproof-check', 'error': 'refused: no such pattern'}), flush=True)")
    with pytest.raises(TargetError, match="refused: no such pattern"):
        check_tokenizer(cmd=f"{sys.executable} -c \"{script}\"", vocab=vocab, pattern="cl100k", seconds=20)
