r"""What a difference between the reference's ids and an implementation's ids means: which layer, which cause.

``analyse`` names the layer that differs, and the cause as a *group key* (a short stable string, the same for
every text the same bug makes differ, by which a check groups its findings and a port's CI sets known ones
aside):

- ``special``: special tokens read where they are not allowed (``special:not-allowed``), or not read where they
  are (``special:not-read``) (def-utf8);
- ``bytes``: the implementation's ids do not spell the text (normalisation, a wrong byte table, another
  vocabulary): ``bytes:not-in-vocabulary``, ``bytes:changed-text``;
- ``split`` / ``merge`` named by a variant: the reference run again with one known variant (``reruns``: a
  pattern variant such as JavaScript's ``\s``, a merge variant of ``spec/variants.py``, a token missing from the
  vocabulary), or a pattern variant with one of the others, gives exactly the implementation's ids:
  ``split:js-whitespace``, ``merge:bytes-rank``, ``merge:missing:\ufeff``;
- otherwise the first piece of the reference's pre-tokenization where the id lists differ decides.  ``split``:
  an implementation token crosses the piece's border, the piece encoded alone gets the reference's ids, or the
  implementation's tokens are the reference's merges of smaller pieces cut where the kind of character changes;
  the key names the pattern's top-level alternative that matched there and the kind of the character where the
  cuts first differ (``split:alt7:space``).  ``merge``: both cut the same piece but merge it differently; the key
  names the variants that give the implementation's tokens of that piece (``merge:rule-rank``), else it is
  ``merge``: a merge that no known variant explains, one group however many tokens it touches.

``align`` shows both id lists side by side, cut where both have a token boundary.
"""
from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from bpeproof.impl.models.variants import VARIANT_TEXT
from bpeproof.proofs_tests.checker.protocol import Answer
from bpeproof.proofs_tests.checker.reruns import Explanation, Reruns, may_cut, same_kind


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


@lru_cache(maxsize=16)
def _compiled_alternatives(pattern: str) -> tuple[tuple[str, Any], ...]:
    """Each top-level alternative of ``pattern`` and its compiled form (None: the regex module refuses it), parsed
    once: ``bpeproof vectors`` asks for the alternative of every piece of 15,000 texts."""
    import regex

    out: list[tuple[str, Any]] = []
    for alternative in top_level_alternatives(pattern):
        try:
            out.append((alternative, regex.compile(alternative)))
        except regex.error:
            out.append((alternative, None))
    return tuple(out)


def matched_alternative(pattern: str, text: str, position: int) -> tuple[int, str, str] | None:
    """(number from 1, source, matched text) of the first top-level alternative that matches at ``position``."""
    from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins

    pinned = stand_ins(text)
    for number, (alternative, compiled) in enumerate(_compiled_alternatives(pattern), start=1):
        if compiled is None:
            return None
        match = compiled.match(pinned, position)
        if match is not None:
            return number, alternative, text[match.start() : match.end()]
    return None


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
    layer: str  # "split", "merge", "bytes", "special", "error", "decode", "timeout", "crashed", "protocol", "memory"
    claim: str
    detail: str
    key: str = ""  # the group key (see the module docstring)
    piece: str | None = None
    piece_index: int | None = None
    piece_bytes: tuple[int, int] | None = None
    alternative: str | None = None
    variants: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # every key that fits, ``key`` first (several variants explain)


#: Characters kept as they are in a group key; every other one is escaped (no space, no ``#``: a key is one word).
_KEY_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,;:'!?()[]{}<>|/@$%^&*=+~`\"")


def key_text(value: str | bytes, limit: int = 24) -> str:
    """A text (or bytes that need not be UTF-8) as a part of a group key: letters, digits and most punctuation as
    they are, everything else as ``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``."""
    if isinstance(value, bytes):
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            return "".join(chr(b) if chr(b) in _KEY_SAFE else f"\\x{b:02x}" for b in value[:limit])
    else:
        text = value
    out = []
    for char in text[:limit]:
        code = ord(char)
        out.append(char if char in _KEY_SAFE else f"\\x{code:02x}" if code < 0x100 else
                   f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out) + ("..." if len(text) > limit else "")


