"""Checks of a tokenizer's ids that the constructor and the file reader share: byte ids and special tokens."""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence

from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError, InvalidTokenError, is_int

__all__ = ["check_byte_ids", "check_special_tokens"]



def check_byte_ids(byte_ids: Sequence[int] | None, new_ids: Container[int] = ()) -> tuple[int, ...] | None:
    """256 distinct non-negative ints, none in ``new_ids`` (the rules' new ids); None for the identity."""
    if byte_ids is None:
        return None
    if isinstance(byte_ids, (str, bytes)) or not isinstance(byte_ids, Sequence):
        raise BPETypeError(f"byte_ids must be a sequence of 256 ints, not {type(byte_ids).__name__}")
    if len(byte_ids) != ALPHABET_SIZE or not all(is_int(x) for x in byte_ids):
        raise BPETypeError("byte_ids must hold exactly 256 ints")
    values = tuple(int(x) for x in byte_ids)
    owner: dict[int, int] = {}
    for byte, token in enumerate(values):
        if token < 0:
            raise BPEValueError(f"byte_ids[{byte}] = {token} is negative; ids are non-negative")
        if token in owner:
            raise BPEValueError(f"byte_ids gives the id {token} to the bytes {owner[token]} and {byte}")
        owner[token] = byte
        if token in new_ids:
            raise BPEValueError(f"byte_ids[{byte}] = {token} is also the new id of a rule")
    return None if values == tuple(range(ALPHABET_SIZE)) else values


def check_special_tokens(special_tokens: Mapping[str, int] | None, vocabulary: Container[int]) -> dict[str, int]:
    """Special tokens are ids apart from the rules: outside V_m, distinct, named by non-empty strings (def-utf8)."""
    if special_tokens is None:
        return {}
    if not isinstance(special_tokens, Mapping):
        raise BPETypeError(f"special_tokens must be a mapping of str to int, not {type(special_tokens).__name__}")
    seen: dict[int, str] = {}
    for name, token in special_tokens.items():
        if not isinstance(name, str) or not name:
            raise BPETypeError(f"special token name {name!r} must be a non-empty str")
        if not is_int(token):
            raise BPETypeError(f"special token {name!r} must have an int id, not {token!r}")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise BPEValueError(f"special token name {name!r} is not encodable as UTF-8") from None
        if token in vocabulary:
            raise InvalidTokenError(f"special token {name!r} = {token} is already an id of the rules' vocabulary")
        if token in seen:
            raise InvalidTokenError(f"special tokens {seen[token]!r} and {name!r} share the id {token}")
        seen[token] = name
    return {name: int(token) for name, token in special_tokens.items()}
