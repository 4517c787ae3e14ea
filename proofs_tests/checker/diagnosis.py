r"""What a difference between the reference's ids and an implementation's ids means: which layer, which cause.

``analyse`` finds the first piece of the reference's pre-tokenization where the two id lists differ and names
the layer that differs:

- ``special``: special tokens read where they are not allowed, or not read where they are (def-utf8);
- ``bytes``: the implementation's ids do not spell the text (normalisation, a wrong byte table, another
  vocabulary);
- ``split``: the pre-tokenization differs: an implementation token crosses a piece's border, the piece encoded
  alone gets the reference's ids, the implementation's tokens are the reference's merges of smaller pieces cut
  where the kind of character changes, or a known way of reading the pattern otherwise (``PATTERN_VARIANTS``:
  JavaScript's ``\s``) gives the implementation's pieces; the pattern's top-level alternative that matched there
  is named;
- ``merge``: both cut the same piece but merge it differently; the variants of ``spec/variants.py`` that give
  the implementation's tokens are named (``Variants``, computed from tables: the spec's own functions scan the
  whole rule list per step).

``align`` shows both id lists side by side, cut where both have a token boundary.
"""

from __future__ import annotations

import contextlib
import itertools
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bpeproof.proofs_tests.checker.protocol import Answer


def top_level_alternatives(pattern: str) -> list[str]:
    """The alternatives of a regular expression's top level (``a|b|c``), split outside groups and classes."""
    parts: list[str] = []
    depth = 0
    in_class = False
    start = 0
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "^":
                i += 1
            if pattern[i + 1 : i + 2] == "]":
                i += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


def matched_alternative(pattern: str, text: str, position: int) -> tuple[int, str, str] | None:
    """(number from 1, source, matched text) of the first top-level alternative that matches at ``position``."""
    import regex

    from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins

    pinned = stand_ins(text)
    for number, alternative in enumerate(top_level_alternatives(pattern), start=1):
        try:
            match = regex.compile(alternative).match(pinned, position)
        except regex.error:
            return None
        if match is not None:
            return number, alternative, text[match.start() : match.end()]
    return None


def token_table(reference: Any) -> dict[int, bytes]:
    """id → bytes of every token of the reference (special tokens left out)."""
    model = getattr(reference, "model", None)
    if model is not None and hasattr(model, "token_table"):
        table = dict(model.token_table())
        byte_ids = tuple(reference.byte_ids)
        return {byte_ids[t] if t < 256 and len(data) == 1 else t: data for t, data in table.items()}
    table = {b: bytes([b]) for b in range(256)}
    for a, b, c in reference.rules:
        table[c] = table[a] + table[b]
    byte_ids = tuple(reference.byte_ids)
    return {byte_ids[t] if t < 256 else t: data for t, data in table.items()}


def _pair_rules(reference: Any, table: dict[int, bytes]) -> list[tuple[int, int, int]] | None:
    """The reference's merge rules in external ids, in rank order: its own rule list, or the one recovered from
    the rank table; None when neither exists."""
    byte_ids = tuple(reference.byte_ids)

    def external(rules: Sequence[Sequence[int]]) -> list[tuple[int, int, int]]:
        return [(byte_ids[a] if a < 256 else a, byte_ids[b] if b < 256 else b, c) for a, b, c in rules]

    with contextlib.suppress(Exception):
        return external(reference.rules)
    with contextlib.suppress(Exception):
        from bpeproof.impl.formats.tiktoken_file import tiktoken_rules

        rules, _ = tiktoken_rules({data: token for token, data in table.items()})
        return external(rules)
    return None


