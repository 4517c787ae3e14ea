"""bpeproof's implementation: the fast engine and everything a user touches.

The engine (``train``, ``enc``, ``dec``, ``Tokenizer``, the file formats) gives
exactly the specification's answers and never calls it; ``proofs_tests``
shows that they agree.  ``train``, ``enc``, ``dec`` and ``apply_rule`` have the
specification's names, argument shapes and results.

The names below are imported on first use: importing one module of the engine
(a worker process importing ``bpeproof.impl.parallel``) does not load the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bpeproof.impl.encoder import Encoder, dec, enc
    from bpeproof.impl.tokenizer import Tokenizer
    from bpeproof.impl.trainer import apply_rule, count_words, train, train_counts, train_iter

#: Each public name and the module that defines it.
_API: dict[str, str] = {
    "Encoder": "bpeproof.impl.encoder",
    "dec": "bpeproof.impl.encoder",
    "enc": "bpeproof.impl.encoder",
    "Tokenizer": "bpeproof.impl.tokenizer",
    "apply_rule": "bpeproof.impl.trainer",
    "count_words": "bpeproof.impl.trainer",
    "train": "bpeproof.impl.trainer",
    "train_counts": "bpeproof.impl.trainer",
    "train_iter": "bpeproof.impl.trainer",
}

__all__ = ["Encoder", "Tokenizer", "apply_rule", "count_words", "dec", "enc", "train", "train_counts", "train_iter"]


if not TYPE_CHECKING:  # for mypy the names are the imports above; the compiled modules stay unknown to it

    def __getattr__(name: str) -> Any:
        if name not in _API:
            raise AttributeError(f"module 'bpeproof.impl' has no attribute {name!r}")
        value = getattr(importlib.import_module(_API[name]), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
