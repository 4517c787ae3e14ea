"""bpeproof's executable specification of byte-level BPE.

Each name follows one definition or claim of the article; the id in its
docstring says which.  ``bpeproof.spec.contracts`` states the claims as contracts for
CrossHair.  Everything here is deliberately simple and recursive: it is the
reference that faster code is checked against, not the code to run on big
inputs (see ``MAX_SPEC_LENGTH`` and ``MAX_RULE_DEPTH``).
"""

from bpeproof.spec.bpe import Trace, TraceStep, check_corpus, count_pairs, enc, select_pair, train, train_trace
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
