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
    library = Library(args.vocab, reference)
    chosen = vectors.choose(reference, args.max, decode=library.decode, surrogates=library.surrogates)
    written = vectors.write(chosen, args.output)
    allowed = sum(vector.allowed_special for vector in chosen)
    specials = f", special tokens {origin}" if reference.special_tokens else ", no special tokens"
    size = sum(path.stat().st_size for path in written)
    print(f"{count(len(chosen), 'vector')} ({allowed} with allowed_special{specials}), {size:,} bytes ->"
          f" {', '.join(str(path) for path in written)}")
    # A shape left out (by --max, or to stay under the size bound) is a gap in what the suite catches: said.
    texts = {vector.text for vector in chosen}
    missing = [name for name, text in vectors.shapes(library.surrogates) if text not in texts]
    if missing:
        print(f"{count(len(missing), 'shape')} left out (--max {args.max}, at most {vectors.MAX_BYTES:,} bytes):"
              f" {', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}")
    return EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "vectors",
        help="write a known-answer suite (texts and their ids) for a port's own CI",
        description="Write short texts covering every behaviour the checker knows (each alternative of the pattern"
        " with each Unicode category, the known variants a port may follow, ties, the edges of UTF-8, special"
        " tokens, the vocabulary's tokens) and the shapes where ports go wrong (each kind of Unicode change in each"
        " position, lone surrogates where the file's library replaces them, runs and pieces of every class just"
        " past 64, 256, 1,000 and 10,000 bytes), at most 2 MB, with the ids of the file's own semantics:"
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
    parser.add_argument("--max", type=max_option, default=3000, metavar="N", help="vectors at most (default 3000)")
    parser.add_argument("--special", metavar="NAME=ID", action="append", help="a special token of the vocabulary"
                        " (repeatable); a rank file of r50k, p50k, cl100k or o200k gets its encoding's own")
    parser.set_defaults(handler=run)
