"""The README's commands work verbatim, as a new user would run them, in a fresh virtual environment."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"


def shell_blocks(markdown: str) -> list[str]:
    """The ```sh code blocks of a Markdown text, in order."""
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", markdown, flags=re.DOTALL)]


def quick_start() -> tuple[str, str]:
    section = README.read_text(encoding="utf-8").split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = shell_blocks(section)
    assert len(blocks) == 2, "the quick start must give exactly two commands"
    return blocks[0], blocks[1]


def test_ci_runs_the_readme_test_command() -> None:
    _, test_command = quick_start()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert test_command in ci.splitlines()


def copy_checkout(target: Path) -> Path:
    """The repository's files as a fresh clone has them (no virtual environment, no caches)."""
    ignore = shutil.ignore_patterns(".venv*", ".git", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis", "build")
    shutil.copytree(ROOT, target, ignore=ignore)
    return target


@pytest.mark.skipif(os.environ.get("BPEPROOF_SKIP_INSTALL_TESTS") == "1", reason="install tests disabled")
def test_first_command_in_a_fresh_environment(tmp_path: Path) -> None:
    setup_and_demo, _ = quick_start()
    checkout = copy_checkout(tmp_path / "bpeproof")
    environment = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    result = subprocess.run(setup_and_demo, shell=True, cwd=checkout, capture_output=True, text=True,
                            timeout=900, env=environment, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "roundtrip ok: 2000" in result.stdout
    assert "whole: あ" in result.stdout


DOCS = ROOT / "docs"


def manual() -> str:
    """The README and the manual's pages, one text: each block runs wherever it lives."""
    pages = [README, *sorted(DOCS.glob("*.md"))]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


def section(title: str) -> str:
    """The text under the heading ``title`` (a page's title or one of its sections), to the next such heading."""
    after = re.split(rf"(?m)^#{{1,2}} {re.escape(title)}\s*$", manual(), maxsplit=1)[1]
    return re.split(r"(?m)^#{1,2} ", after, maxsplit=1)[0]


def run_lines(block: str, cwd: Path) -> list[subprocess.CompletedProcess[str]]:
    """Each line of a shell block, run as a user would, with this environment's ``bpeproof`` on the PATH."""
    environment = dict(os.environ)
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment.get('PATH', '')}"
    environment["PYTHONPATH"] = str(ROOT)
    return [
        subprocess.run(line, shell=True, cwd=cwd, capture_output=True, text=True, timeout=600, env=environment,
                       check=False)
        for line in block.splitlines()
        if line.strip()
    ]


def text_blocks(markdown: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```text\n(.*?)```", markdown, flags=re.DOTALL)]


def _no_timing(text: str) -> str:
    return re.sub(r"in \d+\.\d+ s", "in … s", text)


def test_command_line_examples_print_what_the_readme_shows(tmp_path: Path) -> None:
    text = section("Command line")
    for block, expected in zip(shell_blocks(text), text_blocks(text), strict=True):
        results = run_lines(block, tmp_path)
        for result in results:
            assert result.returncode == 0, result.args + "\n" + result.stdout + result.stderr
        printed = "".join(result.stdout.rstrip("\n") + "\n" for result in results if result.stdout)
        assert _no_timing(printed.strip()) == _no_timing(expected)
    assert (tmp_path / "slowest.svg").read_text(encoding="utf-8").startswith("<svg")


def test_checker_examples_behave_as_the_readme_says(tmp_path: Path) -> None:
    block, plugin = shell_blocks(section("Check your own implementation"))
    correct, buggy = run_lines(block, tmp_path)
    assert correct.returncode == 0 and "no difference found" in correct.stdout, correct.stdout + correct.stderr
    assert buggy.returncode == 1 and "FOUND a difference in enc" in buggy.stdout, buggy.stdout + buggy.stderr
    assert "claim    : def-bpe" in buggy.stdout
    (run,) = run_lines(plugin, tmp_path)
    assert run.returncode == 0 and "3 passed" in run.stdout, run.stdout + run.stderr


SHARED = ROOT.parent / "shared"


@pytest.mark.skipif(not (SHARED / "vocabs" / "r50k_base.tiktoken.gz").exists(), reason="needs ../shared/vocabs")
def test_audit_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    text = section("Audit a tokenizer")
    shown = next(block for block in text_blocks(text) if block.startswith("$ bpeproof audit"))
    command, *expected = shown.splitlines()
    shutil.copy(SHARED / "vocabs" / "r50k_base.tiktoken.gz", tmp_path)
    (result,) = run_lines(command.removeprefix("$ "), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    printed = [_no_seconds(line) for line in result.stdout.splitlines()]
    for line in expected:
        assert _no_seconds(line) in printed, (line, result.stdout)


def _no_seconds(line: str) -> str:
    return re.sub(r"\d+\.\d+s\b", "…s", line)


def test_python_api_example_runs(tmp_path: Path) -> None:
    """The README's Python API example runs as printed, in a fresh directory, with its asserts."""
    (block,) = re.findall(r"```python\n(.*?)```", section("Python API"), flags=re.DOTALL)
    script = tmp_path / "example.py"
    script.write_text(block, encoding="utf-8")
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("ids; no difference found"), result.stdout
    assert (tmp_path / "tok.json").exists()


def _no_milliseconds(text: str) -> str:
    return re.sub(r"\d+(\.\d+)? ms", "… ms", text)


def test_demo_listing_is_what_the_demo_prints() -> None:
    """The README's demo listing is the whole output of ``bpeproof demo`` (timings aside)."""
    (listing,) = text_blocks(section("What the demo prints"))
    done = subprocess.run([sys.executable, "-m", "bpeproof", "demo"], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert _no_milliseconds(done.stdout.strip()) == _no_milliseconds(listing)
