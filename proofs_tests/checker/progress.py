"""Progress of a running check on stderr: how many texts were checked, how fast, and how many findings so far.

A check in CI runs for minutes with nothing to show until its report; ``Progress`` writes one line every few
seconds to stderr (where nothing of the report or of ``--json`` goes): on a terminal one status line rewritten
in place and erased at the end, elsewhere (a CI log, a pipe) a plain line each time.  A thread writes it, so the
search loop pays nothing for it; it reads the counts through a function the check gives.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

#: Seconds between two progress lines by default (the command line's ``--progress``).
DEFAULT_EVERY = 5.0


class Progress:
    """Writes ``counts()`` (texts checked, findings so far) to ``stream`` every ``every`` seconds while in use as
    a context manager; does nothing when ``every`` is None or not positive."""

    def __init__(self, counts: Callable[[], tuple[int, int]], every: float | None, stream: TextIO | None = None,
                 label: str = "bpeproof check") -> None:
        self.counts = counts
        self.every = every
        self.stream = stream if stream is not None else sys.stderr
        self.label = label
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = time.monotonic()
        self._shown = False

    def line(self) -> str:
        """The progress line for now."""
        try:
            checked, findings = self.counts()
        except RuntimeError:  # a count changed while it was read: the next line has it
            return ""
        seconds = time.monotonic() - self._start
        rate = checked / seconds if seconds > 0 else 0.0
        found = "no finding" if not findings else f"{findings} finding{'s' if findings != 1 else ''}"
        return f"{self.label}: {checked:,} texts checked in {seconds:.0f} s ({rate:,.0f}/s), {found} so far"

    def _write(self, text: str) -> None:
        try:
            if self.terminal:
                self.stream.write("\r\x1b[K" + text)
            else:
                self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed stream: progress is not worth an error
            self._stop.set()

    def _run(self) -> None:
        assert self.every is not None
        while not self._stop.wait(self.every):
            text = self.line()
            if text:
                self._write(text)
                self._shown = True

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        if self.every is not None and self.every > 0:
            self._thread = threading.Thread(target=self._run, name="bpeproof-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.terminal and self._shown:
            self._write("")  # erase the status line before the report