#: The word for each major Unicode category in a split's group key.
_KIND_WORDS = {"L": "letter", "N": "number", "P": "punctuation", "S": "symbol", "M": "mark", "Z": "space",
               "C": "other"}


def kind_word(char: str) -> str:
    """The kind of a character in a split's group key: ``letter``, ``number``, ``space`` (any white space to
    Python), ``punctuation``, ``symbol``, ``mark`` or ``other`` (a white space engines disagree on is named by
    the variant that reads it otherwise, ``PATTERN_VARIANTS``, when that explains the difference)."""
    return "space" if char.isspace() else _KIND_WORDS.get(unicodedata.category(char)[0], "other")


def _cut_inside(reruns: Reruns, piece: str, spans: Sequence[tuple[int, int, int, bytes | None]],
                white_space: bool = False) -> tuple[list[str], list[int]] | None:
    """Where the implementation's tokens inside one reference piece are the reference's own merges of smaller
    pieces, cut only where the kind of character changes (letter, digit, space, punctuation…), or with
    ``white_space`` also inside white space (``reruns.may_cut``): those pieces, as a pre-tokenizer would cut
    them, and the cuts (byte offsets in the piece); None when no such cut explains the tokens (a merge
    difference)."""
    data = piece.encode("utf-8")
    base = spans[0][0] if spans else 0
    cuts = [s[0] - base for s in spans] + [len(data)]
    ids = [s[2] for s in spans]
    best: dict[int, list[int]] = {0: []}  # index in cuts → the cut points used (fewest)
    for j in range(1, len(cuts)):
        for i in range(j):
            if i in best and (j not in best or len(best[i]) + 1 < len(best[j])) and \
                    reruns.own(data[cuts[i] : cuts[j]]) == ids[i:j]:
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
    allowed = may_cut if white_space else (lambda left, right: same_kind(left) != same_kind(right))
    if not all(allowed(left[-1], right[0]) for left, right in itertools.pairwise(pieces)):
        return None
    return pieces, used


def _char_at(data: bytes, text: str, offset: int) -> str:
    """The character of ``text`` whose UTF-8 holds byte ``offset`` of ``data`` (the last one past the end)."""
    index = len(data[:offset].decode("utf-8", "ignore"))
    return text[min(index, len(text) - 1)] if text else ""


def _special_analysis(specials: dict[int, str], mine: list[int], theirs: list[int], special: bool) -> Analysis:
    if special:
        detail = (f"with allowed_special the reference reads {[specials[t] for t in mine]} as special tokens"
                  f" {mine}; the implementation's ids hold {theirs or 'none of them'}")
        key = "special:not-read"
    else:
        detail = (f"without allowed_special a special token's name is ordinary text, but the implementation"
                  f" produced the special ids {theirs}")
        key = "special:not-allowed"
    return Analysis("special", "def-utf8", detail + " (special tokens are ids apart from the rules, produced only"
                    " where allowed)", key)


def _first_differing_stretch(reference: Any, expected: Sequence[int], actual: Sequence[int],
                             specials: frozenset[int]) -> tuple[str, list[int], list[int]] | None:
    """The first stretch of text between the special tokens (the same in both lists) whose ids differ: its text
    (the bytes of the reference's ids of it) and both lists' ids of it; None when it cannot be told apart (its text
    is not valid UTF-8, or encoded alone does not give the reference's ids, as a normalizer may make it)."""
    def stretches(ids: Sequence[int]) -> list[list[int]]:
        out: list[list[int]] = [[]]
        for token in ids:
            if token in specials:
                out.append([])
            else:
                out[-1].append(token)
        return out

    for mine, theirs in zip(stretches(expected), stretches(actual), strict=False):
        if mine == theirs:
            continue
        try:
            text = b"".join(_token_bytes(reference, token) or b"" for token in mine).decode("utf-8")
        except UnicodeDecodeError:
            return None
        return (text, mine, theirs) if list(reference.encode(text)) == mine else None
    return None


