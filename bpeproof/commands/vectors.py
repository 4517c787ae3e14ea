"""``bpeproof vectors``: a known-answer suite for a port of a vocabulary file (``proofs_tests.checker.vectors``)."""

from __future__ import annotations

import argparse
import os

from bpeproof.commands import EXIT_OK, UsageError
from bpeproof.impl.io.wording import count


def max_option(text: str) -> int:
    """``--max N``: vectors at most, at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of vectors >= 1")
    return int(text)


def run(args: argparse.Namespace) -> int:
    from bpeproof.commands._vocab import parse_specials
    from bpeproof.proofs_tests.checker import vectors
    from bpeproof.proofs_tests.checker.library import Library, load_reference, with_special_tokens
    from bpeproof.proofs_tests.checker.worker import TargetError

    if not os.path.isfile(args.vocab):
        raise UsageError(f"{args.vocab}: no such file")
    if os.path.exists(args.output) and not os.path.isdir(args.output):
        raise UsageError(f"-o {args.output}: not a folder")
    try:
        reference, origin = with_special_tokens(load_reference(args.vocab, args.pattern),
                                                parse_specials(args.special or []))
    except TargetError as error:
        raise UsageError(str(error)) from None
    chosen = vectors.choose(reference, args.max, decode=Library(args.vocab, reference).decode)
    written = vectors.write(chosen, args.output)
    allowed = sum(vector.allowed_special for vector in chosen)
    specials = f", special tokens {origin}" if reference.special_tokens else ", no special tokens"
    print(f"{count(len(chosen), 'vector')} ({allowed} with allowed_special{specials}) ->"
          f" {', '.join(str(path) for path in written)}")
    return EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "vectors",
        help="write a known-answer suite (texts and their ids) for a port's own CI",
        description="Write short texts covering every behaviour the checker knows (each alternative of the pattern"
        " with each Unicode category, the known variants a port may follow, ties, long runs and pieces, the edges of"
        " UTF-8, special tokens, the vocabulary's tokens) with the ids of the file's own semantics:"
        " DIR/vectors.jsonl ({\"text\", \"ids\"} a line, \"allowed_special\": \"all\" where special tokens are"
        " read; special tokens are read as the file's own library reads them) and llama.cpp's DIR/vectors.inp /"
        " DIR/vectors.out. Every vector is also a decode round trip (to \"decoded\" where the file's normalizer"
        " changes the text).",
        epilog="Exit codes: 0 written, 2 usage error or bad input.",
    )
    parser.add_argument("--vocab", metavar="FILE", required=True, help="the vocabulary file (tiktoken rank file,"
                        " tokenizer.json, GPT-2 pair, the project's file)")
    parser.add_argument("-o", "--output", metavar="DIR", required=True, help="the folder written (made if missing)")
    parser.add_argument("--pattern", metavar="NAME|REGEX", default=None,
                        help="pre-tokenization pattern (default: the file's own)")
    parser.add_argument("--max", type=max_option, default=2000, metavar="N", help="vectors at most (default 2000)")
    parser.add_argument("--special", metavar="NAME=ID", action="append", help="a special token of the vocabulary"
                        " (repeatable); a rank file of r50k, p50k, cl100k or o200k gets its encoding's own")
    parser.set_defaults(handler=run)