class Variants:
    """The encodings of ``spec/variants.py`` on one word, in the reference's ids, computed from tables (the
    spec's own functions scan the whole rule list per step, too slow for 100,000 rules).  A token's rank is
    its rule's position, or its id when the reference has no rule list (tiktoken: rank = id)."""

    def __init__(self, reference: Any, pairs: bool = True) -> None:
        table = token_table(reference)
        rules = _pair_rules(reference, table) if pairs else None
        self.byte_id = {data[0]: token for token, data in table.items() if len(data) == 1}
        self.bytes_rank: dict[bytes, tuple[int, int]] = {bytes([b]): (-1, t) for b, t in self.byte_id.items()}
        self.pair_rank: dict[tuple[int, int], tuple[int, int]] | None = None
        if rules is not None:
            self.pair_rank = {}
            for index, (a, b, c) in enumerate(rules):
                self.pair_rank.setdefault((a, b), (index, c))
                if c in table:
                    self.bytes_rank.setdefault(table[c], (index, c))
        else:
            for token, data in sorted(table.items()):
                if len(data) > 1:
                    self.bytes_rank.setdefault(data, (token, token))

    def rule_rank(self, data: bytes) -> list[int] | None:
        if self.pair_rank is None:
            return None
        tokens = [self.byte_id[b] for b in data]
        while True:
            best: tuple[int, int, int] | None = None
            for i in range(len(tokens) - 1):
                found = self.pair_rank.get((tokens[i], tokens[i + 1]))
                if found is not None and (best is None or found[0] < best[0]):
                    best = (found[0], found[1], i)
            if best is None:
                return tokens
            tokens[best[2] : best[2] + 2] = [best[1]]

    def bytes_rank_parts(self, data: bytes) -> list[int] | None:
        parts = [bytes([b]) for b in data]
        while True:
            best: tuple[int, int] | None = None
            for i in range(len(parts) - 1):
                found = self.bytes_rank.get(parts[i] + parts[i + 1])
                if found is not None and (best is None or found[0] < best[0]):
                    best = (found[0], i)
            if best is None:  # None: a byte of data that no token stands for (a vocabulary of characters)
                found_parts = [self.bytes_rank.get(p) for p in parts]
                return [found[1] for found in found_parts if found is not None] if None not in found_parts else None
            i = best[1]
            parts[i : i + 2] = [parts[i] + parts[i + 1]]

    def whole(self, data: bytes, fallback: Callable[[bytes], list[int] | None]) -> list[int] | None:
        found = self.bytes_rank.get(data)
        return [found[1]] if data and found is not None else fallback(data)

    def agreeing(self, data: bytes, ids: list[int]) -> list[str]:
        """The names in ``bpeproof.spec.variants.VARIANTS`` whose encoding of ``data`` is ``ids``."""
        if any(b not in self.byte_id for b in data):
            return []
        answers = {
            "sequential": self.rule_rank(data),  # (i) = (ii) on every valid rule list (spec/variants.py)
            "rule-rank": self.rule_rank(data),
            "bytes-rank": self.bytes_rank_parts(data),
            "whole-word+rule-rank": self.whole(data, self.rule_rank),
            "whole-word+bytes-rank": self.whole(data, self.bytes_rank_parts),
        }
        return [name for name, answer in answers.items() if answer is not None and answer == ids]


#: What each variant is, for reports (spec/variants.py).
VARIANT_TEXT = {
    "sequential": "(i) def-bpe: the rules in order, each left to right",
    "rule-rank": "(ii) lowest-rank pair first, by rule (Hugging Face tokenizers' BPE)",
    "bytes-rank": "(iii) lowest rank of the joined bytes (tiktoken's merge)",
    "whole-word+rule-rank": "(iv) a whole-word token first, else (ii)",
    "whole-word+bytes-rank": "(iv) a whole-word token first, else (iii) (tiktoken)",
}


def _token_bytes(reference: Any, token: int) -> bytes | None:
    try:
        return bytes(reference.token_bytes(token))
    except Exception:
        return None


def _spans(reference: Any, ids: Sequence[int]) -> list[tuple[int, int, int, bytes | None]]:
    """(start, end, id, bytes) of each token, by byte offset."""
    out: list[tuple[int, int, int, bytes | None]] = []
    position = 0
    for token in ids:
        data = _token_bytes(reference, token)
        length = len(data) if data is not None else 0
        out.append((position, position + length, token, data))
        position += length
    return out


