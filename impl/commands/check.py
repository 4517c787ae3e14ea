"""``bpeproof check``: search for an input where someone's enc, dec or train differs from the specification.

    bpeproof check --enc mymod:enc [--dec mymod:dec] [--train mymod:train] [--seconds 30] [--seed N]
                   [--json] [--backend hypothesis|crosshair] [--call-timeout 2]
    bpeproof check --impl mymod          # whichever of mymod.enc, mymod.dec, mymod.train exist

Exit codes: 0 no difference within the budget; 1 a difference was found (the shrunk
input, the spec's answer, the implementation's answer and the article id of the
claim it breaks are printed); 2 a usage error (an import path that does not
resolve, not callable, a wrong signature), as one line.  The current directory is
importable, so ``--enc mymod:enc`` finds ``./mymod.py``; a path works too
(``--enc src/mybpe.py:enc``).  The search itself lives in ``proofs_tests.checker``.
"""

from __future__ import annotations

import argparse
import os
import sys

from impl.commands import EXIT_FOUND, EXIT_OK, UsageError

KINDS = ("enc", "dec", "train")


def _targets(args: argparse.Namespace) -> dict[str, str]:
    targets = {kind: getattr(args, kind) for kind in KINDS if getattr(args, kind)}
    if args.impl:
        from proofs_tests.checker_worker import import_module_or_file

        try:
            module = import_module_or_file(args.impl)
        except ImportError as error:
            raise UsageError(f"--impl {args.impl}: cannot import module {args.impl!r}: {error}") from None
        except Exception as error:
            raise UsageError(f"--impl {args.impl}: importing failed: {type(error).__name__}: {error}") from None
        for kind in KINDS:
            if kind not in targets and callable(getattr(module, kind, None)):
                targets[kind] = f"{args.impl}:{kind}"
        if not targets:
            raise UsageError(f"--impl {args.impl}: the module defines none of enc, dec, train")
    if not targets:
        raise UsageError("give at least one of --enc, --dec, --train (MODULE:FUNCTION) or --impl MODULE")
    return targets


def run(args: argparse.Namespace) -> int:
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    if args.seconds <= 0:
        raise UsageError(f"--seconds must be positive, not {args.seconds:g}")
    if args.call_timeout <= 0:
        raise UsageError(f"--call-timeout must be positive, not {args.call_timeout:g}")
    targets = _targets(args)
    from proofs_tests.checker import TargetError, check

    try:
        result = check(
            dict(targets),
            seconds=args.seconds,
            seed=args.seed,
            backend=args.backend,
            call_timeout=args.call_timeout,
        )
    except TargetError as error:
        raise UsageError(str(error)) from None
    print(result.to_json() if args.json else result.report(), flush=True)
    return EXIT_FOUND if result.found else EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "check",
        help="search for inputs where an implementation of enc, dec or train differs from the specification",
        description="Generate inputs that reach the hard cases of BPE (tiny alphabets, long runs, a = b rules,"
        " fresh ids, repeated pairs, tie-heavy corpora, long inputs), run the given functions on them in a"
        " separate process with a time limit per call, and compare with the specification. A difference is"
        " shrunk and reported with the article id of the claim it breaks.",
        epilog="Exit codes: 0 no difference within the budget, 1 a difference found, 2 usage error.",
    )
    parser.add_argument("--enc", metavar="MOD:FUNC", help="enc(rules, data: bytes) -> list[int]")
    parser.add_argument("--dec", metavar="MOD:FUNC", help="dec(rules, ids: list[int]) -> bytes")
    parser.add_argument("--train", metavar="MOD:FUNC", help="train(corpus: list[bytes], num_merges: int | None)")
    parser.add_argument("--impl", metavar="MOD", help="check MOD.enc, MOD.dec and MOD.train, whichever exist"
                        " (MOD: a module name or a .py file)")
    parser.add_argument("--seconds", type=float, default=30.0, help="time budget for the whole run (default 30)")
    parser.add_argument("--seed", type=int, default=None, help="seed for the search (default: random, printed)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON document")
    parser.add_argument("--backend", choices=["hypothesis", "crosshair"], default="hypothesis",
                        help="search backend (crosshair: symbolic, much slower; see proofs_tests/checker.py)")
    parser.add_argument("--call-timeout", type=float, default=2.0, metavar="SECONDS",
                        help="a call that takes longer counts as not returning (default 2)")
    parser.set_defaults(handler=run)
