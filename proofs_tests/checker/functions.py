"""Check anyone's byte-level BPE functions (enc, dec, train) against the specification, with the claim each breaks.

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
The properties are the sources of the one search loop (``search``, ``function_search``):
round-robin in time slices that double each round until the budget is spent; the
first difference is shrunk (a share of the budget; long inputs are cut by ``shrink_long``)
and then replayed in a fresh process to tell a plain bug from one that needs earlier calls
(a cache with a wrong key).  The ``enc_batch`` property draws 64 independent encoder calls
per example with ``random`` (``call_strategies.fast_enc_calls``) and sends them in one round
trip; inputs beyond the spec's 800-byte guard are judged by the engine
(``properties.ENGINE_ORACLE_LENGTH``), which the suite shows equal to the spec.

The CrossHair backend (``backend="crosshair"``, ``--backend crosshair``, through
hypothesis-crosshair; ``crosshair_backend``) runs smaller, flatter generators (``CROSSHAIR_PROPERTIES``)
with the implementation called *in* the searching process, since CrossHair must trace its code;
it is for long opt-in runs, never the default.

How fast each planted bug is found and how many examples a second each kind of check runs are in the manual
(``docs/check-your-implementation.md``); ``python -m bpeproof.proofs_tests.checker.functions --measure SECONDS``
measures them again.
"""


from __future__ import annotations

import math
import os
import secrets
import sys
import time
from typing import Any

from bpeproof.proofs_tests.checker.crosshair_backend import check_crosshair
from bpeproof.proofs_tests.checker.function_result import CheckResult, check_result
from bpeproof.proofs_tests.checker.function_search import (
    DEFAULT_CALL_TIMEOUT,
    Backend,
    FunctionSearch,
    confirm,
    search_properties,
    shrink_long,
    smoke,
)
from bpeproof.proofs_tests.checker.properties import CLAIMS
from bpeproof.proofs_tests.checker.sandbox import DEFAULT_MEMORY_MB
from bpeproof.proofs_tests.checker.worker import SIGNATURES, Target, TargetError, Worker

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

#: Examples per second of each kind of check (Hypothesis backend, correct implementations; the manual's figures).
THROUGHPUT: dict[str, float] = {"enc": 1700.0, "dec": 124.0, "train": 170.0}


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
    state = FunctionSearch(start, start + seconds, shrink)
    if backend == "crosshair":
        if optional:
            budget = max(0.1, state.deadline - time.monotonic())
            with Worker(targets, call_timeout, import_timeout=budget, memory_mb=memory_mb, optional=True) as worker:
                targets = dict(worker.targets)
        return check_crosshair(targets, state, run_seed, call_timeout, explicit)
    if backend != "hypothesis":
        raise TargetError(f"backend must be 'hypothesis' or 'crosshair', not {backend!r}")
    return _check_with_worker(targets, state, run_seed, call_timeout, explicit, memory_mb, optional)


def _check_with_worker(
    targets: dict[str, Target],
    state: FunctionSearch,
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
        smoke(worker, targets, call_timeout, state)
        if state.finding is None:
            search_properties(targets, worker, state, run_seed, backend, call_timeout, explicit)
        shrink_long(worker, state, call_timeout)
        failure_state: str | None = None
        failure = state.finding
        if failure is not None:
            failure, failure_state = confirm(worker, failure, call_timeout)
    return check_result(targets, state, run_seed, backend, failure, failure_state)


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
