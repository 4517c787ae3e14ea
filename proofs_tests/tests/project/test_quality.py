"""The project's own standards as tests: type checks, lint, and the layers (each importing only downward)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

#: The layers, lowest first: each folder may import only from the layers before it (and from itself).  The
#: engine (impl/) may take from the specification only its types and errors, never a function to call.
LAYERS: dict[str, int] = {"spec": 0, "impl": 1, "proofs_tests": 2, "audit": 2, "bpeproof": 3}
ENGINE_MAY_USE = {"bpeproof.spec.types"}
#: The layers' folders, which are installed only under bpeproof (bpeproof/spec links to spec/, and so on).
FOLDERS = ("spec", "impl", "proofs_tests", "audit")


def _sources() -> list[Path]:
    """Every Python file of the package by its real path (not through bpeproof/'s links to the folders).

    The test modules are left out: they test every layer, the command line included, from above.
    """
    found = [*(ROOT / "bpeproof").glob("*.py"), *(ROOT / "bpeproof" / "commands").rglob("*.py")]
    for folder in FOLDERS:
        found += (ROOT / folder).rglob("*.py")
    return sorted(path for path in found if not path.name.startswith("test_") and path.name != "conftest.py")


def _module_parts(path: Path, root: Path) -> tuple[str, ...]:
    parts = path.relative_to(root).with_suffix("").parts
    return parts if parts[0] == "bpeproof" else ("bpeproof", *parts)


def imported_modules(path: Path, root: Path) -> list[str]:
    """The absolute names of the modules ``path`` imports (relative imports resolved as installed)."""
    parts = _module_parts(path, root)
    package = parts if parts[-1] == "__init__" else parts[:-1]
    package = package[:-1] if package and package[-1] == "__init__" else package
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            # ``from bpeproof import spec`` imports the subpackage: name it, not the package above it.
            names = [f"{module}.{alias.name}" for alias in node.names]
            found += names if not node.module or module == "bpeproof" else [module]
    return found


def _layer_of(module: str) -> str | None:
    """The folder a module of the project lives in; None for a module from elsewhere."""
    parts = module.split(".")
    if parts[0] != "bpeproof":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in FOLDERS else "bpeproof"


def layer_violations(path: Path, root: Path = ROOT) -> list[str]:
    """The imports of ``path`` that go up or sideways, or name a layer's folder as a package of its own."""
    folder = _module_parts(path, root)[1] if _module_parts(path, root)[1] in FOLDERS else "bpeproof"
    bad: list[str] = []
    for module in imported_modules(path, root):
        if module.split(".")[0] in FOLDERS:
            bad.append(f"{module} (installed only as bpeproof.{module})")
            continue
        target = _layer_of(module)
        if target is None or target == folder:
            continue
        if folder == "impl" and target == "spec":
            if module not in ENGINE_MAY_USE:
                bad.append(f"{module} (the engine uses only {', '.join(sorted(ENGINE_MAY_USE))})")
        elif LAYERS[target] >= LAYERS[folder]:
            bad.append(f"{module} ({target} is not below {folder})")
    return bad


def test_layers_import_only_downward() -> None:
    offenders = {str(path.relative_to(ROOT)): bad for path in _sources() for bad in [layer_violations(path)] if bad}
    assert not offenders, f"imports against the layers (spec -> impl -> proofs_tests, audit -> bpeproof): {offenders}"


@pytest.mark.parametrize(
    ("folder", "source", "expected"),
    [
        ("impl", "from bpeproof.spec.bpe import enc\n", "bpeproof.spec.bpe"),
        ("impl", "import bpeproof.spec\n", "bpeproof.spec"),
        ("spec", "from bpeproof.impl.encoder import enc\n", "bpeproof.impl.encoder"),
        ("proofs_tests", "from bpeproof.audit.report import audit\n", "bpeproof.audit.report"),
        ("impl", "from bpeproof.commands import UsageError\n", "bpeproof.commands"),
        ("audit", "from impl.encoder import enc\n", "impl.encoder"),
        ("spec", "from bpeproof import impl\n", "bpeproof.impl"),
        ("impl", "from ...commands import UsageError\n", "bpeproof.commands"),
    ],
)
def test_layer_check_catches(tmp_path: Path, folder: str, source: str, expected: str) -> None:
    """The layer test fails on each kind of wrong import (written into a scratch tree laid out like the project)."""
    module = tmp_path / folder / "sub" / "x.py"
    module.parent.mkdir(parents=True)
    module.write_text(source, encoding="utf-8")
    bad = layer_violations(module, tmp_path)
    assert len(bad) == 1 and bad[0].startswith(expected), bad


def test_layer_check_allows_the_engine_its_types(tmp_path: Path) -> None:
    module = tmp_path / "impl" / "x.py"
    module.parent.mkdir()
    module.write_text("from bpeproof.spec.types import Rule\nfrom .encoder import enc\n", encoding="utf-8")
    assert layer_violations(module, tmp_path) == []


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
