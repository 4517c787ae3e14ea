"""``bpeproof train``: learn a rule list from text files with the fast trainer and save a tokenizer."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from pathlib import Path

from bpeproof.commands import EXIT_OK, UsageError
from bpeproof.impl.corpus import iter_lines
from bpeproof.impl.patterns import compile_pattern, resolve_pattern
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.impl.trainer import count_words, train_counts


def read_lines(paths: list[str]) -> Iterator[str]:
    """The lines of UTF-8 text files (``.gz`` read as gzip; ``-`` is standard input), streamed (``impl.corpus``)."""
    return iter_lines(paths)


def parse_specials(items: list[str]) -> dict[str, int]:
    specials: dict[str, int] = {}
    for item in items:
        name, _, value = item.rpartition("=")
        if not name or not value.isdigit():
            raise UsageError(f"--special {item!r}: expected NAME=ID, e.g. '<|endoftext|>=100000'")
        specials[name] = int(value)
    return specials


def run(args: argparse.Namespace) -> int:
    if args.merges < 0:
        raise UsageError(f"--merges {args.merges}: must be >= 0")
    pattern = resolve_pattern(args.pattern)
    try:
        regex = compile_pattern(pattern)
    except Exception as error:  # the regex module raises its own error class
        raise UsageError(f"--pattern: not a valid regular expression: {error}") from None
    specials = parse_specials(args.special)
    started = time.perf_counter()
    counts = count_words(read_lines(args.files), pretokenize=regex.findall, progress=None)
    if not counts:
        raise UsageError("the corpus is empty: no words to train on")
    rules = train_counts(counts, args.merges, progress=None)
    tokenizer = Tokenizer(rules, args.pattern, specials)
    tokenizer.save(args.output)
    seconds = time.perf_counter() - started
    summary = {
        "output": str(args.output),
        "distinct_words": len(counts),
        "words": sum(counts.values()),
        "merges": len(rules),
        "vocab_size": 256 + len(rules),
        "special_tokens": len(specials),
        "seconds": round(seconds, 3),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"learned {len(rules)} merges from {summary['words']} words ({len(counts)} distinct) in {seconds:.2f} s;"
              f" vocabulary {summary['vocab_size']} + {len(specials)} special; saved to {args.output}")
    return EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "train",
        help="learn BPE merges from text files and save a tokenizer",
        description="Cut UTF-8 text files into words with the pattern, learn at most N merges exactly as def-bpe"
        " defines them (largest count, ties to the smallest pair, ids 256, 257, …) and save the tokenizer as JSON"
        " (written to a temporary file, then renamed).",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text files (.gz read as gzip; - for stdin)")
    parser.add_argument("--merges", type=int, required=True, metavar="N", help="at most N merges")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="OUT", help="the tokenizer file to write")
    parser.add_argument("--pattern", default="words", metavar="NAME|REGEX",
                        help="pre-tokenization: r50k, cl100k, o200k, words (default) or a regular expression")
    parser.add_argument("--special", action="append", default=[], metavar="NAME=ID",
                        help="a special token (repeat the option)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(handler=run)
