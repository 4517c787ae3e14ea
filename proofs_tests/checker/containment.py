"""Containing every process the code under check starts: a reaper per worker, and the ``/proc`` walk that kills.

A process group is no container: a child that calls ``setsid()`` (or forks twice) leaves its group, so a group
kill misses it, and when its parent ends it is re-parented to init, out of reach.  Linux's *child subreaper*
(``prctl(PR_SET_CHILD_SUBREAPER)``) closes that door: an orphan is re-parented to its nearest ancestor that is a
subreaper instead.  So each worker runs under a *reaper* (``start_reaper``), a small process between the checker
and the worker:

* the reaper leads the worker's session and process group and is a subreaper, so every descendant of the
  worker, however it detached itself, stays a descendant of the reaper;
* it reaps the orphans that end while the worker runs; when the worker ends, when the checker asks (SIGTERM),
  or when the checker dies (``PR_SET_PDEATHSIG`` sends it SIGTERM), it SIGKILLs every descendant, found by
  walking ``/proc`` (the parent field of ``/proc/PID/stat``), again and again until none is left, reaps them,
  and exits with the worker's status (its exit code, or the signal that killed it), so that the checker reads
  the worker's end as if the worker were its own child.

The reaper is per worker, not per checker, so that two checks in one process (threads) or a host program's own
children are never touched by another worker's clean-up.  The command line adds a second wall
(``contain_descendants``): the checker itself becomes a subreaper and, at exit and on SIGTERM/SIGINT/SIGHUP,
kills every process below it, so that even a reaper killed by SIGKILL leaves its orphans to the checker rather
than to init.

Not used: a PID namespace (``unshare(CLONE_NEWPID)`` needs CAP_SYS_ADMIN or an unprivileged user namespace,
which many CI containers refuse) and cgroups (they need a delegated, writable cgroup tree): the subreaper needs
neither and holds the same processes.  What it cannot hold is a process that kills its own reaper first (the
checker's wall then catches it on the command line).  Off Linux there is no subreaper and no ``/proc``: the
reaper kills what it can reach, the worker's process group, as the checker always did.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys
import time
from collections.abc import Callable
from typing import Any, NoReturn

_LINUX = sys.platform.startswith("linux")
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
#: How long a reaper keeps killing descendants that keep appearing (a process forking in a loop) before it exits.
KILL_SECONDS = 5.0
#: How often the reaper looks at its children when no signal comes.
POLL_SECONDS = 0.2
#: The signals a reaper waits for: a child ended, or it is asked to stop.
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_WAITED = (signal.SIGCHLD, *_STOP_SIGNALS)
#: The stop signals a reaper received, where it handles them (no ``sigtimedwait``).
_STOPPED: list[int] = []


def _load_prctl() -> Callable[..., int] | None:
    # Looked up once in the checker: a forked child then calls it without loading a library.
    if not _LINUX:
        return None
    try:
        function: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return function


_PRCTL = _load_prctl()


def _prctl(option: int, value: int) -> bool:
    return _PRCTL is not None and _PRCTL(option, value, 0, 0, 0) == 0


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux); whether that worked."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def die_with_parent(parent: int, signum: int) -> None:
    """Have the kernel send ``signum`` to this process when its parent ends (Linux); exit now if it has ended."""
    _prctl(_PR_SET_PDEATHSIG, signum)
    if os.getppid() != parent:  # the parent ended before the call above
        os._exit(1)


def _children_of() -> dict[int, list[int]]:
    """Every live process's children, by parent pid, from ``/proc/*/stat`` (zombies left out: they cannot be
    killed, only reaped by their parent)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return children
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The command name (field 2) may hold spaces and parentheses: the fields after its last ")" are the
        # state and the parent pid.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 2 and fields[0] not in (b"Z", b"X"):
            children.setdefault(int(fields[1]), []).append(int(name))
    return children


