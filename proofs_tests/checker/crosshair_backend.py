"""The function checker's CrossHair backend: the search runs symbolically in a child, the parent keeps the clock.

CrossHair must trace the code under check, so the implementation is called *in* the searching process
(``TimedLocalCaller``, each call interrupted by a timer signal: pure Python code only), with the smaller, flatter
generators of ``function_search.CROSSHAIR_PROPERTIES``.  That process is a forked child which the parent kills
at the deadline; it sends its progress as JSON data (the failing calls, made concrete, and the counts), and the
parent runs a finding again on concrete inputs in an isolated worker before reporting anything.  It is far
slower than the default search (the manual gives its rate), so it is for long opt-in runs, never the default.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from bpeproof.proofs_tests.checker.function_result import CheckResult, check_result
from bpeproof.proofs_tests.checker.function_search import (
    DEFAULT_CALL_TIMEOUT,
    FunctionSearch,
    call_timeout_for,
    search_properties,
)
from bpeproof.proofs_tests.checker.properties import Failure, judge
from bpeproof.proofs_tests.checker.sandbox import Channel, ChannelError, fork_worker
from bpeproof.proofs_tests.checker.worker import (
    SIGNATURES,
    Call,
    LocalCaller,
    Outcome,
    Target,
    TargetError,
    Worker,
    decode_args,
    encode_args,
)


class _CallTimeout(Exception):
    """Raised by the timer signal inside a call that takes too long (CrossHair backend)."""


class _TimedLocalCaller:
    """In-process calls, each interrupted by SIGALRM after the time limit (pure Python code only)."""

    def __init__(self, targets: dict[str, Target]) -> None:
        self.local = LocalCaller(targets)

    def run(self, calls: Sequence[Call], timeout: float | None = None) -> list[Outcome]:
        outcomes: list[Outcome] = []
        limit = timeout or DEFAULT_CALL_TIMEOUT
        for call in calls:
            with _alarm(limit):
                try:
                    outcome = self.local.run([call])[0]
                except _CallTimeout:
                    outcome = Outcome("timeout", message=f"did not return within {limit:g} s", seconds=limit)
            if outcome.kind == "raised" and outcome.message.startswith("_CallTimeout"):
                outcome = Outcome("timeout", message=f"did not return within {limit:g} s", seconds=limit)
            outcomes.append(outcome)
            if outcome.kind == "timeout":
                break
        return outcomes


@contextlib.contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    def handler(signum: int, frame: object) -> None:
        raise _CallTimeout()

    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _calls_json(calls: Sequence[Call]) -> list[Any]:
    return [[kind, encode_args(kind, args)] for kind, args in calls]


def _crosshair_child(
    channel: Channel,
    targets: dict[str, Target],
    state: FunctionSearch,
    run_seed: int,
    call_timeout: float,
    explicit: bool,
) -> None:
    """The CrossHair search, in a forked process; it sends its progress as JSON data (the failing calls, made
    concrete, and the counts), which the parent runs again concretely before reporting anything."""
    try:
        caller = _TimedLocalCaller(targets)
    except TargetError as error:
        channel.send({"status": "usage", "message": str(error)})
        return

    def message(status: str, current: FunctionSearch) -> dict[str, Any]:
        failure = current.finding
        calls = None if failure is None or failure.call is None else _calls_json([*failure.earlier, failure.call])
        return {"status": status, "calls": calls, "counts": dict(current.counts), "found_at": current.found_at,
                "property": current.source}

    state.report = lambda current: channel.send(message("progress", current))
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        search_properties(targets, caller, state, run_seed, "crosshair", call_timeout * 10, explicit)
    state.report = None
    channel.send(message("done", state))


def _read_calls(value: object) -> list[Call] | None:
    """Calls sent by the CrossHair process, validated by the worker's own argument decoding."""
    if not isinstance(value, list) or not value:
        return None
    calls: list[Call] = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 2 and item[0] in SIGNATURES and isinstance(item[1], list)):
            return None
        try:
            calls.append((item[0], decode_args(item[0], item[1])))
        except (TypeError, ValueError, IndexError, AttributeError, UnicodeError):
            return None
    return calls


def check_crosshair(
    targets: dict[str, Target], state: FunctionSearch, run_seed: int, call_timeout: float, explicit: bool
) -> CheckResult:
    process = fork_worker(
        lambda channel: _crosshair_child(channel, targets, state, run_seed, call_timeout, explicit), None
    )
    latest: dict[str, Any] | None = None
    done = False
    try:
        while not done:
            now = time.monotonic()
            end = state.deadline
            if state.found_at is not None:
                end = min(end, state.found_at + state.shrink_seconds)
            try:
                payload = process.channel.receive(max(0.0, end + 1.0 - now))
            except (TimeoutError, ChannelError):
                break
            if not isinstance(payload, dict):
                break
            if payload.get("status") == "usage":
                raise TargetError(str(payload.get("message")))
            latest, done = payload, payload.get("status") == "done"
            found_at = payload.get("found_at")
            state.found_at = float(found_at) if isinstance(found_at, (int, float)) else None
    finally:
        process.kill()
    note = None if done else "the CrossHair search was stopped at the deadline"
    failure: Failure | None = None
    state.finding = None
    if latest is not None:
        counts = latest.get("counts")
        if isinstance(counts, dict):
            state.counts = Counter({str(k): int(v) for k, v in counts.items() if isinstance(v, int)})
        name = latest.get("property")
        state.source = name if isinstance(name, str) else None
        calls = _read_calls(latest.get("calls"))
        if calls is not None:
            # the symbolic search's finding, run again on concrete inputs in an isolated worker
            with Worker(targets, call_timeout) as worker:
                outcomes = worker.run(calls, call_timeout_for(calls, call_timeout) * 2)
            if len(outcomes) == len(calls):
                failure = judge(calls[-1], outcomes[-1])
            if failure is None:
                note = "a difference seen on symbolic inputs was not reproduced on concrete ones: not reported"
            else:
                failure.earlier = calls[:-1]
    state.finding = failure
    if failure is None:
        state.found_at = None
    return check_result(targets, state, run_seed, "crosshair", failure, "earlier-calls" if failure and failure.earlier
                   else None, note)
