"""The project's own standards as tests: type checks, lint, and the layers (each importing only downward)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

#: The layers, lowest first: each folder may import only from the layers before it (and from itself).  The
#: engine (impl/) may take from the specification only its types and errors, never a function to call.
LAYERS: dict[str, int] = {"spec": 0, "impl": 1, "proofs_tests": 2, "audit": 2, "bpeproof": 3}
ENGINE_MAY_USE = {"bpeproof.spec.types"}
#: The modules of proofs_tests/ that the audit, beside it, may use too: the adapters of the third-party libraries
#: that both compare with.  Such a module imports nothing of proofs_tests/ itself, so the audit reaches no more.
SHARED_WITH_AUDIT = {"bpeproof.proofs_tests.libraries"}
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
    shared = ".".join(_module_parts(path, root)) in SHARED_WITH_AUDIT
    bad: list[str] = []
    for module in imported_modules(path, root):
        if module.split(".")[0] in FOLDERS:
            bad.append(f"{module} (installed only as bpeproof.{module})")
            continue
        target = _layer_of(module)
        if shared and target == folder:
            bad.append(f"{module} (a module the audit shares imports only from the layers below {folder})")
            continue
        if target is None or target == folder or (folder == "audit" and module in SHARED_WITH_AUDIT):
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
        ("audit", "from bpeproof.proofs_tests.checker.library import Library\n", "bpeproof.proofs_tests.checker"),
    ],
)
def test_layer_check_catches(tmp_path: Path, folder: str, source: str, expected: str) -> None:
    """The layer test fails on each kind of wrong import (written into a scratch tree laid out like the project)."""
    module = tmp_path / folder / "sub" / "x.py"
    module.parent.mkdir(parents=True)
    module.write_text(source, encoding="utf-8")
    bad = layer_violations(module, tmp_path)
    assert len(bad) == 1 and bad[0].startswith(expected), bad


def test_layer_check_allows_the_audit_the_shared_adapters_only(tmp_path: Path) -> None:
    """The audit may import the libraries' adapters of proofs_tests/, which may import nothing else of it."""
    audit = tmp_path / "audit" / "x.py"
    audit.parent.mkdir()
    audit.write_text("from bpeproof.proofs_tests.libraries import TiktokenLibrary\n", encoding="utf-8")
    assert layer_violations(audit, tmp_path) == []
    shared = tmp_path / "proofs_tests" / "libraries.py"
    shared.parent.mkdir()
    shared.write_text("from bpeproof.impl.formats import Vocab\nfrom bpeproof.proofs_tests.checker import worker\n",
                      encoding="utf-8")
    bad = layer_violations(shared, tmp_path)
    assert len(bad) == 1 and bad[0].startswith("bpeproof.proofs_tests.checker"), bad


def test_layer_check_allows_the_engine_its_types(tmp_path: Path) -> None:
    module = tmp_path / "impl" / "x.py"
    module.parent.mkdir()
    module.write_text("from bpeproof.spec.types import Rule\nfrom .encoder import enc\n", encoding="utf-8")
    assert layer_violations(module, tmp_path) == []


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``: a condition true only for the type checker."""
    name = test.attr if isinstance(test, ast.Attribute) else test.id if isinstance(test, ast.Name) else None
    return name == "TYPE_CHECKING"


def _run_time_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that runs (inside functions too), not those under ``if TYPE_CHECKING:``."""
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            pending += node.orelse
        elif (isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
              and _is_type_checking(node.test.operand)):
            pending += node.body
        else:
            pending += ast.iter_child_nodes(node)


def module_name(path: Path, root: Path) -> str:
    """The installed name of a file of the package; a package's ``__init__.py`` is the package itself."""
    parts = _module_parts(path, root)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _known(name: str, modules: Container[str]) -> str | None:
    """The module of the project that importing ``name`` runs: the longest of its prefixes that is one."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in modules:
            return ".".join(parts[:end])
    return None


def import_graph(paths: Iterable[Path], root: Path = ROOT) -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports when it runs.

    Imports inside functions count (they run when called); imports under ``if TYPE_CHECKING:`` do not (they never
    run); a module's name in a string counts (``_string_imports``: ``importlib.import_module`` of it).
    ``from pkg import name`` imports the module ``pkg.name`` when there is one, else ``pkg``.  A package is
    the node of its ``__init__.py``; importing ``pkg.mod`` is an edge to ``pkg.mod`` only, not to ``pkg``, so that a
    package whose ``__init__`` re-exports its modules' names is not a cycle with each of them.
    """
    files = {module_name(path, root): path for path in paths}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        parts = _module_parts(path, root)
        package = parts[:-1]
        for node in _run_time_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
                module = ".".join(part for part in (base, node.module or "") if part)
                targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in files else module
                           for alias in node.names]
            for target in targets:
                known = _known(target, files)
                if known is not None and known != name:
                    graph[name].add(known)
        for target in _string_imports(ast.parse(path.read_text(encoding="utf-8")), files):
            if target != name and files[target].name != "__init__.py":
                graph[name].add(target)
    return graph


