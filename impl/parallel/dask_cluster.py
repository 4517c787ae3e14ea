"""The tasks of ``impl.parallel`` on a Dask cluster (``--engine dask``): one machine or many.

``DaskEngine`` is a ``parallel.TaskEngine``: it schedules the very functions the worker processes of
``impl.parallel`` run (``count_task``: one byte range counted; ``encode_task``: one range encoded; the audit's
corpus statistics), with Dask's futures, on the workers of a ``distributed`` cluster.  Nothing is computed
here that is not computed there: the ranges are planned by ``parallel.plans.plan_ranges`` on the client, the count
tables are added by ``parallel.merge_counts`` in a tree of tasks (``FAN_IN`` tables at a time, each sum a task on a
worker; only the root comes back), the ids are written in order by ``token_arrays.NpyWriter`` on the client, and the
merge loop of training runs on the client on the summed table.  So the results are those of one process: the
same table (however the text is cut), the same rules, the same ``.npy`` bytes.

``dask_engine(scheduler, workers)`` connects to the scheduler at ``scheduler`` (or Dask's ``scheduler-address``
setting, e.g. the environment variable ``DASK_SCHEDULER_ADDRESS``), or, without one, starts a
``distributed.LocalCluster`` of ``workers`` processes with one thread each and closes it at the end.  The files
are read by the workers at the path given on the client: on a cluster they must be on a file system every
worker sees at the same path, and bpeproof must be installed on every worker.

Faults.  A task that raises (a file that cannot be read, text that is not UTF-8) is not retried (``retries=0``:
the same file gives the same error); its error comes back whole and the run fails with it, the first failing
task in reading order, the file named.  A file that cannot be opened at all stops the run before any task
starts.  A task whose worker dies is given to another worker by the scheduler, up to its
``distributed.scheduler.allowed-failures`` (Dask's default: 3) times; then the run fails naming the file
("KilledWorker").  A cluster started here allows none (``allowed-failures`` 0): a worker that dies fails the run
at once, as a worker process of ``--workers`` does.  Nothing is written unless every task succeeded.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any

from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.optional_libraries import install_hint
from bpeproof.impl.parallel.errors import WorkerError, error_payload, rebuild_error
from bpeproof.impl.parallel.pool import default_workers

__all__ = [
    "FAN_IN",
    "RETRIES",
    "DaskEngine",
    "DaskUnavailableError",
    "dask_engine",
    "import_distributed",
]

#: Tables added by one task of the tree reduction.
FAN_IN = 8

#: Runs of a task after it raised: none (the same file gives the same error; a lost worker is another matter, see
#: the module docstring).
RETRIES = 0


class DaskUnavailableError(ImportError):
    """``--engine dask`` without Dask installed."""


class TaskFailedError(Exception):
    """A task's error as plain data (``parallel.errors.error_payload``): every error pickles this way,
    ``FormatError`` too."""

    def __init__(self, payload: Any) -> None:
        super().__init__(payload)
        self.payload = payload


def import_distributed() -> ModuleType:
    """The ``distributed`` module; without it, ``DaskUnavailableError`` saying how to install it."""
    try:
        return importlib.import_module("distributed")
    except ImportError as error:
        raise DaskUnavailableError(f"--engine dask needs Dask, which is not installed here ({error.name or error}):"
                                   f" {install_hint('distributed')}") from None


def _call(function: Callable[[Any, Any], Any], setup: Any, task: Any) -> Any:
    """A task on a worker: ``function(setup, task)``, any error turned into one that pickles."""
    try:
        return function(setup, task)
    except Exception as error:
        raise TaskFailedError(error_payload(error)) from None


def _combine(combine: Callable[[list[Any]], Any], *parts: Any) -> Any:
    try:
        return combine(list(parts))
    except Exception as error:
        raise TaskFailedError(error_payload(error)) from None


class DaskEngine:
    """The tasks of ``impl.parallel`` as futures of a ``distributed.Client`` (see the module docstring)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._distributed = import_distributed()

    @property
    def slots(self) -> int:
        """The worker threads of the cluster (at least 1)."""
        return max(1, int(sum(self.client.nthreads().values())))

    def _share(self, setup: Any) -> Any:
        """``setup`` sent to the workers once (a tokenizer's model can be megabytes), not with every task."""
        return self.client.scatter([setup], broadcast=True, hash=False)[0]

    def _result(self, future: Any, label: str, file: bool = True) -> Any:
        """A task's value; its failure as the error the task raised, a lost worker as a ``FormatError`` naming
        ``label`` (the file; with ``file`` false, a ``WorkerError`` saying what the task did)."""
        try:
            return future.result()
        except TaskFailedError as failure:
            raise rebuild_error(failure.payload, label) from None
        except self._distributed.KilledWorker:
            why = "(KilledWorker: each worker that ran the task died)"
            if not file:
                raise WorkerError(f"the Dask workers {label} stopped {why}") from None
            raise FormatError(label, None, f"the Dask workers reading it stopped {why}") from None
        except Exception as error:  # the scheduler went away, the task was cancelled, …
            raise WorkerError(f"{label}: the Dask run failed: {type(error).__name__}: {error}") from None

    def map_in_order(self, function: Callable[[Any, Any], Any], setup: Any, tasks: Sequence[Any],
                     labels: Sequence[str], sizes: Sequence[int], on_done: Callable[[int, Any], None],
                     bar: Any) -> None:
        """``on_done(i, function(setup, tasks[i]))`` in task order; at most about twice as many tasks as the
        cluster has threads are submitted ahead of the one awaited (their results wait on the workers)."""
        if not tasks:
            return
        client = self.client
        shared = self._share(setup)
        run = uuid.uuid4().hex[:12]
        ahead = 2 * self.slots + 2
        pending: deque[tuple[int, Any]] = deque()
        submitted = 0
        try:
            while submitted < len(tasks) or pending:
                while submitted < len(tasks) and len(pending) < ahead:
                    future = client.submit(_call, function, shared, tasks[submitted], retries=RETRIES,
                                           key=f"bpeproof-{function.__name__}-{run}-{submitted}",
                                           priority=len(tasks) - submitted)
                    pending.append((submitted, future))
                    submitted += 1
                index, future = pending.popleft()
                value = self._result(future, labels[index])
                future.release()
                if bar is not None:
                    bar.update(sizes[index])
                on_done(index, value)
        finally:
            if pending:
                client.cancel([future for _, future in pending])
            shared.release()

    def reduce(self, function: Callable[[Any, Any], Any], setup: Any, tasks: Sequence[Any], labels: Sequence[str],
               sizes: Sequence[int], combine: Callable[[list[Any]], Any], bar: Any) -> Any:
        """``combine`` of every task's value, ``FAN_IN`` at a time in a tree of tasks; a sum runs as soon as its
        parts are there (before further leaves), and a part is dropped once added, so the cluster holds about one
        table per worker and tree level, not one per task."""
        if not tasks:
            return combine([])
        client = self.client
        shared = self._share(setup)
        run = uuid.uuid4().hex[:12]
        leaves = [client.submit(_call, function, shared, task, retries=RETRIES, priority=0,
                                key=f"bpeproof-{function.__name__}-{run}-{index}")
                  for index, task in enumerate(tasks)]
        level = leaves
        depth = 0
        while len(level) > 1 or level is leaves:
            depth += 1
            level = [client.submit(_combine, combine, *level[start : start + FAN_IN], retries=RETRIES,
                                   priority=depth, key=f"bpeproof-combine-{run}-{depth}-{start}")
                     for start in range(0, len(level), FAN_IN)]
        root = level[0]
        del level
        index_of = {future.key: index for index, future in enumerate(leaves)}
        waiting: dict[int, Any] = dict(enumerate(leaves))
        del leaves
        try:
            for future in self._distributed.as_completed(list(waiting.values()), loop=client.loop):
                index = index_of[future.key]
                if future.status != "finished":
                    self._first_failure(waiting, index, labels)
                waiting.pop(index).release()
                if bar is not None:
                    bar.update(sizes[index])
            return self._result(root, "adding up the results", file=False)
        finally:
            client.cancel([root, *waiting.values()])
            shared.release()

    def _first_failure(self, waiting: dict[int, Any], failed: int, labels: Sequence[str]) -> None:
        """Raise the error of the first failing task in reading order, once the tasks before ``failed`` are done."""
        for index in sorted(waiting):
            if index < failed:
                waiting[index].exception()  # waits for it to end (finished or failed)
        for index in sorted(waiting):
            if index <= failed and waiting[index].status != "finished":
                self._result(waiting[index], labels[index])
        raise WorkerError(f"{labels[failed]}: the Dask task reading it failed")  # pragma: no cover - raised above


