"""Test settings: no per-example deadline (the specification is slow by design, and timing is no test here)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "bpeproof",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("bpeproof")


def _crosshair_files(files: set[str]) -> list[str]:
    from bpeproof.proofs_tests import crosshair_runs

    return crosshair_runs.groups_for(files)  # the runs kept out of CI ("extra") start only on demand


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, the controller runs the CrossHair processes: it names a directory for their results
    here, before the workers start, so that they inherit it."""
    if getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput"):
        from bpeproof.proofs_tests import crosshair_runs

        directory = tempfile.mkdtemp(prefix="bpeproof-crosshair-")
        os.environ[crosshair_runs.RESULTS_VARIABLE] = directory
        config.stash[_RESULTS] = Path(directory)


_RESULTS = pytest.StashKey[Path]()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """The controller starts the CrossHair runs the collected tests need as soon as a worker has collected them."""
    config: pytest.Config = node.config
    directory = config.stash.get(_RESULTS, None)
    if directory is None or config.stash.get(_SERVING, False):
        return
    config.stash[_SERVING] = True
    from bpeproof.proofs_tests import crosshair_runs

    crosshair_runs.serve(_crosshair_files({item.split("::")[0].rsplit("/", 1)[-1] for item in ids}), directory)


_SERVING = pytest.StashKey[bool]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the CrossHair runs as soon as a test that needs them is collected, so that they run beside the rest
    of the suite instead of after it (their budgets count CPU seconds: the verdicts do not depend on the load).
    A pytest-xdist worker starts none: its controller runs them."""
    if hasattr(session.config, "workerinput"):
        return
    files = {Path(str(item.fspath)).name for item in session.items}
    from bpeproof.proofs_tests import crosshair_runs

    for group in _crosshair_files(files):
        crosshair_runs.start(group)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """End the CrossHair runs nobody waits for any more (``pytest -x`` stopped at a failure, or a test was
    deselected), instead of waiting for them at exit."""
    runs = sys.modules.get("bpeproof.proofs_tests.crosshair_runs")
    if runs is not None:
        runs.stop()


def pytest_unconfigure(config: pytest.Config) -> None:
    directory = config.stash.get(_RESULTS, None)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)
