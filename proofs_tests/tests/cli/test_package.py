"""One installed name: ``bpeproof``, its lazy public API, ``python -m bpeproof`` and ``--version``."""

from __future__ import annotations

import base64
import importlib
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

import bpeproof
from bpeproof.impl.tokenizer import Tokenizer


def test_importing_bpeproof_loads_no_layer() -> None:
    code = ("import sys, bpeproof; print(json.dumps(sorted(m for m in sys.modules if m.startswith('bpeproof')"
            " or m in ('hypothesis', 'regex', 'pytest'))))")
    done = subprocess.run([sys.executable, "-c", f"import json; {code}"], capture_output=True, text=True, timeout=60,
                          check=True)
    assert json.loads(done.stdout) == ["bpeproof"]


@pytest.mark.parametrize("name", sorted(set(bpeproof.__all__) - {"__version__"}))
def test_public_names_are_the_layers_own_objects(name: str) -> None:
    module, attribute = bpeproof._API[name]
    assert getattr(bpeproof, name) is getattr(importlib.import_module(module), attribute)


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        bpeproof.nothing  # noqa: B018


def test_version_is_the_distributions() -> None:
    assert bpeproof.__version__ == importlib.metadata.version("bpeproof")
    for command in ([sys.executable, "-m", "bpeproof", "--version"], [str(Path(sys.executable).parent / "bpeproof"),
                                                                       "--version"]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0 and done.stdout.strip() == f"bpeproof {bpeproof.__version__}", done


def test_python_m_bpeproof_is_the_command_line() -> None:
    done = subprocess.run([sys.executable, "-m", "bpeproof", "encode", "abc", "--vocab", "nothing.json"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "nothing.json" in done.stderr, done


def test_one_top_level_name_is_installed() -> None:
    top = importlib.metadata.distribution("bpeproof").read_text("top_level.txt")
    assert top is not None and top.split() == ["bpeproof"]


def test_tokenizer_load_reads_every_format(tmp_path: Path) -> None:
    """``Tokenizer.load`` is the one loader: a tiktoken rank file works as well as the project's own file."""
    ranks = [bytes([b]) for b in range(256)] + [b"ab", b"abc"]
    rank_file = tmp_path / "tiny.tiktoken"
    rank_file.write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(ranks)))
    loaded = Tokenizer.load(rank_file, pattern="words")
    assert loaded.semantics == "tiktoken" and loaded.encode("abc ab") == [257, 32, 256]
    assert bpeproof.load(str(rank_file), "words").encode("abc ab") == [257, 32, 256]
    project = tmp_path / "tok.json"
    Tokenizer([(97, 98, 256)], "words").save(project)
    assert Tokenizer.load(project).encode("ab") == [256]


def test_pytest_plugin_costs_nothing_when_unused() -> None:
    """The plugin registered for every pytest run loads no layer of the project (no import cost, no side effect)."""
    code = ("import sys, json, bpeproof.proofs_tests.plugin; print(json.dumps(sorted(m for m in sys.modules"
            " if m.startswith(('bpeproof', 'hypothesis', 'crosshair', 'regex')))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(done.stdout) == ["bpeproof", "bpeproof.proofs_tests", "bpeproof.proofs_tests.plugin"]
