"""Test settings: no per-example deadline (the specification is slow by design, and timing is no test here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "bpeproof",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("bpeproof")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the CrossHair runs as soon as a test that needs them is collected, so that they run beside the rest
    of the suite instead of after it (their budgets count CPU seconds: the verdicts do not depend on the load)."""
    files = {Path(str(item.fspath)).name for item in session.items}
    if any(file.startswith("test_crosshair_") for file in files):
        from proofs_tests import crosshair_runs

        for group in crosshair_runs.groups_for(files):  # the runs kept out of CI ("extra") start only on demand
            crosshair_runs.start(group)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """End the CrossHair runs nobody waits for any more (``pytest -x`` stopped at a failure, or a test was
    deselected), instead of waiting for them at exit."""
    runs = sys.modules.get("proofs_tests.crosshair_runs")
    if runs is not None:
        runs.stop()
