"""bpeproof: byte-level BPE as an executable specification, a fast engine equal to it, and checks for anyone's.

The package is layered, each layer importing only the ones before it:

1. ``bpeproof.spec`` — the article's definitions as code (the specification);
2. ``bpeproof.impl`` — the engine: training, encoding, every vocabulary format; it uses only the specification's
   types and errors, never its functions;
3. ``bpeproof.proofs_tests`` — the checker (property tests, CrossHair contracts, mutants) — and ``bpeproof.audit``,
   the audit of real tokenizer files; both run the specification beside the engine;
4. ``bpeproof`` itself — this public API, and the command line (``bpeproof.cli``, ``bpeproof.commands``).

The public API, imported on first use (``import bpeproof`` loads none of it)::

    tok = bpeproof.load("cl100k_base.tiktoken")      # any supported file, its own library's semantics
    ids = tok.encode("hello world"); tok.decode(ids)
    rules = bpeproof.train([b"low", b"lower"], 10)    # def-bpe on a corpus of words
    tok = bpeproof.Tokenizer(rules, "gpt2")           # rules and a pre-tokenization pattern
    bpeproof.check({"enc": my_enc})                   # the checker on a Python function
    bpeproof.check_tokenizer(cmd="./my-port", vocab="cl100k_base.tiktoken")
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from bpeproof.impl.encoder import dec, enc
    from bpeproof.impl.tokenizer import Tokenizer
    from bpeproof.impl.tokenizer import load_tokenizer as load
    from bpeproof.impl.trainer import train, train_counts
    from bpeproof.proofs_tests.checker.functions import CheckResult, check, check_all
    from bpeproof.proofs_tests.checker.tokenizer_check import check_tokenizer

#: Each public name: the module that defines it and its name there.
_API: dict[str, tuple[str, str]] = {
    "load": ("bpeproof.impl.tokenizer", "load_tokenizer"),
    "Tokenizer": ("bpeproof.impl.tokenizer", "Tokenizer"),
    "train": ("bpeproof.impl.trainer", "train"),
    "train_counts": ("bpeproof.impl.trainer", "train_counts"),
    "enc": ("bpeproof.impl.encoder", "enc"),
    "dec": ("bpeproof.impl.encoder", "dec"),
    "check": ("bpeproof.proofs_tests.checker.functions", "check"),
    "check_all": ("bpeproof.proofs_tests.checker.functions", "check_all"),
    "CheckResult": ("bpeproof.proofs_tests.checker.functions", "CheckResult"),
    "check_tokenizer": ("bpeproof.proofs_tests.checker.tokenizer_check", "check_tokenizer"),
}

__all__ = [
    "CheckResult",
    "Tokenizer",
    "__version__",
    "check",
    "check_all",
    "check_tokenizer",
    "dec",
    "enc",
    "load",
    "train",
    "train_counts",
]


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'bpeproof' has no attribute {name!r}")
    module, attribute = _API[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
