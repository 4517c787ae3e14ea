"""The one exception for a bad file: every reader and writer raises it (``impl.formats``, ``impl.tokenizer``)."""

from __future__ import annotations

import os

__all__ = ["FormatError"]


class FormatError(ValueError):
    """A tokenizer file that cannot be read or written as asked.

    The message always starts with the file's path, then says where in the
    file the problem is (a line number, a JSON key, a protobuf field or a byte
    offset) when that is known, then what is wrong.  The same three parts are
    kept as attributes for programs that report them differently.
    """

    def __init__(self, path: str | os.PathLike[str], where: str | None, problem: str) -> None:
        self.path = os.fspath(path)
        self.where = where
        self.problem = problem
        location = f"{self.path}: {where}" if where else self.path
        super().__init__(f"{location}: {problem}")

    @property
    def key(self) -> str | None:
        """``where``, under the name the project file's reader used for it (a JSON key there)."""
        return self.where
