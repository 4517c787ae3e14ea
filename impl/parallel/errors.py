"""A worker's failure: its error as plain data for the pipe (or a Dask task's result), and the error rebuilt from it.

An error crosses a process boundary as data, not as the object: ``FormatError`` by its fields, other errors
pickled when they can be, else by their text, so that every failure reaches the parent, which names the task.
"""

from __future__ import annotations

import contextlib
import pickle
from typing import Any

from bpeproof.impl.io.errors import FormatError

__all__ = ["ErrorPayload", "WorkerError", "error_payload", "rebuild_error"]


class WorkerError(ValueError):
    """A worker process failed in a way that is not a file's fault (it stopped before reading anything)."""


ErrorPayload = tuple[str, Any, Any, Any]


def error_payload(error: BaseException) -> ErrorPayload:
    """An error as plain data for the pipe (FormatError's fields; other errors pickled, or their text)."""
    if isinstance(error, FormatError):
        return ("format", error.path, error.where, error.problem)
    if isinstance(error, (ValueError, TypeError, OSError)):
        try:
            return ("pickled", pickle.dumps(error), None, None)
        except Exception:  # an error that does not pickle is reported by its text
            pass
    return ("text", f"{type(error).__name__}: {error}", None, None)


def rebuild_error(payload: ErrorPayload, label: str) -> BaseException:
    kind, first, second, third = payload
    if kind == "format":
        return FormatError(first, second, third)
    if kind == "pickled":
        with contextlib.suppress(Exception):
            error: BaseException = pickle.loads(first)
            return error
    return WorkerError(f"{label}: {first}")
