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
The properties are the sources of the one search loop (``search``, ``function_search``):
round-robin in time slices that double each round until the budget is spent; the
first difference is shrunk (a share of the budget) and then replayed in a fresh
process to tell a plain bug from one that needs earlier calls (a cache with a wrong key).

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
hypothesis-crosshair; ``crosshair_backend``) runs smaller, flatter generators (``CROSSHAIR_PROPERTIES``:
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

#: Measured examples per second (Hypothesis backend, correct implementations, 2 shared cores; see above).
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
