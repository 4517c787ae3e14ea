"""The function checker's search: Hypothesis properties as sources of the one search loop, then shrink and replay.

Each ``Property`` generates sequences of calls of one function (``call_strategies``); a ``PropertySource`` runs
it with Hypothesis for a turn of the loop (``search.run``), judges every answer by the specification
(``properties.judge``) and records the first difference in a ``FunctionSearch``.  Hypothesis shrinks short
examples itself during the shrinking share of the budget; long inputs and batches are shrunk here
(``shrink_long``, with ``shrink``'s strategies), and the finding is replayed in fresh processes
(``confirm``, with ``search.isolate_state``) to tell a plain bug from one that needs earlier calls.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from hypothesis import HealthCheck, Phase, Verbosity, example, given, seed, settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context

from bpeproof.proofs_tests.checker import call_strategies as cs
from bpeproof.proofs_tests.checker import shrink
from bpeproof.proofs_tests.checker import strategies as ps
from bpeproof.proofs_tests.checker.properties import Failure, expect, judge
from bpeproof.proofs_tests.checker.search import Search, isolate_state, run
from bpeproof.proofs_tests.checker.worker import (
    SIGNATURES,
    Call,
    Outcome,
    Target,
    TargetError,
    Worker,
    decode_args,
    describe,
    encode_args,
)
from bpeproof.spec.merge import MAX_SPEC_LENGTH, validate_rules
from bpeproof.spec.types import BPEValueError

Backend = Literal["hypothesis", "crosshair"]

#: Seconds a single call may take before it counts as not returning.
DEFAULT_CALL_TIMEOUT = 2.0
#: Inputs longer than the spec's guard get at least this long (a correct quadratic encoder may need it).
LONG_CALL_TIMEOUT = 10.0
#: The limit grows by this many times the specification's own time on the same calls.
SPEC_FACTOR = 20.0
#: The first turn of each property, in seconds, per backend (each later turn is twice as long).
FIRST_SLICE: dict[str, float] = {"hypothesis": 0.25, "crosshair": 5.0}


@dataclass(frozen=True)
class Property:
    """A generator of call sequences for one function, with its share of each time slice."""

    name: str
    function: str
    strategy: st.SearchStrategy[list[Call]]
    weight: float = 1.0
    long: bool = False  # inputs beyond the spec's guard: shrunk by ``shrink_long``, not by Hypothesis
    batch: bool = False  # each example is many independent calls (counted one by one), shrunk by ``shrink_long``


PROPERTIES: list[Property] = [
    Property("enc", "enc", cs.enc_calls()),
    Property("dec", "dec", cs.dec_calls()),
    Property("train", "train", cs.train_calls()),
    Property("train_unbounded", "train", cs.unbounded_train_calls(), 0.5),
    Property("enc_long", "enc", cs.long_enc_calls(), 0.4, long=True),
    Property("enc_batch", "enc", st.integers(0, 2**32 - 1).map(cs.fast_enc_calls), 1.5, batch=True),
]


def _single(kind: str) -> Callable[[Any], list[Call]]:
    return lambda args: [(kind, tuple(args))]


#: Smaller, flatter generators for the CrossHair backend: symbolic execution pays for every draw.
CROSSHAIR_PROPERTIES: list[Property] = [
    Property("enc", "enc", ps.rules_and_data(max_rules=3, max_size=8).map(_single("enc"))),
    Property("dec", "dec", ps.rules_and_tokens(max_rules=3, max_size=8).map(_single("dec"))),
    Property("train", "train", st.tuples(ps.corpora(max_distinct=2, max_repeat=2, max_word=4),
                                         st.one_of(st.none(), st.integers(0, 3))).map(_single("train"))),
]


class Caller(Protocol):
    """Runs calls of the code under test: in a worker process, or here (CrossHair)."""

    def run(self, calls: Sequence[Call], timeout: float | None = None) -> list[Outcome]: ...


class FunctionSearch(Search[Failure]):
    """The budget and the finding of a function check, with the share of time Hypothesis may spend shrinking
    and, in the CrossHair backend's child, a callback that reports progress after each example."""

    def __init__(self, start: float, deadline: float, shrink_seconds: float) -> None:
        super().__init__(start=start, deadline=deadline)
        self.shrink_seconds = shrink_seconds
        self.report: Callable[[FunctionSearch], None] | None = None

    def keep(self, failure: Failure, source: str) -> None:
        """Record ``failure``; while Hypothesis shrinks, each smaller one replaces the one before."""
        self.record(failure, source, lambda new, old: new.size() <= old.size())

    def shrink_over(self, now: float, call_timeout: float) -> bool:
        """Whether the time to shrink the finding is up (a finding that hangs gets two time limits at most)."""
        if self.found_at is None or self.finding is None:
            return False
        budget = self.shrink_seconds
        if self.finding.outcome_kind == "timeout":
            budget = min(budget, 2 * call_timeout)  # each candidate that hangs costs a whole time limit
        return now >= min(self.deadline, self.found_at + budget)


