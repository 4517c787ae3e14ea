"""How the audit tells how it goes: the seconds each phase takes, a status line on stderr, progress bars."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["STATUS_INTERVAL", "SUBPHASES", "PhaseTimer", "progress_bar", "status_line"]

#: Phases timed inside another one: ``timings[name]`` is part of ``timings[SUBPHASES[name]]``, not added to the total.
SUBPHASES = {"unreachable": "vocabulary"}
#: Seconds between two redraws of the status line (``status_line``).
STATUS_INTERVAL = 0.25


@dataclass
class PhaseTimer:
    """The seconds spent in each named phase of the audit (a phase entered twice adds up)."""

    timings: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(self.timings.get(name, 0.0) + time.perf_counter() - start, 3)

    def section(self) -> dict[str, float]:
        """The report's ``timings``: each phase, and ``total``, the sum of the phases not inside another one."""
        timings = dict(self.timings)
        timings["total"] = round(sum(value for key, value in self.timings.items() if key not in SUBPHASES), 3)
        return timings


@contextmanager
def status_line(text: str, enabled: bool) -> Iterator[Callable[[str], None]]:
    """While the block runs, one line on stderr saying what the audit does and for how long (redrawn by a thread
    every ``STATUS_INTERVAL`` s, for steps that have no progress bar); erased at the end.  Yields a function that
    changes the text for the next step.  Nothing is written unless ``enabled``."""
    if not enabled:
        yield lambda _text: None
        return
    stream = sys.stderr
    start = time.perf_counter()
    current = [text]
    lock = threading.Lock()
    stop = threading.Event()

    def draw() -> None:
        with lock:
            stream.write(f"\r\x1b[K{current[0]} … {time.perf_counter() - start:.1f} s")
            stream.flush()

    def step(new: str) -> None:
        current[0] = new
        draw()

    def tick() -> None:
        while not stop.wait(STATUS_INTERVAL):
            draw()

    draw()
    thread = threading.Thread(target=tick, name="audit-status", daemon=True)
    thread.start()
    try:
        yield step
    finally:
        stop.set()
        thread.join()
        with lock:
            stream.write("\r\x1b[K")
            stream.flush()


def progress_bar(items: Iterable[Any], total: int, description: str, enabled: bool,
                 unit: str = "word") -> Iterable[Any]:
    """``items``, with a tqdm progress bar on stderr when ``enabled``."""
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, total=total, desc=description, unit=unit, leave=False, mininterval=0.5)