def explanation_keys(explanation: Explanation) -> list[str]:
    """The group keys of a variant run's parts: ``split:js-whitespace``, ``merge:bytes-rank``,
    ``merge:missing:\ufeff`` (a text that two bugs make differ counts in the group of either)."""
    keys = [f"split:{explanation.pattern.name}"] if explanation.pattern else []
    if explanation.merge is not None:
        keys.append(f"merge:{explanation.merge}")
    if explanation.missing is not None:
        keys.append(f"merge:missing:{key_text(explanation.missing)}")
    return keys


def _explained(analysis: Analysis, explanations: list[Explanation], semantics: str) -> Analysis:
    first = explanations[0]
    analysis.layer = "split" if first.pattern is not None else "merge"
    analysis.keys = list(dict.fromkeys(key for e in explanations for key in explanation_keys(e)))
    analysis.key = analysis.keys[0]
    analysis.variants = list(dict.fromkeys(e.merge for e in explanations if e.merge))
    where = f"piece {analysis.piece_index} {analysis.piece!r}"
    also = "; ".join(e.describe() for e in explanations[1:])
    analysis.detail = (f"{'pre-tokenization' if first.pattern else 'merging'} differs at {where}: the reference"
                       f" run again with {first.describe()} gives exactly the implementation's ids"
                       + (f" (so does {also})" if also else "")
                       + (". def-bpe encodes each word on its own, so the split decides which merges can happen"
                          if first.pattern else f"; the reference follows {semantics}"))
    return analysis


#: The Unicode normalization forms a normalizer may apply.
NORMAL_FORMS = ("NFC", "NFD", "NFKC", "NFKD")


def _normalized_otherwise(reference: Any, text: str, expected: Sequence[int], spelled: bytes) -> Analysis | None:
    """The implementation's ids spell the text as the running Python's Unicode tables normalize it, where the
    reference's normalizer, the library's, does otherwise (its tables are older: a mark assigned since has no
    combining class there): the normalizer's Unicode version; None when that is not so."""
    kinds = getattr(getattr(reference, "pipeline", None), "normalizer_kinds", ())
    forms = [kind for kind in kinds if kind in NORMAL_FORMS]
    if not forms or len(forms) != len(kinds):  # only a normalizer of forms alone is run otherwise
        return None
    other = text
    for form in forms:
        other = unicodedata.normalize(form, other)
    own = b"".join(span[3] or b"" for span in _spans(reference, expected))
    if spelled != other.encode("utf-8") or spelled == own:
        return None
    return Analysis("bytes", "def-utf8",
                    f"the implementation's ids spell the text normalized ({'+'.join(forms)}) by other Unicode tables"
                    f" than the file's own library's, as Python's (Unicode {unicodedata.unidata_version}) do:"
                    f" {other!r}, where the library's normalizer gives {own.decode('utf-8', 'replace')!r}",
                    "normalizer:unicode-version")


