"""The one proxy for a process under check: start it, read its hello, talk to it with time limits, replace it.

Both checkers talk to the code under check through a ``Peer``: the function checker's worker (``worker.Worker``,
``enc``/``dec``/``train`` calls) and the text → ids checker's implementation (``protocol.Implementation``, the
line protocol any language can speak).  A ``Peer`` owns at most one live process (``sandbox``: isolated, capped,
killed with everything it started) and turns every way a process can fail into one exception, ``Gone``, whose
``kind`` says which: it did not answer in time, it ended, or it broke the protocol.  The process is then already
stopped; the caller decides whether that is a finding, a usage error, or a reason to start a fresh one.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import Any, Literal

from bpeproof.proofs_tests.checker.sandbox import ChannelError, Process

GoneKind = Literal["timeout", "crashed", "protocol"]

#: Exit codes of a process killed for its memory (SIGABRT / SIGKILL, as a signal or as a shell reports it).
MEMORY_EXIT_CODES = (-6, -9, 134, 137)
#: A line of stderr that states an error: ``ModuleNotFoundError: …``, ``Error: Cannot find module …``, ``error: …``.
_ERROR_LINE = re.compile(r"^(?:[\w.]*(?:Error|Exception)|error|fatal|panic)\b.*?:", re.IGNORECASE)


class Gone(Exception):
    """The process did not answer in time (``timeout``), ended (``crashed``) or broke the protocol (``protocol``)."""

    def __init__(self, kind: GoneKind, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.kind: GoneKind = kind
        self.exit_code = exit_code


class Peer:
    """At most one live process made by ``launch``, and the channel to it."""

    def __init__(self, launch: Callable[[], Process]) -> None:
        self.launch = launch
        self.process: Process | None = None
        self.last: Process | None = None  # the latest process started, kept after it is stopped
        self.restarts = 0

    @property
    def alive(self) -> bool:
        return self.process is not None

    def begin(self) -> None:
        """Start a fresh process without waiting for it: ``greet(timeout, begun=True)`` reads its hello later, so
        that the checker does other work while the process starts."""
        self.stop()
        self.process = self.last = self.launch()

    def greet(self, timeout: float, begun: bool = False) -> Any:
        """Start a process (unless ``begun`` and one was) and return its first message, the hello (``Gone`` when
        none comes)."""
        if not (begun and self.process is not None):
            self.begin()
        return self.receive(timeout)

    def stderr_tail(self, lines: int = 3, width: int = 300) -> str:
        """The end of what the latest process wrote to its stderr, as one line: its last error line (a Python
        traceback's last line, Node's ``Error: …``) else its last ``lines`` lines; empty when it wrote nothing."""
        stderr = self.last.stderr if self.last is not None else None
        if stderr is None:
            return ""
        written = [line.strip() for line in stderr.text(wait=1.0).splitlines() if line.strip()]
        errors = [line for line in written if _ERROR_LINE.match(line)]
        shown = errors[-1:] if errors else written[-lines:]
        return " | ".join(line[:width] for line in shown)

    def send(self, value: Any) -> None:
        """One message to the process; ``Gone`` (``crashed``) when its input is closed."""
        if self.process is None:
            raise Gone("crashed", "the process is not running")
        try:
            self.process.channel.send(value)
        except ChannelError as error:
            self._lost(error)

    def receive(self, timeout: float | None) -> Any:
        """The process's next message within ``timeout`` seconds; ``Gone`` when it does not come."""
        if self.process is None:
            raise Gone("crashed", "the process is not running")
        try:
            return self.process.channel.receive(timeout)
        except TimeoutError:
            self.stop()
            raise Gone("timeout", f"did not answer within {timeout:.3g} s") from None
        except ChannelError as error:
            self._lost(error)

    def broke_protocol(self, message: str) -> Gone:
        """Stop a process that sent something the protocol does not allow; the ``Gone`` to raise."""
        self.stop()
        return Gone("protocol", message)

    def stop(self) -> None:
        """Ask the process to end (an empty message), then kill its whole group."""
        process, self.process = self.process, None
        if process is not None:
            with contextlib.suppress(ChannelError):
                process.channel.send(None)
            process.kill()

    def _lost(self, error: ChannelError) -> Any:
        process = self.process
        code = process.wait(1.0) if process is not None else None
        self.stop()
        memory = " (the memory cap was hit)" if code in MEMORY_EXIT_CODES else ""
        raise Gone("crashed", f"{error}: the process ended (exit code {code}){memory}", code) from None
