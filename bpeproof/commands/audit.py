"""``bpeproof audit``: check a real vocabulary file and find which BPE variant its own library computes.

Prints a short summary; ``--json FILE`` and ``--html FILE`` write the full report (keys in ``bpeproof.audit.report``),
each atomically.  Exit 0 when the audit ran (findings are not errors), 2 for a missing or malformed file, and
with ``--strict`` 1 when the library follows none of its declared variants or the merge list is not proper.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from typing import Any

from bpeproof.audit.progress import SUBPHASES
from bpeproof.audit.sampling import DEFAULT_SAMPLES
from bpeproof.commands import EXIT_FOUND, EXIT_OK, UsageError
from bpeproof.commands._engine import add_engine_options, open_engine
from bpeproof.commands.count import workers_option
from bpeproof.impl.io.wording import count, token_count

#: How the report's ``pattern_source`` reads after the pattern's name.
PATTERN_SOURCES = {"option": "--pattern", "file": "from the file", "guessed": "guessed"}


def pattern_phrase(file: Mapping[str, Any]) -> str:
    """How the file's text is cut into words: "pattern r50k (guessed)", "the library's own pre-tokenizer", …"""
    if file["pattern"] is None:
        if file["pattern_source"] == "library":
            return "the library's own pre-tokenizer"
        return "no pattern"
    if file["pattern_name"]:
        name = file["pattern_name"]
    else:
        from bpeproof.impl.formats.vocab import GPT2_PATTERN

        name = "GPT-2's regex" if file["pattern"] == GPT2_PATTERN else "a custom regex"
    return f"pattern {name} ({PATTERN_SOURCES.get(file['pattern_source'], file['pattern_source'])})"


def timing_line(timings: Mapping[str, float]) -> str:
    """The ``time:`` line: each phase once, a phase timed inside another shown in brackets after it, so that the
    phases outside brackets add up to the total."""
    inside: dict[str, list[str]] = {}
    for name, parent in SUBPHASES.items():
        if name in timings:
            inside.setdefault(parent, []).append(f"{timings[name]:.2f}s of it {name}")
    parts = []
    for name, seconds in timings.items():
        if name in SUBPHASES or name == "total":
            continue
        nested = f" ({', '.join(inside[name])})" if name in inside else ""
        parts.append(f"{name} {seconds:.2f}s{nested}")
    if "total" in timings:
        parts.append(f"total {timings['total']:.2f}s")
    return "time: " + ", ".join(parts)


def summary(report: Mapping[str, Any]) -> str:
    """The terminal summary: the file, the verdict, the numbers, one line each."""
    file = report["file"]
    variants = report["variants"]
    library = report["library"]
    gap = report["greedy_gap"]
    lines = [
        f"{file['path']}: {file['kind']}, {token_count(file['tokens'], file['specials_in_tokens'])},"
        f" {count(file['merges'], 'merge')}, {count(file['specials'], 'special token')}; {pattern_phrase(file)}",
    ]
    if library["available"]:
        lines.append(f"library: {library['name']} {library['version']}; declared {', '.join(variants['declared'])};"
                     f" verdict on {count(variants['words'], 'word')}: {', '.join(variants['verdict']) or 'none'}")
        for name, entry in variants["results"].items():
            mark = "=" if entry["agree"] == entry["compared"] else "≠"
            first = ""
            if entry["disagreements"]:
                item = entry["disagreements"][0]
                first = f"  e.g. {item['word']!r}: library {item['library']} vs {item['variant']}"
            lines.append(f"  {mark} {name:<22} {entry['agree']}/{entry['compared']}{first}")
    else:
        lines.append(f"library: not available ({library['error']})")
    lines += ["findings:"] + [f"  - {line}" for line in report["findings"]]
    for corpus in report["corpora"]:
        lines.append(
            f"corpus {corpus['name']}: {count(corpus['bytes'], 'byte')} -> {count(corpus['tokens'], 'token')},"
            f" {corpus['bytes_per_token']:.3f} bytes/token = {corpus['raw_bits_per_token']:.1f} raw bits/token;"
            f" log2|V| = {corpus['bits_per_token']:.2f}"
        )
    lines.append(f"greedy vs shortest on {count(gap['words'], 'word')}: {gap['bpe_tokens']} vs"
                 f" {count(gap['shortest_tokens'], 'token')} ({gap['saved_percent']:.2f}% fewer possible,"
                 f" {count(gap['words_shorter'], 'word')})")
    lines.append(timing_line(report["timings"]))
    return "\n".join(lines)


