"""The ``bpeproof`` command line.

Exit codes: 0 success; 1 the command ran and found a problem (a difference, a
failed check); 2 a usage error or bad input (a missing file, a malformed
vocabulary).  Errors are one line on stderr; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Iterator, Sequence

from bpeproof import __version__
from bpeproof.commands import EXIT_OK, EXIT_USAGE, Handler, UsageError
from bpeproof.impl.io.errors import os_problem

#: The module of each subcommand, with ``register(commands)`` adding its parser (a module may add several); the
#: order of the modules is the order of ``--help``.
COMMANDS = {
    "demo": "bpeproof.commands.demo",
    "count": "bpeproof.commands.count",
    "train": "bpeproof.commands.train",
    "encode": "bpeproof.commands.tokens",
    "decode": "bpeproof.commands.tokens",
    "explain": "bpeproof.commands.tokens",
    "convert": "bpeproof.commands.convert",
    "trace": "bpeproof.commands.trace",
    "check": "bpeproof.commands.check",
    "vectors": "bpeproof.commands.vectors",
    "audit": "bpeproof.commands.audit",
    "prove": "bpeproof.commands.prove",
}
COMMAND_MODULES = list(dict.fromkeys(COMMANDS.values()))
#: The subcommands that load a vocabulary file: each takes ``--no-cache``.
VOCABULARY_COMMANDS = ("encode", "decode", "explain", "trace", "check", "audit")


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


def command_of(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` runs: its first argument that is not an option, when that names one and no help was
    asked for before it (the top level's options take no values); None otherwise."""
    for argument in argv:
        if argument in ("-h", "--help") or argument == "--":
            return None
        if not argument.startswith("-"):
            return argument if argument in COMMANDS else None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of the command line.  Given the arguments of a run (``argv``) that names a subcommand, only that
    subcommand's module is imported and registered: a call pays for the modules of its own command alone (their
    imports are what a short call spends its time on).  Otherwise (``--help``, no or an unknown command) every
    subcommand is, so that the help and the error list them all."""
    parser = argparse.ArgumentParser(
        prog="bpeproof",
        description="Byte-level BPE: an executable specification, a fast implementation, and checks between them.",
        epilog="Exit codes: 0 success, 1 a difference or failed check was found, 2 usage error or bad input.",
    )
    parser.add_argument("--debug", action="store_true", help="show a traceback on errors")
    parser.add_argument("--version", action="version", version=f"bpeproof {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    command = command_of(argv) if argv is not None else None
    for name in [COMMANDS[command]] if command is not None else COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    for name in VOCABULARY_COMMANDS:
        if name in commands.choices:
            commands.choices[name].add_argument(
                "--no-cache", action="store_true",
                help="read the vocabulary file itself rather than its compiled form in the cache (as"
                " BPEPROOF_NO_CACHE=1 does; the cache is BPEPROOF_CACHE_DIR, else the user's cache directory)")
    return parser


@contextlib.contextmanager
def vocabulary_cache(enabled: bool) -> Iterator[None]:
    """The compiled-vocabulary cache turned off while a command runs without it (``--no-cache``): through the
    environment, so that the command's worker processes go without it too."""
    if enabled:
        yield
        return
    from bpeproof.impl.io.vocab_cache import OFF_VARIABLE

    before = os.environ.get(OFF_VARIABLE)
    os.environ[OFF_VARIABLE] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[OFF_VARIABLE]
        else:
            os.environ[OFF_VARIABLE] = before


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(arguments)
    args = parser.parse_args(arguments)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        with vocabulary_cache(not getattr(args, "no_cache", False)):
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
