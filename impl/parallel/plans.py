"""Planning a run: the tasks in reading order (byte ranges of files, or batches of texts), each with a label and
its file, and the error that stopped the planning."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bpeproof.impl.io.corpus import probe
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.parallel.cuts import Range

__all__ = ["Plan", "engine_task_sizes", "plan_ranges", "taper", "total_size"]


@dataclass
class Plan:
    """Tasks in reading order, a label (file name) for each, and the error that stopped the planning, if any."""

    tasks: list[Any]
    labels: list[str]
    files: list[int]
    error: BaseException | None = None

    def add(self, task: Any, label: str, file: int) -> None:
        self.tasks.append(task)
        self.labels.append(label)
        self.files.append(file)

    def in_process(self, workers: int) -> bool:
        """Whether the tasks run in the calling process: one worker (or one task), or standard input to read."""
        return min(workers, len(self.tasks)) <= 1 or "-" in self.labels


def plan_ranges(names: Sequence[str], range_bytes: int, cut: bool) -> tuple[Plan, int]:
    """The ranges of the files in reading order, and their total size in bytes.  A file that cannot be read stops
    the plan: its error is raised once the ranges before it are read (as the one-process run would)."""
    plan = Plan([], [], [])
    total = 0
    for file, name in enumerate(names):
        if name == "-":
            plan.add(Range(name, 0, 0, False), name, file)
            continue
        try:
            size, gzipped = probe(name)
        except FormatError as error:
            plan.error = error
            break
        total += size
        if gzipped or not cut:
            plan.add(Range(name, 0, size, gzipped), name, file)
            continue
        for start in range(0, size, range_bytes) if size else range(1):
            plan.add(Range(name, start, min(start + range_bytes, size), False), name, file)
    return plan, total


def taper(plan: Plan, last: int, parts: int = 4) -> Plan:
    """``plan`` with each of its ``last`` tasks that is a range of a plain file cut into ``parts`` ranges: the tasks
    handed out last are short, so that the workers finish together (each range is still read as its own)."""
    out = Plan([], [], [], plan.error)
    cut_from = len(plan.tasks) - last
    for index, (task, label, file) in enumerate(zip(plan.tasks, plan.labels, plan.files, strict=True)):
        if index < cut_from or task.gzipped or task.name == "-" or task.stop - task.start < parts:
            out.add(task, label, file)
            continue
        step = -(-(task.stop - task.start) // parts)
        for start in range(task.start, task.stop, step):
            out.add(Range(task.name, start, min(start + step, task.stop), False), label, file)
    return out


def total_size(names: Sequence[str]) -> int:
    """The files' sizes in bytes added up (standard input and a file that cannot be read count 0)."""
    total = 0
    for name in names:
        if name != "-":
            with contextlib.suppress(OSError):
                total += os.stat(name).st_size
    return total


def engine_task_sizes(plan: Plan) -> list[int]:
    """Checks a plan for another engine's workers, which cannot read standard input; a file that cannot be read
    stops the run before any task starts.  The sizes of the tasks in bytes (for the progress bar)."""
    if "-" in plan.labels:
        raise ValueError("standard input (-) cannot be read by the engine's workers: give files")
    if plan.error is not None:
        raise plan.error
    return [task.stop - task.start for task in plan.tasks]
