"""The ``bpeproof`` command line.

Exit codes: 0 success; 1 the command ran and found a problem (a difference, a
failed check); 2 a usage error or bad input (a missing file, a malformed
vocabulary).  Errors are one line on stderr; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from bpeproof import __version__
from bpeproof.commands import EXIT_OK, EXIT_USAGE, Handler, UsageError
from bpeproof.impl.io.errors import os_problem

#: One module per subcommand, each with ``register(commands)``; the order is the order of ``--help``.
COMMAND_MODULES = [
    "bpeproof.commands.demo",
    "bpeproof.commands.count",
    "bpeproof.commands.train",
    "bpeproof.commands.tokens",
    "bpeproof.commands.convert",
    "bpeproof.commands.trace",
    "bpeproof.commands.check",
    "bpeproof.commands.vectors",
    "bpeproof.commands.audit",
    "bpeproof.commands.prove",
]


class CommandParser(argparse.ArgumentParser):
    """A subcommand's parser: an argument it does not know is its own usage error, with its own usage line.

    argparse hands a subcommand's unknown arguments back to the top-level parser, which would print
    ``usage: bpeproof [-h] …`` for ``bpeproof encode --nonsense``; nothing after the subcommand's name belongs to
    the top level, so the subcommand refuses it itself."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bpeproof",
        description="Byte-level BPE: an executable specification, a fast implementation, and checks between them.",
        epilog="Exit codes: 0 success, 1 a difference or failed check was found, 2 usage error or bad input.",
    )
    parser.add_argument("--debug", action="store_true", help="show a traceback on errors")
    parser.add_argument("--version", action="version", version=f"bpeproof {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
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
        print(f"bpeproof: error: {describe(error)}", file=sys.stderr)
        return EXIT_USAGE


def describe(error: Exception) -> str:
    """One line for an error: a file error names the file first."""
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {os_problem(error)}"
    return str(error)


if __name__ == "__main__":
    sys.exit(main())
