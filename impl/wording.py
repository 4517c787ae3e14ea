"""How the project's messages count things: ``count(1, "example")`` is "1 example", else "N examples"."""

from __future__ import annotations

__all__ = ["count"]


def count(number: int, noun: str, plural: str | None = None) -> str:
    """``number`` and ``noun``, the noun in the plural (``plural``, else noun + "s") unless the number is 1."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"
