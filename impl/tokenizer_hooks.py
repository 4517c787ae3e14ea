"""Where ``Tokenizer.load`` and ``Tokenizer.encode_batch`` find the code that does them.

The file loaders (``bpeproof.impl.pipelines.registry``) and the worker pools (``bpeproof.impl.parallel``) build on
``bpeproof.impl.tokenizer`` and return its ``Tokenizer``; the tokenizer reaches them only through this table, each
imported by name on first use, so that every import between them points one way (the tokenizer below, the loaders
and pools above) and ``bpeproof.impl.tokenizer`` itself knows nothing of files or processes.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bpeproof.impl.special_tokens import AllowedSpecial
    from bpeproof.impl.tokenizer import Tokenizer

__all__ = ["encode_batch", "load_tokenizer"]

#: Each entry point: the module above the tokenizer that defines it and its name there.
_ENTRY_POINTS: dict[str, tuple[str, str]] = {
    "load_tokenizer": ("bpeproof.impl.pipelines.registry", "load_tokenizer"),
    "encode_batch": ("bpeproof.impl.parallel", "encode_batch"),
}


def _entry_point(name: str) -> Any:
    module, attribute = _ENTRY_POINTS[name]
    return getattr(importlib.import_module(module), attribute)


def load_tokenizer(path: str, pattern: str | None) -> Tokenizer:
    """``bpeproof.impl.pipelines.registry.load_tokenizer``: any supported file, its own library's semantics."""
    tokenizer: Tokenizer = _entry_point("load_tokenizer")(path, pattern)
    return tokenizer


def encode_batch(
    tokenizer: Tokenizer, texts: Sequence[str], *, num_workers: int | None, allowed_special: AllowedSpecial
) -> list[list[int]]:
    """``bpeproof.impl.parallel.encode_batch``: each text's ids, computed in ``num_workers`` processes."""
    ids: list[list[int]] = _entry_point("encode_batch")(
        tokenizer, texts, num_workers=num_workers, allowed_special=allowed_special
    )
    return ids
