"""The implementation against the specification, for CrossHair.

Two forms, both on small inputs (CrossHair explores paths, so the inputs are bounded):

* pairs of wrappers for ``crosshair diffbehavior`` (it has no preconditions, so each wrapper returns the
  same ``None`` outside the bounds): ``spec_merge``/``impl_merge`` and ``spec_encode``/``impl_encode``;
* the same equality as a postcondition (``post[]: __return__ == …``) for ``crosshair check``, which stops at
  the first difference.

``right_to_left_merge`` and ``right_to_left_encode`` are planted wrong variants (each merge scanning from
the right end): the CI gate requires CrossHair to find their difference, so that a "no difference"
answer for the implementation means something.
"""

from __future__ import annotations

import impl
import impl.encoder
from spec.bpe import enc_tokens
from spec.merge import merge
from spec.types import ALPHABET_SIZE, Rule

C = ALPHABET_SIZE


def _small_merge(a: int, b: int, x: list[int]) -> bool:
    return len(x) <= 5


def _small_encode_one(a: int, b: int, data: bytes) -> bool:
    return 0 <= a < C and 0 <= b < C and len(data) <= 4


def _small_encode(a1: int, b1: int, a2: int, b2: int, data: bytes) -> bool:
    return 0 <= a1 < C and 0 <= b1 < C and 0 <= a2 <= C and 0 <= b2 <= C and len(data) <= 3


def python_enc(rules: list[Rule], data: bytes) -> list[int]:
    """impl.enc on its pure-Python path: CrossHair's symbolic values cannot enter the compiled merge loop."""
    saved = impl.encoder.USE_C_LOOP
    impl.encoder.USE_C_LOOP = False
    try:
        return impl.enc(rules, data)
    finally:
        impl.encoder.USE_C_LOOP = saved


# --- diffbehavior pairs ----------------------------------------------------------------------------------------


def spec_merge(a: int, b: int, x: list[int]) -> list[int] | None:
    """spec.apply_rule for r = (a, b ↦ 257) on a short list, None outside the bounds."""
    if not _small_merge(a, b, x):
        return None
    return merge(Rule(a, b, C + 1), x)


def impl_merge(a: int, b: int, x: list[int]) -> list[int] | None:
    """impl.apply_rule under the same bounds as ``spec_merge``."""
    if not _small_merge(a, b, x):
        return None
    return impl.apply_rule(Rule(a, b, C + 1), x)


def spec_encode(a: int, b: int, data: bytes) -> list[int] | None:
    """spec.enc with R = ((a, b ↦ 256)) on short data, None outside the bounds."""
    if not _small_encode_one(a, b, data):
        return None
    return enc_tokens([Rule(a, b, C)], list(data))


def impl_encode(a: int, b: int, data: bytes) -> list[int] | None:
    """impl.enc under the same bounds as ``spec_encode``."""
    if not _small_encode_one(a, b, data):
        return None
    return python_enc([Rule(a, b, C)], data)


def _merge_from_right(rule: Rule, x: list[int]) -> list[int]:
    out: list[int] = []
    i = len(x) - 1
    while i >= 0:
        if i >= 1 and (x[i - 1], x[i]) == (rule.a, rule.b):
            out.append(rule.c)
            i -= 2
        else:
            out.append(x[i])
            i -= 1
    return out[::-1]


def right_to_left_merge(a: int, b: int, x: list[int]) -> list[int] | None:
    """A planted bug: M_r scanning from the right end, which differs on (a, a, a) with a = b."""
    if not _small_merge(a, b, x):
        return None
    return _merge_from_right(Rule(a, b, C + 1), x)


def right_to_left_encode(a: int, b: int, data: bytes) -> list[int] | None:
    """A planted bug: the merge scanning from the right end."""
    if not _small_encode_one(a, b, data):
        return None
    return _merge_from_right(Rule(a, b, C), list(data))


# --- the same equalities as contracts ---------------------------------------------------------------------------


def impl_merge_equals_spec(a: int, b: int, x: list[int]) -> list[int]:
    """impl.apply_rule = spec.apply_rule (def-merge).

    pre: _small_merge(a, b, x)
    post[]: __return__ == merge(Rule(a, b, C + 1), x)
    """
    return impl.apply_rule(Rule(a, b, C + 1), x)


def impl_encode_equals_spec(a1: int, b1: int, a2: int, b2: int, data: bytes) -> list[int]:
    """impl.enc = spec.enc (def-bpe), rules given in order.

    pre: _small_encode(a1, b1, a2, b2, data)
    post[]: __return__ == enc_tokens([Rule(a1, b1, C), Rule(a2, b2, C + 1)], list(data))
    """
    return python_enc([Rule(a1, b1, C), Rule(a2, b2, C + 1)], data)


def planted_merge_equals_spec(a: int, b: int, x: list[int]) -> list[int]:
    """The planted right-to-left merge claimed equal to the spec: CrossHair must refute it.

    pre: _small_merge(a, b, x)
    post[]: __return__ == merge(Rule(a, b, C + 1), x)
    """
    return _merge_from_right(Rule(a, b, C + 1), x)


def planted_encode_equals_spec(a1: int, b1: int, a2: int, b2: int, data: bytes) -> list[int]:
    """Two rules applied in order, each merge scanning from the right, claimed equal to the spec: must be refuted.

    pre: _small_encode(a1, b1, a2, b2, data)
    post[]: __return__ == enc_tokens([Rule(a1, b1, C), Rule(a2, b2, C + 1)], list(data))
    """
    tokens = list(data)
    for rule in (Rule(a1, b1, C), Rule(a2, b2, C + 1)):
        tokens = _merge_from_right(rule, tokens)
    return tokens