def descendants(pid: int) -> list[int]:
    """The live processes below ``pid`` (children, their children, ...), found by walking ``/proc``."""
    children = _children_of()
    found: list[int] = []
    pending = [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def _reap(statuses: dict[int, int]) -> None:
    """Reap every ended child of this process (without waiting), keeping each status by pid."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        statuses[pid] = status


def kill_descendants(pid: int, seconds: float = KILL_SECONDS, reap: dict[int, int] | None = None) -> None:
    """SIGKILL every process below ``pid`` until none is left (or ``seconds`` have passed).

    When this process is ``pid`` and a subreaper, the children of a killed process come back to it, so a walk
    after the kill finds them; ``reap`` (a dict) also reaps this process's ended children into it."""
    end = time.monotonic() + seconds
    while True:
        found = descendants(pid)
        for child in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(child, signal.SIGKILL)
        if reap is not None:
            _reap(reap)
        if not found or time.monotonic() >= end:
            return
        time.sleep(0.001)


def _exit_as(status: int | None) -> NoReturn:
    """End this process as the worker ended: the same exit code, or killed by the same signal."""
    if status is None:
        os._exit(1)
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        os._exit(code)
    signum = -code
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the worker's crash, not a core dump of the reaper
    with contextlib.suppress(ValueError, OSError, RuntimeError):
        if signum not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)
    os._exit(128 + signum)


def _stop_signal() -> bool:
    """Wait up to ``POLL_SECONDS`` for a signal; whether it asks the reaper to stop.  The signals are blocked and
    taken with ``sigtimedwait``; where there is none (macOS), they are handled and the reaper polls."""
    if hasattr(signal, "sigtimedwait"):
        received: Any = signal.sigtimedwait(_WAITED, POLL_SECONDS)
        return received is not None and received.si_signo in _STOP_SIGNALS
    time.sleep(POLL_SECONDS / 4)
    return bool(_STOPPED)


def _supervise(worker: int) -> NoReturn:
    """The reaper's life: reap orphans until the worker ends or a stop signal comes, then kill every descendant
    and end as the worker did."""
    statuses: dict[int, int] = {}
    try:
        while worker not in statuses:
            _reap(statuses)
            if worker in statuses:
                break
            if _stop_signal():
                break
        if _LINUX:
            kill_descendants(os.getpid(), reap=statuses)
        else:  # the worker leads a group of its own there (``start_reaper``)
            with contextlib.suppress(OSError):
                os.killpg(worker, signal.SIGKILL)
        if worker not in statuses:
            with contextlib.suppress(ChildProcessError):
                statuses[worker] = os.waitpid(worker, 0)[1]
    finally:
        _exit_as(statuses.get(worker))


def start_reaper(parent: int) -> None:
    """In a new child of the checker, before it runs or execs the worker: fork.  The child returns, to become
    the worker (killed with the reaper); this process becomes its reaper and never returns (see the module
    docstring).  ``parent`` is the checker's pid."""
    with contextlib.suppress(OSError):
        os.setsid()
    become_subreaper()
    handlers = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS}
    if hasattr(signal, "sigtimedwait"):
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)  # taken by sigtimedwait, never by a handler
    else:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        for signum in _STOP_SIGNALS:
            signal.signal(signum, lambda number, frame: _STOPPED.append(number))
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # children must stay waitable
    die_with_parent(parent, signal.SIGTERM)
    reaper = os.getpid()
    worker = os.fork()
    if worker == 0:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        for signum, handler in handlers.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(signum, handler)
        die_with_parent(reaper, signal.SIGKILL)
        if not _LINUX:  # no /proc to walk: the reaper kills the worker's group, which must not hold the reaper
            with contextlib.suppress(OSError):
                os.setpgid(0, 0)
        return
    # The reaper holds none of the worker's pipes: the checker must see them close when the worker ends.
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    os.closerange(0, soft if 0 < soft <= 1 << 20 else 1 << 20)
    _supervise(worker)


def contain_descendants() -> bool:
    """Make this process (the command line's checker) a subreaper, so that orphans of the code under check come
    back to it rather than to init (``kill_all_descendants`` then kills them); whether that worked."""
    return become_subreaper()


def kill_all_descendants() -> None:
    """SIGKILL every process below this one and reap them (at the command line's exit)."""
    if _LINUX:
        kill_descendants(os.getpid(), seconds=1.0, reap={})
