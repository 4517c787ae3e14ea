"""The code under test runs here, in a separate process, so that it can never hang or crash the checker.

An implementation may raise, return the wrong type, print, exit, fork, eat memory, or never
return (a trainer that loops forever when ``num_merges`` is None breaks
prop-bpe-training-termination).  ``Worker`` forks one process (``sandbox``:
under a reaper that kills everything it starts, killed with the checker, under a memory cap) that imports the
``module:function`` targets — the checker itself never imports them — and then
answers batches of calls; each answer is awaited with a time limit, and a call that
does not return in time is reported as a ``timeout`` outcome while the process and
everything it started are killed and a fresh process started.  Calls and answers travel as JSON lines
(bytes as Latin-1 strings) and every answer is validated (``decode_outcome``):
nothing the code under test sends is unpickled or executed.

Throughput comes from keeping the process alive: a batch (all calls of one
generated example) is one message there, and one short message per answer back.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import operator
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bpeproof.proofs_tests.checker.process import Gone, Peer
from bpeproof.proofs_tests.checker.sandbox import DEFAULT_MEMORY_MB, Channel, ChannelError, fork_worker
from bpeproof.spec.types import Rule, is_int

#: A function under test: a callable, or ``"module:function"`` (``module`` alone means the default name;
#: ``module`` may also be a path to a ``.py`` file).
Target = Callable[..., object] | str

#: One call of a function under test: its kind ("enc", "dec" or "train") and the arguments.
Call = tuple[str, tuple[Any, ...]]

OutcomeKind = Literal["ok", "raised", "badtype", "timeout", "crashed", "memory"]

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
    return resolve_callable(target, f"--{kind}", kind, 2, f"fit {SIGNATURES[kind]}")


def resolve_callable(target: Target, option: str, default: str | None, arguments: int, shape: str
                     ) -> Callable[..., object]:
    """The callable ``target`` names (``MODULE:FUNCTION``, ``MODULE`` alone meaning ``MODULE:default``, or a
    callable), imported from the current directory too, and able to take ``arguments`` positional arguments
    (``shape`` says how, for the message); ``TargetError`` naming ``option`` otherwise."""
    if isinstance(target, str):
        module_name, _, attribute = target.partition(":")
        attribute = attribute or default or ""
        if not module_name or not attribute:
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
        return obj  # a builtin without a signature: the first call decides
    try:
        signature.bind(*([None] * arguments))
    except TypeError as error:
        raise TargetError(f"{option} {describe(target)}: signature {signature} does not {shape} ({error})") from None
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
    except MemoryError as error:
        message = f"MemoryError: {error}: the worker's memory cap was hit"
        return Outcome("memory", message=message[:500], seconds=time.perf_counter() - start)
    except BaseException as error:  # the code under test may raise anything, SystemExit included
        tb = error.__traceback__
        frames = len(traceback.extract_tb(tb)) if tb is not None else 0
        at_call = isinstance(error, TypeError) and frames <= 1
        message = f"{type(error).__name__}: {error}"
        outcome = Outcome("raised", message=message[:500], at_call=at_call)
    return Outcome(outcome.kind, outcome.value, outcome.message, time.perf_counter() - start, outcome.at_call)


def silence() -> None:
    """The code under test may print: keep its output away from the checker's (``--json`` must stay clean)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.dup2(devnull, fd)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    sys.stderr = sys.stdout


# -- the data-only channel: arguments and answers as JSON (bytes as Latin-1 strings) ---------------------


def _latin1(data: bytes) -> str:
    return bytes(data).decode("latin-1")


def encode_args(kind: str, args: tuple[Any, ...]) -> list[Any]:
    """The arguments of one call as JSON data."""
    if kind == "enc":
        rules, data = args
        return [[[int(x) for x in rule] for rule in rules], _latin1(data)]
    if kind == "dec":
        rules, ids = args
        return [[[int(x) for x in rule] for rule in rules], [int(t) for t in ids]]
    corpus, num_merges = args
    return [[_latin1(word) for word in corpus], num_merges]


def decode_args(kind: str, value: list[Any]) -> tuple[Any, ...]:
    """``encode_args`` reversed, with the spec's types (``Rule``, ``bytes``)."""
    if kind == "enc":
        return ([Rule(*rule) for rule in value[0]], value[1].encode("latin-1"))
    if kind == "dec":
        return ([Rule(*rule) for rule in value[0]], list(value[1]))
    return ([word.encode("latin-1") for word in value[0]], value[1])


def _encode_outcome(kind: str, outcome: Outcome) -> dict[str, Any]:
    value: Any = None
    if outcome.kind == "ok":
        if kind == "dec":
            value = _latin1(outcome.value)
        elif kind == "train":
            value = [list(rule) for rule in outcome.value]
        else:
            value = list(outcome.value)
    return {"kind": outcome.kind, "value": value, "message": outcome.message, "seconds": outcome.seconds,
            "at_call": outcome.at_call}


class ReplyError(Exception):
    """A worker's reply that is not a valid outcome."""


