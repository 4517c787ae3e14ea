"""Starting a text → ids check: the pattern handed to the implementation, adapters that refuse what they cannot
honour, progress on stderr, and a decode finding reported with ids as ids and texts as texts."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from bpeproof.proofs_tests.checker import startup
from bpeproof.proofs_tests.checker.progress import Progress
from bpeproof.proofs_tests.checker.protocol import ENV_PATTERN, ENV_VOCAB
from bpeproof.proofs_tests.checker.tokenizer_check import TargetError, check_tokenizer
from bpeproof.proofs_tests.fixtures.vocab import write_rank_file

ROOT = Path(__file__).resolve().parents[3]
ADAPTERS = ROOT / "examples" / "adapters"
#: A program that answers its hello with an error quoting the pattern and vocabulary it was handed.
TELL_PATTERN = (f"{sys.executable} -c \"import json, os; print(json.dumps({{'protocol': 'bpeproof-check',"
                f" 'error': 'handed ' + repr(os.environ.get('{ENV_PATTERN}')) + ' for '"
                f" + os.environ['{ENV_VOCAB}']}}), flush=True)\"")


@pytest.fixture(scope="module")
def named_vocab(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A trained rank file whose name says cl100k (so the reference takes cl100k's pattern without --pattern)."""
    return str(write_rank_file(tmp_path_factory.mktemp("vocab") / "trained_cl100k.tiktoken"))


def test_the_pattern_is_handed_when_none_is_given(named_vocab: str) -> None:
    with pytest.raises(TargetError, match=r"handed 'cl100k' for .*trained_cl100k\.tiktoken"):
        check_tokenizer(cmd=TELL_PATTERN, vocab=named_vocab, seconds=20)


def test_the_given_pattern_is_handed(named_vocab: str) -> None:
    with pytest.raises(TargetError, match="handed 'r50k'"):
        check_tokenizer(cmd=TELL_PATTERN, vocab=named_vocab, pattern="r50k", seconds=20)


