"""Planted text → ids ports of a tiktoken rank file, for ``bpeproof check --tokenizer``.

``Port`` is a correct pure-Python port of tiktoken's encoding (pre-tokenize with the
pattern, a whole piece that is a token is that token, otherwise merge the adjacent parts
whose joined bytes have the lowest rank; past 256 bytes, by a heap of the pairs, as fast ports do).  Each
planted port differs from it in one line,
a mistake real ports make.  The vocabulary is the file named by the environment variable
``BPEPROOF_CHECK_VOCAB`` (the checker sets it for the process under test; a tiktoken rank
file, optionally gzip-compressed), the pattern ``BPEPROOF_CHECK_PATTERN`` or cl100k's.

=================================  =====================================================================
port (``ports:<name>``)            the one-line difference
=================================  =====================================================================
encode_ws_no_lookahead             ``\\s+(?!\\S)`` written ``\\s+``: the space before a word stays with the run
encode_case_sensitive              contractions ``'(?:[sdmt]|ll|ve|re)`` without ``(?i:…)``: ``'S`` splits
encode_digits_1_4                  ``\\p{N}{1,3}`` written ``\\p{N}{1,4}``
encode_letter_prefix_space         ``[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++`` written `` ?\\p{L}++`` (r50k's rule)
encode_crlf_split                  ``\\s*[\\r\\n]`` written ``[\\r\\n]``: ``\\r\\n`` and the spaces before it split
encode_js_whitespace               ``\\s`` read as JavaScript reads it (no U+0085, but U+FEFF), as a port to JS does
encode_u180e_space                 ``\\s`` with U+180E, a space before Unicode 6.3 (an engine on old tables)
encode_ws_one_by_one               ``\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s`` written ``\\s``: white space cut one by one
encode_pair_ranks                  parts merged by the rank of a *pair*, pairs taken from each token's
                                   leftmost split, instead of the rank of the joined bytes
encode_no_whole_piece              no lookup of the whole piece (tokens only that lookup reaches are lost)
encode_nfc                         the text NFC-normalised first
encode_greedy_longest              the longest token at each position instead of merging
encode_byte_table_from_1           the single-byte table built from ``range(1, 256)`` (NUL is lost)
encode_cache_by_length             a per-text cache keyed by the text's length
encode_long_pieces                 pieces past 256 bytes (``Port.merge_long``, a fast path for long pieces) merged
                                   taking the *last* of equal lowest ranks, not the first
encode_missing_bom_token           a bundled vocabulary without the token for EF BB BF (U+FEFF's UTF-8)
decode_drop_bom                    a decode that drops a leading U+FEFF (JavaScript's ``TextDecoder`` does)
=================================  =====================================================================

``encode_js_port`` has two of these bugs at once, as a port to JavaScript may: JavaScript's ``\\s`` and the
missing token; with ``decode_drop_bom`` a check must find three groups of differences in one run.

``encode`` (the correct port), ``encode_tiktoken`` (tiktoken on the same file),
``encode_hf`` (``tokenizers`` on a ``tokenizer.json`` given the same way) and
``encode_reference`` (the project's ``Tokenizer``) are correct and must never be reported.
``encode_tiktoken_special`` is tiktoken with the special tokens ``ENV_SPECIALS`` names, correct too;
``encode_tiktoken_special_refusing`` (it raises on a lone surrogate) is correct too;
``encode_tiktoken_special_raises`` (tiktoken's default ``disallowed_special``),
``encode_tiktoken_special_always`` (names are special tokens where they are not allowed) and
``encode_tiktoken_special_cut`` (names cut out of the text where they are not allowed, then encoded as ordinary
text: the pre-tokenizer never sees them with their neighbours) are planted.
"""

from __future__ import annotations

import base64
import gzip
import heapq
import os
import unicodedata
from functools import lru_cache
from pathlib import Path

import regex

from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins


@lru_cache(maxsize=4)
def _ranks(path: str) -> dict[bytes, int]:
    raw = Path(path).read_bytes()
    if path.endswith(".gz"):
        raw = gzip.decompress(raw)
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line.strip():
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _vocab() -> str:
    return os.environ.get("BPEPROOF_CHECK_VOCAB", "")