def call_timeout_for(calls: Sequence[Call], call_timeout: float) -> float:
    """The time limit of ``calls``: longer for inputs beyond the specification's guard."""
    longest = max((len(args[1]) for kind, args in calls if kind in ("enc", "dec")), default=0)
    return max(call_timeout, LONG_CALL_TIMEOUT) if longest > MAX_SPEC_LENGTH else call_timeout


class _Stop(BaseException):
    """Ends a Hypothesis run at once (a BaseException, so Hypothesis does not treat it as a failure)."""


class _Mismatch(Exception):
    """Raised inside the test so that Hypothesis shrinks; the failure itself is kept in the search."""


@dataclass
class PropertySource:
    """One property as a source of the search loop: each turn is one Hypothesis run until the turn ends."""

    prop: Property
    caller: Caller
    run_seed: int
    backend: Backend
    call_timeout: float
    explicit: bool

    @property
    def name(self) -> str:
        return self.prop.name

    @property
    def weight(self) -> float:
        return self.prop.weight

    def _should_stop(self, search: FunctionSearch, until: float) -> bool:
        """Time is up: the whole budget, the shrinking share, or (nothing found yet) this turn."""
        now = time.monotonic()
        return (now >= search.deadline or search.shrink_over(now, self.call_timeout)
                or (search.finding is None and now >= until))

    def turn(self, search: Search[Failure], until: float, round_no: int, index: int) -> None:
        assert isinstance(search, FunctionSearch)
        prop, caller, backend = self.prop, self.caller, self.backend

        def body(calls: list[Call]) -> None:
            if self._should_stop(search, until):
                raise _Stop
            search.counts[prop.name] += len(calls) if prop.batch else 1
            spec_seconds = sum(expect(call) for call in calls)
            outcomes = caller.run(calls, call_timeout_for(calls, self.call_timeout) + SPEC_FACTOR * spec_seconds)
            for position, (call, outcome) in enumerate(zip(calls, outcomes, strict=False)):
                if outcome.kind == "timeout" and call_timeout_for([call], self.call_timeout) > self.call_timeout:
                    return  # a long input may take long: only wrong answers count there
                failure = judge(call, outcome)
                if failure is not None:
                    failure.earlier = list(calls[:position])
                    if backend != "hypothesis":
                        failure = _concrete_failure(failure, caller)
                        if failure is None:
                            return  # symbolic values misled the code under test: not a difference
                    search.keep(failure, prop.name)
                    if search.report is not None:
                        search.report(search)
                    raise _Mismatch(failure.claim)
            if search.report is not None:
                search.report(search)

        explicit = self.explicit and round_no == 0
        test: Callable[..., None] = given(prop.strategy)(body)
        if explicit:
            for calls in reversed(cs.EXPLICIT.get(prop.name, [])):
                test = example(calls)(test)
        test = seed((self.run_seed * 1_000_003 + round_no * 101 + index) % 2**32)(test)
        # Hypothesis's shrinker can spend many seconds between two test calls on a 2000-byte input
        # (it checks candidates against what it has seen): long inputs are shrunk by ``shrink_long``.
        phases = [Phase.generate] if prop.long or prop.batch else [Phase.generate, Phase.shrink]
        if explicit:
            phases.insert(0, Phase.explicit)
        options: dict[str, Any] = {}
        if backend != "hypothesis":
            options["backend"] = backend
        test = settings(
            max_examples=1_000_000_000,
            deadline=None,
            database=None,
            derandomize=False,
            phases=phases,
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,
            report_multiple_bugs=False,
            print_blob=False,
            **options,
        )(test)
        try:
            test()
        except _Stop:
            pass
        except Exception:
            if search.finding is None:
                raise


def _concrete_failure(failure: Failure, caller: Caller) -> Failure | None:
    """A failure found on symbolic inputs, with the inputs made concrete (real bytes, ints, lists) and the
    calls run again on them; None when the concrete calls are answered as the specification answers."""
    realized: Failure = current_build_context().data.provider.realize(failure, for_failure=True)
    assert realized.call is not None
    calls = [*realized.earlier, realized.call]
    calls = [(kind, decode_args(kind, json.loads(json.dumps(encode_args(kind, args))))) for kind, args in calls]
    outcomes = caller.run(calls)
    if len(outcomes) != len(calls):
        return None
    again = judge(calls[-1], outcomes[-1])
    if again is not None:
        again.earlier = calls[:-1]
    return again


