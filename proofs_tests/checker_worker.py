"""The code under test runs here, in a separate process, so that it can never hang or crash the checker.

An implementation may raise, return the wrong type, print, exit, or never return
(a trainer that loops forever when ``num_merges`` is None breaks
prop-bpe-training-termination).  ``Worker`` forks one process that resolves the
``module:function`` targets and then answers batches of calls; each answer is
awaited with a time limit, and a call that does not return in time is reported
as a ``timeout`` outcome while the process is killed and started again.

Throughput comes from keeping the process alive: a batch (all calls of one
generated example) is one message there, and one short message per answer back.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import importlib.util
import inspect
import multiprocessing
import multiprocessing.connection
import operator
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from spec.types import Rule

#: A function under test: a callable, or ``"module:function"`` (``module`` alone means the default name;
#: ``module`` may also be a path to a ``.py`` file).
Target = Callable[..., object] | str

#: One call of a function under test: its kind ("enc", "dec" or "train") and the arguments.
Call = tuple[str, tuple[Any, ...]]

OutcomeKind = Literal["ok", "raised", "badtype", "timeout", "crashed"]

#: What each kind of function is called with, for messages: the spec's signatures.
SIGNATURES = {
    "enc": "enc(rules, data: bytes) -> list[int]",
    "dec": "dec(rules, ids: list[int]) -> bytes",
    "train": "train(corpus: list[bytes], num_merges: int | None) -> rules",
}

#: Seconds allowed for importing the targets in a new worker process.
IMPORT_TIMEOUT = 60.0


class TargetError(Exception):
    """A target that cannot be used: not importable, not callable, or with the wrong signature."""


@dataclass(frozen=True)
class Outcome:
    """The result of one call of the code under test, normalised to the spec's types when ``ok``."""

    kind: OutcomeKind
    value: Any = None  # list[int] (enc), bytes (dec), list[Rule] (train) when kind == "ok"
    message: str = ""  # the exception, the wrong type, or the time limit
    seconds: float = 0.0
    at_call: bool = False  # a TypeError raised by the call itself (wrong signature), not inside the function


def describe(target: Target) -> str:
    """A short name for a target, for messages: ``module:function``."""
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None) or "?"
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
    return f"{module}:{name}"


def import_module_or_file(name: str) -> object:
    """A module by dotted name, or by file path (``path/to/impl.py``)."""
    if name.endswith(".py") or os.sep in name:
        path = os.path.abspath(name)
        if not os.path.isfile(path):
            raise ImportError(f"no file {path}")
        module_name = os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(name)


def resolve(target: Target, kind: str) -> Callable[..., object]:
    """The callable a target names, with its signature checked against the spec's (raises ``TargetError``)."""
    option = f"--{kind}"
    if isinstance(target, str):
        module_name, _, attribute = target.partition(":")
        attribute = attribute or kind
        if not module_name:
            raise TargetError(f"{option} {target!r}: expected MODULE:FUNCTION")
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            obj: object = import_module_or_file(module_name)
        except ImportError as error:
            raise TargetError(f"{option} {target}: cannot import module {module_name!r}: {error}") from None
        except BaseException as error:  # the module's own code failed while importing
            raise TargetError(
                f"{option} {target}: importing {module_name!r} failed: {type(error).__name__}: {error}"
            ) from None
        for part in attribute.split("."):
            if not hasattr(obj, part):
                raise TargetError(f"{option} {target}: module {module_name!r} has no attribute {attribute!r}")
            obj = getattr(obj, part)
    else:
        obj = target
    if not callable(obj):
        raise TargetError(f"{option} {describe(target)}: not callable ({type(obj).__name__})")
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return obj  # a builtin without a signature: the smoke call decides
    try:
        signature.bind(None, None)
    except TypeError as error:
        raise TargetError(
            f"{option} {describe(target)}: signature {signature} does not fit {SIGNATURES[kind]} ({error})"
        ) from None
    return obj


def _as_int(value: object) -> int:
    if isinstance(value, (str, bytes, float)):
        raise TypeError(f"{type(value).__name__} is not an int")
    return operator.index(value)  # type: ignore[arg-type]


def normalise(kind: str, value: object) -> Outcome:
    """Convert a returned value to the spec's type, or describe why it is not of that type."""
    name = type(value).__name__
    if kind == "dec":
        if isinstance(value, (bytes, bytearray, memoryview)):
            return Outcome("ok", bytes(value))
        return Outcome("badtype", message=f"returned {name} {_short(value)}, not bytes")
    if isinstance(value, (str, bytes, bytearray, dict, set, frozenset)) or value is None:
        return Outcome("badtype", message=f"returned {name} {_short(value)}, not a list")
    try:
        items = list(value)  # type: ignore[call-overload]
    except TypeError:
        return Outcome("badtype", message=f"returned {name} {_short(value)}, not a list")
    if kind == "enc":
        try:
            return Outcome("ok", [_as_int(item) for item in items])
        except TypeError:
            return Outcome("badtype", message=f"returned {_short(items)}: not a list of int ids")
    rules: list[Rule] = []
    for index, item in enumerate(items):
        try:
            parts = [_as_int(part) for part in item]
        except TypeError:
            return Outcome("badtype", message=f"rule {index} is {_short(item)}, not an (a, b, c) triple of ints")
        if len(parts) != 3:
            return Outcome("badtype", message=f"rule {index} is {_short(item)}, not an (a, b, c) triple")
        rules.append(Rule(*parts))
    return Outcome("ok", rules)