def _pattern() -> str:
    name = os.environ.get("BPEPROOF_CHECK_PATTERN", "cl100k")
    return PATTERNS.get(name, name)


#: Past this many bytes a piece is merged by ``Port.merge_long``.
LONG_SWITCH = 256


class Port:
    """A correct port of tiktoken's encoding of a rank file (see the module docstring)."""

    def __init__(self, ranks: dict[bytes, int], pattern: str) -> None:
        self.ranks = ranks
        self.regex = regex.compile(pattern)
        self.byte_table = {b: ranks[bytes([b])] for b in range(256)}
        self.pair_ranks = self._leftmost_pairs(ranks)
        self.cache: dict[object, list[int]] = {}

    @staticmethod
    def _leftmost_pairs(ranks: dict[bytes, int]) -> dict[tuple[bytes, bytes], int]:
        pairs: dict[tuple[bytes, bytes], int] = {}
        for token, rank in ranks.items():
            for i in range(1, len(token)):
                if token[:i] in ranks and token[i:] in ranks:
                    pairs.setdefault((token[:i], token[i:]), rank)
                    break
        return pairs

    def rank(self, left: bytes, right: bytes) -> int | None:
        return self.ranks.get(left + right)

    def merge(self, piece: bytes) -> list[int]:
        if len(piece) > LONG_SWITCH:
            return self.merge_long(piece)
        parts = [piece[i : i + 1] for i in range(len(piece))]
        while len(parts) > 1:
            best: tuple[int, int] | None = None
            for i in range(len(parts) - 1):
                rank = self.rank(parts[i], parts[i + 1])
                if rank is not None and (best is None or rank < best[0]):
                    best = (rank, i)
            if best is None:
                break
            i = best[1]
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        return [self.byte_table[p[0]] if len(p) == 1 else self.ranks[p] for p in parts]

    def merge_long(self, piece: bytes) -> list[int]:
        """``merge`` for long pieces, as fast ports do it: the adjacent pairs in a heap by rank, then by
        ``tie_key`` (the leftmost of equal ranks first, as ``merge`` takes them), stale pairs skipped; a piece of
        10,000 bytes takes milliseconds where ``merge``'s scan of every pair at every step takes seconds."""
        n = len(piece)
        end = list(range(1, n + 1))  # end[i]: where the part that starts at i ends
        before = list(range(-1, n - 1))  # before[i]: where the part before the one at i starts
        live = [True] * n  # whether a part starts at i
        heap: list[tuple[int, int, int, int, int]] = []

        def push(i: int) -> None:
            middle = end[i]
            if middle < n:
                rank = self.rank(piece[i:middle], piece[middle : end[middle]])
                if rank is not None:
                    heapq.heappush(heap, (rank, self.tie_key(i), i, middle, end[middle]))

        for i in range(n - 1):
            push(i)
        while heap:
            _, _, i, middle, stop = heapq.heappop(heap)
            if not (live[i] and live[middle] and end[i] == middle and end[middle] == stop):
                continue  # a part of the pair has grown since it was pushed
            end[i], live[middle] = stop, False
            if stop < n:
                before[stop] = i
            if before[i] >= 0:
                push(before[i])
            push(i)
        parts = [piece[i : end[i]] for i in range(n) if live[i]]
        return [self.byte_table[p[0]] if len(p) == 1 else self.ranks[p] for p in parts]

    def tie_key(self, start: int) -> int:
        """Of pairs of equal rank, the one of least key merges first: the leftmost."""
        return start

    def encode_piece(self, piece: bytes) -> list[int]:
        if piece in self.ranks:
            return [self.ranks[piece]]
        return self.merge(piece)

    def encode(self, text: str) -> list[int]:
        out: list[int] = []
        # tiktoken's engine classifies by Unicode 16.0: code points the regex module reads otherwise get stand-ins.
        pinned = stand_ins(text)
        for match in self.regex.finditer(pinned):
            piece = text[match.start() : match.end()]
            out += self.encode_piece(piece.encode("utf-8"))
        return out


# -- the planted ports: each a subclass changing one line of Port ----------------------------------------


class _PairRanks(Port):
    def rank(self, left: bytes, right: bytes) -> int | None:
        return self.pair_ranks.get((left, right))  # was: self.ranks.get(left + right)


