"""The fast byte-level BPE encoder and decoder: enc_R (def-bpe) and dec (def-alphabet-vocab, def-merge).

The specification applies the rules one after another, each as one left-to-right
pass M_r over the whole list (def-merge, def-bpe):

    enc_R(s) = M_{r_m}( … M_{r_2}(M_{r_1}(s)) … ).

That costs O(m·n).  This module computes the same list by merging in *rank
order*: give rule j the rank j, keep for each pair (a, b) the first rule that
joins it, and repeatedly merge the adjacent pair of lowest rank, the leftmost
one among equal ranks.  The two agree for every valid rule list:

* A rule r_k only joins ids of V_{k-1} (def-merge).  Every id created later is
  new, so once rule k has run no adjacency (a_k, b_k) can form again: a merge
  only creates adjacencies with its new id c_j, and c_j ∉ V_{k-1} for j > k.
  Hence the pairs present always have ranks ≥ the rank being applied, popped
  ranks never decrease, and a second rule with the same pair never fires.
* While rank k is the lowest present, merging its pairs leftmost first is
  exactly M_{r_k}: new adjacencies involve c_k, whose pairs all have ranks > k,
  so no new rank-k pair appears; with a = b, (a a a) gives (c a), as the
  recursion of def-merge does.

The merging itself is the engine's one loop (``bpeproof.impl.merge_loop``): a flat list for
short words, a heap of (rank, position) over a linked list for long ones,
O(n log n) for any rule list, including long runs a a a a … under (a, a ↦ c).

A *whole-token shortcut* returns (t) directly for a word whose bytes are ⟨⟨t⟩⟩,
but only after proving enc_R(⟨⟨t⟩⟩) = (t) for that token (see
``Encoder.is_reachable``); the verdict is computed once and cached.

When the optional C extension ``impl/_c/_fastenc.c`` is built, words are merged
there instead, by the same rank-order method over *dense* ids (byte b is b,
the token of rule k is 256 + k; a table maps them back to the rule ids, which
may be of any size).  The pure-Python loops above stay the reference and the
fallback: an ``Encoder`` built with ``c_loop=False`` (or a model built so, see
``bpeproof.impl.models``) uses them; they are also used without the extension and
for rule lists too long for 32-bit dense ids.

Only ``bpeproof.spec.types`` is imported from the specification: the tests check this
module against ``spec.enc`` and ``spec.dec``, which would be void if it called them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bpeproof.impl.merge_loop import SHORT_WORD, merge_long, merge_short
from bpeproof.impl.word_cache import drop_older_half
from bpeproof.spec.types import (
    ALPHABET_SIZE,
    BPETypeError,
    InvalidRuleError,
    InvalidTokenError,
    Rule,
    RuleTriple,
    is_int,
)

try:
    from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]
except ImportError:  # the C extension is optional: the pure-Python loops give the same ids
    _fastenc = None

__all__ = ["HAVE_C_LOOP", "SHORT_WORD", "Encoder", "check_rules", "dec", "enc"]

#: Whether the C merge loop (``impl/_c/_fastenc.c``) is built.
HAVE_C_LOOP: bool = _fastenc is not None

#: The C loop numbers tokens densely with 32-bit ints: at most this many rules, words below this many bytes.
C_RULE_LIMIT = 2**31 - 512
C_WORD_LIMIT = 2**31 - 1



def check_rules(rules: Sequence[RuleTriple]) -> list[Rule]:
    """Check that ``rules`` is a valid rule list r_1..r_m, r_j over V_{j-1} (def-merge, def-bpe).

    Raises the same error classes as ``spec.validate_rules`` for the same inputs,
    naming the rule by its index (from 0): ``BPETypeError`` for a value that is
    not a sequence of int triples, ``InvalidRuleError`` for a part outside
    V_{j-1}, a negative new id, or a new id already in V_{j-1}; but it has no depth
    limit, so a list more than ``MAX_RULE_DEPTH`` merges deep, which
    ``spec.validate_rules`` refuses with ``InputTooLongError``, is accepted.
    """
    if isinstance(rules, (str, bytes)) or not isinstance(rules, Sequence):
        raise BPETypeError(f"rules must be a sequence of (a, b, c) triples, not {type(rules).__name__}")
    known = set(range(ALPHABET_SIZE))
    checked: list[Rule] = []
    for index, rule in enumerate(rules):
        if not isinstance(rule, tuple) or len(rule) != 3:
            raise BPETypeError(f"rule {index} must be an (a, b, c) triple of ints, not {rule!r}")
        if not (is_int(rule[0]) and is_int(rule[1]) and is_int(rule[2])):
            raise BPETypeError(f"rule {index} {tuple(rule)!r} must hold three ints")
        a, b, c = int(rule[0]), int(rule[1]), int(rule[2])
        if a not in known:
            raise InvalidRuleError(f"rule {index} {(a, b, c)!r}: part a = {a} is not in the vocabulary"
                                   f" built by the rules before it")
        if b not in known:
            raise InvalidRuleError(f"rule {index} {(a, b, c)!r}: part b = {b} is not in the vocabulary"
                                   f" built by the rules before it")
        if c < 0:
            raise InvalidRuleError(f"rule {index} {(a, b, c)!r}: new id c = {c} is negative")
        if c in known:
            raise InvalidRuleError(f"rule {index} {(a, b, c)!r}: new id c = {c} is already in the vocabulary")
        known.add(c)
        checked.append(Rule(a, b, c))
    return checked


class Encoder:
    """A compiled rule list R: enc_R and dec with a bounded word cache (def-bpe, def-alphabet-vocab).

    ``encode(data)`` is enc_R on ``data`` as one sequence, exactly ``spec.enc``;
    ``encode_word(word)`` is the same value for one pre-token, cached by the
    word's bytes (the cache belongs to this rule list, so the bytes are the
    whole key).  ``decode`` is dec over V_m.
    """

    __slots__ = (
        "_by_bytes",
        "_bytes",
        "_cache",
        "_cache_size",
        "_duplicates",
        "_fast",
        "_merges",
        "_parts",
        "_rank",
        "_reachable",
        "_rules",
        "_stride",
        "_use_c",
    )

    def __init__(self, rules: Sequence[RuleTriple], *, cache_size: int = 1 << 16, c_loop: bool = True) -> None:
        """Check and compile ``rules``; ``cache_size`` bounds the number of cached words (0 disables the cache);
        ``c_loop``: merge in the C loop when it is built (False: always in the pure-Python loops)."""
        if not is_int(cache_size) or cache_size < 0:
            raise BPETypeError(f"cache_size must be a non-negative int, not {cache_size!r}")
        checked = check_rules(rules)
        self._rules: tuple[Rule, ...] = tuple(checked)
        largest = max((rule.c for rule in checked), default=ALPHABET_SIZE - 1)
        # A pair (a, b) is keyed by the single int a·stride + b, cheaper to hash than a tuple, and its first
        # rule (rank k, new id c) is stored as the code k·stride + c: codes compare as ranks do, and
        # code % stride is c.  stride exceeds every id.
        self._stride = max(largest, ALPHABET_SIZE - 1) + 1
        stride = self._stride
        merges: dict[int, int] = {}
        parts: dict[int, tuple[int, int]] = {}
        rank: dict[int, int] = {}
        token_bytes: dict[int, bytes] = {byte: bytes([byte]) for byte in range(ALPHABET_SIZE)}
        for index, (a, b, c) in enumerate(checked):
            # The first rule joining a pair is the only one that can fire (see the module docstring).
            merges.setdefault(a * stride + b, index * stride + c)
            parts[c] = (a, b)
            rank[c] = index
            token_bytes[c] = token_bytes[a] + token_bytes[b]
        self._merges = merges
        self._parts = parts
        self._rank = rank
        self._bytes = token_bytes
        self._by_bytes: dict[bytes, int] | None = None
        self._duplicates: dict[bytes, list[int]] = {}
        self._reachable: dict[int, bool] = {}
        self._cache: dict[bytes, tuple[int, ...]] = {}
        self._cache_size = cache_size
        self._use_c = c_loop and _fastenc is not None and len(checked) <= C_RULE_LIMIT
        self._fast: Any = None  # the C merger, built on first use

    def c_merger(self, byte_ids: Sequence[int] | None = None) -> Any:
        """The rules compiled for ``impl/_c/_fastenc.c``, reporting byte b as ``byte_ids[b]``; None without the C loop.

        Dense ids: byte b is b and the token of rule k is 256 + k; the merger
        maps them back to the rule ids (and the byte ids) when it reports them.
        """
        if not self._use_c:
            return None
        dense = {byte: byte for byte in range(ALPHABET_SIZE)}
        parts_a: list[int] = []
        parts_b: list[int] = []
        outputs = list(range(ALPHABET_SIZE)) if byte_ids is None else list(byte_ids)
        for index, (a, b, c) in enumerate(self._rules):
            parts_a.append(dense[a])
            parts_b.append(dense[b])
            dense[c] = ALPHABET_SIZE + index
            outputs.append(c)
        return _fastenc.Merger(parts_a, parts_b, outputs)

    # -- the vocabulary (def-alphabet-vocab, def-merge, prop-bpe-vocab-size) ----------------------------

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rule list r_1..r_m, in order."""
        return self._rules

    @property
    def vocabulary_size(self) -> int:
        """|V_m| = 256 + m (prop-bpe-vocab-size)."""
        return ALPHABET_SIZE + len(self._rules)

    def __contains__(self, token: object) -> bool:
        return is_int(token) and token in self._bytes

    def token_bytes(self, token: int) -> bytes:
        """⟨⟨t⟩⟩ (def-alphabet-vocab): the bytes a token stands for."""
        if not is_int(token):
            raise BPETypeError(f"token must be an int, not {type(token).__name__}")
        try:
            return self._bytes[token]
        except KeyError:
            raise InvalidTokenError(f"token {token} is not in the vocabulary of the rules") from None

    def token_table(self) -> dict[int, bytes]:
        """t ↦ ⟨⟨t⟩⟩ for every t in V_m (a copy)."""
        return dict(self._bytes)

    def parts(self, token: int) -> tuple[int, int] | None:
        """(a, b) for the rule (a, b ↦ token), or None for a byte of V0."""
        self.token_bytes(token)
        return self._parts.get(token)

    # -- dec (def-alphabet-vocab) ---------------------------------------------------------------------------

    def decode(self, tokens: Iterable[int]) -> bytes:
        """dec(x) = ⟨⟨t1⟩⟩⟨⟨t2⟩⟩…⟨⟨tn⟩⟩ (def-alphabet-vocab), joined once.

        ``BPETypeError`` for an item that is not an int, ``InvalidTokenError``
        (naming its index) for an id outside V_m.
        """
        if isinstance(tokens, (str, bytes)):
            raise BPETypeError(f"tokens must be a list of ints, not {type(tokens).__name__}")
        items = tokens if isinstance(tokens, (list, tuple)) else list(tokens)
        if not set(map(type, items)) <= {int}:
            for index, token in enumerate(items):
                if not is_int(token):
                    raise BPETypeError(f"tokens[{index}] must be an int, not {type(token).__name__}")
            items = [int(token) for token in items]
        try:
            return b"".join(map(self._bytes.__getitem__, items))
        except KeyError:
            for index, token in enumerate(items):
                if token not in self._bytes:
                    raise InvalidTokenError(
                        f"tokens[{index}] = {token} is not in the vocabulary of the rules"
                    ) from None
            raise  # pragma: no cover - every KeyError comes from some token

    # -- enc (def-bpe) --------------------------------------------------------------------------------------

    def encode(self, data: bytes | bytearray) -> list[int]:
        """enc_R(s) on ``data`` as one sequence (def-bpe): the value of ``spec.enc``, in O(n log n)."""
        if not isinstance(data, (bytes, bytearray)):
            raise BPETypeError(f"data must be bytes, not {type(data).__name__}")
        return list(self.encode_word_uncached(bytes(data)))

    def encode_word(self, word: bytes | bytearray) -> tuple[int, ...]:
        """enc_R(w) for one pre-token, served from the word cache when the word was seen before."""
        if not isinstance(word, bytes):
            if not isinstance(word, bytearray):
                raise BPETypeError(f"word must be bytes, not {type(word).__name__}")
            word = bytes(word)
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        result = self.encode_word_uncached(word)
        if self._cache_size:
            cache = self._cache
            if len(cache) >= self._cache_size:
                drop_older_half(cache)
            cache[word] = result
        return result

    def clear_cache(self) -> None:
        """Forget every cached word (the reachability verdicts are facts about R and stay)."""
        self._cache.clear()

    def encode_word_uncached(self, word: bytes) -> tuple[int, ...]:
        """enc_R(w) without the word cache: the C loop, or the whole-token shortcut where proven, else rank order."""
        if self._use_c and len(word) < C_WORD_LIMIT:
            fast = self._fast
            if fast is None:
                fast = self._fast = self.c_merger()
            result: tuple[int, ...] = fast.encode(word)
            return result
        token = self.whole_token(word)
        if token is not None:
            return (token,)
        ids = list(word)
        if len(ids) <= SHORT_WORD:
            return tuple(self._merge_short(ids))
        return tuple(self._merge_long(ids))

    def whole_token(self, word: bytes) -> int | None:
        """The token t with ⟨⟨t⟩⟩ = word and enc_R(word) = (t), or None when there is none."""
        by_bytes = self._by_bytes
        if by_bytes is None:
            by_bytes = self._index_bytes()
        token = by_bytes.get(word)
        if token is None:
            return None
        if self.is_reachable(token):
            return token
        for other in self._duplicates.get(word, ()):
            if self.is_reachable(other):
                return other
        return None

    def _index_bytes(self) -> dict[bytes, int]:
        by_bytes: dict[bytes, int] = {}
        duplicates = self._duplicates
        for token, data in self._bytes.items():
            first = by_bytes.setdefault(data, token)
            if first != token:
                # Several ids may stand for one string (ex-same-string); at most one is enc_R of it.
                duplicates.setdefault(data, []).append(token)
        self._by_bytes = by_bytes
        return by_bytes

    # -- rank-order merging ---------------------------------------------------------------------------------

    def _code(self, x: int, y: int) -> int | None:
        """The code of the first rule joining (x, y): rank·stride + c, ordered as the rank; None if none."""
        return self._merges.get(x * self._stride + y)

    def _join(self, x: int, y: int, code: int) -> int:
        return code % self._stride

    def _merge_short(self, ids: list[int]) -> list[int]:
        """Rank-order merging of a short word by the engine's flat-list loop (``merge_loop.merge_short``)."""
        return merge_short(ids, self._code, self._join)

    def _merge_long(self, ids: list[int]) -> list[int]:
        """Rank-order merging of a long word by the engine's heap loop (``impl.merge_loop.merge_long``): O(n log n)."""
        return merge_long(ids, self._code, self._join)

    # -- the whole-token shortcut: which tokens are their own encoding ---------------------------------------

    def is_reachable(self, token: int) -> bool:
        """Whether enc_R(⟨⟨t⟩⟩) = (t): the token is what BPE makes of its own bytes.

        A byte is.  A token c made by rule k = (a, b ↦ c) is exactly when
        (1) rule k is the first rule joining (a, b) (a later one never fires),
        (2) a and b are each reachable, and (3) encoding ⟨⟨a⟩⟩⟨⟨b⟩⟩ with the
        rules before k never merges across the boundary between them.  Given
        (2), before any cross merge the left part evolves as enc of ⟨⟨a⟩⟩ alone,
        so its last token runs up a's right spine: a spine node x (made at rank
        cx, merged into its parent at rank ex) ends the left part during the
        passes cx < r ≤ ex; likewise b's left spine heads the right part.  In
        pass r a cross merge happens iff the first rule joining the boundary
        pair (x, y) has rank r, x is not consumed on its left in that pass
        (r < ex: within one pass M_r works left to right), and y is present
        (cy < r ≤ ey; a merge of y with its right neighbour in the same pass
        comes later in the scan).  The check walks both spines in time order:
        O(depth(a) + depth(b)).  Verdicts are cached.
        """
        memo = self._reachable
        known = memo.get(token)
        if known is not None:
            return known
        self.token_bytes(token)
        parts = self._parts
        stack = [token]
        while stack:
            current = stack[-1]
            if current in memo:
                stack.pop()
                continue
            split = parts.get(current)
            if split is None:
                memo[current] = True
                stack.pop()
                continue
            a, b = split
            pending = [part for part in (a, b) if part not in memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            rank = self._rank[current]
            memo[current] = (
                self._merges[a * self._stride + b] % self._stride == current
                and memo[a]
                and memo[b]
                and self._no_cross_merge(a, b, rank)
            )
        return memo[token]

    def _spine(self, token: int, end: int, side: int) -> list[tuple[int, int, int]]:
        """The right (side 1) or left (side 0) spine of a token's merge tree, bottom up, as (id, made, merged)."""
        spine: list[tuple[int, int, int]] = []
        parts = self._parts
        rank = self._rank
        current = token
        while True:
            made = rank.get(current, -1)
            spine.append((current, made, end))
            split = parts.get(current)
            if split is None:
                break
            end = made
            current = split[side]
        spine.reverse()
        return spine

    def _no_cross_merge(self, a: int, b: int, k: int) -> bool:
        """Condition (3) of ``is_reachable``: no rule before k joins ⟨⟨a⟩⟩'s end to ⟨⟨b⟩⟩'s start."""
        lefts = self._spine(a, k, 1)
        rights = self._spine(b, k, 0)
        get = self._merges.get
        stride = self._stride
        i = j = 0
        while i < len(lefts) and j < len(rights):
            x, made_x, end_x = lefts[i]
            y, made_y, end_y = rights[j]
            found = get(x * stride + y)
            if found is not None:
                r = found // stride
                if made_x < r < end_x and made_y < r <= end_y:
                    return False
            if end_x < end_y:
                i += 1
            elif end_y < end_x:
                j += 1
            else:
                i += 1
                j += 1
        return True


def enc(rules: Sequence[RuleTriple], data: bytes | bytearray, *, c_loop: bool = True) -> list[int]:
    """enc_R(s) (def-bpe): the rules applied in list order to ``data`` as one sequence; equal to ``spec.enc``.

    Unlike the specification it has no length limit and runs in O(n log n); ``c_loop``: as ``Encoder``'s.
    Errors: ``BPETypeError`` / ``InvalidRuleError`` for the rules (as
    ``check_rules``), ``BPETypeError`` when ``data`` is not bytes.
    """
    encoder = Encoder(rules, cache_size=0, c_loop=c_loop)
    return encoder.encode(data)


def dec(rules: Sequence[RuleTriple], tokens: Sequence[int]) -> bytes:
    """dec over V_m (def-alphabet-vocab); equal to ``spec.dec``, without its length limit.

    Errors: as ``check_rules`` for the rules, ``BPETypeError`` for ``tokens``
    that are not a sequence of ints, ``InvalidTokenError`` for an id outside V_m.
    """
    encoder = Encoder(rules, cache_size=0)
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise BPETypeError(f"tokens must be a list of ints, not {type(tokens).__name__}")
    return encoder.decode(tokens)
