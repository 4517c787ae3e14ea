"""The command line's vocabulary loader (``impl.load``) and its parser of token ids."""

from __future__ import annotations

import json

from impl.commands import UsageError
from impl.load import guess_pattern, load_tokenizer

__all__ = ["guess_pattern", "load_tokenizer", "parse_ids"]


def parse_ids(words: list[str], source: str) -> list[int]:
    """Token ids from text: integers separated by spaces or commas, or a JSON list."""
    text = " ".join(words).strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise UsageError(f"{source}: not a JSON list of ids: {error.msg}") from None
        items = value if isinstance(value, list) else [value]
    else:
        items = text.replace(",", " ").split()
    ids: list[int] = []
    for item in items:
        try:
            ids.append(int(item))
        except (TypeError, ValueError):
            raise UsageError(f"{source}: {item!r} is not a token id") from None
    return ids