class _NoWholePiece(Port):
    def encode_piece(self, piece: bytes) -> list[int]:
        return self.merge(piece)  # was: the whole-piece lookup first


class _Nfc(Port):
    def encode(self, text: str) -> list[int]:
        text = unicodedata.normalize("NFC", text)  # added
        return super().encode(text)


class _GreedyLongest(Port):
    def encode_piece(self, piece: bytes) -> list[int]:
        out: list[int] = []
        i = 0
        while i < len(piece):
            j = next(j for j in range(len(piece), i, -1) if piece[i:j] in self.ranks)  # was: merge(piece)
            out.append(self.ranks[piece[i:j]])
            i = j
        return out


class _ByteTableFrom1(Port):
    def __init__(self, ranks: dict[bytes, int], pattern: str) -> None:
        super().__init__(ranks, pattern)
        self.byte_table = {b: ranks[bytes([b])] for b in range(1, 256)}  # was: range(256)


#: The token a bundled vocabulary lacks (``encode_missing_bom_token``): U+FEFF's UTF-8.
BOM_TOKEN = "\ufeff".encode()


class _MissingBomToken(Port):
    def __init__(self, ranks: dict[bytes, int], pattern: str) -> None:
        super().__init__({token: rank for token, rank in ranks.items() if token != BOM_TOKEN}, pattern)  # added


class _NewerUnicode(Port):
    def encode(self, text: str) -> list[int]:
        out: list[int] = []
        for match in self.regex.finditer(text):  # was: finditer(stand_ins(text)), Unicode 16.0's classes
            out += self.encode_piece(match.group().encode("utf-8"))
        return out


class _LongPieces(Port):
    def tie_key(self, start: int) -> int:
        return -start  # was: start (the leftmost of equal ranks first)


class _CacheByLength(Port):
    def encode(self, text: str) -> list[int]:
        key = len(text)  # was: key = text
        if key not in self.cache:
            self.cache[key] = super().encode(text)
        return self.cache[key]


_CL100K = PATTERNS["cl100k"]
#: ECMAScript's ``\s`` (inside a class): WhiteSpace and LineTerminator (U+FEFF in, U+0085 and U+001C–U+001F out).
_JS_SPACE = r"\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
PATTERN_BUGS: dict[str, str] = {
    "ws_no_lookahead": _CL100K.replace(r"\s+(?!\S)", r"\s+"),
    "case_sensitive": _CL100K.replace(r"'(?i:[sdmt]|ll|ve|re)", r"'(?:[sdmt]|ll|ve|re)"),
    "digits_1_4": _CL100K.replace(r"\p{N}{1,3}+", r"\p{N}{1,4}+"),
    "letter_prefix_space": _CL100K.replace(r"[^\r\n\p{L}\p{N}]?+\p{L}++", r" ?\p{L}++"),
    "crlf_split": _CL100K.replace(r"\s*[\r\n]|", r"[\r\n]|"),
    "js_whitespace": _CL100K.replace(r"[^\s", "[^" + _JS_SPACE).replace(r"\S", f"[^{_JS_SPACE}]")
    .replace(r"\s", f"[{_JS_SPACE}]"),
}
PATTERN_BUGS["js_port"] = PATTERN_BUGS["js_whitespace"]
PATTERN_BUGS["ws_one_by_one"] = _CL100K.replace(r"\s++$|\s*[\r\n]|\s+(?!\S)|\s", r"\s")
# U+180E as white space: the class body written in after the other replacements, since it holds "\s" itself.
PATTERN_BUGS["u180e_space"] = (_CL100K.replace(r"[^\s", "[^\0").replace(r"\S", "[^\0]").replace(r"\s", "[\0]")
                               .replace("\0", r"\s\u180e"))
assert all(pattern != _CL100K for pattern in PATTERN_BUGS.values())


@lru_cache(maxsize=32)
def _port(kind: str) -> Port:
    ranks = _ranks(_vocab())
    classes: dict[str, type[Port]] = {
        "pair_ranks": _PairRanks, "no_whole_piece": _NoWholePiece, "nfc": _Nfc, "greedy_longest": _GreedyLongest,
        "byte_table_from_1": _ByteTableFrom1, "cache_by_length": _CacheByLength,
        "missing_bom_token": _MissingBomToken, "js_port": _MissingBomToken, "newer_unicode": _NewerUnicode,
        "long_pieces": _LongPieces,
    }
    return classes.get(kind, Port)(ranks, PATTERN_BUGS.get(kind, _pattern()))