def failed_strictly(report: Mapping[str, Any]) -> bool:
    """``--strict``: the library follows none of its declared variants, or the merge list is not proper."""
    return report["variants"]["follows_declared"] is False or not report["vocabulary"]["proper"]


def run(args: argparse.Namespace) -> int:
    from bpeproof.audit.html import render
    from bpeproof.audit.report import audit
    from bpeproof.impl.io.atomic import atomic_write_text

    if args.samples < 1:
        raise UsageError("--samples must be at least 1")
    if args.engine == "dask" and not args.corpus:
        raise UsageError("--engine dask: only with --corpus FILE... (the built-in sample is measured here)")
    if args.workers is not None and args.engine != "dask":
        raise UsageError("--workers: only with --engine dask (the number of processes of the local cluster)")
    with open_engine(args, args.corpus) as engine:
        report = audit(
            args.path,
            pattern=args.pattern,
            corpora=args.corpus,
            samples=args.samples,
            seed=args.seed,
            progress=not args.quiet and sys.stderr.isatty(),
            engine=engine,
        )
    written: list[str] = []
    if args.json:
        atomic_write_text(args.json, json.dumps(report, ensure_ascii=False, indent=2) + "\n")
        written.append(f"JSON report written to {args.json}")
    if args.html:
        atomic_write_text(args.html, render(report))
        written.append(f"HTML report written to {args.html}")
    if not args.quiet:
        print(summary(report))
        for line in written:
            print(line)
    return EXIT_FOUND if args.strict and failed_strictly(report) else EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "audit",
        help="check a tokenizer file and find which BPE variant its own library computes",
        description="Read a tokenizer file (tiktoken rank file, tokenizer.json, GPT-2 encoder.json + vocab.bpe,"
        " sentencepiece BPE .model), check its vocabulary and merge list, run its reference library against each"
        " BPE variant, and measure compression and the greedy-against-shortest gap.",
    )
    parser.add_argument("path", metavar="PATH", help="the tokenizer file (or a directory holding one)")
    parser.add_argument("--pattern", metavar="NAME|REGEX", default=None,
                        help="pre-tokenization pattern of a rank file or GPT-2 files: r50k, cl100k, o200k, llama3,"
                        " qwen2, words, or a regex (rank files hold none: by default it is guessed from the name or"
                        " size); tokenizer.json and .model files use their own")
    parser.add_argument("--corpus", action="extend", nargs="+", default=[], metavar="FILE",
                        help="UTF-8 text files (.gz allowed), one or more after --corpus (which may be repeated);"
                        " default: a built-in multilingual sample")
    parser.add_argument("--json", metavar="FILE", help="write the full report as JSON")
    parser.add_argument("--html", metavar="FILE", help="write the report as one self-contained HTML page")
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES, metavar="N",
                        help=f"distinct corpus words compared (default {DEFAULT_SAMPLES})")
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the word sample (default 0)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when the library follows none of its declared variants or a merge is improper")
    parser.add_argument("--quiet", action="store_true", help="print nothing (use with --json or --html)")
    add_engine_options(parser)
    parser.add_argument("--workers", type=workers_option, default=None, metavar="N",
                        help="with --engine dask and no --scheduler: the processes of the local cluster"
                        " (default: all cores)")
    parser.set_defaults(handler=run)
