"""Vocabularies, decoding and the merge step: def-alphabet-vocab and def-merge.

Every function here is written the way the article defines it: by recursion on
the length of the token list, one case per case of the definition.  That makes
them slow and bounded by Python's recursion limit; see ``MAX_SPEC_LENGTH`` and
``MAX_RULE_DEPTH``.

Each recursive definition is written "open": its recursive call goes through the
keyword argument ``rec``, which is the function itself unless one is given.  So
``merge(rule, x)`` is literally ``merge(rule, x, rec=merge)``, and
``merge(rule, x, rec=h)`` is one unfolding of def-merge with the recursive call
answered by ``h``.  ``bpeproof.proofs_tests.proofs.induction`` passes the induction hypothesis as ``h`` and
proves the article's lemmas for every length on this very code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from bpeproof.spec.types import (
    ALPHABET_SIZE,
    BPETypeError,
    InputTooLongError,
    InvalidRuleError,
    InvalidTokenError,
    Rule,
    RuleTriple,
    is_int,
)

#: The longest token list the recursive definitions accept.  Deeper recursion
#: would hit Python's default recursion limit of 1000 frames.
MAX_SPEC_LENGTH = 800

#: The deepest token a rule list may make (``validate_rules`` refuses deeper ones): a byte has depth 0, the new id
#: of (a, b ↦ c) 1 + the larger depth of a and b.  ``symbols`` recurses once per level, and ``dec`` spells its last
#: token at the bottom of its recursion on the token list, so the frames a call needs add up.  Measured on
#: CPython 3.11 (the smallest recursion limit, above the caller's depth, at which the call returns), for n tokens
#: or bytes and tokens of depth d ≥ 1: ``dec`` n + d + 6 (one more through ``decode_with_specials`` or
#: ``StreamDecoder``); ``symbols`` d + 3; ``shortest`` d + 6; ``enc`` at most n + 4, whatever the depth.  So with
#: n ≤ ``MAX_SPEC_LENGTH`` = 800 and d ≤ 64 the deepest call takes 871 of the default limit of 1000 frames and
#: leaves 129 to its caller (a test that pytest runs through Hypothesis is 48 deep).  Real vocabularies are far
#: shallower: GPT-2's 50,000 merges reach depth 8.
MAX_RULE_DEPTH = 64


# ---------------------------------------------------------------------------
# Checking arguments (def-merge: a rule is over V_{j-1}; def-alphabet-vocab: V0 = Σ)
# ---------------------------------------------------------------------------



def validate_rules(rules: Sequence[RuleTriple]) -> list[Rule]:
    """Check that ``rules`` is a list of merge rules r_1..r_m, r_j over V_{j-1} (def-merge, def-bpe).

    V_0 is the byte alphabet 0..255.  Rule j (counted from 0 in messages) must
    join two ids of V_{j-1} and introduce an id c that is not in V_{j-1}; c may
    be any non-negative integer, and two rules may join the same pair.
    Returns the rules as ``Rule`` values.

    A rule whose new id is more than ``MAX_RULE_DEPTH`` merges deep raises ``InputTooLongError``: the recursive
    definitions could not spell it within Python's recursion limit.  So does one whose new id stands for more
    than ``MAX_SPEC_LENGTH`` bytes (64 doublings would make a token of 2**64 bytes, which no function could spell):
    the specification takes byte strings of at most that length, in and out.
    """
    if isinstance(rules, (str, bytes)) or not isinstance(rules, Sequence):
        raise BPETypeError(f"rules must be a sequence of (a, b, c) triples, not {type(rules).__name__}")
    known = set(range(ALPHABET_SIZE))
    depth: dict[int, int] = {}  # the depth of each new id; a byte's is 0
    length: dict[int, int] = {}  # |⟨⟨c⟩⟩| of each new id; a byte's is 1
    checked: list[Rule] = []
    for index, rule in enumerate(rules):
        if not isinstance(rule, tuple) or len(rule) != 3:
            raise BPETypeError(f"rule {index} must be an (a, b, c) triple of ints, not {rule!r}")
        if not all(is_int(part) for part in rule):
            raise BPETypeError(f"rule {index} {tuple(rule)!r} must hold three ints")
        a, b, c = (int(part) for part in rule)
        for name, part in (("a", a), ("b", b)):
            if part not in known:
                raise InvalidRuleError(
                    f"rule {index} {(a, b, c)!r}: part {name} = {part} is not in the vocabulary"
                    f" built by the rules before it"
                )
        if c < 0:
            raise InvalidRuleError(f"rule {index} {(a, b, c)!r}: new id c = {c} is negative")
        if c in known:
            raise InvalidRuleError(
                f"rule {index} {(a, b, c)!r}: new id c = {c} is already in the vocabulary"
            )
        depth[c] = 1 + max(depth.get(a, 0), depth.get(b, 0))
        if depth[c] > MAX_RULE_DEPTH:
            raise InputTooLongError(
                f"rule {index} {(a, b, c)!r}: new id c = {c} is {depth[c]} merges deep; the recursive"
                f" specification evaluates tokens at most {MAX_RULE_DEPTH} deep (MAX_RULE_DEPTH; use the"
                f" implementation in impl for deeper rule lists)"
            )
        length[c] = length.get(a, 1) + length.get(b, 1)
        if length[c] > MAX_SPEC_LENGTH:
            raise InputTooLongError(
                f"rule {index} {(a, b, c)!r}: new id c = {c} stands for {length[c]} bytes; the recursive"
                f" specification spells tokens of at most {MAX_SPEC_LENGTH} bytes (MAX_SPEC_LENGTH; use the"
                f" implementation in impl for longer ones)"
            )
        known.add(c)
        checked.append(Rule(a, b, c))
    return checked


def vocabulary(rules: Sequence[Rule]) -> list[int]:
    """V_m = Σ ∪ {c_1, …, c_m} for a valid rule list (def-merge); |V_m| = 256 + m (prop-bpe-vocab-size)."""
    return list(range(ALPHABET_SIZE)) + [rule.c for rule in rules]


def check_tokens(tokens: Sequence[int], what: str = "tokens") -> list[int]:
    """``tokens`` as a list of ints (``BPETypeError`` naming the first entry that is not one): the check every
    entry point of the specification makes on a token list it is given."""
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise BPETypeError(f"{what} must be a list of ints, not {type(tokens).__name__}")
    for index, token in enumerate(tokens):
        if not is_int(token):
            raise BPETypeError(f"{what}[{index}] must be an int, not {type(token).__name__}")
    if len(tokens) > MAX_SPEC_LENGTH:
        raise InputTooLongError(
            f"{what} has {len(tokens)} items; the recursive specification evaluates at most"
            f" {MAX_SPEC_LENGTH} (use the implementation in impl for long inputs)"
        )
    return list(tokens)


# ---------------------------------------------------------------------------
# def-alphabet-vocab: ⟨⟨t⟩⟩ and dec
# ---------------------------------------------------------------------------


#: The recursive call of ``symbols``: ⟨⟨t⟩⟩ over V_j, the vocabulary of the first j rules of the same list.
SymbolsCall = Callable[[Sequence[Rule], int, int], bytes]


def symbols(rules: Sequence[Rule], token: int, before: int | None = None, *, rec: SymbolsCall | None = None) -> bytes:
    """⟨⟨t⟩⟩, the bytes a token stands for (def-alphabet-vocab, def-merge), over V_j of the first j = ``before`` rules.

    ⟨⟨a⟩⟩ = a for a byte a of V0; ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩ for the rule (a, b ↦ c), the two parts
    spelled over the vocabulary of the rules before it: for the rule at index i, r_{i+1}, that is V_i, the
    first i rules of the same list (an index, not a copy).  ``before`` None means all the rules.  The rule list
    must be valid (see ``validate_rules``, which also bounds the recursion by ``MAX_RULE_DEPTH``).  ``rec`` is
    the recursive call (``symbols`` itself unless given).
    """
    spell = symbols if rec is None else rec
    end = len(rules) if before is None else before
    for index in range(end - 1, -1, -1):
        rule = rules[index]
        if rule.c == token:
            return spell(rules, rule.a, index) + spell(rules, rule.b, index)
    if 0 <= token < ALPHABET_SIZE:
        return bytes([token])
    raise InvalidTokenError(f"token {token} is not in the vocabulary of the given rules")


class Concatenable(Protocol):
    """A value of a monoid under ``+``: bytes (Σ*), or tuples of atoms (the free monoid of the induction proofs)."""

    def __add__(self: S, other: S, /) -> S: ...


S = TypeVar("S", bound=Concatenable)

#: The recursive call of ``dec_over``: dec(y) over the same vocabulary.
DecCall = Callable[[Callable[[int], S], list[int], S], S]


def dec_over(spell: Callable[[int], S], tokens: list[int], empty: S, *, rec: DecCall[S] | None = None) -> S:
    """dec(x) = ⟨⟨t1⟩⟩ ⟨⟨t2⟩⟩ … ⟨⟨tn⟩⟩ over any vocabulary (V, ⟨⟨·⟩⟩) (def-alphabet-vocab), by recursion on x.

    dec(ε) = ε;  dec(t1 y) = ⟨⟨t1⟩⟩ · dec(y).

    ``spell`` is ⟨⟨·⟩⟩ and ``empty`` is ε: for byte-level BPE, ``symbols`` of a rule list and ``b""``.
    ``rec`` is the recursive call (``dec_over`` itself unless given).
    """
    if not tokens:
        return empty
    dec_rest = dec_over if rec is None else rec
    return spell(tokens[0]) + dec_rest(spell, tokens[1:], empty)


def dec_tokens(rules: Sequence[Rule], tokens: list[int]) -> bytes:
    """dec(x) = ⟨⟨t1⟩⟩ ⟨⟨t2⟩⟩ … ⟨⟨tn⟩⟩, dec(ε) = ε (def-alphabet-vocab) over V_m of ``rules``.

    This is ``dec_over`` with ⟨⟨·⟩⟩ = ``symbols(rules, ·)`` and ε = ``b""``.
    """
    return dec_over(lambda token: symbols(rules, token), tokens, b"")


def dec(rules: Sequence[RuleTriple], tokens: Sequence[int]) -> bytes:
    """dec over the vocabulary V_m of ``rules`` (def-alphabet-vocab), with its arguments checked."""
    checked = validate_rules(rules)
    token_list = check_tokens(tokens)
    known = set(vocabulary(checked))
    for index, token in enumerate(token_list):
        if token not in known:
            raise InvalidTokenError(f"tokens[{index}] = {token} is not in the vocabulary of the rules")
    return dec_tokens(checked, token_list)


# ---------------------------------------------------------------------------
# def-merge: M_r, rep_r and cnt
# ---------------------------------------------------------------------------


class Steps:
    """A step counter for prop-bpe-training-cost: the functions given one add one step per case they evaluate."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


