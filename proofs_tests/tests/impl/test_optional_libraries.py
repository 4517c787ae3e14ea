"""A missing optional library is named with the extra that installs it (``impl.optional_libraries``)."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

from bpeproof.impl.optional_libraries import DISTRIBUTION_OF, EXTRA_OF, LibraryMissingError, require

ROOT = Path(__file__).resolve().parents[3]


def test_a_missing_library_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # None in sys.modules: the import fails as if not installed
    with pytest.raises(LibraryMissingError) as raised:
        require("tiktoken", "the audit of a tiktoken file")
    message = str(raised.value)
    assert message.startswith("the audit of a tiktoken file needs tiktoken, which is not installed")
    assert "pip install 'bpeproof[compare]'" in message and "\n" not in message


def test_an_installed_library_is_returned() -> None:
    assert require("json", "reading") is sys.modules["json"]


def test_a_failing_import_inside_the_library_is_not_called_missing(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "brokenlib.py").write_text("import no_such_module_here\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as raised:
        require("brokenlib", "testing")
    assert not isinstance(raised.value, LibraryMissingError) and raised.value.name == "no_such_module_here"


def test_every_extra_named_installs_the_library() -> None:
    """The table of extras agrees with pyproject.toml: each module's extra lists its distribution."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for module, extra in EXTRA_OF.items():
        names = {re.split(r"[<>=\[]", requirement)[0].replace("-", "_") for requirement in extras[extra]}
        distribution = re.split(r"\[", DISTRIBUTION_OF.get(module, module))[0].replace("-", "_")
        assert distribution in names, (module, extra, names)
