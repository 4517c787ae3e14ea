"""Test settings: no per-example deadline (the specification is slow by design, and timing is no test here)."""

from __future__ import annotations

import os
import shutil
import stat
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
    from bpeproof.proofs_tests.proofs import crosshair_runs

    return crosshair_runs.groups_for(files)  # the runs kept out of CI ("extra") start only on demand


def _private_directory(name: str) -> str:
    """``name`` in the temporary directory, kept from one run to the next when it is this user's alone (no link,
    no access for others); else a fresh one, so that nobody else's files are ever imported."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    path = Path(tempfile.gettempdir()) / f"{name}-{uid}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        status = path.lstat()
        if stat.S_ISLNK(status.st_mode) or status.st_uid != uid or status.st_mode & 0o077:
            raise PermissionError(path)
    except OSError:
        return tempfile.mkdtemp(prefix=f"{name}-")
    return str(path)


def _cache_bytecode() -> None:
    """Under ``PYTHONDONTWRITEBYTECODE``, each of the suite's many Python processes (workers, the checker's
    processes, every command run as a user would, CrossHair) compiled every module it imports again: collecting
    took 4.3 s instead of 1.2.  The suite's processes cache their bytecode under a prefix in the temporary directory
    instead, so the tree stays free of .pyc files as the variable asks (a cached file is used only while its
    source's size and time stamp match)."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or _private_directory("bpeproof-pycache")
    os.environ.pop("PYTHONDONTWRITEBYTECODE")
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


def _private_vocabulary_cache(config: pytest.Config) -> None:
    """The compiled-vocabulary cache (``bpeproof.impl.io.vocab_cache``) of the whole run: a fresh directory, never
    the user's, named before any worker or command starts so that every process of the suite inherits it."""
    if hasattr(config, "workerinput"):
        return  # a pytest-xdist worker: its controller named the directory
    directory = tempfile.mkdtemp(prefix="bpeproof-vocab-cache-")
    os.environ["BPEPROOF_CACHE_DIR"] = directory
    config.stash[_VOCAB_CACHE] = Path(directory)


_VOCAB_CACHE = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, the controller runs the CrossHair processes: it names a directory for their results
    here, before the workers start, so that they inherit it.  Every process caches its bytecode
    (``_cache_bytecode``) and compiled vocabularies in the run's own directory (``_private_vocabulary_cache``)."""
    _cache_bytecode()
    _private_vocabulary_cache(config)
    if getattr(config.option, "dist", "no") != "no" and not hasattr(config, "workerinput"):
        from bpeproof.proofs_tests.proofs import crosshair_runs

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
    from bpeproof.proofs_tests.proofs import crosshair_runs

    crosshair_runs.serve(_crosshair_files({item.split("::")[0].rsplit("/", 1)[-1] for item in ids}), directory)


_SERVING = pytest.StashKey[bool]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the CrossHair runs as soon as a test that needs them is collected, so that they run beside the rest
    of the suite instead of after it (their budgets count CPU seconds: the verdicts do not depend on the load).
    A pytest-xdist worker starts none: its controller runs them."""
    if hasattr(session.config, "workerinput"):
        return
    files = {Path(str(item.fspath)).name for item in session.items}
    from bpeproof.proofs_tests.proofs import crosshair_runs

    for group in _crosshair_files(files):
        crosshair_runs.start(group)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """End the CrossHair runs nobody waits for any more (``pytest -x`` stopped at a failure, or a test was
    deselected), instead of waiting for them at exit."""
    runs = sys.modules.get("bpeproof.proofs_tests.proofs.crosshair_runs")
    if runs is not None:
        runs.stop()


def pytest_unconfigure(config: pytest.Config) -> None:
    for key in (_RESULTS, _VOCAB_CACHE):
        directory = config.stash.get(key, None)
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