def encode(text: str) -> list[int]:
    """The correct port."""
    return _port("correct").encode(text)


def decode(ids: list[int]) -> str:
    """The correct port's decoding: the tokens' bytes joined, then UTF-8 decoded once."""
    by_rank = _by_rank(_vocab())
    return b"".join(by_rank[t] for t in ids).decode("utf-8")


def decode_drop_bom(ids: list[int]) -> str:
    """Planted: a leading U+FEFF is dropped, as JavaScript's ``new TextDecoder().decode`` does by default."""
    text = decode(ids)
    return text[1:] if text.startswith("\ufeff") else text  # added


@lru_cache(maxsize=4)
def _by_rank(path: str) -> dict[int, bytes]:
    return {rank: token for token, rank in _ranks(path).items()}


def encode_ws_no_lookahead(text: str) -> list[int]:
    return _port("ws_no_lookahead").encode(text)


def encode_case_sensitive(text: str) -> list[int]:
    return _port("case_sensitive").encode(text)


def encode_digits_1_4(text: str) -> list[int]:
    return _port("digits_1_4").encode(text)


def encode_letter_prefix_space(text: str) -> list[int]:
    return _port("letter_prefix_space").encode(text)


def encode_crlf_split(text: str) -> list[int]:
    return _port("crlf_split").encode(text)


def encode_js_whitespace(text: str) -> list[int]:
    return _port("js_whitespace").encode(text)


def encode_pair_ranks(text: str) -> list[int]:
    return _port("pair_ranks").encode(text)


def encode_no_whole_piece(text: str) -> list[int]:
    return _port("no_whole_piece").encode(text)


def encode_newer_unicode(text: str) -> list[int]:
    """Planted: code points classified by the ``regex`` module's own (newer) Unicode tables, as a port built on a
    newer regular expression engine or Node's tables does."""
    return _port("newer_unicode").encode(text)


def encode_nfc(text: str) -> list[int]:
    return _port("nfc").encode(text)


def encode_greedy_longest(text: str) -> list[int]:
    return _port("greedy_longest").encode(text)


def encode_byte_table_from_1(text: str) -> list[int]:
    return _port("byte_table_from_1").encode(text)


def encode_cache_by_length(text: str) -> list[int]:
    return _port("cache_by_length").encode(text)


def encode_long_pieces(text: str) -> list[int]:
    """Planted: a piece past ``LONG_SWITCH`` bytes merged by the fast path with ties broken the other way, as a
    port's second loop for long pieces may: only long runs (of U+00A0, of spaces, of one letter) tell."""
    return _port("long_pieces").encode(text)


def encode_missing_bom_token(text: str) -> list[int]:
    return _port("missing_bom_token").encode(text)


def encode_ws_one_by_one(text: str) -> list[int]:
    return _port("ws_one_by_one").encode(text)


def encode_u180e_space(text: str) -> list[int]:
    return _port("u180e_space").encode(text)


def encode_js_port(text: str) -> list[int]:
    """Planted, two bugs: JavaScript's ``\\s`` and a vocabulary without the token for EF BB BF."""
    return _port("js_port").encode(text)


@lru_cache(maxsize=4)
def _tiktoken(path: str, pattern: str) -> object:
    import tiktoken

    return tiktoken.Encoding("port", pat_str=pattern, mergeable_ranks=_ranks(path), special_tokens={})


def encode_tiktoken(text: str) -> list[int]:
    """tiktoken itself on the same rank file."""
    encoding = _tiktoken(_vocab(), _pattern())
    return list(encoding.encode_ordinary(text))  # type: ignore[attr-defined]


@lru_cache(maxsize=4)
def _hf(path: str) -> object:
    import tokenizers

    raw = Path(path).read_bytes()
    if path.endswith(".gz"):
        raw = gzip.decompress(raw)
    return tokenizers.Tokenizer.from_str(raw.decode("utf-8"))


