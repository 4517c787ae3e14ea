"""Byte-level BPE on text: def-utf8, §6 (prop-token-information, prop-utf8-boundary).

The article's ``enc`` works on one byte string.  Trained tokenizers first cut a
text into words (pre-tokens) and encode each word on its own: that is the
layer ``pretokenize`` / ``enc_words`` / ``encode_text`` makes explicit.
Encoding a whole text with ``enc_text`` merges across word boundaries, exactly
as the article's definition does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence

from bpeproof.spec.bpe import enc
from bpeproof.spec.merge import dec, symbols, validate_rules, vocabulary
from bpeproof.spec.types import BPETypeError, InvalidTextError, InvalidTokenError, RuleTriple, is_int

#: A pre-tokenizer cuts a text into pieces whose concatenation is the text.
Pretokenizer = Callable[[str], list[str]]

# ---------------------------------------------------------------------------
# def-utf8: the UTF-8 forms
# ---------------------------------------------------------------------------


def is_continuation(byte: int) -> bool:
    """A continuation byte has the form 10xxxxxx (def-utf8)."""
    return byte & 0b1100_0000 == 0b1000_0000


def utf8_sequence_length(lead: int) -> int | None:
    """How many bytes the character starting with ``lead`` has, by def-utf8's four forms.

    0xxxxxxx → 1, 110xxxxx → 2, 1110xxxx → 3, 11110xxx → 4; a continuation
    byte or 11111xxx starts no character (None).
    """
    if lead & 0b1000_0000 == 0:
        return 1
    if lead & 0b1110_0000 == 0b1100_0000:
        return 2
    if lead & 0b1111_0000 == 0b1110_0000:
        return 3
    if lead & 0b1111_1000 == 0b1111_0000:
        return 4
    return None


def is_valid_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8 as RFC 3629 defines it (def-utf8, reference [4])."""
    try:
        data.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        return False
    return True


def token_is_valid_utf8(rules: Sequence[RuleTriple], token: int) -> bool:
    """Whether ⟨⟨token⟩⟩ alone is valid UTF-8 (prop-utf8-boundary: often it is not)."""
    return is_valid_utf8(symbols(validate_rules(rules), token))