#: The recursive calls of ``merge``, ``rep_tokens`` and ``cnt_tokens``, with their own parameters.
MergeCall = Callable[[Rule, list[int], "Steps | None"], list[int]]
RepCall = Callable[[Rule, list[int]], int]
CntCall = Callable[[list[int], int, int], int]


def merge(rule: Rule, tokens: list[int], steps: Steps | None = None, *, rec: MergeCall | None = None) -> list[int]:
    """M_r (def-merge), case for case.

    M_r(ε) = ε;  M_r(t1) = (t1);
    M_r(t1 t2 u) = c · M_r(u)       if (t1, t2) = (a, b)
                 = t1 · M_r(t2 u)   otherwise.

    ``rec`` is the recursive call M_r(·): ``merge`` itself unless given (see the module docstring).
    ``steps``, when given, counts one step per case evaluated (one comparison and one write).
    """
    if steps is not None:
        steps.count += 1
    m_r = merge if rec is None else rec
    if len(tokens) == 0:
        return []
    if len(tokens) == 1:
        return [tokens[0]]
    t1, t2, u = tokens[0], tokens[1], tokens[2:]
    if (t1, t2) == (rule.a, rule.b):
        return [rule.c] + m_r(rule, u, steps)
    return [t1] + m_r(rule, [t2] + u, steps)