def encode_hf(text: str) -> list[int]:
    """The ``tokenizers`` library on a ``tokenizer.json`` file."""
    return list(_hf(_vocab()).encode(text, add_special_tokens=False).ids)  # type: ignore[attr-defined]


def decode_hf(ids: list[int]) -> str:
    """The ``tokenizers`` library's decode on a ``tokenizer.json`` file."""
    return str(_hf(_vocab()).decode(ids, skip_special_tokens=False))  # type: ignore[attr-defined]


def encode_hf_names_as_text(text: str) -> list[int]:
    """Planted: the ``tokenizers`` library with its special tokens' names left as text (tiktoken's convention,
    the library's ``encode_special_tokens``), where the library reads them."""
    tokenizer = _hf(_vocab())
    tokenizer.encode_special_tokens = True  # type: ignore[attr-defined]  # was: left at False
    return list(tokenizer.encode(text, add_special_tokens=False).ids)  # type: ignore[attr-defined]


def decode_hf_clean_up(ids: list[int]) -> str:
    """Planted: the library's decode, then the clean-up of spaces before punctuation that transformers.js does by
    default (``' .'`` becomes ``'.'``)."""
    text = decode_hf(ids)
    for before, after in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" n't", "n't"), (" 's", "'s")):
        text = text.replace(before, after)  # was: no clean-up
    return text


@lru_cache(maxsize=4)
def _reference(path: str, pattern: str | None) -> object:
    from bpeproof.impl.tokenizer import load_tokenizer

    return load_tokenizer(path, pattern)


def encode_reference(text: str) -> list[int]:
    """The project's own Tokenizer for the file."""
    return list(_reference(_vocab(), os.environ.get("BPEPROOF_CHECK_PATTERN")).encode(text))  # type: ignore[attr-defined]


#: (target, the layer the checker must report): planted ports, each caught within 30 s.
PORTS: list[tuple[str, str]] = [
    ("bpeproof.proofs_tests.planted.ports:encode_ws_no_lookahead", "split"),
    ("bpeproof.proofs_tests.planted.ports:encode_case_sensitive", "split"),
    ("bpeproof.proofs_tests.planted.ports:encode_digits_1_4", "split"),
    ("bpeproof.proofs_tests.planted.ports:encode_letter_prefix_space", "split"),
    ("bpeproof.proofs_tests.planted.ports:encode_crlf_split", "split"),
    ("bpeproof.proofs_tests.planted.ports:encode_js_whitespace", "split"),
    ("bpeproof.proofs_tests.planted.ports:encode_pair_ranks", "merge"),
    ("bpeproof.proofs_tests.planted.ports:encode_no_whole_piece", "merge"),
    ("bpeproof.proofs_tests.planted.ports:encode_nfc", "bytes"),
    ("bpeproof.proofs_tests.planted.ports:encode_greedy_longest", "merge"),
    ("bpeproof.proofs_tests.planted.ports:encode_byte_table_from_1", "error"),
    ("bpeproof.proofs_tests.planted.ports:encode_cache_by_length", "bytes|merge|split"),
    ("bpeproof.proofs_tests.planted.ports:encode_long_pieces", "merge"),
]

#: Correct ports: never reported.
CORRECT_PORTS: list[str] = [
    "bpeproof.proofs_tests.planted.ports:encode",
    "bpeproof.proofs_tests.planted.ports:encode_tiktoken",
    "bpeproof.proofs_tests.planted.ports:encode_reference",
]


def encode_reference_special(text: str, allowed_special: str | None = None) -> list[int]:
    """The project's Tokenizer, taking ``allowed_special`` ("all" or None) as the protocol passes it."""
    tokenizer = _reference(_vocab(), os.environ.get("BPEPROOF_CHECK_PATTERN"))
    return list(tokenizer.encode(text, allowed_special=allowed_special))  # type: ignore[attr-defined]


def encode_special_ignored(text: str, allowed_special: str | None = None) -> list[int]:
    """Planted: ``allowed_special`` is accepted and ignored, special names always encoded as text."""
    tokenizer = _reference(_vocab(), os.environ.get("BPEPROOF_CHECK_PATTERN"))
    return list(tokenizer.encode(text, allowed_special=None))  # type: ignore[attr-defined]  # was: allowed_special


