"""``bpeproof demo``: the article's worked results, then the implementation beside the specification."""

from __future__ import annotations

import argparse

from bpeproof.commands import EXIT_OK


def run(args: argparse.Namespace) -> int:
    from bpeproof import demo

    demo.run()
    return EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "demo",
        help="reproduce the article's worked results, then compare the implementation with the spec",
        description="Reproduce the article's worked results from this project's code (no files needed), then run"
        " the fast implementation on the same inputs and compare it with the specification.",
    )
    parser.set_defaults(handler=run)
