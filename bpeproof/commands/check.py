"""``bpeproof check``: search for an input where someone's enc, dec or train differs from the specification.

    bpeproof check --enc mymod:enc [--dec mymod:dec] [--train mymod:train] [--seconds 30] [--seed N]
                   [--json] [--backend hypothesis|crosshair] [--call-timeout 2]
    bpeproof check --impl mymod          # whichever of mymod.enc, mymod.dec, mymod.train exist
    bpeproof check --tokenizer mymod:encode --vocab cl100k_base.tiktoken [--decode mymod:decode]
    bpeproof check --cmd 'node adapter.js' --vocab cl100k_base.tiktoken [--examples N --seed S]
                   [--ignore GROUP ... --ignore-file FILE] [--special NAME=ID ...]
                   [--corpus FILE...] [--progress SECONDS]

Exit codes: 0 examples ran and no difference was found within the budget (a
tokenizer check: none outside the groups set aside with --ignore); 1 a difference
was found (the shrunk input, the spec's answer, the implementation's answer and the
article id of the claim it breaks are printed; a tokenizer check prints every group
of differences); 2 a usage error (an import path that does not resolve, not
callable, a wrong signature, a program that does not speak the protocol, a file
that is not a vocabulary) or a run in which no example ran, as one line.  The code
under test is imported only in the worker process.  The current directory is
importable, so ``--enc mymod:enc`` finds ``./mymod.py``; a path works too
(``--enc src/mybpe.py:enc``).  The search itself lives in ``bpeproof.proofs_tests.checker.functions``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

from bpeproof.commands import EXIT_FOUND, EXIT_OK, EXIT_USAGE, UsageError

KINDS = ("enc", "dec", "train")


def _targets(args: argparse.Namespace) -> tuple[dict[str, str], bool]:
    """The targets, and whether they are optional (``--impl MOD``: whichever of its functions exist).

    Nothing is imported here: the worker process imports the code under test, within the budget."""
    targets = {kind: getattr(args, kind) for kind in KINDS if getattr(args, kind)}
    if args.impl:
        if targets:
            raise UsageError("--impl MOD checks MOD.enc, MOD.dec and MOD.train; give it alone")
        return {kind: f"{args.impl}:{kind}" for kind in KINDS}, True
    if not targets:
        raise UsageError("give at least one of --enc, --dec, --train (MODULE:FUNCTION), --impl MODULE,"
                         " --tokenizer MODULE:FUNCTION or --cmd PROGRAM (with --vocab FILE)")
    return targets, False


def _positive(value: float, option: str) -> None:
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{option} must be a positive number, not {value:g}")


def run(args: argparse.Namespace) -> int:
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    _positive(args.seconds, "--seconds")
    _positive(args.call_timeout, "--call-timeout")
    _positive(args.load_timeout, "--load-timeout")
    if args.memory_mb is not None and args.memory_mb <= 0:
        raise UsageError(f"--memory-mb must be positive, not {args.memory_mb}")
    from bpeproof.proofs_tests.checker.sandbox import install_signal_handlers

    install_signal_handlers()
    if args.examples is not None:
        _positive(args.examples, "--examples")
    if args.tokenizer or args.cmd or args.vocab:
        return _run_tokenizer(args)
    if args.corpus:
        raise UsageError("--corpus gives the texts of a --tokenizer/--cmd check")
    if args.examples is not None:
        raise UsageError("--examples counts the texts of a --tokenizer/--cmd check; --enc, --dec, --train and"
                         " --impl run on --seconds")
    if args.ignore or args.ignore_file or args.special or args.special_names:
        raise UsageError("--ignore, --ignore-file, --special and --special-names are for a --tokenizer/--cmd check")
    targets, optional = _targets(args)
    from bpeproof.proofs_tests.checker.functions import TargetError, check

    try:
        result = check(
            dict(targets),
            seconds=args.seconds,
            seed=args.seed,
            backend=args.backend,
            call_timeout=args.call_timeout,
            memory_mb=args.memory_mb,
            optional=optional,
        )
    except TargetError as error:
        raise UsageError(str(error)) from None
    return _finish(result, args.json)


def _finish(result: Any, as_json: bool) -> int:
    """Print the result; exit 1 for a difference, 0 only when examples ran, else 2 with the reason."""
    print(result.to_json() if as_json else result.report(), flush=True)
    if result.found:
        return EXIT_FOUND
    if not result.ran:
        print(f"bpeproof check: error: {result.note or 'no example ran'}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    return EXIT_OK


def _run_tokenizer(args: argparse.Namespace) -> int:
    if not args.vocab:
        raise UsageError("--tokenizer and --cmd need --vocab FILE (the vocabulary the implementation uses)")
    if bool(args.tokenizer) == bool(args.cmd):
        raise UsageError("give one of --tokenizer MODULE:FUNCTION and --cmd 'PROGRAM ARGS'")
    if any(getattr(args, kind) for kind in KINDS) or args.impl:
        raise UsageError("--tokenizer/--cmd check text -> ids functions; --enc, --dec, --train, --impl check"
                         " the specification's signatures: give one kind")
    from bpeproof.commands._vocab import parse_specials
    from bpeproof.proofs_tests.checker.groups import read_ignore_file
    from bpeproof.proofs_tests.checker.tokenizer_check import TargetError, check_tokenizer

    ignore = list(args.ignore or [])
    for path in args.ignore_file or []:
        try:
            ignore += read_ignore_file(path)
        except ValueError as error:
            raise UsageError(str(error)) from None
    try:
        result = check_tokenizer(
            args.tokenizer,
            vocab=args.vocab,
            pattern=args.pattern,
            decode=args.decode,
            cmd=args.cmd,
            seconds=args.seconds,
            seed=args.seed,
            examples=args.examples,
            call_timeout=args.call_timeout,
            memory_mb=args.memory_mb,
            ignore=ignore,
            special=parse_specials(args.special or []),
            special_names=args.special_names,
            load_timeout=args.load_timeout,
            corpus=args.corpus,
            progress=args.progress if args.progress > 0 else None,
        )
    except TargetError as error:
        raise UsageError(str(error)) from None
    return _finish(result, args.json)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "check",
        help="search for inputs where an implementation of enc, dec or train differs from the specification",
        description="Generate inputs that reach the hard cases of BPE (tiny alphabets, long runs, a = b rules,"
        " fresh ids, repeated pairs, tie-heavy corpora, long inputs), run the given functions on them in a"
        " separate process with a time limit per call, and compare with the specification. A difference is"
        " shrunk and reported with the article id of the claim it breaks.",
        epilog="Exit codes: 0 no difference within the budget (outside the groups set aside with --ignore), 1 a"
        " difference found, 2 usage error.",
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
                        help="how inputs are searched: hypothesis (default) draws them at random; crosshair explores"
                        " the code's paths symbolically through hypothesis-crosshair, running it in the search's own"
                        " process (0.2-3 examples/s: for long runs)")
    parser.add_argument("--call-timeout", type=float, default=2.0, metavar="SECONDS",
                        help="a call that takes longer counts as not returning (default 2)")
    parser.add_argument("--memory-mb", type=int, default=4096, metavar="MIB",
                        help="memory cap of the process running the code under test (default 4096); hitting it is"
                        " reported as a finding")
    group = parser.add_argument_group("text -> ids tokenizers (checked against the vocabulary file's own tokenizer)")
    group.add_argument("--tokenizer", metavar="MOD:FUNC", help="FUNC(text: str) -> list[int]")
    group.add_argument("--cmd", metavar="'PROGRAM ARGS'", help="a program speaking the line protocol on stdin/stdout"
                       " (see README, 'Check a tokenizer in any language')")
    group.add_argument("--vocab", metavar="FILE", help="the vocabulary the tokenizer uses (tiktoken rank file,"
                       " tokenizer.json, GPT-2 pair, the project's file)")
    group.add_argument("--pattern", metavar="NAME|REGEX", default=None,
                       help="pre-tokenization pattern of the reference (default: the file's own)")
    group.add_argument("--examples", type=int, default=None, metavar="N",
                       help="stop after N texts (with --seed: the same texts on any machine; --seconds still bounds"
                       " the run)")
    group.add_argument("--decode", metavar="MOD:FUNC", help="decode(ids: list[int]) -> str, checked as"
                       " decode(encode(t)) == t")
    group.add_argument("--ignore", metavar="GROUP", action="append", help="set a known group of differences aside"
                       " (its key as the report prints it, or a prefix up to a colon: 'split'); repeatable; still"
                       " reported, but exit 0 when every group found is set aside")
    group.add_argument("--ignore-file", metavar="FILE", action="append", help="group keys to set aside, one a line"
                       " ('#' starts a comment)")
    group.add_argument("--special", metavar="NAME=ID", action="append", help="a special token of the vocabulary"
                       " (repeatable): allowed with allowed_special, ordinary text without; a rank file of r50k,"
                       " p50k, cl100k or o200k gets its encoding's own")
    group.add_argument("--load-timeout", type=float, default=60.0, metavar="SECONDS",
                       help="the limit on the first call of each process of the tokenizer, which may load its"
                       " vocabulary (default 60; every other call has --call-timeout)")
    group.add_argument("--special-names", choices=["text", "allowed", "always"], default=None,
                       help="how the tokenizer reads special tokens' names in a text: never (text), where"
                       " allowed_special allows them (allowed: tiktoken), in every text (always: the tokenizers"
                       " library); default: as its hello says, else as the file's own library does")
    group.add_argument("--corpus", metavar="FILE", nargs="+", default=None,
                       help="text files (UTF-8, plain or .gz) whose lines are the real-text source of the texts"
                       " (default: a multilingual sample shipped with bpeproof)")
    group.add_argument("--progress", type=float, default=5.0, metavar="SECONDS",
                       help="a progress line on stderr every SECONDS (texts checked, rate, findings so far;"
                       " default 5, 0: none)")
    parser.set_defaults(handler=run)
