"""Check anyone's byte-level BPE implementation against the specification, with the article's claims.

Usage from Python::

    from bpeproof.proofs_tests.checker.functions import check_encoder, check_decoder, check_trainer, check_all

    result = check_encoder("mymod:enc", seconds=10)      # or a callable: check_encoder(my_enc)
    if result.found:
        print(result.report())                           # claim id, shrunk input, spec vs. implementation

from the command line: ``bpeproof check --enc mymod:enc --dec mymod:dec --train mymod:train``
(``bpeproof/commands/check.py``), and from pytest:
``pytest --pyargs bpeproof.proofs_tests --bpe-impl mymod`` (``proofs_tests/plugin.py``, registered as a pytest plugin
when the project is installed).

How it works.  Hypothesis generates *sequences* of calls (``call_strategies``):
tiny alphabets, long runs, rules with a = b, fresh non-contiguous ids, rules that
fire on the data, repeated pairs, tie-heavy corpora with repeated words, UTF-8
text, and sometimes inputs of 300–2100 bytes.  The code under test runs in a
separate process (``worker.Worker``) with a time limit per call, so an
exception, a wrong type or a call that never returns is a finding, never a hang.
Each answer is compared with the specification (``properties.judge``)
and a difference is reported with the article id it contradicts: def-bpe,
thm-bpe-roundtrip, prop-bpe-length-monotone, def-alphabet-vocab,
prop-bpe-training-termination, prop-bpe-vocab-size, def-merge.
The properties run round-robin in time slices that double each round until the
budget is spent; the first difference is shrunk (a share of the budget) and then
replayed in a fresh process to tell a plain bug from one that needs earlier
calls (a cache with a wrong key).

Measured on the project's 2-core machine, shared with other work (load average
2.5–3.7), ``python -m bpeproof.proofs_tests.checker.functions --measure 30 --no-explicit``: each
planted implementation checked alone with a 30 s budget, seed 1, *without* the
hand-picked first examples (``call_strategies.EXPLICIT``, which find most of
these at once), so the table measures the search.  "found" is the time from the
start of the run (worker start and smoke call included) to the first wrong
answer; "total" adds shrinking (at most 5 s, less for calls that hang; long
inputs are cut by ``_shrink_long``, e.g. to the 65 and 1025 bytes that show the
chunk bugs) and the replay in a fresh process:

=====================================  =============================  =======  =======
planted implementation (planted.*)       claim reported                 found    total
=====================================  =============================  =======  =======
encoders:enc_right_to_left             def-bpe                        0.19 s   2.6 s
encoders:enc_rightmost_first           def-bpe                        0.15 s   2.7 s
encoders:enc_overlap_from_end          def-bpe                        0.10 s   3.9 s
encoders:enc_bytes_rank                def-bpe                        0.69 s   5.8 s
encoders:enc_contiguous_ids            thm-bpe-roundtrip              0.17 s   2.3 s
encoders:enc_chunks_64                 def-bpe                        0.29 s   0.3 s
encoders:enc_chunks_1024               def-bpe                        2.43 s   3.1 s
encoders:enc_cache_by_length           thm-bpe-roundtrip              0.18 s   0.6 s
encoders:enc_cache_by_first_byte       prop-bpe-length-monotone       0.14 s   0.6 s
encoders:enc_cache_without_rules       thm-bpe-roundtrip              0.11 s   1.3 s
encoders:enc_drops_equal_parts         def-bpe                        0.09 s   1.2 s
encoders:enc_by_frequency              def-bpe                        0.17 s   2.8 s
encoders:enc_duplicate_pair_last       def-bpe                        0.51 s   5.3 s
encoders:enc_cache_by_rule_set         def-bpe                        3.82 s   5.8 s
encoders:enc_splits_on_space           def-bpe                        0.55 s   4.3 s
decoders:dec_each_token_as_text        def-alphabet-vocab             0.06 s   0.4 s
decoders:dec_through_text              def-alphabet-vocab             0.04 s   0.3 s
decoders:dec_contiguous_ids            def-alphabet-vocab             0.13 s   3.4 s
decoders:dec_cache_without_rules       def-alphabet-vocab             0.61 s   3.6 s
trainers:train_across_words            prop-bpe-training-termination  2.10 s   6.3 s
trainers:train_ties_first_seen        def-bpe (step 4)               0.13 s   1.7 s
trainers:train_ties_largest            def-bpe (step 4)               0.08 s   1.9 s
trainers:train_ties_by_bytes           def-bpe (step 4)               0.19 s   3.0 s
trainers:train_non_overlapping         def-bpe (step 2)               0.37 s   1.9 s
trainers:train_stops_at_one            def-bpe (step 3)               0.01 s   0.03 s
trainers:train_distinct_words          def-bpe (step 2)               0.05 s   3.3 s
trainers:train_stale_counts            def-bpe (step 2 / 3)           0.17 s   0.6 s
trainers:train_never_stops             prop-bpe-training-termination  2.11 s   6.4 s
trainers:train_pads_to_bound           prop-bpe-training-termination  0.17 s   0.6 s
=====================================  =============================  =======  =======

(train_across_words also never stops with num_merges = None: whichever shows first is
reported.  The cache bugs are reported under the claim the stale answer happens to
break.)  A hang costs the call time limit (2 s by default) before it counts.

Throughput, 10 s runs on the correct variants (examples per second; one example is
a sequence of 1–4 calls, judged by the specification; about 2 in 10 encoder examples
are 300–2100 bytes long, judged by the recursive spec at 0.05–0.5 s each):

=============================================  =========
correct implementation                         examples/s
=============================================  =========
planted.correct:enc_rank_order                   85
planted.correct:enc_fixpoint                     93
bpeproof.impl.encoder:enc                               103
spec:enc (declines the long inputs)            108
planted.correct:dec_table                        124
bpeproof.impl.encoder:dec                               164
planted.correct:train_word_counts                170
bpeproof.impl.trainer:train                             172
spec:train                                     180
=============================================  =========

Most of the time goes to Hypothesis drawing the structured examples (about 100
draws each) and to the recursive specification; the round trip to the worker
process is about 0.1 ms per batch.  The encoder rows above predate the
``enc_batch`` property: 64 independent calls per example, drawn with ``random``
(``call_strategies.fast_enc_calls``) and sent in one round trip, which lifts
encoder checks to 1,700 (``bpeproof.impl.encoder:enc``) and 2,300
(``planted.correct:enc_rank_order``) examples/s (``python bench/bench_check.py``).
Inputs beyond the spec's 800-byte guard are judged by the engine
(``properties.ENGINE_ORACLE_LENGTH``), which the suite shows equal to the spec.

The CrossHair backend (``backend="crosshair"``, ``--backend crosshair``, through
hypothesis-crosshair) runs smaller, flatter generators (``CROSSHAIR_PROPERTIES``:
``strategies.rules_and_data``, ``rules_and_tokens``, ``corpora``) with the
implementation called *in* the searching process, since CrossHair must trace its
code; that process is a child the parent kills at the deadline, and a call that
does not return is interrupted by a timer signal (pure Python code only).  Limits,
measured here: 0.2–3 examples per second; within 40 s it found dec_contiguous_ids
(15 s) and train_ties_largest (29 s) but not enc_right_to_left, which plain
Hypothesis finds in 0.2 s.  Use it for long opt-in runs, never as the default
(``../shared/CROSSHAIR.md`` has the same picture: 1.4–23 examples/s).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from hypothesis import HealthCheck, Phase, Verbosity, example, given, seed, settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context

from bpeproof.impl.io.wording import count
from bpeproof.proofs_tests.checker import call_strategies as cs
from bpeproof.proofs_tests.checker import strategies as ps
from bpeproof.proofs_tests.checker.properties import CLAIMS, Failure, expect, judge
from bpeproof.proofs_tests.checker.sandbox import DEFAULT_MEMORY_MB, Channel, ChannelError, fork_worker
from bpeproof.proofs_tests.checker.worker import (
    SIGNATURES,
    Call,
    LocalCaller,
    Outcome,
    Target,
    TargetError,
    Worker,
    decode_args,
    describe,
    encode_args,
)
from bpeproof.spec.merge import MAX_SPEC_LENGTH

__all__ = [
    "CLAIMS",
    "CheckResult",
    "TargetError",
    "check",
    "check_all",
    "check_decoder",
    "check_encoder",
    "check_trainer",
]

Backend = Literal["hypothesis", "crosshair"]

#: Measured examples per second (Hypothesis backend, correct implementations, 2 shared cores; see above).
THROUGHPUT: dict[str, float] = {"enc": 1700.0, "dec": 124.0, "train": 170.0}

#: Seconds a single call may take before it counts as not returning.
DEFAULT_CALL_TIMEOUT = 2.0
#: Inputs longer than the spec's guard get at least this long (a correct quadratic encoder may need it).
LONG_CALL_TIMEOUT = 10.0
#: The limit grows by this many times the specification's own time on the same calls.
SPEC_FACTOR = 20.0


@dataclass(frozen=True)
class Property:
    """A generator of call sequences for one function, with its share of each time slice."""

    name: str
    function: str
    strategy: st.SearchStrategy[list[Call]]
    weight: float = 1.0
    long: bool = False  # inputs beyond the spec's guard: shrunk by ``_shrink_long``, not by Hypothesis
    batch: bool = False  # each example is many independent calls (counted one by one), shrunk by ``_shrink_long``


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


@dataclass
class CheckResult:
    """The outcome of a check: ``found`` a difference or not, and if so which claim, on which input."""

    found: bool
    targets: dict[str, str]
    examples: int
    seconds: float
    seed: int
    backend: str
    function: str | None = None
    claim: str | None = None
    detail: str | None = None
    hint: str | None = None
    also: tuple[str, ...] = ()
    input: dict[str, Any] | None = None
    expected: Any = None
    actual: Any = None
    earlier_calls: list[Call] = field(default_factory=list)
    state: str | None = None  # None, "earlier-calls" or "process-state"
    found_by: str | None = None  # the property (generator) that found it
    seconds_to_find: float | None = None
    per_property: dict[str, int] = field(default_factory=dict)
    note: str | None = None

    @property
    def ran(self) -> bool:
        """Whether any example ran (or a difference was found): a run of zero examples proves nothing."""
        return self.found or self.examples > 0

    @property
    def examples_per_second(self) -> float:
        """Throughput of the run."""
        return self.examples / self.seconds if self.seconds > 0 else 0.0

    @property
    def claim_text(self) -> str | None:
        """The claim's statement (see ``properties.CLAIMS``)."""
        if not self.claim:
            return None
        return CLAIMS.get(f"{self.claim}/{self.function}", CLAIMS.get(self.claim))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable keys (bytes become lists of ints; ``*_repr`` keys hold Python reprs)."""
        return {
            "found": self.found,
            "ran": self.ran,
            "function": self.function,
            "claim": self.claim,
            "claim_text": self.claim_text,
            "detail": self.detail,
            "hint": self.hint or None,
            "also": list(self.also),
            "input": _jsonable(self.input),
            "input_repr": repr(self.input) if self.input is not None else None,
            "expected": _jsonable(self.expected),
            "expected_repr": repr(self.expected) if self.found else None,
            "actual": _jsonable(self.actual),
            "actual_repr": repr(self.actual) if self.found else None,
            "earlier_calls": [{"function": kind, "args": _jsonable(list(args))} for kind, args in self.earlier_calls],
            "state": self.state,
            "property": self.found_by,
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
            "seconds_to_find": None if self.seconds_to_find is None else round(self.seconds_to_find, 3),
            "examples_per_second": round(self.examples_per_second, 1),
            "per_property": dict(self.per_property),
            "seed": self.seed,
            "backend": self.backend,
            "targets": dict(self.targets),
            "note": self.note,
        }

    def to_json(self) -> str:
        """``to_dict`` as one JSON document."""
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=False)

    def report(self) -> str:
        """A human-readable report: the claim, the shrunk input, the spec's and the implementation's answers."""
        names = ", ".join(f"{kind}={name}" for kind, name in self.targets.items())
        stats = (f"{count(self.examples, 'example')} in {self.seconds:.1f} s ({self.examples_per_second:.0f}/s),"
                 f" seed {self.seed}")
        if not self.found:
            per = ", ".join(f"{name} {number}" for name, number in self.per_property.items())
            lines = [f"bpeproof check: {names}", f"no difference found: {stats}" + (f" [{per}]" if per else "")]
            if self.note:
                lines.append(f"note: {self.note}")
            return "\n".join(lines)
        assert self.input is not None
        lines = [
            f"bpeproof check: {names}",
            f"FOUND a difference in {self.function} after {stats}"
            + (f"; first seen at {self.seconds_to_find:.2f} s" if self.seconds_to_find is not None else ""),
            f"  claim    : {self.claim}{_statement(self.claim, self.claim_text)}",
            f"  detail   : {self.detail}",
        ]
        if self.hint:
            lines.append(f"  hint     : {self.hint}")
        if self.also:
            lines.append(f"  also     : {', '.join(self.also)}")
        if self.earlier_calls:
            lines.append("  earlier calls in the same process, before the failing one:")
            lines += [f"    {kind}{_short_args(args)}" for kind, args in self.earlier_calls]
        lines.append(f"  call     : {SIGNATURES.get(self.function or '', '')}")
        lines += [f"  {key:<9}: {value!r}" for key, value in self.input.items()]
        lines.append(f"  spec     : {self.expected!r}")
        lines.append(f"  impl     : {self.actual!r}")
        if self.state == "earlier-calls":
            lines.append("  note     : alone in a fresh process this call is answered correctly: the wrong answer"
                         " needs the earlier calls above (state kept between calls, e.g. a cache with a wrong key)")
        elif self.state == "process-state":
            lines.append("  note     : in a fresh process these calls are answered correctly: the wrong answer"
                         " came from state left by earlier calls (e.g. a cache with a wrong key)")
        return "\n".join(lines)


def _statement(claim: str | None, text: str | None) -> str:
    """What follows the claim's id on the report's claim line: " — " and its statement without the id that
    ``CLAIMS`` writes before it (the line names the id once), or nothing when there is no statement."""
    statement = (text or "").removeprefix(f"{claim}:").strip()
    return f" — {statement}" if statement else ""


def _short_args(args: tuple[Any, ...]) -> str:
    text = repr(args)
    return text if len(text) <= 200 else text[:197] + "..."


def _jsonable(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


# ---------------------------------------------------------------------------
# The search
# ---------------------------------------------------------------------------


class _Stop(BaseException):
    """Ends a Hypothesis run at once (a BaseException, so Hypothesis does not treat it as a failure)."""


class _Mismatch(Exception):
    """Raised inside the test so that Hypothesis shrinks; the failure itself is kept in ``_State``."""


@dataclass
class _State:
    start: float
    deadline: float
    shrink_seconds: float
    counts: Counter[str] = field(default_factory=Counter)
    failure: Failure | None = None
    property: str | None = None
    found_at: float | None = None
    report: Callable[[_State], None] | None = None  # called after each example (the CrossHair child)

    def record(self, failure: Failure, name: str) -> None:
        if self.failure is None:
            self.found_at = time.monotonic()
            self.property = name
        if self.failure is None or failure.size() <= self.failure.size():
            self.failure = failure

    def shrink_over(self, now: float, call_timeout: float) -> bool:
        if self.found_at is None or self.failure is None:
            return False
        budget = self.shrink_seconds
        if self.failure.outcome_kind == "timeout":
            budget = min(budget, 2 * call_timeout)  # each candidate that hangs costs a whole time limit
        return now >= min(self.deadline, self.found_at + budget)


def _call_timeout(calls: Sequence[Call], call_timeout: float) -> float:
    longest = max((len(args[1]) for kind, args in calls if kind in ("enc", "dec")), default=0)
    return max(call_timeout, LONG_CALL_TIMEOUT) if longest > MAX_SPEC_LENGTH else call_timeout


def _should_stop(state: _State, slice_end: float, call_timeout: float) -> bool:
    """Time is up: the whole budget, the shrinking share, or (nothing found yet) this slice."""
    now = time.monotonic()
    return (
        now >= state.deadline
        or state.shrink_over(now, call_timeout)
        or (state.failure is None and now >= slice_end)
    )


def _run_property(
    prop: Property,
    caller: Caller,
    state: _State,
    slice_end: float,
    hypothesis_seed: int,
    backend: Backend,
    call_timeout: float,
    explicit: bool,
) -> None:
    def body(calls: list[Call]) -> None:
        if _should_stop(state, slice_end, call_timeout):
            raise _Stop
        state.counts[prop.name] += len(calls) if prop.batch else 1
        spec_seconds = sum(expect(call) for call in calls)
        outcomes = caller.run(calls, _call_timeout(calls, call_timeout) + SPEC_FACTOR * spec_seconds)
        for index, (call, outcome) in enumerate(zip(calls, outcomes, strict=False)):
            if outcome.kind == "timeout" and _call_timeout([call], call_timeout) > call_timeout:
                return  # a long input may take long: only wrong answers count there
            failure = judge(call, outcome)
            if failure is not None:
                failure.earlier = list(calls[:index])
                if backend != "hypothesis":
                    failure = _concrete_failure(failure, caller)
                    if failure is None:
                        return  # symbolic values misled the code under test: not a difference
                state.record(failure, prop.name)
                if state.report is not None:
                    state.report(state)
                raise _Mismatch(failure.claim)
        if state.report is not None:
            state.report(state)

    test: Callable[..., None] = given(prop.strategy)(body)
    if explicit:
        for calls in reversed(cs.EXPLICIT.get(prop.name, [])):
            test = example(calls)(test)
    test = seed(hypothesis_seed)(test)
    # Hypothesis's shrinker can spend many seconds between two test calls on a 2000-byte input
    # (it checks candidates against what it has seen): long inputs are shrunk by ``_shrink_long``.
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
        if state.failure is None:
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


def _search(
    targets: dict[str, Target],
    caller: Caller,
    state: _State,
    run_seed: int,
    backend: Backend,
    call_timeout: float,
    explicit: bool = True,
) -> None:
    """Round-robin over the properties of the given functions, time slices doubling, until found or out of time."""
    props = [p for p in (PROPERTIES if backend == "hypothesis" else CROSSHAIR_PROPERTIES) if p.function in targets]
    base = 0.25 if backend == "hypothesis" else 5.0
    round_no = 0
    while state.failure is None and time.monotonic() < state.deadline:
        for index, prop in enumerate(props):
            now = time.monotonic()
            if state.failure is not None or now >= state.deadline:
                break
            slice_end = min(state.deadline, now + base * prop.weight * 2 ** min(round_no, 8))
            hypothesis_seed = (run_seed * 1_000_003 + round_no * 101 + index) % 2**32
            _run_property(prop, caller, state, slice_end, hypothesis_seed, backend, call_timeout,
                          explicit and round_no == 0)
        round_no += 1


SMOKE: dict[str, Call] = {
    "enc": ("enc", ([], b"ab")),
    "dec": ("dec", ([], [97, 98])),
    "train": ("train", ([b"ab"], 1)),
}


def _smoke(worker: Worker, targets: dict[str, Target], call_timeout: float, state: _State) -> None:
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
        if failure is not None and state.failure is None:
            state.record(failure, "smoke")


def _shrink_long(worker: Worker, state: _State, call_timeout: float) -> None:
    """Shrink a failing enc call on a long input: cut the data from the end, then from the start,
    halving the cut each time it no longer fails, while the shrinking time lasts."""
    failure = state.failure
    own_shrinking = {p.name for p in PROPERTIES if p.long or p.batch}
    if failure is None or failure.call is None or failure.call[0] != "enc" or state.property not in own_shrinking:
        return
    rules, data = failure.call[1]
    name = state.property or "enc"

    def attempt(candidate: bytes, candidate_rules: list[Any] | None = None) -> Failure | None:
        call: Call = ("enc", (rules if candidate_rules is None else candidate_rules, candidate))
        limit = _call_timeout([call], call_timeout) + SPEC_FACTOR * expect(call)
        state.counts[name] += 1
        return judge(call, worker.run([call], limit)[-1])

    if failure.earlier and failure.outcome_kind != "timeout":  # independent calls: try the failing one alone
        alone = attempt(data)
        if alone is not None:
            failure = alone
    if not failure.earlier:  # rules the failure does not need, dropped one at a time from the end
        index = len(rules) - 1
        while index >= 0 and not state.shrink_over(time.monotonic(), call_timeout):
            fewer = list(rules[:index]) + list(rules[index + 1 :])
            found = attempt(data, fewer) if _valid(fewer) else None
            if found is not None:
                rules, failure = fewer, found
            index -= 1
    for from_end in (True, False):
        step = len(data) // 2
        while step >= 1 and not state.shrink_over(time.monotonic(), call_timeout):
            candidate = data[: len(data) - step] if from_end else data[step:]
            found = attempt(candidate) if candidate else None
            if found is not None:
                data, failure = candidate, found
            else:
                step //= 2
    state.failure = failure


def _valid(rules: Sequence[Any]) -> bool:
    """Whether a rule list is still valid (def-merge) after a rule was dropped."""
    from bpeproof.spec.merge import validate_rules
    from bpeproof.spec.types import BPEValueError

    try:
        validate_rules(list(rules))
    except (BPEValueError, ValueError, TypeError):
        return False
    return True


def _confirm(worker: Worker, failure: Failure, call_timeout: float) -> tuple[Failure, str | None]:
    """Replay the failing call in a fresh process; then with the earlier calls; say which state it needs."""
    assert failure.call is not None
    if failure.outcome_kind == "timeout":
        return failure, None  # a call that did not return: replaying costs the whole time limit again
    worker.restart()
    outcome = worker.run([failure.call], _call_timeout([failure.call], call_timeout))[-1]
    again = judge(failure.call, outcome)
    if again is not None:
        return again, None
    if failure.earlier:
        worker.restart()
        calls = [*failure.earlier, failure.call]
        outcomes = worker.run(calls, _call_timeout(calls, call_timeout))
        if len(outcomes) == len(calls) and judge(failure.call, outcomes[-1]) is not None:
            return failure, "earlier-calls"
    return failure, "process-state"


def _result(
    targets: dict[str, Target],
    state: _State,
    run_seed: int,
    backend: str,
    failure: Failure | None,
    failure_state: str | None,
    note: str | None = None,
) -> CheckResult:
    seconds = time.monotonic() - state.start
    if failure is None and not state.counts and note is None:
        note = "no example ran within the budget: give more seconds"
    result = CheckResult(
        found=failure is not None,
        targets={kind: describe(target) for kind, target in targets.items()},
        examples=sum(state.counts.values()),
        seconds=seconds,
        seed=run_seed,
        backend=backend,
        per_property=dict(state.counts),
        note=note,
    )
    if failure is not None:
        result.function = failure.function
        result.claim = failure.claim
        result.detail = failure.detail
        result.hint = failure.hint or None
        result.also = failure.also
        result.input = failure.input
        result.expected = failure.expected
        result.actual = failure.actual
        result.earlier_calls = list(failure.earlier) if failure_state else []
        result.state = failure_state
        result.found_by = state.property
        result.seconds_to_find = None if state.found_at is None else state.found_at - state.start
    return result


def check(
    targets: dict[str, Target],
    *,
    seconds: float = 10.0,
    seed: int | None = None,
    backend: Backend = "hypothesis",
    call_timeout: float = DEFAULT_CALL_TIMEOUT,
    explicit: bool = True,
    shrink_seconds: float | None = None,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    optional: bool = False,
) -> CheckResult:
    """Check the functions named in ``targets`` ({"enc": …, "dec": …, "train": …}) for ``seconds``.

    A difference is shrunk for ``shrink_seconds`` (default: a fifth of the budget, 1–5 s) within the budget.
    ``explicit=False`` skips the hand-picked first examples (``call_strategies.EXPLICIT``), to measure
    the search alone.  The targets are imported in the worker process only, within the budget; the worker
    runs under a memory cap of ``memory_mb`` MiB (None: none).  ``optional``: drop the targets whose module
    lacks the function (at least one must exist).  Raises ``TargetError`` when a target cannot be imported
    (or does not load within the budget), is not callable or has the wrong signature.  ``result.ran``
    is false when no example ran: never a pass.
    """
    unknown = set(targets) - set(SIGNATURES)
    if unknown or not targets:
        raise TargetError(f"targets must be some of enc, dec, train, not {sorted(unknown) or 'none'}")
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
        raise TargetError(f"seconds must be a positive number, not {seconds!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    run_seed = secrets.randbelow(2**31) if seed is None else seed
    start = time.monotonic()
    shrink = max(1.0, min(5.0, 0.2 * seconds)) if shrink_seconds is None else shrink_seconds
    state = _State(start=start, deadline=start + seconds, shrink_seconds=shrink)
    if backend == "crosshair":
        if optional:
            budget = max(0.1, state.deadline - time.monotonic())
            with Worker(targets, call_timeout, import_timeout=budget, memory_mb=memory_mb, optional=True) as worker:
                targets = dict(worker.targets)
        return _check_crosshair(targets, state, run_seed, call_timeout, explicit)
    if backend != "hypothesis":
        raise TargetError(f"backend must be 'hypothesis' or 'crosshair', not {backend!r}")
    return _check_with_worker(targets, state, run_seed, call_timeout, explicit, memory_mb, optional)


def _check_with_worker(
    targets: dict[str, Target],
    state: _State,
    run_seed: int,
    call_timeout: float,
    explicit: bool,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    optional: bool = False,
) -> CheckResult:
    backend: Backend = "hypothesis"
    budget = max(0.1, state.deadline - time.monotonic())
    with Worker(targets, call_timeout, import_timeout=budget, memory_mb=memory_mb, optional=optional) as worker:
        targets = dict(worker.targets)
        _smoke(worker, targets, call_timeout, state)
        if state.failure is None:
            _search(targets, worker, state, run_seed, backend, call_timeout, explicit)
        _shrink_long(worker, state, call_timeout)
        failure_state: str | None = None
        failure = state.failure
        if failure is not None:
            failure, failure_state = _confirm(worker, failure, call_timeout)
    return _result(targets, state, run_seed, backend, failure, failure_state)


def check_encoder(enc: Target, **options: Any) -> CheckResult:
    """Check ``enc(rules, data) -> list[int]`` against enc_R (def-bpe, thm-bpe-roundtrip, prop-bpe-length-monotone)."""
    return check({"enc": enc}, **options)


def check_decoder(dec: Target, **options: Any) -> CheckResult:
    """Check ``dec(rules, ids) -> bytes`` against dec (def-alphabet-vocab)."""
    return check({"dec": dec}, **options)


def check_trainer(train: Target, **options: Any) -> CheckResult:
    """Check ``train(corpus, num_merges) -> rules`` against def-bpe's training (prop-bpe-training-termination,
    prop-bpe-vocab-size)."""
    return check({"train": train}, **options)


def check_all(
    enc: Target | None = None, dec: Target | None = None, train: Target | None = None, **options: Any
) -> CheckResult:
    """Check whichever of ``enc``, ``dec``, ``train`` are given, sharing one time budget."""
    targets = {kind: target for kind, target in (("enc", enc), ("dec", dec), ("train", train)) if target is not None}
    return check(targets, **options)


# ---------------------------------------------------------------------------
# The CrossHair backend: the search runs in a child process, the parent watches the clock
# ---------------------------------------------------------------------------


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
    state: _State,
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

    def message(status: str, current: _State) -> dict[str, Any]:
        failure = current.failure
        calls = None if failure is None or failure.call is None else _calls_json([*failure.earlier, failure.call])
        return {"status": status, "calls": calls, "counts": dict(current.counts), "found_at": current.found_at,
                "property": current.property}

    state.report = lambda current: channel.send(message("progress", current))
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        _search(targets, caller, state, run_seed, "crosshair", call_timeout * 10, explicit)
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


def _check_crosshair(
    targets: dict[str, Target], state: _State, run_seed: int, call_timeout: float, explicit: bool
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
    state.failure = None
    if latest is not None:
        counts = latest.get("counts")
        if isinstance(counts, dict):
            state.counts = Counter({str(k): int(v) for k, v in counts.items() if isinstance(v, int)})
        name = latest.get("property")
        state.property = name if isinstance(name, str) else None
        calls = _read_calls(latest.get("calls"))
        if calls is not None:
            # the symbolic search's finding, run again on concrete inputs in an isolated worker
            with Worker(targets, call_timeout) as worker:
                outcomes = worker.run(calls, _call_timeout(calls, call_timeout) * 2)
            if len(outcomes) == len(calls):
                failure = judge(calls[-1], outcomes[-1])
            if failure is None:
                note = "a difference seen on symbolic inputs was not reproduced on concrete ones: not reported"
            else:
                failure.earlier = calls[:-1]
    state.failure = failure
    if failure is None:
        state.found_at = None
    return _result(targets, state, run_seed, "crosshair", failure, "earlier-calls" if failure and failure.earlier
                   else None, note)


# ---------------------------------------------------------------------------
# Measuring (python -m bpeproof.proofs_tests.checker.functions --measure)
# ---------------------------------------------------------------------------


def measure(seconds: float = 30.0, explicit: bool = True) -> list[tuple[str, str, str, float | None, float]]:
    """Time to find every planted bug, and the throughput on the correct variants."""
    from bpeproof.proofs_tests.planted import BUGGY, CORRECT

    rows: list[tuple[str, str, str, float | None, float]] = []
    for kind, target, _claim in BUGGY:
        result = check({kind: target}, seconds=seconds, seed=1, explicit=explicit)
        rows.append((target, kind, result.claim or "-", result.seconds_to_find, result.seconds))
        print(f"{target:<55} {result.claim or 'NOT FOUND':<30} {result.seconds_to_find or 0:6.2f} s"
              f" {result.seconds:6.2f} s", flush=True)
    for kind, target in CORRECT:
        result = check({kind: target}, seconds=min(seconds, 10.0), seed=1, explicit=explicit)
        print(f"{target:<55} {'FLAGGED ' + str(result.claim) if result.found else 'ok':<30}"
              f" {result.examples_per_second:7.0f} examples/s {result.per_property}", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    """``python -m bpeproof.proofs_tests.checker.functions --measure SECONDS [--no-explicit]``:
    re-measure the planted bugs'
    table."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m bpeproof.proofs_tests.checker.functions",
        description="Measure the checker: the time to find each planted bug of bpeproof.proofs_tests.planted and the"
        " throughput on the correct variants. To check your own code, run 'bpeproof check'.")
    parser.add_argument("--measure", type=float, required=True, metavar="SECONDS",
                        help="budget per planted bug (the correct variants get at most 10 s)")
    parser.add_argument("--no-explicit", action="store_true", help="skip the hand-picked first examples")
    args = parser.parse_args(argv)
    measure(args.measure, explicit=not args.no_explicit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
