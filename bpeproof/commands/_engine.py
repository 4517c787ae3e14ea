"""``--engine processes|dask`` and ``--scheduler ADDRESS``: where ``train``, ``count``, ``encode -o`` and ``audit
--corpus`` run their tasks (worker processes of this machine, or a Dask cluster:
``bpeproof.impl.parallel.dask_cluster``)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from bpeproof.commands import UsageError

if TYPE_CHECKING:
    from bpeproof.impl.parallel import TaskEngine


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", choices=("processes", "dask"), default="processes",
                        help="run the tasks in worker processes here (default) or on a Dask cluster: the one at"
                        " --scheduler, else a local one of --workers processes (pip install 'bpeproof[dask]')")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="with --engine dask: the scheduler of an existing cluster, e.g. tcp://host:8786"
                        " (default: the DASK_SCHEDULER_ADDRESS environment variable)")


@contextlib.contextmanager
def open_engine(args: argparse.Namespace, files: Sequence[str] = ()) -> Iterator[TaskEngine | None]:
    """The Dask engine asked for (closed at the end), or None for worker processes here.  ``files``: the inputs,
    checked before a cluster starts (a missing one fails at once)."""
    if args.engine != "dask":
        if args.scheduler is not None:
            raise UsageError("--scheduler: only with --engine dask")
        yield None
        return
    if args.scheduler is not None and getattr(args, "workers", None) is not None:
        raise UsageError("--workers: with --scheduler the cluster's own workers run the tasks")
    from bpeproof.impl.io.corpus import probe

    for name in files:
        if name == "-":
            raise UsageError("standard input (-) cannot be read by Dask workers; give files")
        probe(name)
    from bpeproof.impl.parallel.dask_cluster import DaskUnavailableError, dask_engine

    with contextlib.ExitStack() as stack:
        try:
            engine = stack.enter_context(dask_engine(args.scheduler, getattr(args, "workers", None)))
        except DaskUnavailableError as error:
            raise UsageError(str(error)) from None
        yield engine


def engine_phrase(engine: TaskEngine | None, workers: int) -> str:
    """"2 workers", "4 Dask worker threads" for the summaries."""
    if engine is None:
        return f"{workers} worker{'s' if workers != 1 else ''}"
    return f"{engine.slots} Dask worker thread{'s' if engine.slots != 1 else ''}"