def align(reference: Any, expected: Sequence[int], actual: Sequence[int]) -> list[tuple[bytes, list[str], list[str]]]:
    """Both id lists cut into segments at the byte offsets where both have a token boundary."""
    left, right = _spans(reference, expected), _spans(reference, actual)
    rows: list[tuple[bytes, list[str], list[str]]] = []
    i = j = 0
    while i < len(left) or j < len(right):
        mine: list[tuple[int, int, int, bytes | None]] = []
        theirs: list[tuple[int, int, int, bytes | None]] = []
        if i < len(left):
            mine.append(left[i])
            i += 1
        if j < len(right):
            theirs.append(right[j])
            j += 1
        while mine and theirs and mine[-1][1] != theirs[-1][1]:
            if mine[-1][1] < theirs[-1][1] and i < len(left):
                mine.append(left[i])
                i += 1
            elif theirs[-1][1] < mine[-1][1] and j < len(right):
                theirs.append(right[j])
                j += 1
            else:
                break
        data = b"".join(t[3] or b"?" for t in (mine or theirs))
        rows.append((data, [f"{t[2]} {t[3]!r}" for t in mine],
                     [f"{t[2]} {t[3]!r}" if t[3] is not None else f"{t[2]} (not in the vocabulary)" for t in theirs]))
    return rows


@dataclass
class Analysis:
    layer: str  # "split", "merge", "bytes" (the ids do not spell the text), "error", "decode"
    claim: str
    detail: str
    piece: str | None = None
    piece_index: int | None = None
    piece_bytes: tuple[int, int] | None = None
    alternative: str | None = None
    variants: list[str] = field(default_factory=list)


#: Characters that some engines' whitespace classes hold and others not (Python's ``str.isspace`` and
#: ``\s`` of the regex module, JavaScript's ``\s``, Unicode's White_Space, C's ``isspace``, older Unicode):
#: a cut next to one is a class change, since an implementation may well have split there.
CONTESTED_SPACES = frozenset("\x1c\x1d\x1e\x1f\x85\u180e\u200b\ufeff")


#: ECMAScript's ``\s`` as the inside of a character class: WhiteSpace and LineTerminator (U+FEFF in; U+0085 and
#: U+001C–U+001F, which Python's regex counts, out).  A port to JavaScript that keeps the pattern splits by this.
JS_SPACE = r"\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def with_js_whitespace(pattern: str) -> str | None:
    r"""``pattern`` with ``\s`` and ``\S`` read as JavaScript reads them; None when that cannot be written
    (``\S`` inside a character class)."""
    out: list[str] = []
    in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            escape = pattern[index : index + 2]
            if escape == "\\s":
                out.append(JS_SPACE if in_class else f"[{JS_SPACE}]")
            elif escape == "\\S":
                if in_class:
                    return None
                out.append(f"[^{JS_SPACE}]")
            else:
                out.append(escape)
            index += 2
            continue
        if char == "[":  # inside a class a "[" is a literal (the regex module's version 0)
            in_class = True
        elif char == "]":
            in_class = False
        out.append(char)
        index += 1
    return "".join(out)


def _char_class(char: str) -> str:
    if char in CONTESTED_SPACES:
        return f"contested {ord(char):04X}"
    return "Z" if char.isspace() else unicodedata.category(char)[0]