def analyse(reference: Any, text: str, expected: list[int], actual: list[int], special: bool,
            encode_alone: Callable[[str], Answer] | None, reruns: Reruns | None = None) -> Analysis:
    """Which layer differs, and why (see the module docstring).  ``reruns`` holds the reference's variant
    tables across calls (built here when not given); ``encode_alone`` asks the implementation for one piece."""
    reruns = reruns if reruns is not None else Reruns(reference)
    data = text.encode("utf-8")
    specials = {token: name for name, token in reference.special_tokens.items()}
    mine, theirs = [t for t in expected if t in specials], [t for t in actual if t in specials]
    if mine != theirs:
        return _special_analysis(specials, mine, theirs, special)
    if special and mine:
        # The stretches between the special tokens are ordinary text, each encoded on its own: the first that
        # differs is diagnosed as such (cut into words, read otherwise by the variants).
        stretch = _first_differing_stretch(reference, expected, actual, frozenset(specials))
        if stretch is not None:
            part, part_expected, part_actual = stretch
            analysis = analyse(reference, part, part_expected, part_actual, False, encode_alone, reruns)
            analysis.detail = f"in the text {part!r} between the special tokens read: {analysis.detail}"
            return analysis
    # Allowed or not, no special token is read in the text (a tokenizer.json's library reads them in every text,
    # so each of its texts comes allowed): it is ordinary text, cut into words and read otherwise by the variants.
    special = special and bool(mine)
    spans = _spans(reference, actual)
    spelled = b"".join(s[3] or b"" for s in spans)
    unknown = [s[2] for s in spans if s[3] is None]
    if unknown or spelled != data:
        otherwise = None if unknown else _normalized_otherwise(reference, text, expected, spelled)
        if otherwise is not None:
            return otherwise
        first = next((i for i, (x, y) in enumerate(zip(spelled, data, strict=False)) if x != y),
                     min(len(spelled), len(data)))
        why = (f"ids {sorted(set(unknown))[:5]} are not in the vocabulary" if unknown
               else f"their bytes first differ from the text's UTF-8 at byte {first}:"
               f" {spelled[first:first + 8]!r} instead of {data[first:first + 8]!r}")
        return Analysis("bytes", "thm-bpe-roundtrip",
                        f"the implementation's ids do not spell the text ({why}): changed text (normalisation),"
                        " a wrong byte table or ids of another vocabulary",
                        "bytes:not-in-vocabulary" if unknown else "bytes:changed-text")
    boundaries = {s[0] for s in spans} | {len(data)}
    pieces = [text] if special else reference.pre_tokenize(text)
    ref_spans = _spans(reference, expected)
    semantics = getattr(reference, "semantics", None) or "sequential"
    offset = 0
    char_offset = 0
    for index, piece in enumerate(pieces):
        size = len(piece.encode("utf-8"))
        start, end = offset, offset + size
        crossing = start not in boundaries or end not in boundaries
        mine = [s[2] for s in ref_spans if start <= s[0] < end]
        theirs = [s[2] for s in spans if start <= s[0] < end]
        if crossing or mine != theirs:
            analysis = Analysis("merge", "def-bpe", "", "", piece, index, (start, end))
            try:
                explanations = [] if special else reruns.explain(text, expected, actual, encode_alone)
            except Exception:
                explanations = []
            if explanations:
                if explanations[0].pattern is not None and reruns.pattern is not None:  # one bare pattern
                    found = matched_alternative(reruns.pattern, text, char_offset)
                    analysis.alternative = None if found is None else f"{found[0]}: {found[1]}"
                _explained(analysis, explanations, semantics)
                if all(explanation.pattern is None for explanation in explanations):
                    # A merge variant gives the ids; a cut may too (inside white space, where a greedy merge and
                    # a pattern that cuts runs otherwise give the same tokens): both keys fit, the text joins the
                    # group its cause's other texts made (``groups.Classifier.choose``).
                    other = Analysis("merge", "def-bpe", "", "", piece, index, (start, end))
                    _by_piece(other, reruns, reference, text, data, char_offset, crossing, mine, theirs, spans,
                              ref_spans, encode_alone, special, semantics)
                    if other.layer == "split":
                        analysis.keys.append(other.key)
                return analysis
            _by_piece(analysis, reruns, reference, text, data, char_offset, crossing, mine, theirs, spans,
                      ref_spans, encode_alone, special, semantics)
            return analysis
        offset = end
        char_offset += len(piece)
    return Analysis("merge", "def-bpe", "the id lists differ, but no piece could be singled out", "merge")


def _by_piece(analysis: Analysis, reruns: Reruns, reference: Any, text: str, data: bytes, char_offset: int,
              crossing: bool, mine: list[int], theirs: list[int], spans: list[tuple[int, int, int, bytes | None]],
              ref_spans: list[tuple[int, int, int, bytes | None]], encode_alone: Callable[[str], Answer] | None,
              special: bool, semantics: str) -> None:
    """The analysis of the first differing piece when no known variant explains the whole text."""
    piece = analysis.piece or ""
    start, end = analysis.piece_bytes or (0, 0)
    inside = [s for s in spans if start <= s[0] < end]
    boundaries = {s[0] for s in spans} | {len(data)}
    none = "no known variant reproduces the implementation's ids on the whole text"
    alone = encode_alone(piece) if encode_alone is not None and not crossing else None
    cut = None if crossing else _cut_inside(reruns, piece, inside)
    if crossing or (isinstance(alone, list) and alone == mine) or cut is not None:
        _split(analysis, reruns, text, data, char_offset, special, crossing, cut, ref_spans, boundaries, none)
        return
    _merge_analysis(analysis, reruns, piece, theirs, semantics, none)
    # A cut inside a run of white space, which patterns make too (\s+(?!\S) before the last space): a split, or the
    # merge just found; both keys fit, and the text joins the group its cause's other texts made (``choose``).
    cut = None if crossing else _cut_inside(reruns, piece, inside, white_space=True)
    if cut is not None:
        merge_keys, merge_detail = analysis.keys or [analysis.key], analysis.detail
        _split(analysis, reruns, text, data, char_offset, special, crossing, cut, ref_spans, boundaries, none)
        analysis.keys = [analysis.key, *merge_keys]
        analysis.detail += f" (or, the cut being inside white space, {merge_detail})"


