"""Processes that run code under test: isolated, capped, killed with everything they started, data-only pipes.

Both kinds of worker the checker uses come from here: a forked copy of the checker
(``fork_worker``: functions given as ``module:function`` or as callables) and any
program (``spawn_program``: ``bpeproof check --cmd``).  Each one

* runs in its own session and process group, so that the group (the worker and
  every process it forked) is killed after each run, on every exit path of the
  checker (``kill_all`` at exit and on SIGTERM/SIGINT/SIGHUP of the command line),
  and when the worker is replaced after a time-out;
* dies with the checker: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` on Linux, so that a
  checker killed by SIGKILL (a CI time-out) leaves no worker spinning;
* runs under a memory cap (``resource.setrlimit``), which the checker reports as
  a finding when it is hit;
* talks over pipes in JSON lines (``Channel``): one JSON value per line, parsed as
  data only, never unpickled, with a bound on the length of a line.  The checker
  validates every reply before using it.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import select
import signal
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

#: Default memory cap of a worker (address space of a forked worker, data segment of a program), in MiB.
DEFAULT_MEMORY_MB = 4096
#: The longest reply line accepted from a worker.
MAX_LINE = 256 * 1024 * 1024

_PR_SET_PDEATHSIG = 1
#: Process groups of the live workers, killed at exit.
_GROUPS: set[int] = set()


class ChannelError(Exception):
    """The other side closed the pipe, sent a line that is not JSON, or a line that is too long."""


class Channel:
    """JSON lines over two file descriptors (read from the worker, write to it)."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self._buffer = bytearray()
        self._lines: list[bytes] = []

    def send(self, value: Any) -> None:
        """Write one JSON value as one line (raises ``ChannelError`` when the other side is gone)."""
        data = (json.dumps(value, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")
        view = memoryview(data)
        try:
            while view:
                written = os.write(self.write_fd, view)
                view = view[written:]
        except OSError as error:
            raise ChannelError(f"the worker's input is closed ({error.strerror})") from None

    def receive(self, timeout: float | None) -> Any:
        """The next JSON value; ``TimeoutError`` when none arrives in ``timeout`` seconds."""
        line = self._line(timeout)
        try:
            return json.loads(line)
        except (ValueError, RecursionError):
            text = line[:80].decode("utf-8", "replace")
            raise ChannelError(f"sent a line that is not JSON: {text!r}") from None

    def _line(self, timeout: float | None) -> bytes:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._lines:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.read_fd], [], [], wait)
            if not ready:
                raise TimeoutError
            try:
                chunk = os.read(self.read_fd, 1 << 20)
            except OSError as error:
                raise ChannelError(f"reading from the worker failed ({error.strerror})") from None
            if not chunk:
                raise ChannelError("closed its output")
            self._buffer += chunk
            if b"\n" in chunk:
                *complete, rest = bytes(self._buffer).split(b"\n")
                self._lines += [line for line in complete if line.strip()]
                self._buffer = bytearray(rest)
            if len(self._buffer) > MAX_LINE:
                raise ChannelError(f"sent a line longer than {MAX_LINE} bytes")
        return self._lines.pop(0)

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the checker died before the call above
        os._exit(1)


def _cap_memory(memory_mb: int | None, which: str) -> None:
    if not memory_mb:
        return
    import resource

    limit = memory_mb * 1024 * 1024
    kind = resource.RLIMIT_AS if which == "as" else resource.RLIMIT_DATA
    with contextlib.suppress(ValueError, OSError):
        _soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(kind, (limit, hard))


def isolate(parent: int, memory_mb: int | None, which: str = "as") -> None:
    """In a new child: its own session and group, killed with the parent, under the memory cap."""
    with contextlib.suppress(OSError):
        os.setsid()
    _die_with_parent(parent)
    _cap_memory(memory_mb, which)


class Process:
    """A worker process and the channel to it."""

    def __init__(self, pid: int, channel: Channel, popen: Any = None) -> None:
        self.pid = pid
        self.channel = channel
        self._popen = popen
        self.exitcode: int | None = None
        _GROUPS.add(pid)

    def alive(self) -> bool:
        return self.poll() is None

    def poll(self) -> int | None:
        """The exit code (negative: the signal) once the process has ended, else None."""
        if self.exitcode is None:
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid == self.pid:
                    self.exitcode = os.waitstatus_to_exitcode(status)
                    if self._popen is not None:
                        self._popen.returncode = self.exitcode
        return self.exitcode

    def wait(self, timeout: float) -> int | None:
        end = time.monotonic() + timeout
        while self.poll() is None and time.monotonic() < end:
            time.sleep(0.005)
        return self.exitcode

    def kill(self) -> None:
        """Kill the whole process group (the worker and whatever it started), then reap the worker."""
        kill_group(self.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, signal.SIGKILL)
        self.wait(2.0)
        self.channel.close()


def kill_group(pgid: int) -> None:
    """SIGKILL to a worker's process group (its pid: it leads its own session)."""
    _GROUPS.discard(pgid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_all() -> None:
    """Kill every live worker group (at exit, on a signal)."""
    for pgid in list(_GROUPS):
        kill_group(pgid)


atexit.register(kill_all)


def install_signal_handlers() -> None:
    """For the command line: SIGTERM, SIGINT and SIGHUP kill the workers' groups before the checker exits."""

    def handler(signum: int, frame: object) -> None:
        kill_all()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signum, handler)


def fork_worker(main: Callable[[Channel], None], memory_mb: int | None) -> Process:
    """Fork a copy of this process that runs ``main(channel)`` isolated (see the module docstring)."""
    to_child_r, to_child_w = os.pipe()
    to_parent_r, to_parent_w = os.pipe()
    parent = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never return into the caller's code
        code = 0
        try:
            os.close(to_child_w)
            os.close(to_parent_r)
            isolate(parent, memory_mb, "as")
            main(Channel(to_child_r, to_parent_w))
        except BaseException:
            code = 70
        finally:
            os._exit(code)
    os.close(to_child_r)
    os.close(to_parent_w)
    return Process(pid, Channel(to_parent_r, to_child_w))


def spawn_program(argv: Sequence[str], memory_mb: int | None, cwd: str | None = None,
                  env: dict[str, str] | None = None) -> Process:
    """Start a program isolated (see the module docstring), its stdin and stdout the channel, stderr discarded."""
    import subprocess

    parent = os.getpid()
    popen = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
        preexec_fn=lambda: isolate(parent, memory_mb, "data"),
        close_fds=True,
    )
    assert popen.stdin is not None and popen.stdout is not None
    read_fd = os.dup(popen.stdout.fileno())
    write_fd = os.dup(popen.stdin.fileno())
    popen.stdout.close()
    popen.stdin.close()
    return Process(popen.pid, Channel(read_fd, write_fd), popen)
