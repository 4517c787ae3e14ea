"""``bpeproof count``: the distinct words of text files with their frequencies, counted on every core, as a table.

``bpeproof train --counts TABLE`` trains on the table, so a corpus is counted once and trained on many times.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bpeproof.commands import EXIT_OK, UsageError
from bpeproof.commands._engine import add_engine_options, engine_phrase, open_engine


def workers_option(text: str) -> int:
    """``--workers N``: a number of processes, at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes >= 1")
    return int(text)


def checked_pattern(pattern: str) -> str:
    """The regular expression of ``--pattern`` (a name or an expression); a bad one is a usage error."""
    from bpeproof.impl.pre_tokenizers.patterns import compile_pattern, resolve_pattern

    source = resolve_pattern(pattern)
    try:
        compile_pattern(source)
    except Exception as error:  # the regex module raises its own error class
        raise UsageError(f"--pattern: not a valid regular expression: {error}") from None
    return source


def add_parallel_options(parser: argparse.ArgumentParser, default_pattern: str | None,
                         what: str = "count in N processes") -> None:
    """--pattern, --workers (``what`` N is, for its help) and the engine's options."""
    from bpeproof.impl.parallel import default_workers

    parser.add_argument("--pattern", default=default_pattern, metavar="NAME|REGEX",
                        help="pre-tokenization: r50k, cl100k, o200k, llama3, qwen2, words (default) or a regular"
                             " expression")
    parser.add_argument("--workers", type=workers_option, default=None, metavar="N",
                        help=f"{what} (default: all cores, here {default_workers()})")
    add_engine_options(parser)


def run(args: argparse.Namespace) -> int:
    from bpeproof.impl.io.counts import is_parquet_name, require_pyarrow, write_counts
    from bpeproof.impl.parallel import count_files, default_workers

    output = str(args.output)
    if is_parquet_name(output):
        require_pyarrow(output, "writing")  # before any counting
    source = checked_pattern(args.pattern)
    started = time.perf_counter()
    with open_engine(args, args.files) as engine:
        counts = count_files(args.files, source, workers=args.workers, progress=None, engine=engine)
        workers = engine.slots if engine is not None else args.workers or default_workers()
        phrase = engine_phrase(engine, workers)
    if not counts:
        raise UsageError("the corpus is empty: no words to count")
    write_counts(args.output, counts, source)
    seconds = time.perf_counter() - started
    summary = {"output": output, "distinct_words": len(counts), "words": sum(counts.values()),
               "workers": workers, "engine": args.engine, "seconds": round(seconds, 3)}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"counted {summary['words']} words ({len(counts)} distinct) in {seconds:.2f} s with {phrase};"
              f" saved to {output}")
    return EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "count",
        help="count the words of text files on every core and save the table",
        description="Cut UTF-8 text files into words with the pattern, line by line as 'train' does, and count"
        " them in worker processes over byte ranges of the files (a .gz file is one range). The table (word bytes"
        " in hexadecimal, tab, count; gzip-compressed when the name ends in .gz; a Parquet table of word (binary)"
        " and count when it ends in .parquet, with pyarrow installed) is what 'train --counts' reads;"
        " it is written to a temporary file, then renamed. With --engine dask the ranges are counted as tasks on a"
        " Dask cluster and the tables added in a tree of tasks: the same table.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text files (.gz read as gzip; - for stdin)")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="COUNTS",
                        help="the table to write: counts.tsv.gz, or counts.parquet (needs pyarrow)")
    add_parallel_options(parser, "words")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(handler=run)
