"""The subcommands of ``bpeproof``: one module each, with ``register(commands)`` adding its parser.

A handler returns the exit code; it raises ``UsageError`` (or ValueError,
TypeError, OSError) for a problem the user must fix, which the command line
prints as one line with exit code 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_USAGE = 2

Handler = Callable[[argparse.Namespace], int]


class UsageError(Exception):
    """A problem with what the user asked for; printed as one line, exit 2."""
