"""pytest plugin: run the project's checks against another module's ``enc``, ``dec`` and ``train``.

    pytest -p bpeproof.proofs_tests.plugin --pyargs bpeproof.proofs_tests --bpe-impl mymod [--bpe-seconds 20]

(``-p bpeproof.proofs_tests.plugin`` is not needed once the project is installed: ``pyproject.toml``
registers this module under ``[project.entry-points.pytest11]``.)

With ``--bpe-impl MOD`` only the tests named ``test_bpe_impl_*`` run (the rest of the
project's suite is deselected): one test each for ``MOD.enc`` (def-bpe,
thm-bpe-roundtrip, prop-bpe-length-monotone), ``MOD.dec`` (def-alphabet-vocab)
and ``MOD.train`` (def-bpe, prop-bpe-training-termination, prop-bpe-vocab-size),
skipped when the module has no such function.  A failing test prints the checker's
report: the claim, the shrunk input, the spec's and the implementation's answers.
Without the option those tests skip and nothing else changes.

A text → ids tokenizer (``FUNC(text) -> list[int]``) is checked against a vocabulary
file's reference tokenizer the same way (``bpeproof check --tokenizer``)::

    pytest --pyargs bpeproof.proofs_tests --bpe-tokenizer mymod:encode --bpe-vocab cl100k_base.tiktoken
           [--bpe-pattern cl100k] [--bpe-decode mymod:decode] [--bpe-seconds 20] [--bpe-examples N]
           [--bpe-ignore GROUP ...] [--bpe-ignore-file FILE] [--bpe-special NAME=ID ...]
           [--bpe-special-names text|allowed|always] [--bpe-corpus FILE...]

which runs only ``test_bpe_tokenizer`` (``proofs_tests/tests/checker/test_checker_tokenizer.py``).
"""

from __future__ import annotations

import pytest

#: Tests whose names start with this are the checks that ``--bpe-impl`` runs.
PREFIX = "test_bpe_impl_"
#: The test that ``--bpe-tokenizer`` runs.
TOKENIZER_TEST = "test_bpe_tokenizer"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bpeproof", "checking a BPE implementation against the specification")
    group.addoption("--bpe-impl", metavar="MOD", default=None,
                    help="check MOD.enc, MOD.dec and MOD.train against the specification (bpeproof check)")
    group.addoption("--bpe-seconds", metavar="N", type=float, default=10.0,
                    help="time budget per function for --bpe-impl (default 10)")
    group.addoption("--bpe-seed", metavar="N", type=int, default=None, help="seed for --bpe-impl (default random)")
    group.addoption("--bpe-tokenizer", metavar="MOD:FUNC", default=None,
                    help="check FUNC(text) -> list[int] against --bpe-vocab's reference tokenizer")
    group.addoption("--bpe-vocab", metavar="FILE", default=None, help="the vocabulary file for --bpe-tokenizer")
    group.addoption("--bpe-pattern", metavar="NAME|REGEX", default=None, help="pre-tokenization pattern for"
                    " --bpe-vocab (default: the file's own)")
    group.addoption("--bpe-decode", metavar="MOD:FUNC", default=None, help="decode(ids) -> str for --bpe-tokenizer")
    group.addoption("--bpe-examples", metavar="N", type=int, default=None, help="--bpe-tokenizer stops after N texts"
                    " (with --bpe-seed: the same texts on any machine)")
    group.addoption("--bpe-ignore", metavar="GROUP", action="append", default=None, help="--bpe-tokenizer: a group"
                    " of differences to set aside (repeatable; see bpeproof check --ignore)")
    group.addoption("--bpe-ignore-file", metavar="FILE", default=None, help="--bpe-tokenizer: group keys to set"
                    " aside, one a line")
    group.addoption("--bpe-special", metavar="NAME=ID", action="append", default=None, help="--bpe-tokenizer: a"
                    " special token of --bpe-vocab (repeatable)")
    group.addoption("--bpe-special-names", choices=["text", "allowed", "always"], default=None,
                    help="--bpe-tokenizer: how FUNC reads special tokens' names (see bpeproof check"
                    " --special-names)")
    group.addoption("--bpe-corpus", metavar="FILE", nargs="+", default=None, help="text files (UTF-8, plain or .gz)"
                    " whose lines --bpe-tokenizer checks among its texts")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--bpe-impl`` (``--bpe-tokenizer``), keep only the implementation (tokenizer) checks."""
    impl = config.getoption("--bpe-impl", default=None)
    tokenizer = config.getoption("--bpe-tokenizer", default=None)
    if not impl and not tokenizer:
        return

    def wanted(item: pytest.Item) -> bool:
        return bool((impl and item.name.startswith(PREFIX)) or (tokenizer and item.name == TOKENIZER_TEST))

    keep = [item for item in items if wanted(item)]
    drop = [item for item in items if not wanted(item)]
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