def _cut_inside(reference: Any, piece: str, spans: Sequence[tuple[int, int, int, bytes | None]]) -> list[str] | None:
    """Where the implementation's tokens inside one reference piece are the reference's own merges of smaller
    pieces, cut only where the kind of character changes (letter, digit, space, punctuation…): those pieces, as
    a pre-tokenizer would cut them; None when no such cut explains the tokens (a merge difference)."""
    merge = _word_merge(reference)
    if merge is None:
        return None
    data = piece.encode("utf-8")
    base = spans[0][0] if spans else 0
    cuts = [s[0] - base for s in spans] + [len(data)]
    ids = [s[2] for s in spans]
    best: dict[int, list[int]] = {0: []}  # index in cuts → the cut points used (fewest)
    for j in range(1, len(cuts)):
        for i in range(j):
            if i in best and (j not in best or len(best[i]) + 1 < len(best[j])) and \
                    merge(data[cuts[i] : cuts[j]]) == ids[i:j]:
                best[j] = [*best[i], cuts[i]] if i else []
    used = best.get(len(cuts) - 1)
    if not used:
        return None
    pieces: list[str] = []
    previous = 0
    for cut in [*used, len(data)]:
        try:
            pieces.append(data[previous:cut].decode("utf-8"))
        except UnicodeDecodeError:
            return None
        previous = cut
    if any(_char_class(left[-1]) == _char_class(right[0]) for left, right in itertools.pairwise(pieces)):
        return None
    return pieces


#: Ways a port reads the reference's pattern otherwise: what the change does, and the pattern it gives (None when
#: it cannot be written).  A split difference they explain is reported with the variant's pieces.
PATTERN_VARIANTS: dict[str, Callable[[str], str | None]] = {
    "\\s is JavaScript's (U+0085 and U+001C–U+001F not white space, U+FEFF white space)": with_js_whitespace,
}


def _pattern_variant_split(reference: Any, text: str, actual: list[int]) -> tuple[str, list[str]] | None:
    """The first of ``PATTERN_VARIANTS`` whose pieces of ``text`` differ from the reference's and whose pieces,
    each merged as the reference merges it, are the implementation's ids: its description and those pieces."""
    if reference.pretokenizer is not None or not isinstance(reference.pattern, str):
        return None
    own = reference.pre_tokenize(text)
    for description, transform in PATTERN_VARIANTS.items():
        variant = transform(reference.pattern)
        if variant is None or variant == reference.pattern:
            continue
        try:
            from bpeproof.impl.pre_tokenizers.patterns import compile_pinned

            pieces = [match.group() for match in compile_pinned(variant).finditer(text)]
        except Exception:
            continue
        if "".join(pieces) == text and pieces != own and _merged_pieces(reference, pieces) == actual:
            return description, pieces
    return None


def _word_merge(reference: Any) -> Callable[[bytes], list[int] | None] | None:
    """How the reference merges one word's bytes (its semantics, from ``spec/variants.py``'s tables); None when
    the tables cannot be built."""
    try:
        variants = Variants(reference)
    except Exception:
        return None
    if (getattr(reference, "semantics", None) or "sequential") == "tiktoken":
        return lambda data: variants.whole(data, variants.bytes_rank_parts)
    return variants.rule_rank


def _merged_pieces(reference: Any, pieces: Sequence[str]) -> list[int] | None:
    """The ids of ``pieces``, each merged on its own as the reference merges a word (None: not possible)."""
    merge = _word_merge(reference)
    ids: list[int] = []
    for piece in pieces:
        merged = None if merge is None else merge(piece.encode("utf-8"))
        if merged is None:
            return None
        ids += merged
    return ids