def encode_special_always(text: str, allowed_special: str | None = None) -> list[int]:
    """Planted: special names are always special tokens, even when not allowed."""
    tokenizer = _reference(_vocab(), os.environ.get("BPEPROOF_CHECK_PATTERN"))
    return list(tokenizer.encode(text, allowed_special="all"))  # type: ignore[attr-defined]  # was: allowed_special


#: The environment variable naming the special tokens of a rank file for the ports below (JSON: name → id), as
#: a port bundles them; the checker learns them from ``--special`` (or the known encoding).
ENV_SPECIALS = "BPEPROOF_PLANTED_SPECIALS"


@lru_cache(maxsize=4)
def _tiktoken_special(path: str, pattern: str, specials: str) -> object:
    import json

    import tiktoken

    return tiktoken.Encoding("port", pat_str=pattern, mergeable_ranks=_ranks(path), special_tokens=json.loads(specials))


def encode_tiktoken_surrogates_dropped(text: str) -> list[int]:
    """Planted: tiktoken on the text with each lone surrogate dropped, where tiktoken replaces it with U+FFFD."""
    kept = "".join(char for char in text if not 0xD800 <= ord(char) <= 0xDFFF)  # was: text (tiktoken replaces)
    return encode_tiktoken(kept)


def encode_tiktoken_special(text: str, allowed_special: str | None = None) -> list[int]:
    """tiktoken on a rank file with the special tokens of ``ENV_SPECIALS``: allowed ones are special tokens, the
    others ordinary text (``disallowed_special=()``)."""
    encoding = _tiktoken_special(_vocab(), _pattern(), os.environ.get(ENV_SPECIALS, "{}"))
    allowed = "all" if allowed_special == "all" else set()
    return list(encoding.encode(text, allowed_special=allowed, disallowed_special=()))  # type: ignore[attr-defined]


def encode_tiktoken_special_refusing(text: str, allowed_special: str | None = None) -> list[int]:
    """Correct: ``encode_tiktoken_special``, but a text with a lone surrogate is refused (it is not Unicode text; a
    port in a language whose strings cannot hold one never sees it): no difference, to the checker or the
    known-answer suite."""
    if any(0xD800 <= ord(char) <= 0xDFFF for char in text):
        raise ValueError("a lone surrogate is not Unicode text")
    return encode_tiktoken_special(text, allowed_special)


def encode_tiktoken_special_raises(text: str, allowed_special: str | None = None) -> list[int]:
    """Planted: tiktoken's default ``disallowed_special="all"`` kept, so a special token's name in ordinary text
    raises instead of being encoded as text."""
    encoding = _tiktoken_special(_vocab(), _pattern(), os.environ.get(ENV_SPECIALS, "{}"))
    allowed = "all" if allowed_special == "all" else set()
    return list(encoding.encode(text, allowed_special=allowed))  # type: ignore[attr-defined]  # was: disallowed=()


def encode_tiktoken_special_always(text: str, allowed_special: str | None = None) -> list[int]:
    """Planted: special tokens' names are special tokens even where they are not allowed."""
    encoding = _tiktoken_special(_vocab(), _pattern(), os.environ.get(ENV_SPECIALS, "{}"))
    return list(encoding.encode(text, allowed_special="all"))  # type: ignore[attr-defined]  # was: allowed


def encode_tiktoken_special_cut(text: str, allowed_special: str | None = None) -> list[int]:
    """Planted: the text cut at special tokens' names whether or not they are allowed; a name not allowed is then
    encoded as ordinary text, but alone, apart from the text around it."""
    import json
    import re

    encoding = _tiktoken_special(_vocab(), _pattern(), os.environ.get(ENV_SPECIALS, "{}"))
    names: dict[str, int] = json.loads(os.environ.get(ENV_SPECIALS, "{}"))
    if not names:
        return list(encoding.encode_ordinary(text))  # type: ignore[attr-defined]
    out: list[int] = []
    finder = "(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + ")"
    for part in re.split(finder, text):  # was: only the allowed names cut out
        if part in names and allowed_special == "all":
            out.append(names[part])
        elif part:
            out += encoding.encode_ordinary(part)  # type: ignore[attr-defined]
    return out
