"""pytest plugin: run the project's checks against another module's ``enc``, ``dec`` and ``train``.

    pytest -p proofs_tests.plugin --pyargs proofs_tests --bpe-impl mymod [--bpe-seconds 20]

(``-p proofs_tests.plugin`` is not needed once the project is installed: ``pyproject.toml``
registers this module under ``[project.entry-points.pytest11]``.)

With ``--bpe-impl MOD`` only the tests named ``test_bpe_impl_*`` run (the rest of the
project's suite is deselected): one test each for ``MOD.enc`` (def-bpe,
thm-bpe-roundtrip, prop-bpe-length-monotone), ``MOD.dec`` (def-alphabet-vocab)
and ``MOD.train`` (def-bpe, prop-bpe-training-termination, prop-bpe-vocab-size),
skipped when the module has no such function.  A failing test prints the checker's
report: the claim, the shrunk input, the spec's and the implementation's answers.
Without the option those tests skip and nothing else changes.
"""

from __future__ import annotations

import pytest

#: Tests whose names start with this are the checks that ``--bpe-impl`` runs.
PREFIX = "test_bpe_impl_"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bpeproof", "checking a BPE implementation against the specification")
    group.addoption("--bpe-impl", metavar="MOD", default=None,
                    help="check MOD.enc, MOD.dec and MOD.train against the specification (bpeproof check)")
    group.addoption("--bpe-seconds", metavar="N", type=float, default=10.0,
                    help="time budget per function for --bpe-impl (default 10)")
    group.addoption("--bpe-seed", metavar="N", type=int, default=None, help="seed for --bpe-impl (default random)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--bpe-impl``, keep only the implementation checks."""
    if not config.getoption("--bpe-impl", default=None):
        return
    keep = [item for item in items if item.name.startswith(PREFIX)]
    drop = [item for item in items if not item.name.startswith(PREFIX)]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture
def bpe_impl(request: pytest.FixtureRequest) -> str:
    """The module given with ``--bpe-impl``; the test skips without it."""
    module = request.config.getoption("--bpe-impl", default=None)
    if not module:
        pytest.skip("no --bpe-impl MOD given")
    return str(module)