def search_properties(targets: dict[str, Target], caller: Caller, search: FunctionSearch, run_seed: int,
                      backend: Backend, call_timeout: float, explicit: bool = True) -> None:
    """The properties of the given functions as sources of the one search loop (``search.run``)."""
    properties = PROPERTIES if backend == "hypothesis" else CROSSHAIR_PROPERTIES
    sources = [PropertySource(p, caller, run_seed, backend, call_timeout, explicit)
               for p in properties if p.function in targets]
    run(search, sources, FIRST_SLICE[backend])


SMOKE: dict[str, Call] = {
    "enc": ("enc", ([], b"ab")),
    "dec": ("dec", ([], [97, 98])),
    "train": ("train", ([b"ab"], 1)),
}


def smoke(worker: Worker, targets: dict[str, Target], call_timeout: float, search: FunctionSearch) -> None:
    """One trivial call per function: a TypeError raised by the call itself means a wrong signature;
    any other wrong answer is already a finding."""
    for kind in targets:
        call = SMOKE[kind]
        expect(call)
        outcome = worker.run([call], call_timeout)[-1]
        if outcome.kind == "raised" and outcome.at_call:
            raise TargetError(
                f"--{kind} {describe(targets[kind])}: calling it as {SIGNATURES[kind]} failed: {outcome.message}"
            )
        failure = judge(call, outcome)
        if failure is not None and search.finding is None:
            search.keep(failure, "smoke")


def shrink_long(worker: Worker, search: FunctionSearch, call_timeout: float) -> None:
    """Shrink a failing enc call on a long input (or from a batch): the call alone, then its rules one by one,
    then its data cut from the end and from the start (``shrink``), while the shrinking time lasts."""
    failure = search.finding
    own_shrinking = {p.name for p in PROPERTIES if p.long or p.batch}
    if failure is None or failure.call is None or failure.call[0] != "enc" or search.source not in own_shrinking:
        return
    rules, data = failure.call[1]
    name = search.source or "enc"

    def attempt(candidate_rules: list[Any], candidate: bytes) -> Failure | None:
        call: Call = ("enc", (candidate_rules, candidate))
        limit = call_timeout_for([call], call_timeout) + SPEC_FACTOR * expect(call)
        search.counts[name] += 1
        return judge(call, worker.run([call], limit)[-1])

    def time_left() -> float:
        """The end of the shrinking share, as a monotonic time (``shrink_over`` may cut it shorter)."""
        return search.deadline if search.found_at is None else min(search.deadline,
                                                                   search.found_at + search.shrink_seconds)

    def fewer_rules(candidates: Sequence[list[Any]]) -> tuple[list[Any], Failure] | None:
        for candidate in candidates:
            if search.shrink_over(time.monotonic(), call_timeout):
                return None
            found = attempt(candidate, data) if _valid(candidate) else None
            if found is not None:
                return candidate, found
        return None

    def shorter_data(candidates: Sequence[bytes]) -> tuple[bytes, Failure] | None:
        for candidate in candidates:
            if search.shrink_over(time.monotonic(), call_timeout):
                return None
            found = attempt(rules, candidate)
            if found is not None:
                return candidate, found
        return None

    if failure.earlier and failure.outcome_kind != "timeout":  # independent calls: try the failing one alone
        alone = attempt(rules, data)
        if alone is not None:
            failure = alone
    if not failure.earlier:  # rules the failure does not need, dropped one at a time from the end
        rules, failure = shrink.greedy(list(rules), failure, shrink.each_dropped, fewer_rules, time_left())
    data, failure = shrink.cut_ends(data, failure, shorter_data, time_left())
    search.finding = failure


def _valid(rules: Sequence[Any]) -> bool:
    """Whether a rule list is still valid (def-merge) after a rule was dropped."""
    try:
        validate_rules(list(rules))
    except (BPEValueError, ValueError, TypeError):
        return False
    return True


def confirm(worker: Worker, failure: Failure, call_timeout: float) -> tuple[Failure, str | None]:
    """Replay the failing call in fresh processes (``search.isolate_state``); say which state it needs."""
    assert failure.call is not None
    if failure.outcome_kind == "timeout":
        return failure, None  # a call that did not return: replaying costs the whole time limit again
    call = failure.call

    def replay(before: Sequence[Call]) -> Failure | None:
        worker.restart()
        calls = [*before, call]
        outcomes = worker.run(calls, call_timeout_for(calls, call_timeout))
        again = judge(call, outcomes[-1]) if len(outcomes) == len(calls) else None
        if again is not None:
            again.earlier = list(before)
        return again

    again, _needed, state = isolate_state(replay, failure.earlier)
    return (failure if again is None else again), state
