"""The ``bpeproof`` command.

Exit codes: 0 success; 1 the command ran and found a problem (a difference, a
failed check); 2 a usage error or bad input (a missing file, a malformed
vocabulary).  Errors are one line on stderr; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_USAGE = 2

Command = Callable[[argparse.Namespace], int]


class UsageError(Exception):
    """A problem with what the user asked for; printed as one line, exit 2."""


def _demo(args: argparse.Namespace) -> int:
    from impl import demo

    demo.run()
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bpeproof",
        description="Byte-level BPE: an executable specification, a fast implementation, and checks between them.",
    )
    parser.add_argument("--debug", action="store_true", help="show a traceback on errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="reproduce the article's worked results, then compare the implementation with the spec",
        description="Reproduce the article's worked results from this project's code (no files needed).",
    )
    demo.set_defaults(handler=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Command | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return handler(args)
    except KeyboardInterrupt:
        print("bpeproof: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except (UsageError, ValueError, TypeError, OSError) as error:
        if args.debug:
            raise
        print(f"bpeproof: error: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