def _merge_analysis(analysis: Analysis, reruns: Reruns, piece: str, theirs: list[int], semantics: str,
                    none: str) -> None:
    """``analysis`` as a merge of its piece, named by the merge variants that give the implementation's tokens."""
    index = analysis.piece_index
    try:
        agreeing = reruns.variants.agreeing(piece.encode("utf-8"), theirs)
    except Exception:  # a model whose tables the variants cannot be built from
        agreeing = []
    analysis.variants = agreeing
    named = [name for name in agreeing if name != "sequential"]
    if named:
        analysis.keys = [f"merge:{name}" for name in named]
        analysis.key = analysis.keys[0]
        which = "; ".join(f"{name}: {VARIANT_TEXT[name]}" for name in agreeing)
        analysis.detail = (f"both cut the same piece {index} {piece!r}, but merge it differently: the"
                           f" implementation's tokens of it agree with {which} (spec/variants.py), the reference"
                           f" follows {semantics}; {none}")
        return
    analysis.layer = "merge"
    analysis.key = "merge"
    analysis.detail = (f"both cut the same piece {index} {piece!r}, but merge it differently, and the"
                       f" implementation's tokens of it agree with none of the variants in spec/variants.py (the"
                       f" reference follows {semantics}); {none}")


def _split(analysis: Analysis, reruns: Reruns, text: str, data: bytes, char_offset: int, special: bool,
           crossing: bool, cut: tuple[list[str], list[int]] | None, ref_spans: list[tuple[int, int, int, bytes | None]],
           boundaries: set[int], none: str) -> None:
    """``analysis`` as a split at its piece: an implementation token crosses the piece's border, the piece is cut
    into ``cut``, or (neither) encoded alone it gets the reference's ids."""
    piece, index = analysis.piece or "", analysis.piece_index
    start = (analysis.piece_bytes or (0, 0))[0]
    analysis.layer = "split"
    alt_key = ""
    if not special and reruns.pattern is not None:  # one bare pattern (a pipeline's pattern may be a default)
        found = matched_alternative(reruns.pattern, text, char_offset)
        if found is not None:
            number, source, matched = found
            analysis.alternative = f"{number}: {source}"
            alt_key = f"alt{number}:"
            alt_text = f"alternative {number} `{source}` matched {matched!r}"
        else:
            alt_text = "no alternative of the pattern could be identified"
    else:
        alt_text = "its pre-tokenizer's split steps cut it there"
    # Before the piece both cut alike: the first cut that only one of them makes is in it or at its end.
    differing = sorted(({s[0] for s in ref_spans} | {len(data)}) ^ boundaries)
    at = differing[0] if differing else start + (cut[1][0] if cut else 0)
    analysis.key = f"split:{alt_key}{kind_word(_char_at(data, text, at))}"
    how = ("an implementation token crosses the piece's border" if crossing else
           f"the implementation cuts it into {cut[0]!r}, each merged as the reference merges it" if cut
           else "encoded alone the piece gets the reference's ids, so the implementation cuts the text"
           " differently around it")
    analysis.detail = (f"pre-tokenization differs at piece {index} {piece!r}: the reference cuts this word out"
                       f" ({alt_text}); {how}. def-bpe encodes each word on its own, so the split decides which"
                       f" merges can happen; {none}")
