"""``bpeproof prove``: run every proof obligation with CrossHair and report each claim of the article.

The obligations are the table of ``bpeproof.proofs_tests.proofs.obligations``: the contracts of the
specification and of the engine, the induction steps, and the planted false claims and steps, which must be
refuted.  The runs are those of the test suite's CrossHair gate (``crosshair_runs``), and the report the gate
asserts (``report``).  Exit 0 when every claim is proved and every planted false claim refuted, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from bpeproof.commands import EXIT_FOUND, EXIT_OK, UsageError


def run(args: argparse.Namespace) -> int:
    from bpeproof.impl.optional_libraries import LibraryMissingError, require

    try:
        require("crosshair", "bpeproof prove")
    except LibraryMissingError as error:
        raise UsageError(str(error)) from None
    from bpeproof.proofs_tests.proofs import crosshair_runs, report

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    proofs = report.select(args.claim)
    if not proofs:
        known = ", ".join(dict.fromkeys(proof.claim for proof in report.select(None)))
        raise UsageError(f"--claim {args.claim!r}: no such claim; the claims are: {known}")
    names = report.runs_of(proofs)
    crosshair_runs.start_runs(names, args.jobs)
    try:
        _wait(names)
    except BaseException:  # interrupted: end the CrossHair processes instead of leaving them to finish
        crosshair_runs.stop()
        raise
    reports = report.claim_reports(proofs, crosshair_runs.result)
    if args.json:
        print(json.dumps({"claims": [r.to_dict() for r in reports]}, ensure_ascii=False, indent=1))
    else:
        for line in report.text_lines(reports):
            print(line)
        print(report.summary(reports))
    return EXIT_OK if report.all_hold(reports) else EXIT_FOUND


def _wait(names: list[str]) -> None:
    """Wait for every run, a line on stderr as each one ends (what is still running, every 10 s on no terminal)."""
    from bpeproof.proofs_tests.proofs import crosshair_runs

    started = time.monotonic()
    finished: set[str] = set()
    last = started
    while len(finished) < len(names):
        time.sleep(0.2)
        for name in names:
            if name not in finished and crosshair_runs.finished(name):
                finished.add(name)
                result = crosshair_runs.result(name)
                print(f"  [{len(finished)}/{len(names)}] {name}: {result.cpu_seconds:.0f} CPU s,"
                      f" {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
                last = time.monotonic()
        if time.monotonic() - last >= 10:
            running = [name for name in names if name not in finished]
            print(f"  still running: {', '.join(running)} ({time.monotonic() - started:.0f} s)", file=sys.stderr,
                  flush=True)
            last = time.monotonic()


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "prove",
        help="prove the article's claims with CrossHair and report each one",
        description="Run every proof obligation with CrossHair (the contracts of the specification and the engine,"
        " the induction steps, and the planted false claims and steps, which must be refuted) and print one line per"
        " claim of the article: its scope (every size, or the bounds), its status, its conditions and CPU seconds."
        " Exit 0 when every claim is proved and every planted false claim refuted, 1 otherwise.",
    )
    parser.add_argument("--json", action="store_true", help='print {"claims": [...]} as JSON')
    parser.add_argument("--claim", metavar="ID", help="only this claim (e.g. lem-merge-step(1), thm-bpe-roundtrip)")
    parser.add_argument("--jobs", type=int, metavar="N", help="CrossHair processes at once (default: every core)")
    parser.set_defaults(handler=run)