def _string_imports(tree: ast.AST, modules: Container[str]) -> set[str]:
    """The modules of the package a module names in a string of its own: ``"bpeproof.impl.x"`` or
    ``"bpeproof.impl.x:Name"``, handed to ``importlib.import_module`` (directly, or from a table) or to a loader of
    classes by name.  Such a string is an import the statements do not show, so it counts as one (the caller leaves
    out a package, as an import of ``pkg.mod`` is no edge to ``pkg``: ``resources.files("bpeproof.impl")`` reads
    the package's data)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            module = node.value.partition(":")[0]
            if "." in module and module in modules:  # (a bare word such as a format's name "bpeproof" is none)
                found.add(module)
    return found


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component: list[str] = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


def _a_cycle(graph: Mapping[str, Iterable[str]], component: Sequence[str]) -> list[str]:
    """One cycle through the first module of a component, found breadth-first within the component."""
    start, members = component[0], set(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for successor in sorted(graph[node]):
                if successor == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if successor in members and successor not in came_from:
                    came_from[successor] = node
                    following.append(successor)
        frontier = following
    return list(component)


def import_cycles(paths: Iterable[Path], root: Path = ROOT) -> list[str]:
    """Each cycle of imports among the modules: its component's modules and one cycle through them."""
    graph = import_graph(paths, root)
    return [f"{{{', '.join(component)}}}: {' -> '.join(_a_cycle(graph, component))}"
            for component in strongly_connected(graph)]


