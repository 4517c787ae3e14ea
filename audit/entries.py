"""How the audit's report shows what it found: bytes as readable text, tokens, and lists of examples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["EXAMPLES", "examples", "show", "token_entry"]

#: Examples kept per finding.
EXAMPLES = 10


def show(data: bytes, limit: int = 60) -> str:
    """Bytes as readable text: UTF-8 where valid, ``\\xNN`` elsewhere; newlines and tabs escaped."""
    text = data.decode("utf-8", errors="backslashreplace")
    text = text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def examples(items: Sequence[Any], limit: int = EXAMPLES) -> dict[str, Any]:
    """A finding as its count and its first ``limit`` items."""
    return {"count": len(items), "examples": list(items[:limit])}


def token_entry(token: int, data: bytes) -> dict[str, Any]:
    """A token as the report lists it: its id, its bytes as text and in hex."""
    return {"id": token, "text": show(data), "hex": data.hex()}
