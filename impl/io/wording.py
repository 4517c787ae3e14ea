"""How the project's messages count things: ``count(1, "example")`` is "1 example", else "N examples"."""

from __future__ import annotations

__all__ = ["count", "token_count"]


def count(number: int, noun: str, plural: str | None = None) -> str:
    """``number`` and ``noun``, the noun in the plural (``plural``, else noun + "s") unless the number is 1."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def token_count(tokens: int, special: int) -> str:
    """The size of a file's token table, one wording for every command: "50256 tokens", or, when ``special`` of
    the ``tokens`` entries are special tokens (a ``tokenizer.json`` may list them in its model's vocabulary),
    "128000 tokens (127997 ordinary + 3 special)"."""
    if not special:
        return count(tokens, "token")
    return f"{count(tokens, 'token')} ({tokens - special} ordinary + {special} special)"