def test_no_import_cycles() -> None:
    """No module imports, even inside a function, a module that imports it back (directly or through others)."""
    cycles = import_cycles(_sources())
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def _package_modules(root: Path) -> set[str]:
    """The installed names of the package's modules, compiled extensions (``impl/_c/*.c``) included."""
    files = [source for folder in (*FOLDERS, "bpeproof") for source in (root / folder).rglob("*.py")]
    extensions = {f"{module_name(source.with_suffix('.py'), root)}" for source in (root / "impl").rglob("*.c")}
    return {module_name(source, root) for source in files} | extensions


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(path: Path, root: Path = ROOT, modules: Container[str] | None = None) -> list[str]:
    """The private names (``_x``, not ``__x__``) of another module of the package that ``path`` uses: imported by
    name (``from m import _x``) or read from the module (``import m`` … ``m._x``).  A private module itself
    (``from bpeproof.impl._c import _fastenc``) is no private name of another module.  ``modules``: the package's
    modules (``_package_modules(root)``), given by a caller that checks many files, which lists them once."""
    package = _module_parts(path, root)[:-1]
    modules = _package_modules(root) if modules is None else modules
    own = module_name(path, root)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    aliases: dict[str, str] = {}  # a local name → the package module it stands for
    for node in _run_time_imports(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules and alias.asname:
                    aliases[alias.asname] = alias.name
            continue
        base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
        module = ".".join(part for part in (base, node.module or "") if part)
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if full in modules:
                aliases[alias.asname or alias.name] = full
            elif _private(alias.name) and module.startswith("bpeproof") and module != own:
                found.append(full)
    for use in ast.walk(tree):
        if (isinstance(use, ast.Attribute) and _private(use.attr) and isinstance(use.value, ast.Name)
                and use.value.id in aliases and aliases[use.value.id] != own):
            found.append(f"{aliases[use.value.id]}.{use.attr}")
    return sorted(set(found))


def _every_file() -> list[Path]:
    """Every Python file of the package, tests included, by its real path."""
    found = [*(ROOT / "bpeproof").glob("*.py"), *(ROOT / "bpeproof" / "commands").rglob("*.py")]
    for folder in FOLDERS:
        found += (ROOT / folder).rglob("*.py")
    return sorted(found)


def test_no_private_name_is_used_outside_its_module() -> None:
    """Each module, test modules too, uses only the public names of the others: what one needs of another is part
    of that module's interface, and named so."""
    modules = _package_modules(ROOT)
    offenders = {str(path.relative_to(ROOT)): bad for path in _every_file()
                 for bad in [private_imports(path, ROOT, modules)] if bad}
    assert not offenders, offenders


def test_private_import_check_catches(tmp_path: Path) -> None:
    module = tmp_path / "impl" / "parallel" / "x.py"
    module.parent.mkdir(parents=True)
    (tmp_path / "impl" / "parallel" / "errors.py").write_text("", encoding="utf-8")
    (tmp_path / "impl" / "y.py").write_text("", encoding="utf-8")
    module.write_text("from .errors import _payload, WorkerError\nfrom bpeproof.impl.y import __version__\n"
                      "from bpeproof.impl import y\nimport bpeproof.impl.y as why\ny._hidden(why._other)\n",
                      encoding="utf-8")
    assert private_imports(module, tmp_path) == ["bpeproof.impl.parallel.errors._payload", "bpeproof.impl.y._hidden",
                                                 "bpeproof.impl.y._other"]


def _scratch_tree(tmp_path: Path, files: Mapping[str, str]) -> list[Path]:
    for name, source in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(source, encoding="utf-8")
    return sorted(tmp_path.rglob("*.py"))


def test_cycle_check_catches(tmp_path: Path) -> None:
    """Two modules importing each other, one of them inside a function and relatively, are a cycle."""
    paths = _scratch_tree(tmp_path, {
        "impl/__init__.py": "",
        "impl/a.py": "from bpeproof.impl.b import g\n\ndef f() -> None:\n    g()\n",
        "impl/b.py": "def g() -> None:\n    from . import a\n    a.f()\n",
        "impl/c.py": "from bpeproof.impl import a\n",
    })
    assert import_cycles(paths, tmp_path) == [
        "{bpeproof.impl.a, bpeproof.impl.b}: bpeproof.impl.a -> bpeproof.impl.b -> bpeproof.impl.a"
    ]


def test_cycle_check_catches_imports_by_name(tmp_path: Path) -> None:
    """A module reached through ``importlib.import_module`` of a name in a table (a hook that lets a class call up
    the layers) is an import: the cycle it closes is found."""
    paths = _scratch_tree(tmp_path, {
        "impl/__init__.py": "",
        "impl/tokenizer.py": "from bpeproof.impl import hooks\n\nclass Tokenizer:\n    load = hooks.load\n",
        "impl/hooks.py": "import importlib\n\n_ENTRY = {'load': ('bpeproof.impl.registry', 'load')}\n\n"
                         "def load() -> object:\n    module, name = _ENTRY['load']\n"
                         "    return getattr(importlib.import_module(module), name)()\n",
        "impl/registry.py": "from bpeproof.impl.tokenizer import Tokenizer\n\ndef load() -> Tokenizer:\n"
                            "    return Tokenizer()\n",
    })
    assert import_cycles(paths, tmp_path) == [
        "{bpeproof.impl.hooks, bpeproof.impl.registry, bpeproof.impl.tokenizer}: bpeproof.impl.hooks ->"
        " bpeproof.impl.registry -> bpeproof.impl.tokenizer -> bpeproof.impl.hooks"
    ]


def test_cycle_check_ignores_type_checking(tmp_path: Path) -> None:
    """An import only the type checker runs (``if TYPE_CHECKING:``) is no cycle; the ``else`` branch still counts."""
    paths = _scratch_tree(tmp_path, {
        "impl/a.py": "from bpeproof.impl.b import g\n",
        "impl/b.py": "import typing\n\nif typing.TYPE_CHECKING:\n    from bpeproof.impl.a import f\n",
        "impl/c.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    pass\nelse:\n"
                     "    from bpeproof.impl import d\n",
        "impl/d.py": "from bpeproof.impl import c\n",
    })
    assert import_cycles(paths, tmp_path) == [
        "{bpeproof.impl.c, bpeproof.impl.d}: bpeproof.impl.c -> bpeproof.impl.d -> bpeproof.impl.c"
    ]
    assert import_graph(paths, tmp_path)["bpeproof.impl.b"] == set()


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
