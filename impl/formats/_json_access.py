"""Typed access to parsed JSON that raises ``FormatError`` naming the key instead of KeyError or TypeError."""

from __future__ import annotations

import os

from bpeproof.impl.io.errors import FormatError


class JsonReader:
    """Checks the shape of values in one JSON document; every failure names the file and the key path."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path

    def fail(self, key: str, problem: str) -> FormatError:
        """A ``FormatError`` for ``key`` (a dotted path such as ``model.vocab``)."""
        return FormatError(self.path, f"key {key}", problem)

    def obj(self, value: object, key: str) -> dict[str, object]:
        """``value`` as a JSON object."""
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a JSON object, found {_kind(value)}")
        return value

    def lst(self, value: object, key: str) -> list[object]:
        """``value`` as a JSON array."""
        if not isinstance(value, list):
            raise self.fail(key, f"expected a JSON array, found {_kind(value)}")
        return value

    def string(self, value: object, key: str) -> str:
        """``value`` as a JSON string."""
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, found {_kind(value)}")
        return value

    def integer(self, value: object, key: str, *, minimum: int | None = 0) -> int:
        """``value`` as a JSON integer (not a boolean, not a float), at least ``minimum``."""
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(key, f"expected an integer, found {_kind(value)}")
        if minimum is not None and value < minimum:
            raise self.fail(key, f"expected an integer ≥ {minimum}, found {value}")
        return value

    def boolean(self, value: object, key: str) -> bool:
        """``value`` as a JSON boolean."""
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, found {_kind(value)}")
        return value

    def member(self, parent: dict[str, object], name: str, key: str) -> object:
        """``parent[name]``; a missing member raises ``FormatError`` for ``key.name``."""
        if name not in parent:
            raise self.fail(f"{key}.{name}" if key else name, "missing")
        return parent[name]

    def optional_bool(self, parent: dict[str, object], name: str, key: str, default: bool) -> bool:
        """``parent[name]`` as a boolean; ``default`` when it is missing or null."""
        value = parent.get(name)
        if value is None:
            return default
        return self.boolean(value, f"{key}.{name}" if key else name)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
