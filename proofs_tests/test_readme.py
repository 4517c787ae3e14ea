"""The README's commands work verbatim, as a new user would run them, in a fresh virtual environment."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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