def analyse(reference: Any, text: str, expected: list[int], actual: list[int], special: bool,
            encode_alone: Callable[[str], Answer] | None) -> Analysis:
    """Which layer differs: the split, the merge inside a piece, or the bytes (see the module docstring)."""
    data = text.encode("utf-8")
    specials = {token: name for name, token in reference.special_tokens.items()}
    mine, theirs = [t for t in expected if t in specials], [t for t in actual if t in specials]
    if mine != theirs:
        if special:
            detail = (f"with allowed_special the reference reads {[specials[t] for t in mine]} as special tokens"
                      f" {mine}; the implementation's ids hold {theirs or 'none of them'}")
        else:
            detail = (f"without allowed_special a special token's name is ordinary text, but the implementation"
                      f" produced the special ids {theirs}")
        return Analysis("special", "def-utf8", detail + " (special tokens are ids apart from the rules, produced"
                        " only where allowed)")
    spans = _spans(reference, actual)
    spelled = b"".join(s[3] or b"" for s in spans)
    unknown = [s[2] for s in spans if s[3] is None]
    if unknown or spelled != data:
        first = next((i for i, (x, y) in enumerate(zip(spelled, data, strict=False)) if x != y),
                     min(len(spelled), len(data)))
        why = (f"ids {sorted(set(unknown))[:5]} are not in the vocabulary" if unknown
               else f"their bytes first differ from the text's UTF-8 at byte {first}:"
               f" {spelled[first:first + 8]!r} instead of {data[first:first + 8]!r}")
        return Analysis("bytes", "thm-bpe-roundtrip",
                        f"the implementation's ids do not spell the text ({why}): changed text (normalisation),"
                        " a wrong byte table or ids of another vocabulary")
    boundaries = {s[0] for s in spans} | {len(data)}
    pieces = [text] if special else reference.pre_tokenize(text)
    ref_spans = _spans(reference, expected)
    offset = 0
    char_offset = 0
    for index, piece in enumerate(pieces):
        size = len(piece.encode("utf-8"))
        start, end = offset, offset + size
        crossing = start not in boundaries or end not in boundaries
        mine = [s[2] for s in ref_spans if start <= s[0] < end]
        theirs = [s[2] for s in spans if start <= s[0] < end]
        if crossing or mine != theirs:
            analysis = Analysis("merge", "def-bpe", "", piece, index, (start, end))
            alone = encode_alone(piece) if encode_alone is not None and not crossing else None
            cut = None if crossing else _cut_inside(reference, piece, [s for s in spans if start <= s[0] < end])
            split = crossing or (isinstance(alone, list) and alone == mine) or cut is not None
            if split and not special and reference.pretokenizer is None:
                found = matched_alternative(reference.pattern, text, char_offset)
                if found is not None:
                    number, source, matched = found
                    analysis.alternative = f"{number}: {source}"
                    alt_text = f"alternative {number} `{source}` matched {matched!r}"
                else:
                    alt_text = "no alternative of the pattern could be identified"
            else:
                alt_text = "its pre-tokenizer's split steps cut it there"
            if split:
                analysis.layer = "split"
                how = ("an implementation token crosses the piece's border" if crossing else
                       f"the implementation cuts it into {cut!r}, each merged as the reference merges it" if cut
                       else "encoded alone the piece gets the reference's ids, so the implementation cuts the text"
                       " differently around it")
                analysis.detail = (f"pre-tokenization differs at piece {index} {piece!r}: the reference cuts this"
                                   f" word out ({alt_text}); {how}. def-bpe encodes each word on its own, so the"
                                   f" split decides which merges can happen")
            elif (variant := _pattern_variant_split(reference, text, actual)) is not None:
                analysis.layer = "split"
                analysis.detail = (f"pre-tokenization differs at piece {index} {piece!r}: the implementation's ids are"
                                   f" the reference's merges of the pieces {variant[1]!r}, which the pattern gives"
                                   f" when {variant[0]}. def-bpe encodes each word on its own, so the split"
                                   " decides which merges can happen")
            else:
                agreeing = Variants(reference).agreeing(piece.encode("utf-8"), theirs)
                analysis.variants = agreeing
                semantics = getattr(reference, "semantics", None) or "sequential"
                if agreeing:
                    which = "; ".join(f"{name}: {VARIANT_TEXT[name]}" for name in agreeing)
                    analysis.detail = (f"both cut the same piece {index} {piece!r}, but merge it differently: the"
                                       f" implementation's tokens agree with {which} (spec/variants.py), the"
                                       f" reference follows {semantics}")
                else:
                    analysis.detail = (f"both cut the same piece {index} {piece!r}, but merge it differently, and"
                                       f" the implementation's tokens agree with none of the variants in"
                                       f" spec/variants.py (the reference follows {semantics})")
            return analysis
        offset = end
        char_offset += len(piece)
    return Analysis("merge", "def-bpe", "the id lists differ, but no piece could be singled out")