def rep_tokens(rule: Rule, tokens: list[int], *, rec: RepCall | None = None) -> int:
    """rep_r(x), the number of replacements M_r makes, by the same cases as M_r (def-merge).

    rep_r(ε) = rep_r(t1) = 0;  rep_r(t1 t2 u) = 1 + rep_r(u) if (t1, t2) = (a, b),
    rep_r(t2 u) otherwise.  ``rec`` is the recursive call (``rep_tokens`` itself unless given).
    """
    rep_r = rep_tokens if rec is None else rec
    if len(tokens) <= 1:
        return 0
    t1, t2, u = tokens[0], tokens[1], tokens[2:]
    if (t1, t2) == (rule.a, rule.b):
        return 1 + rep_r(rule, u)
    return rep_r(rule, [t2] + u)


def cnt_tokens(tokens: list[int], a: int, b: int, *, rec: CntCall | None = None) -> int:
    """cnt_x(a, b) = #{i : 1 ≤ i < n, (t_i, t_{i+1}) = (a, b)} (def-merge): overlapping occurrences count.

    By recursion on x: cnt_x = 0 for |x| ≤ 1;  cnt_{t1 t2 u} = [(t1, t2) = (a, b)] + cnt_{t2 u}.
    ``rec`` is the recursive call (``cnt_tokens`` itself unless given).
    """
    cnt_rest = cnt_tokens if rec is None else rec
    if len(tokens) <= 1:
        return 0
    here = 1 if (tokens[0], tokens[1]) == (a, b) else 0
    return here + cnt_rest(tokens[1:], a, b)


def _check_rule(rule: Rule) -> Rule:
    if not isinstance(rule, tuple) or len(rule) != 3 or not all(is_int(p) for p in rule):
        raise BPETypeError(f"rule must be an (a, b, c) triple of ints, not {rule!r}")
    return Rule(*rule)


def apply_rule(rule: Rule, tokens: Sequence[int]) -> list[int]:
    """M_r(x) (def-merge) with its arguments checked; see ``merge`` for the recursion."""
    return merge(_check_rule(rule), check_tokens(tokens))


def rep(rule: Rule, tokens: Sequence[int]) -> int:
    """rep_r(x) (def-merge) with its arguments checked; see ``rep_tokens``."""
    return rep_tokens(_check_rule(rule), check_tokens(tokens))


def cnt(tokens: Sequence[int], a: int, b: int) -> int:
    """cnt_x(a, b) (def-merge) with its arguments checked; see ``cnt_tokens``."""
    if not (is_int(a) and is_int(b)):
        raise BPETypeError(f"the pair must be two ints, not ({a!r}, {b!r})")
    return cnt_tokens(check_tokens(tokens), a, b)
