"""Running a plan's tasks: in the calling process, or in worker processes started with 'spawn' (or forked, for the
jobs that may be), each talking to the parent over one pipe (the package docstring tells how failures and Ctrl-C are
handled)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.parallel.errors import WorkerError, error_payload, rebuild_error
from bpeproof.impl.parallel.jobs import JOBS
from bpeproof.impl.parallel.plans import Plan

if TYPE_CHECKING:  # multiprocessing is imported when workers start: a command that starts none never loads it
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

__all__ = ["check_workers", "default_workers", "ignore", "run_tasks"]


def default_workers() -> int:
    """All cores: ``os.cpu_count()`` (1 when unknown)."""
    return os.cpu_count() or 1


def check_workers(workers: int | None) -> int:
    """The number of workers to run: ``workers`` (an int >= 1, else ``ValueError``), or all cores for None."""
    if workers is None:
        return default_workers()
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"the number of workers must be an int >= 1, not {workers!r}")
    return workers


def may_fork(kind: str) -> bool:
    """Whether the workers of a job may be forked from this process rather than spawned: for a job that asks for it
    (``forks``), on Linux, while no other thread runs (a fork copies only the thread that calls it: a lock another
    thread held would stay held in the copy).  A forked worker starts in milliseconds; a spawned one starts an
    interpreter and imports its modules (a fifth of a second of a core, and multiprocessing's resource tracker)."""
    return bool(getattr(JOBS[kind], "forks", False)) and sys.platform == "linux" and threading.active_count() == 1


def _worker_main(conn: Connection, kind: str, setup: Any, report: bool) -> None:
    """A worker: build the job, then run each task the parent sends until it sends None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides: it stops every worker on Ctrl-C

    def on_bytes(count: int) -> None:
        conn.send(("progress", -1, count))

    index = -1
    try:
        job = JOBS[kind](setup, on_bytes if report else None)
        conn.send(("ready", -1, None))
        while (message := conn.recv()) is not None:
            index, task = message
            value = job.run(task)
            conn.send(("done", index, value))
            index = -1
        conn.send(("final", -1, job.final()))
    except (EOFError, BrokenPipeError):  # the parent is gone
        return
    except BaseException as error:
        with contextlib.suppress(OSError):
            conn.send(("error", index, error_payload(error)))


def _how_it_ended(process: BaseProcess) -> str:
    process.join(5)
    code = process.exitcode
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _run_here(kind: str, setup: Any, plan: Plan, bar: Any, on_done: Callable[[int, Any], None],
              on_final: Callable[[Any], None]) -> None:
    job = JOBS[kind](setup, bar.update if bar is not None else None)
    for index, task in enumerate(plan.tasks):
        on_done(index, job.run(task))
    if plan.error is not None:
        raise plan.error
    on_final(job.final())


class _Pool:
    """One run of a plan's tasks in worker processes: what the parent knows while it hands out the tasks in order,
    one at a time, and delivers the results in order (``_run_pool``)."""

    def __init__(self, kind: str, plan: Plan, workers: int, bar: Any, on_done: Callable[[int, Any], None],
                 on_final: Callable[[Any], None], ahead: int) -> None:
        self.kind, self.tasks, self.labels, self.workers = kind, plan.tasks, plan.labels, workers
        self.bar, self.on_done, self.on_final, self.ahead = bar, on_done, on_final, ahead
        #: The error of each failed task by its index (the planning's error after the last task; -1: no task's).
        self.errors: dict[int, BaseException] = {} if plan.error is None else {len(plan.tasks): plan.error}
        #: Whether a worker keeps its results until its final value: then a dead worker loses every task it did.
        self.keeps_state: bool = getattr(JOBS[kind], "keeps_state", False)
        self.processes: list[BaseProcess] = []
        self.conns: list[Connection] = []
        self.holding: list[int | None] = [None] * workers
        self.done_by: list[list[int]] = [[] for _ in range(workers)]
        self.over = [False] * workers  # sent its final value, its error, or died
        self.idle: list[int] = []
        self.starting: list[int] = []
        self.results: dict[int, Any] = {}
        self.flushed = 0  # tasks 0 .. flushed - 1 are done and delivered
        self.handed = 0  # tasks 0 .. handed - 1 have been handed out

    def start(self, setup: Any) -> None:
        """Start the workers, each with its end of a pipe; each builds its job from ``setup`` and says it is ready."""
        from multiprocessing import get_context

        fork = may_fork(self.kind)
        if fork:  # what this process has buffered is written once, by itself
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
        context = get_context("fork") if fork else get_context("spawn")
        convert = None if fork else getattr(JOBS[self.kind], "for_spawn", None)
        if convert is not None:  # what the caller meant for forked workers, in the form a spawned one is sent
            setup = convert(setup)
        for _ in range(self.workers):
            here, there = context.Pipe()
            process = context.Process(target=_worker_main, args=(there, self.kind, setup, self.bar is not None),
                                      name="bpeproof-worker", daemon=True)
            process.start()
            there.close()
            self.processes.append(process)
            self.conns.append(here)

    def limit(self) -> int:
        """The tasks before the first failed one: the only ones still handed out and delivered."""
        return min(self.errors, default=len(self.tasks))

    def give(self, worker: int) -> None:
        """Hand ``worker`` the next task, None when there is none left, or keep it idle while too far ahead."""
        if self.handed < self.limit() and self.handed >= self.flushed + self.ahead:
            self.idle.append(worker)
            return
        message = (self.handed, self.tasks[self.handed]) if self.handed < self.limit() else None
        self.holding[worker] = self.handed if message is not None else None
        try:
            self.conns[worker].send(message)
        except OSError:  # the worker is gone: its task is lost
            self.died(worker)
            return
        if message is not None:
            self.handed += 1

    def died(self, worker: int) -> None:
        """Record a dead worker: the first task it lost fails, naming its file (else the run fails)."""
        self.over[worker] = True
        lost = [] if self.holding[worker] is None else [self.holding[worker]]
        if self.keeps_state:
            lost += self.done_by[worker]
        how = _how_it_ended(self.processes[worker])
        if lost:
            first = min(i for i in lost if i is not None)
            self.errors.setdefault(first, FormatError(self.labels[first], None,
                                                      f"the worker process reading it stopped ({how})"))
        else:
            self.errors.setdefault(-1, WorkerError(f"a worker process stopped ({how}) before it read anything"))

    def ready(self, worker: int) -> None:
        """The first tasks go out once every worker is up, one to each."""
        self.starting.append(worker)
        if len(self.starting) == self.workers:
            for waiting in self.starting:
                self.give(waiting)

    def done(self, worker: int, index: int, value: Any) -> None:
        """Keep a task's result, deliver every result now in order, and hand out more tasks."""
        self.holding[worker] = None
        self.done_by[worker].append(index)
        if index < self.limit():
            self.results[index] = value
        while self.flushed in self.results:
            self.on_done(self.flushed, self.results.pop(self.flushed))
            self.flushed += 1
        self.give(worker)
        while self.idle and (self.handed < self.flushed + self.ahead or self.handed >= self.limit()):
            self.give(self.idle.pop(0))

    def receive(self, worker: int) -> None:
        """Handle every message ``worker`` has sent."""
        conn = self.conns[worker]
        while not self.over[worker] and conn.poll():
            try:
                what, index, value = conn.recv()
            except (EOFError, OSError):
                self.died(worker)
                return
            if what == "progress":
                if self.bar is not None:
                    self.bar.update(value)
            elif what == "ready":
                self.ready(worker)
            elif what == "done":
                self.done(worker, index, value)
            elif what == "final":
                self.over[worker] = True
                if not self.errors:
                    self.on_final(value)
            elif what == "error":
                self.over[worker] = True
                self.holding[worker] = None
                label = self.labels[index] if index >= 0 else "a worker process"
                self.errors.setdefault(index, rebuild_error(value, label))

    def serve(self) -> None:
        """Wait for the workers' messages and deaths until all are over; raise the first failed task's error once
        the tasks before it are delivered."""
        while True:
            if self.errors and self.flushed >= self.limit():
                raise self.errors[self.limit()]
            live = [worker for worker in range(self.workers) if not self.over[worker]]
            if not live:
                if self.errors:
                    raise self.errors[self.limit()]
                return
            from multiprocessing.connection import wait

            ready = set(wait([self.conns[w] for w in live] + [self.processes[w].sentinel for w in live]))
            for worker in live:
                sentinel = self.processes[worker].sentinel
                if self.conns[worker] in ready or sentinel in ready:
                    self.receive(worker)
                if not self.over[worker] and sentinel in ready and not self.conns[worker].poll():
                    self.died(worker)

    def stop(self) -> None:
        """Stop every worker still running (SIGTERM, then SIGKILL) and close the pipes."""
        for started in self.processes:
            if started.is_alive():
                started.terminate()
        for started in self.processes:
            started.join(2)
            if started.is_alive():  # pragma: no cover - a worker that ignores SIGTERM
                started.kill()
                started.join()
        for conn in self.conns:
            conn.close()


def _run_pool(kind: str, setup: Any, plan: Plan, workers: int, bar: Any, on_done: Callable[[int, Any], None],
              on_final: Callable[[Any], None], ahead: int) -> None:
    """Run the tasks in ``workers`` processes; ``on_done`` gets the results in task order, ``on_final`` each
    worker's final value.  At most ``ahead`` tasks past the first unfinished one are handed out."""
    pool = _Pool(kind, plan, workers, bar, on_done, on_final, ahead)
    try:
        pool.start(setup)
        pool.serve()
    finally:
        pool.stop()


def run_tasks(kind: str, setup: Any, plan: Plan, workers: int, bar: Any, on_done: Callable[[int, Any], None],
              on_final: Callable[[Any], None], ahead: int | None = None) -> None:
    """Run a plan's tasks with the job ``kind`` (``jobs.JOBS``) built from ``setup``: in this process when
    ``plan.in_process``, else in up to ``workers`` processes; ``on_done`` gets each result in task order,
    ``on_final`` each job's final value; the bar is closed at the end."""
    try:
        if plan.in_process(workers):
            _run_here(kind, setup, plan, bar, on_done, on_final)
        else:
            count = min(workers, len(plan.tasks))
            _run_pool(kind, setup, plan, count, bar, on_done, on_final, ahead or len(plan.tasks))
    finally:
        if bar is not None:
            bar.close()


def ignore(*values: Any) -> None:
    """A result or final value nobody needs."""
    return None