@contextlib.contextmanager
def dask_engine(scheduler: str | None = None, workers: int | None = None) -> Iterator[DaskEngine]:
    """A ``DaskEngine`` on the cluster at ``scheduler`` (default: Dask's ``scheduler-address`` setting, which the
    environment variable ``DASK_SCHEDULER_ADDRESS`` sets), or on a ``LocalCluster`` of ``workers`` processes
    (default: all cores) started here and closed at the end."""
    distributed = import_distributed()
    import dask

    address = scheduler or dask.config.get("scheduler-address", None) or os.environ.get("DASK_SCHEDULER_ADDRESS")
    cluster: Any = None
    if address:
        try:
            client = distributed.Client(address, set_as_default=False)
        except OSError as error:
            raise OSError(f"cannot reach the Dask scheduler at {address}: {error}") from None
    else:
        count = default_workers() if workers is None else workers
        # A worker that dies fails the run at once (as with --workers); the cluster says nothing but errors.
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            # No dashboard; the scheduler's HTTP server (always started) on a free port, not on a busy 8787.
            cluster = distributed.LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                                               dashboard_address=None, silence_logs=logging.CRITICAL,
                                               scheduler_kwargs={"dashboard_address": ":0"})
            client = distributed.Client(cluster, set_as_default=False)
    try:
        yield DaskEngine(client)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
