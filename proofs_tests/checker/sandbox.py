"""Processes that run code under test: isolated, capped, killed with everything they started, data-only pipes.

Both kinds of worker the checker uses come from here: a forked copy of the checker
(``fork_worker``: functions given as ``module:function`` or as callables) and any
program (``spawn_program``: ``bpeproof check --cmd``).  Each one

* runs under its own reaper (``containment``): a process that leads the worker's
  session and group and is a child subreaper, so that every process the worker
  starts stays below it, even one that calls ``setsid()`` or forks twice; the
  reaper kills them all when the worker ends, when the checker replaces the
  worker after a time-out or a crash, on every exit path of the checker
  (``kill_all`` at exit and on SIGTERM/SIGINT/SIGHUP of the command line), and
  when the checker dies (``PR_SET_PDEATHSIG`` on Linux, so that a checker killed
  by SIGKILL, a CI time-out, leaves nothing spinning);
* runs under a memory cap (``resource.setrlimit``), which the checker reports as
  a finding when it is hit;
* talks over pipes in JSON lines (``Channel``): one JSON value per line, parsed as
  data only, never unpickled, with a bound on the length of a line.  The checker
  validates every reply before using it.  A program's stderr goes to a third pipe,
  never parsed: its end is kept (``StderrTail``) to explain a program that fails
  before its hello line.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import resource
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from bpeproof.proofs_tests.checker.containment import (
    contain_descendants,
    kill_all_descendants,
    start_reaper,
)

#: Default memory cap of a worker (address space of a forked worker, data segment of a program), in MiB.
DEFAULT_MEMORY_MB = 4096
#: The longest reply line accepted from a worker.
MAX_LINE = 256 * 1024 * 1024

#: How long a worker's reaper may take to kill everything below it before its group gets SIGKILL.
REAPER_SECONDS = 5.0
#: How much of a program's stderr is kept (its end), to show when it fails before its hello.
STDERR_TAIL = 16 * 1024
#: The live workers, stopped at exit.
_LIVE: set[Process] = set()
#: Whether this process was made a subreaper by ``install_signal_handlers`` (the command line).
_CONTAINED: list[bool] = []


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


def _cap_memory(memory_mb: int | None, which: str) -> None:
    if not memory_mb:
        return
    limit = memory_mb * 1024 * 1024
    kind = resource.RLIMIT_AS if which == "as" else resource.RLIMIT_DATA
    with contextlib.suppress(ValueError, OSError):
        _soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(kind, (limit, hard))


def isolate(parent: int, memory_mb: int | None, which: str = "as") -> None:
    """In a new child of the checker: fork the reaper (``containment.start_reaper``: its own session and group,
    a subreaper, killed with the checker); what returns is the worker, killed with the reaper, under the memory
    cap."""
    start_reaper(parent)
    # A forked worker holds copies of the checker's other workers: never its to stop (at a signal, at exit).
    _LIVE.clear()
    _CONTAINED.clear()
    _cap_memory(memory_mb, which)


class StderrTail:
    """The last ``STDERR_TAIL`` bytes a program wrote to its stderr, drained by a thread so that the program never
    blocks on a full pipe; kept apart from the protocol, shown only when the program fails before its hello."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._data = bytearray()
        self._thread = threading.Thread(target=self._drain, name="bpeproof-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while True:
                try:
                    chunk = os.read(self._fd, 1 << 16)
                except OSError:
                    return
                if not chunk:
                    return
                self._data += chunk
                if len(self._data) > 2 * STDERR_TAIL:
                    del self._data[:-STDERR_TAIL]
        finally:
            with contextlib.suppress(OSError):
                os.close(self._fd)

    def text(self, wait: float = 0.0) -> str:
        """What was written so far (its last ``STDERR_TAIL`` bytes), after waiting up to ``wait`` seconds for
        the program to close its stderr."""
        self._thread.join(wait)
        return bytes(self._data[-STDERR_TAIL:]).decode("utf-8", "replace")


class Process:
    """A worker process (``pid``: its reaper, which ends as the worker ends) and the channel to it."""

    def __init__(self, pid: int, channel: Channel, popen: Any = None, stderr: StderrTail | None = None) -> None:
        self.pid = pid
        self.channel = channel
        self.stderr = stderr
        self._popen = popen
        self.exitcode: int | None = None
        _LIVE.add(self)

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
            time.sleep(0.002)
        return self.exitcode

    def kill(self) -> None:
        """Stop the worker and everything it started: the reaper is asked (SIGTERM) and kills them all; if it does
        not end in time, SIGKILL to the whole process group.  Then reap it."""
        _LIVE.discard(self)
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGTERM)
            if self.wait(REAPER_SECONDS) is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.pid, signal.SIGKILL)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(self.pid, signal.SIGKILL)
                self.wait(2.0)
        self.channel.close()


def kill_all() -> None:
    """Stop every live worker and what it started (at exit, on a signal); on the command line, where the checker
    is a subreaper, also every other process below it."""
    for process in list(_LIVE):
        process.kill()
    if _CONTAINED:
        kill_all_descendants()


atexit.register(kill_all)


def install_signal_handlers() -> None:
    """For the command line: the checker becomes a subreaper (``containment.contain_descendants``), and SIGTERM,
    SIGINT and SIGHUP kill the workers and every process below the checker before it exits."""
    if contain_descendants():
        _CONTAINED.append(True)

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
    """Start a program isolated (see the module docstring): its stdin and stdout the channel, its stderr kept
    apart (``StderrTail``)."""
    import subprocess

    parent = os.getpid()
    popen = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        preexec_fn=lambda: isolate(parent, memory_mb, "data"),
        close_fds=True,
    )
    assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
    read_fd = os.dup(popen.stdout.fileno())
    write_fd = os.dup(popen.stdin.fileno())
    stderr = StderrTail(os.dup(popen.stderr.fileno()))
    popen.stdout.close()
    popen.stdin.close()
    popen.stderr.close()
    return Process(popen.pid, Channel(read_fd, write_fd), popen, stderr)