def test_a_wrong_early_guess_is_corrected(named_vocab: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The process started before the reference loaded is started again when the reference's pattern differs."""
    monkeypatch.setattr(startup, "early_pattern", lambda vocab, pattern: "o200k")
    with pytest.raises(TargetError, match="handed 'cl100k'"):
        check_tokenizer(cmd=TELL_PATTERN, vocab=named_vocab, seconds=20)


def test_handed_pattern() -> None:
    assert startup.early_pattern("/x/cl100k_base.tiktoken.gz", None) == "cl100k"
    assert startup.early_pattern("/x/o200k_base.tiktoken", "words") == "words"
    assert startup.early_pattern("/x/tokenizer.json", None) is None
    regex_only = SimpleNamespace(pipeline=None, pretokenizer=None, pattern=r"\w+|\s+", pattern_name=None)
    named = SimpleNamespace(pipeline=None, pretokenizer=None, pattern="…", pattern_name="o200k")
    steps = SimpleNamespace(pipeline=None, pretokenizer=object(), pattern="…", pattern_name=None)
    assert startup.handed_pattern(regex_only, None) == r"\w+|\s+"
    assert startup.handed_pattern(named, None) == "o200k"
    assert startup.handed_pattern(steps, None) is None
    assert startup.handed_pattern(steps, "cl100k") == "cl100k"


def _hello(argv: list[str], env: dict[str, str], cwd: Path) -> dict[str, object]:
    environment = {k: v for k, v in os.environ.items() if k not in (ENV_PATTERN, ENV_VOCAB)}
    environment.update(env, PYTHONPATH=str(ROOT))
    process = subprocess.run(argv, input="null\n", env=environment, cwd=cwd, capture_output=True, text=True,
                             timeout=60, check=False)
    return dict(json.loads(process.stdout.splitlines()[0]))


@pytest.mark.parametrize(("pattern", "vocab_kind", "refusal"), [
    (None, "rank", "needs a tiktoken rank file and a pattern"),
    ("p50k", "rank", "no pattern is named 'p50k'"),
    ("cl100k", "json", "is not a tiktoken rank file"),
])
def test_python_adapter_refuses_what_it_cannot_honour(named_vocab: str, tmp_path: Path, pattern: str | None,
                                                      vocab_kind: str, refusal: str) -> None:
    pytest.importorskip("tiktoken")
    vocab = named_vocab
    if vocab_kind == "json":
        vocab = str(tmp_path / "tokenizer.json")
        Path(vocab).write_text('{"model": {"type": "BPE"}}', encoding="utf-8")
    env = {ENV_VOCAB: vocab} | ({ENV_PATTERN: pattern} if pattern else {})
    hello = _hello([sys.executable, str(ADAPTERS / "tiktoken_adapter.py")], env, tmp_path)
    assert hello["protocol"] == "bpeproof-check" and refusal in str(hello.get("error")), hello


def test_python_adapter_runs_with_the_handed_pattern(named_vocab: str) -> None:
    pytest.importorskip("tiktoken")
    result = check_tokenizer(cmd=f"{sys.executable} {ADAPTERS / 'tiktoken_adapter.py'}", vocab=named_vocab,
                             seconds=60, seed=1, examples=256)
    assert result.ran and not result.found, result.report()


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_node_adapter_looks_for_its_package_next_to_itself(named_vocab: str, tmp_path: Path) -> None:
    """From a directory of its own, the adapter loads js-tiktoken from its folder, or refuses in its hello."""
    adapter = ADAPTERS / "js_tiktoken_adapter.mjs"
    env = {ENV_VOCAB: named_vocab, ENV_PATTERN: "words"}
    hello = _hello(["node", str(adapter)], env, tmp_path)
    error = str(hello.get("error"))
    installed = (ADAPTERS / "node_modules" / "js-tiktoken").is_dir()
    assert ("has no pattern \"words\"" if installed else "cannot load js-tiktoken next to the adapter") in error


def test_progress_lines_off_a_terminal() -> None:
    stream = io.StringIO()
    counts = iter(range(0, 10_000, 100))
    with Progress(lambda: (next(counts), 0), 0.05, stream):
        time.sleep(0.3)
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 2, lines
    assert all(line.startswith("bpeproof check: ") and "texts checked in" in line and "no finding so far" in line
               for line in lines)
    stream = io.StringIO()
    with Progress(lambda: (1, 0), None, stream):
        time.sleep(0.1)
    assert stream.getvalue() == ""


def test_progress_goes_to_stderr_apart_from_json(named_vocab: str, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.run(
        [sys.executable, "-m", "bpeproof.cli", "check", "--tokenizer", "bpeproof.proofs_tests.planted.ports:encode",
         "--vocab", named_vocab, "--seconds", "2.5", "--seed", "1", "--json", "--progress", "0.5"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert process.returncode == 0, process.stdout + process.stderr
    assert json.loads(process.stdout)["ran"] is True
    progress = [line for line in process.stderr.splitlines() if "texts checked in" in line]
    assert progress and all(line.startswith("bpeproof check: ") for line in progress), process.stderr


def test_decode_report_shows_ids_as_ids(named_vocab: str, tmp_path: Path) -> None:
    module = tmp_path / "bom_decode.py"
    module.write_text("from bpeproof.proofs_tests.planted import ports\n"
                      "encode = ports.encode\n"
                      "def decode(ids):\n"
                      "    return ports.decode(ids).replace('\\ufeff', '')\n", encoding="utf-8")
    result = check_tokenizer(f"{module}:encode", decode=f"{module}:decode", vocab=named_vocab, seconds=60, seed=1,
                             examples=3000)
    assert result.found and result.kind == "decode", result.report()
    assert result.text is not None and "\ufeff" in result.text
    assert isinstance(result.ids, list) and all(isinstance(i, int) for i in result.ids)
    assert result.actual == result.text.replace("\ufeff", "")
    report = result.report()
    assert f"  ids      : {result.ids!r}" in report and f"  decoded  : {result.actual!r}" in report
    assert "  library  :" not in report and "  reference:" not in report
    assert result.to_dict()["ids"] == result.ids and result.to_dict()["library_answer"] is None