def decode_outcome(kind: str, reply: object) -> Outcome:
    """Validate a worker's reply and turn it into an ``Outcome`` (raises ``ReplyError``)."""
    if not isinstance(reply, dict) or set(reply) != {"kind", "value", "message", "seconds", "at_call"}:
        raise ReplyError("a reply must be an object with kind, value, message, seconds, at_call")
    status, value, message = reply["kind"], reply["value"], reply["message"]
    seconds, at_call = reply["seconds"], reply["at_call"]
    if status not in ("ok", "raised", "badtype", "memory") or not isinstance(message, str):
        raise ReplyError(f"unknown outcome kind {status!r}")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not isinstance(at_call, bool):
        raise ReplyError("seconds must be a number and at_call a bool")
    if status != "ok":
        if value is not None:
            raise ReplyError("a failed call carries no value")
        return Outcome(status, None, message[:500], float(seconds), at_call)
    if kind == "dec":
        if not isinstance(value, str) or any(ord(ch) > 255 for ch in value):
            raise ReplyError("dec's value must be bytes as a Latin-1 string")
        return Outcome("ok", value.encode("latin-1"), "", float(seconds))
    if not isinstance(value, list):
        raise ReplyError(f"{kind}'s value must be a list")
    if kind == "enc":
        if not all(is_int(t) for t in value):
            raise ReplyError("enc's value must be a list of ints")
        return Outcome("ok", list(value), "", float(seconds))
    rules: list[Rule] = []
    for rule in value:
        if not isinstance(rule, list) or len(rule) != 3 or not all(is_int(x) for x in rule):
            raise ReplyError("train's value must be a list of [a, b, c] int triples")
        rules.append(Rule(*rule))
    return Outcome("ok", rules, "", float(seconds))


def _worker_main(channel: Channel, targets: dict[str, Target], optional: bool) -> None:
    silence()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))
    functions: dict[str, Callable[..., object]] = {}
    try:
        for kind, target in targets.items():
            try:
                functions[kind] = resolve(target, kind)
            except TargetError as error:
                if not (optional and "has no attribute" in str(error)):
                    raise
        if not functions:
            raise TargetError(f"{', '.join(map(describe, targets.values()))}: the module defines none of"
                              f" {', '.join(targets)}")
    except TargetError as error:
        channel.send({"status": "usage", "message": str(error), "kinds": []})
        return
    channel.send({"status": "ready", "message": "", "kinds": sorted(functions)})
    while True:
        try:
            batch = channel.receive(None)
        except ChannelError:
            return
        if batch is None:
            return
        for kind, raw in batch:
            outcome = run_call(functions[kind], kind, decode_args(kind, raw))
            channel.send(_encode_outcome(kind, outcome))


class Worker:
    """A process holding the functions under test, restarted after a time-out or a crash.

    The process is forked (so callables work as targets), runs under a reaper (killed with everything it
    started after a time-out, a crash and at the end: ``containment``), dies with the checker, runs under
    a memory cap, and answers in JSON lines that are validated here (``sandbox``).
    ``optional``: targets whose function the module does not define are dropped (``--impl MOD``);
    ``kinds`` then names those that exist.
    """

    def __init__(
        self,
        targets: dict[str, Target],
        call_timeout: float,
        *,
        import_timeout: float = IMPORT_TIMEOUT,
        memory_mb: int | None = DEFAULT_MEMORY_MB,
        optional: bool = False,
    ) -> None:
        self.targets = dict(targets)
        self.call_timeout = call_timeout
        self.import_timeout = import_timeout
        self.memory_mb = memory_mb
        self.optional = optional
        self.restarts = 0
        self.kinds: list[str] = []
        self._peer = Peer(lambda: fork_worker(lambda channel: _worker_main(channel, self.targets, self.optional),
                                              self.memory_mb))
        self._dirty = False
        self.start()

    def start(self) -> None:
        """Start a fresh process (raises ``TargetError`` if a target cannot be used)."""
        names = ", ".join(map(describe, self.targets.values()))
        try:
            hello = self._peer.greet(self.import_timeout)
        except Gone as gone:
            self.stop()
            if gone.kind == "timeout":
                raise TargetError(f"loading {names} took over {self.import_timeout:.3g} s") from None
            raise TargetError(f"loading {names} ended the process (exit code {gone.exit_code})") from None
        if not isinstance(hello, dict) or hello.get("status") not in ("ready", "usage"):
            self.stop()
            raise TargetError(f"loading {names}: the worker sent an invalid first message")
        if hello["status"] != "ready":
            self.stop()
            raise TargetError(str(hello.get("message")))
        kinds = hello.get("kinds")
        self.kinds = [k for k in kinds if k in self.targets] if isinstance(kinds, list) else []
        self.targets = {kind: self.targets[kind] for kind in self.kinds}

    def stop(self) -> None:
        """End the process and its group."""
        self._peer.stop()

    def restart(self) -> None:
        """Kill the process and start a fresh one (state such as caches is gone)."""
        self.stop()
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
        if not self._peer.alive:
            self.start()
        self._dirty = True
        outcomes = self._run(calls, limit)  # an exception here (a timer tick) leaves _dirty set
        self._dirty = False
        return outcomes

    def _run(self, calls: Sequence[Call], limit: float) -> list[Outcome]:
        outcomes: list[Outcome] = []
        request = [[kind, encode_args(kind, args)] for kind, args in calls]
        try:
            self._peer.send(request)
        except Gone:
            self.restart()
            self._peer.send(request)
        for kind, _ in calls:
            try:
                reply = self._peer.receive(limit)
            except Gone as gone:
                if gone.kind == "timeout":
                    outcomes.append(Outcome("timeout", message=f"did not return within {limit:.3g} s",
                                            seconds=limit))
                else:
                    outcomes.append(Outcome("crashed", message=f"ended the process running it"
                                            f" (exit code {gone.exit_code})"))
                self.restart()
                return outcomes
            try:
                outcomes.append(decode_outcome(kind, reply))
            except ReplyError as error:
                outcomes.append(Outcome("crashed", message=f"the worker sent an invalid reply: {error}"))
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
