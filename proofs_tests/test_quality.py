"""The project's own standards as tests: type checks, lint, and the wall between spec and implementation."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Parts of ``impl`` that use the specification on purpose: the command line and the reports compare against it
#: or show it.  Everything else in ``impl`` is the engine that the specification judges, and may import only
#: ``spec.types``.
USES_SPEC = {"impl/cli.py", "impl/demo.py", "impl/audit.py", "impl/audit_html.py", "impl/commands"}


def uses_spec(path: Path) -> bool:
    relative = path.relative_to(ROOT).as_posix()
    return any(relative == allowed or relative.startswith(allowed + "/") for allowed in USES_SPEC)


def spec_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.split(".")[0] == "spec"]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "spec":
            found.append(node.module)
    return found


def test_engine_never_imports_the_spec() -> None:
    offenders = {
        str(path.relative_to(ROOT)): bad
        for path in sorted((ROOT / "impl").rglob("*.py"))
        if not uses_spec(path)
        for bad in [[name for name in spec_imports(path) if name != "spec.types"]]
        if bad
    }
    assert not offenders, f"the implementation imports the specification: {offenders}"


def test_spec_never_imports_the_implementation() -> None:
    for path in (ROOT / "spec").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "import impl" not in text and "from impl" not in text, path


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=900)


def test_ruff_clean() -> None:
    pytest.importorskip("ruff")
    result = _run(sys.executable, "-m", "ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_clean() -> None:
    pytest.importorskip("mypy")
    result = _run(sys.executable, "-m", "mypy", "--strict")
    assert result.returncode == 0, result.stdout + result.stderr
