"""Data types shared by the specification and every implementation checked against it.

This module holds only data: the merge rule, the alphabet size and the error
classes.  It is the one part of ``spec`` that an implementation may import; an
implementation that calls the specification's functions could not be checked
against them.
"""

from __future__ import annotations

from typing import NamedTuple

#: |Σ| for byte-level BPE (def-alphabet-vocab, def-utf8): the base vocabulary V0 is 0..255.
ALPHABET_SIZE = 256


class Rule(NamedTuple):
    """A merge rule r = (a, b ↦ c) (def-merge): the adjacent pair a, b becomes the new id c."""

    a: int
    b: int
    c: int


#: A rule as the public functions accept it: a ``Rule`` or a plain (a, b, c) triple of ints.
RuleTriple = tuple[int, int, int]


def is_int(value: object) -> bool:
    """An int that is not a bool: ``True`` is no token id, count or length, though Python calls it an int."""
    return isinstance(value, int) and not isinstance(value, bool)


class BPEValueError(ValueError):
    """A value the definitions do not allow; the message names the offending item."""


class InvalidRuleError(BPEValueError):
    """A rule list that is not a proper list of merge rules over V_{j-1} (def-merge, def-bpe)."""


class InvalidCorpusError(BPEValueError):
    """A corpus that is not a list of K ≥ 1 words in Σ⁺ (def-bpe)."""


class InvalidTokenError(BPEValueError):
    """A token id that is not in the vocabulary it is decoded against (def-alphabet-vocab)."""


class InvalidTextError(BPEValueError):
    """Bytes that are not valid UTF-8 where text is required (def-utf8)."""


class InputTooLongError(BPEValueError):
    """An input longer than a recursive definition can evaluate within Python's stack."""


class BPETypeError(TypeError):
    """An argument of the wrong type; the message names the argument and the type found."""