def _utf8_or_error(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as error:
        raise InvalidTextError(
            f"{what} is not valid UTF-8 at byte {error.start}: {error.reason}"
        ) from None


# ---------------------------------------------------------------------------
# def-utf8: byte-level entry points on str
# ---------------------------------------------------------------------------


def _check_text(text: str) -> str:
    if not isinstance(text, str):
        raise BPETypeError(f"text must be str, not {type(text).__name__}")
    return text


def text_bytes(text: str) -> bytes:
    """The UTF-8 bytes of a text: what byte-level BPE works on (def-utf8)."""
    return _check_text(text).encode("utf-8", errors="strict")


def enc_text(rules: Sequence[RuleTriple], text: str) -> list[int]:
    """enc_R on the UTF-8 bytes of a whole text, merging across word boundaries (def-bpe, def-utf8)."""
    return enc(rules, text_bytes(text))


def dec_text(rules: Sequence[RuleTriple], tokens: Sequence[int]) -> str:
    """dec, then UTF-8 decoding of the joined bytes, never token by token (prop-utf8-boundary)."""
    return _utf8_or_error(dec(rules, tokens), "the decoded bytes")


# ---------------------------------------------------------------------------
# Pre-tokenization: a corpus is a list of words (def-bpe, rem-faster-training)
# ---------------------------------------------------------------------------

_WORDS = re.compile(r" ?\S+|\s+(?!\S)|\s+")


def split_words(text: str) -> list[str]:
    """The default pre-tokenizer: runs of non-space characters, each after at most one space, and runs of white space.

    ``"a  b"`` → ``["a", " ", " b"]``; the pieces always join back to the text.
    """
    return _WORDS.findall(_check_text(text))


def pretokenize(text: str, pretokenizer: Pretokenizer = split_words) -> list[bytes]:
    """The UTF-8 words of a text, checked to join back to it."""
    pieces = pretokenizer(_check_text(text))
    if "".join(pieces) != text:
        raise BPETypeError("the pre-tokenizer's pieces do not join back to the text")
    return [piece.encode("utf-8") for piece in pieces if piece]


def enc_words(rules: Sequence[RuleTriple], words: Sequence[bytes]) -> list[int]:
    """enc_R(w_1) · enc_R(w_2) · …: every word encoded on its own, then the token lists joined."""
    checked = validate_rules(rules)
    tokens: list[int] = []
    for word in words:
        tokens += enc(checked, word)
    return tokens


def encode_text(rules: Sequence[RuleTriple], text: str, pretokenizer: Pretokenizer = split_words) -> list[int]:
    """Byte-level BPE as trained tokenizers use it: pre-tokenize, then encode each word."""
    return enc_words(rules, pretokenize(text, pretokenizer))


def corpus_from_text(text: str, pretokenizer: Pretokenizer = split_words) -> list[bytes]:
    """The corpus (w_1, …, w_K) of def-bpe that a text gives under a pre-tokenizer."""
    return pretokenize(text, pretokenizer)


# ---------------------------------------------------------------------------
# def-utf8: special tokens
# ---------------------------------------------------------------------------


def check_special_tokens(rules: Sequence[RuleTriple], specials: Mapping[str, int]) -> dict[str, int]:
    """Special tokens are ids added apart from the rules (def-utf8): outside V_m, distinct, with non-empty names."""
    known = set(vocabulary(validate_rules(rules)))
    seen: dict[int, str] = {}
    for name, token in specials.items():
        if not isinstance(name, str) or not name:
            raise BPETypeError(f"special token name {name!r} must be a non-empty str")
        if not is_int(token):
            raise BPETypeError(f"special token {name!r} must have an int id, not {token!r}")
        if token in known:
            raise InvalidTokenError(f"special token {name!r} = {token} is already an id of the rules' vocabulary")
        if token in seen:
            raise InvalidTokenError(f"special tokens {seen[token]!r} and {name!r} share the id {token}")
        seen[token] = name
    return dict(specials)


def encode_with_specials(
    rules: Sequence[RuleTriple],
    specials: Mapping[str, int],
    text: str,
    pretokenizer: Pretokenizer = split_words,
) -> list[int]:
    """Encode a text in which the special tokens' strings stand for their ids.

    The text is cut at each special string (the leftmost occurrence, the longest
    where several start there); the pieces between are encoded with
    ``encode_text``.  ``enc`` itself never produces a special id.
    """
    table = check_special_tokens(rules, specials)
    _check_text(text)
    tokens: list[int] = []
    start = 0
    position = 0
    while position < len(text):
        names = [name for name in table if text.startswith(name, position)]
        if names:
            name = max(names, key=len)
            tokens += encode_text(rules, text[start:position], pretokenizer)
            tokens.append(table[name])
            position += len(name)
            start = position
        else:
            position += 1
    return tokens + encode_text(rules, text[start:], pretokenizer)


def decode_with_specials(rules: Sequence[RuleTriple], specials: Mapping[str, int], tokens: Sequence[int]) -> bytes:
    """dec over V_m plus the special tokens, each standing for the UTF-8 bytes of its name."""
    names = {token: name for name, token in check_special_tokens(rules, specials).items()}
    out = b""
    run: list[int] = []
    for token in tokens:
        if token in names:
            out += dec(rules, run) + names[token].encode("utf-8")
            run = []
        else:
            run.append(token)
    return out + dec(rules, run)


# ---------------------------------------------------------------------------
# def-utf8: compression rate; prop-token-information: bits per token
# ---------------------------------------------------------------------------


def compression_rate(rules: Sequence[RuleTriple], data: bytes) -> float:
    """|s| / |enc_R(s)| in bytes per token, for a non-empty s (def-utf8); always ≥ 1 (prop-bpe-length-monotone)."""
    if isinstance(data, (bytes, bytearray)) and len(data) == 0:
        raise InvalidTextError("the compression rate is defined for a non-empty byte string only")
    return len(data) / len(enc(rules, data))


def token_lists(vocab_size: int, n: int) -> int:
    """The number of token lists of length n over a vocabulary of ``vocab_size`` ids: |V|^n (prop-token-information 1).

    By the proof's recursion: one empty list; a list of length n is one of
    length n − 1 with one of |V| tokens appended.
    """
    if n == 0:
        return 1
    return token_lists(vocab_size, n - 1) * vocab_size


def injection_possible(messages: int, vocab_size: int, n: int) -> bool:
    """Whether ``messages`` elements can map injectively to token lists of length n (prop-token-information 2)."""
    return messages <= token_lists(vocab_size, n)


def bits_per_token(vocab_size: int) -> float:
    """log2 |V|: the most information one token can carry (prop-token-information, ex-bits-per-token)."""
    if not is_int(vocab_size) or vocab_size < 2:
        raise InvalidTokenError(f"vocabulary size {vocab_size!r} must be an int >= 2")
    return math.log2(vocab_size)


# ---------------------------------------------------------------------------
# prop-utf8-boundary: a streaming decoder that holds back incomplete characters
# ---------------------------------------------------------------------------


def complete_prefix(buffer: bytes) -> int:
    """How many leading bytes of ``buffer`` can be shown: all but a last character that is still incomplete.

    The last lead byte within the final four bytes says how long its character
    is (def-utf8); if fewer bytes follow it, it and its continuations wait.
    """
    for back in range(1, min(4, len(buffer)) + 1):
        byte = buffer[-back]
        if is_continuation(byte):
            continue
        need = utf8_sequence_length(byte)
        if need is not None and need > back:
            return len(buffer) - back
        return len(buffer)
    return len(buffer)


class StreamDecoder:
    """Turns tokens into text as they arrive, holding back a character cut by a token boundary (prop-utf8-boundary)."""

    def __init__(self, rules: Sequence[RuleTriple]) -> None:
        self._rules = validate_rules(rules)
        self._pending = b""
        self._offset = 0

    def feed(self, tokens: Sequence[int]) -> str:
        """The text completed by these tokens; an incomplete last character is kept for later."""
        self._pending += dec(self._rules, tokens)
        ready = complete_prefix(self._pending)
        text = self._decode(self._pending[:ready])
        self._pending = self._pending[ready:]
        return text

    def finish(self) -> str:
        """The rest; a character still incomplete at the end is an error."""
        text = self._decode(self._pending)
        self._pending = b""
        return text

    def _decode(self, data: bytes) -> str:
        try:
            text = data.decode("utf-8", errors="strict")
        except UnicodeDecodeError as error:
            raise InvalidTextError(
                f"the token stream is not valid UTF-8 at byte {self._offset + error.start}: {error.reason}"
            ) from None
        self._offset += len(data)
        return text
