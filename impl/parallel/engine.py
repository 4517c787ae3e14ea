"""Another engine's workers: the same tasks, scheduled elsewhere (``bpeproof.impl.parallel.dask_cluster``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

__all__ = ["TaskEngine"]


class TaskEngine(Protocol):
    """Another scheduler for the tasks of ``count_files`` and ``encode_files`` (``dask_cluster.DaskEngine``).

    It runs ``function(setup, task)`` for each task on its own workers (``count_task``, ``encode_task``: the
    functions the worker processes of ``bpeproof.impl.parallel.pool`` run) and calls ``bar.update(sizes[i])`` as
    task i finishes.  On a failure it raises the error of the first failing task in reading order, as those worker
    processes do; a worker lost while it ran a task is a ``FormatError`` naming the task's label."""

    @property
    def slots(self) -> int:
        """How many tasks run at a time (the ranges are sized by it)."""
        ...

    def map_in_order(self, function: Callable[[Any, Any], Any], setup: Any, tasks: Sequence[Any],
                     labels: Sequence[str], sizes: Sequence[int], on_done: Callable[[int, Any], None],
                     bar: Any) -> None:
        """``on_done(i, function(setup, tasks[i]))`` for each task, in the order of the tasks."""
        ...

    def reduce(self, function: Callable[[Any, Any], Any], setup: Any, tasks: Sequence[Any], labels: Sequence[str],
               sizes: Sequence[int], combine: Callable[[list[Any]], Any], bar: Any) -> Any:
        """``combine`` of ``function(setup, task)`` over all tasks, combined a few at a time in a tree on the
        workers (``combine`` of combined values is the combination of them all; of an empty list, nothing)."""
        ...