def _short(value: object, limit: int = 120) -> str:
    try:
        text = repr(value)
    except Exception as error:  # a repr that fails is itself worth showing
        text = f"<repr failed: {type(error).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def run_call(function: Callable[..., object], kind: str, args: tuple[Any, ...]) -> Outcome:
    """Call ``function(*args)`` and describe what happened, exceptions included."""
    start = time.perf_counter()
    try:
        value = function(*args)
        outcome = normalise(kind, value)
    except BaseException as error:  # the code under test may raise anything, SystemExit included
        tb = error.__traceback__
        frames = len(traceback.extract_tb(tb)) if tb is not None else 0
        at_call = isinstance(error, TypeError) and frames <= 1
        message = f"{type(error).__name__}: {error}"
        outcome = Outcome("raised", message=message[:500], at_call=at_call)
    return Outcome(outcome.kind, outcome.value, outcome.message, time.perf_counter() - start, outcome.at_call)


def _silence() -> None:
    """The code under test may print: keep its output away from the checker's (``--json`` must stay clean)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.dup2(devnull, fd)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    sys.stderr = sys.stdout


def _worker_main(conn: multiprocessing.connection.Connection, targets: dict[str, Target]) -> None:
    _silence()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))
    functions: dict[str, Callable[..., object]] = {}
    try:
        for kind, target in targets.items():
            functions[kind] = resolve(target, kind)
    except TargetError as error:
        conn.send(("usage", str(error)))
        return
    conn.send(("ready", ""))
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        for kind, args in batch:
            # a fresh copy per call: calls of one batch may share a rule list the code under test could mutate
            conn.send(run_call(functions[kind], kind, copy.deepcopy(args)))


class Worker:
    """A process holding the functions under test, restarted after a time-out or a crash."""

    def __init__(self, targets: dict[str, Target], call_timeout: float) -> None:
        self.targets = dict(targets)
        self.call_timeout = call_timeout
        self.restarts = 0
        methods = multiprocessing.get_all_start_methods()
        self._context: Any = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self._process: Any = None
        self._conn: multiprocessing.connection.Connection | None = None
        self._dirty = False
        self.start()

    def start(self) -> None:
        """Start a fresh process (raises ``TargetError`` if a target cannot be used)."""
        parent, child = self._context.Pipe()
        process = self._context.Process(target=_worker_main, args=(child, self.targets), daemon=True)
        process.start()
        child.close()
        self._process, self._conn = process, parent
        if not parent.poll(IMPORT_TIMEOUT):
            self.stop()
            raise TargetError(f"loading {', '.join(map(describe, self.targets.values()))} took over {IMPORT_TIMEOUT} s")
        try:
            status, message = parent.recv()
        except (EOFError, OSError):
            code = process.exitcode
            self.stop()
            raise TargetError(
                f"loading {', '.join(map(describe, self.targets.values()))} ended the process (exit code {code})"
            ) from None
        if status != "ready":
            self.stop()
            raise TargetError(message)

    def stop(self) -> None:
        """End the process: ask it to leave, then kill it if it does not."""
        conn, process = self._conn, self._process
        self._conn = self._process = None
        if conn is not None:
            with contextlib.suppress(OSError, ValueError):
                conn.send(None)
            conn.close()
        if process is not None:
            process.join(0.2)
            if process.is_alive():
                process.kill()
                process.join(2.0)

    def restart(self) -> None:
        """Kill the process and start a fresh one (state such as caches is gone)."""
        if self._process is not None and self._process.is_alive():
            self._process.kill()
            self._process.join(2.0)
        if self._conn is not None:
            self._conn.close()
        self._conn = self._process = None
        self._dirty = False
        self.restarts += 1
        self.start()

    def run(self, calls: Sequence[Call], timeout: float | None = None) -> list[Outcome]:
        """Run the calls in order; stop after the first that times out or kills the process.

        The answer has one outcome per call that ran, the failing one last.
        """
        limit = self.call_timeout if timeout is None else timeout
        if self._dirty:  # an earlier run was interrupted: answers may still be on their way
            self.restart()
        if self._conn is None:
            self.start()
        assert self._conn is not None
        self._dirty = True
        outcomes = self._run(calls, limit)  # an exception here (a timer tick) leaves _dirty set
        self._dirty = False
        return outcomes

    def _run(self, calls: Sequence[Call], limit: float) -> list[Outcome]:
        assert self._conn is not None
        outcomes: list[Outcome] = []
        try:
            self._conn.send(list(calls))
        except (OSError, ValueError):
            self.restart()
            assert self._conn is not None
            self._conn.send(list(calls))
        for _ in calls:
            if not self._conn.poll(limit):
                outcomes.append(Outcome("timeout", message=f"did not return within {limit:.3g} s", seconds=limit))
                self.restart()
                return outcomes
            try:
                outcomes.append(self._conn.recv())
            except (EOFError, OSError):
                code = None
                if self._process is not None:
                    self._process.join(1.0)
                    code = self._process.exitcode
                outcomes.append(Outcome("crashed", message=f"ended the process running it (exit code {code})"))
                self.restart()
                return outcomes
        return outcomes

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LocalCaller:
    """Calls the functions in this process (the CrossHair backend needs them here to trace them)."""

    def __init__(self, targets: dict[str, Target]) -> None:
        self.functions = {kind: resolve(target, kind) for kind, target in targets.items()}

    def run(self, calls: Sequence[Call], timeout: float | None = None) -> list[Outcome]:
        """Run the calls in order (no time limit here: the parent process watches the clock)."""
        return [run_call(self.functions[kind], kind, args) for kind, args in calls]
