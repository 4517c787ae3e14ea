"""The one exception for a bad file: every reader and writer raises it (``impl.formats``, ``impl.tokenizer``)."""

from __future__ import annotations

import os

__all__ = ["FormatError", "MissingFolderError", "os_problem"]


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


class MissingFolderError(FileNotFoundError):
    """A file cannot be written because the folder it is to go in does not exist."""


def os_problem(error: OSError) -> str:
    """What an operating-system error says about a file, in the one wording every command uses."""
    if isinstance(error, MissingFolderError):
        return f"cannot write it: the folder {os.path.dirname(error.filename) or '.'} does not exist"
    if isinstance(error, FileNotFoundError):
        return "no such file"
    if isinstance(error, IsADirectoryError):
        return "is a directory, not a file"
    if isinstance(error, NotADirectoryError):
        return "a folder on its path is a file"
    if isinstance(error, PermissionError):
        return "permission denied"
    return (error.strerror or str(error)).lower()
