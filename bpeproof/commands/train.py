"""``bpeproof train``: learn a rule list from text files with the fast trainer and save a tokenizer."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from bpeproof.commands import EXIT_OK, UsageError
from bpeproof.commands._engine import open_engine
from bpeproof.commands._vocab import parse_specials
from bpeproof.commands.count import add_parallel_options, checked_pattern


def read_lines(paths: list[str]) -> Iterator[str]:
    """The lines of UTF-8 text files (``.gz`` read as gzip; ``-`` is standard input), streamed (``impl.io.corpus``)."""
    from bpeproof.impl.io.corpus import iter_lines

    return iter_lines(paths)


def run(args: argparse.Namespace) -> int:
    from bpeproof.impl.io.counts import read_counts
    from bpeproof.impl.io.packed_counts import table_words
    from bpeproof.impl.parallel import count_files, count_tables, default_workers
    from bpeproof.impl.pre_tokenizers.patterns import resolve_pattern
    from bpeproof.impl.tokenizer import Tokenizer
    from bpeproof.impl.trainer import HAVE_C_LOOP, train_counts, train_tables

    if args.merges < 0:
        raise UsageError(f"--merges {args.merges}: must be >= 0")
    if args.counts is not None and (args.engine != "processes" or args.scheduler is not None):
        raise UsageError("--engine dask: nothing to distribute with --counts (the table is read and trained on"
                         " here)")
    if bool(args.files) == (args.counts is not None):
        raise UsageError("give the text FILEs or --counts COUNTS, not both" if args.files
                         else "nothing to train on: give text FILEs or --counts COUNTS")
    specials = parse_specials(args.special)
    started = time.perf_counter()
    slots: int | None = None
    threads = args.workers or default_workers()  # the merge loop's threads: the same rules for any number
    counts: Mapping[bytes, int] = {}
    tables: list[bytes] = []  # the workers' packed tables, when the C loop adds them itself
    if args.counts is not None:
        counts, counted_with = read_counts(args.counts)
        pattern = counted_with if counted_with is not None else resolve_pattern(args.pattern or "words")
        if args.pattern is not None and counted_with is not None and resolve_pattern(args.pattern) != counted_with:
            raise UsageError(f"--pattern {args.pattern!r} is not the pattern {args.counts} was counted with"
                             f" ({counted_with[:60]!r}); leave --pattern out to use it")
        checked_pattern(pattern)
    else:
        pattern = checked_pattern(args.pattern or "words")
        with open_engine(args, args.files) as engine:
            if engine is None and HAVE_C_LOOP:
                # The workers' tables go to the C merge loop as they are: it adds them itself, on several threads.
                tables = count_tables(args.files, pattern, workers=args.workers, progress=None)
            else:
                counts = count_files(args.files, pattern, workers=args.workers, progress=None, engine=engine)
            slots = engine.slots if engine is not None else None
    if not counts and not any(map(table_words, tables)):
        raise UsageError("the corpus is empty: no words to train on")
    try:
        if tables:
            rules, distinct, words = train_tables(tables, args.merges, progress=None, threads=threads)
        else:
            rules = train_counts(counts, args.merges, progress=None, threads=threads)
            distinct, words = len(counts), sum(counts.values())
    except MemoryError:  # in the merge loop, on any of its threads: one line, as any other failure of the run
        raise OSError("out of memory in the merge loop") from None
    tokenizer = Tokenizer(rules, args.pattern or pattern, specials)
    tokenizer.save(args.output)
    seconds = time.perf_counter() - started
    summary = {
        "output": str(args.output),
        "distinct_words": distinct,
        "words": words,
        "merges": len(rules),
        "vocab_size": 256 + len(rules),
        "special_tokens": len(specials),
        "workers": 1 if args.counts is not None else slots or args.workers or default_workers(),
        "engine": args.engine,
        "seconds": round(seconds, 3),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"learned {len(rules)} merges from {words} words ({distinct} distinct) in {seconds:.2f} s;"
              f" vocabulary {summary['vocab_size']} + {len(specials)} special; saved to {args.output}")
    return EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "train",
        help="learn BPE merges from text files and save a tokenizer",
        description="Cut UTF-8 text files into words with the pattern, line by line, count them in worker processes"
        " (the same counts for any number), learn at most N merges exactly as def-bpe defines them (largest count,"
        " ties to the smallest pair, ids 256, 257, …) on as many threads (the same rules for any number) and save"
        " the tokenizer as JSON (written to a temporary file, then renamed). --counts trains on a table written by"
        " 'bpeproof count' and takes its pattern. With --engine"
        " dask the counting runs as tasks on a Dask cluster and the merge loop here: the same rules.",
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="UTF-8 text files (.gz read as gzip; - for stdin)")
    parser.add_argument("--counts", type=Path, metavar="COUNTS",
                        help="train on a word-count table written by 'bpeproof count' instead of FILEs")
    parser.add_argument("--merges", type=int, required=True, metavar="N", help="at most N merges")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="OUT", help="the tokenizer file to write")
    add_parallel_options(parser, None, "count in N processes, then merge on N threads")
    parser.add_argument("--special", action="append", default=[], metavar="NAME=ID",
                        help="a special token (repeat the option)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(handler=run)
