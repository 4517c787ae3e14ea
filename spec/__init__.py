"""bpeproof's executable specification of byte-level BPE.

Each name follows one definition or claim of the article; the id in its
docstring says which.  ``bpeproof.spec.contracts`` states the claims as contracts for
CrossHair.  Everything here is deliberately simple and recursive: it is the
reference that faster code is checked against, not the code to run on big
inputs (see ``MAX_SPEC_LENGTH`` and ``MAX_RULE_DEPTH``).

The names of ``bpe.py`` and ``text.py`` are imported when first asked for (a module ``__getattr__``, PEP 562):
the engine, which takes only ``bpeproof.spec.types``, does not load them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from bpeproof.spec.merge import (
    MAX_RULE_DEPTH,
    MAX_SPEC_LENGTH,
    apply_rule,
    cnt,
    dec,
    rep,
    symbols,
    validate_rules,
    vocabulary,
)
from bpeproof.spec.shortest import shortest, token_strings
from bpeproof.spec.types import (
    ALPHABET_SIZE,
    BPETypeError,
    BPEValueError,
    InputTooLongError,
    InvalidCorpusError,
    InvalidRuleError,
    InvalidTextError,
    InvalidTokenError,
    Rule,
    RuleTriple,
)

__all__ = [
    "ALPHABET_SIZE",
    "MAX_RULE_DEPTH",
    "MAX_SPEC_LENGTH",
    "BPETypeError",
    "BPEValueError",
    "InputTooLongError",
    "InvalidCorpusError",
    "InvalidRuleError",
    "InvalidTextError",
    "InvalidTokenError",
    "Rule",
    "RuleTriple",
    "StreamDecoder",
    "Trace",
    "TraceStep",
    "apply_rule",
    "bits_per_token",
    "check_corpus",
    "check_special_tokens",
    "cnt",
    "compression_rate",
    "corpus_from_text",
    "count_pairs",
    "dec",
    "dec_text",
    "decode_with_specials",
    "enc",
    "enc_text",
    "enc_words",
    "encode_text",
    "encode_with_specials",
    "injection_possible",
    "is_valid_utf8",
    "pretokenize",
    "rep",
    "select_pair",
    "shortest",
    "split_words",
    "symbols",
    "text_bytes",
    "token_is_valid_utf8",
    "token_lists",
    "token_strings",
    "train",
    "train_trace",
    "validate_rules",
    "vocabulary",
]

if TYPE_CHECKING:
    from bpeproof.spec.bpe import Trace, TraceStep, check_corpus, count_pairs, enc, select_pair, train, train_trace
    from bpeproof.spec.text import (
        StreamDecoder,
        bits_per_token,
        check_special_tokens,
        compression_rate,
        corpus_from_text,
        dec_text,
        decode_with_specials,
        enc_text,
        enc_words,
        encode_text,
        encode_with_specials,
        injection_possible,
        is_valid_utf8,
        pretokenize,
        split_words,
        text_bytes,
        token_is_valid_utf8,
        token_lists,
    )

#: The module of every name imported when first asked for.
_LAZY = {
    "Trace": "bpe",
    "TraceStep": "bpe",
    "check_corpus": "bpe",
    "count_pairs": "bpe",
    "enc": "bpe",
    "select_pair": "bpe",
    "train": "bpe",
    "train_trace": "bpe",
    "StreamDecoder": "text",
    "bits_per_token": "text",
    "check_special_tokens": "text",
    "compression_rate": "text",
    "corpus_from_text": "text",
    "dec_text": "text",
    "decode_with_specials": "text",
    "enc_text": "text",
    "enc_words": "text",
    "encode_text": "text",
    "encode_with_specials": "text",
    "injection_possible": "text",
    "is_valid_utf8": "text",
    "pretokenize": "text",
    "split_words": "text",
    "text_bytes": "text",
    "token_is_valid_utf8": "text",
    "token_lists": "text",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'bpeproof.spec' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"bpeproof.spec.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
