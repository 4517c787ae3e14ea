r"""The known ways a port encodes otherwise, run as the reference with one thing changed: the merge, the pattern.

A difference is named by the variant that reproduces the implementation's ids: ``Reruns.explain`` runs the
reference again on the failing text with each variant and compares the whole id list.

- Merge variants, the encodings of ``spec/variants.py`` (``MERGE_VARIANTS``): (i)/(ii) ``rule-rank``, (iii)
  ``bytes-rank``, (iv) ``whole-word+rule-rank`` and ``whole-word+bytes-rank``.  ``Variants`` computes them from
  tables (the spec's own functions scan the whole rule list per step, too slow for 100,000 rules).  A token's rank
  is its rule's position, or its id when the reference has no rule list (tiktoken: rank = id); the rule list of a
  rank file is then the one ``tiktoken_rules`` recovers, derived token by token only when a word needs it (the
  whole list takes seconds on cl100k).  Beside them ``longest-first``, no merging at all: the longest token at
  each position, as a greedy port encodes.
- Pattern variants (``PATTERN_VARIANTS``): the reference's pattern as a port reads it otherwise: JavaScript's
  ``\s``, contractions without ``(?i:…)`` (an engine without inline modifiers), the character classes of newer
  Unicode tables (the ``regex`` module's own instead of the reference's pinned ones).
- A missing token: the reference's own merging with one token left out of the vocabulary (a port's bundled
  vocabulary lacks it), counted only when the implementation does not make that token from its own text either,
  and cuts that text where no pre-tokenizer would (inside a character, or between two of one kind).

Each variant alone is tried first (a pattern variant with the reference's merging, a merge variant or a missing
token with the reference's pieces), then each pattern variant with each merge variant or missing token: a port
can have two bugs, and a text that both touch is explained by the pair.
"""

from __future__ import annotations

import contextlib
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bpeproof.impl.merge_loop import merge
from bpeproof.impl.pipelines.text_pipeline import PatternPipeline


def token_table(reference: Any) -> dict[int, bytes]:
    """id → bytes of every token of the reference (special tokens left out)."""
    model = getattr(reference, "model", None)
    if model is not None and hasattr(model, "token_table"):
        return dict(model.token_table())  # in the reference's own (external) ids, whatever its model
    table = {b: bytes([b]) for b in range(256)}
    for a, b, c in reference.rules:
        table[c] = table[a] + table[b]
    byte_ids = tuple(reference.byte_ids)
    return {byte_ids[t] if t < 256 else t: data for t, data in table.items()}


def _join_bytes(x: bytes, y: bytes, code: int) -> bytes:
    return x + y


def _own_rules(reference: Any) -> list[tuple[int, int, int]] | None:
    """The reference's own rule list in external ids, in order; None when it has none (a rank file)."""
    try:
        rules = reference.rules
    except Exception:
        return None
    byte_ids = tuple(reference.byte_ids)
    return [(byte_ids[a] if a < 256 else a, byte_ids[b] if b < 256 else b, c) for a, b, c in rules]


#: What each variant is, for reports (spec/variants.py).
VARIANT_TEXT = {
    "sequential": "(i) def-bpe: the rules in order, each left to right",
    "rule-rank": "(ii) lowest-rank pair first, by rule (Hugging Face tokenizers' BPE)",
    "bytes-rank": "(iii) lowest rank of the joined bytes (tiktoken's merge)",
    "whole-word+rule-rank": "(iv) a whole-word token first, else (ii)",
    "whole-word+bytes-rank": "(iv) a whole-word token first, else (iii) (tiktoken)",
    "longest-first": "no merging: the longest token at each position, left to right (a greedy port)",
}
#: The merge variants a difference is explained by ("sequential" is "rule-rank" on every valid rule list).
MERGE_VARIANTS = ("bytes-rank", "whole-word+bytes-rank", "rule-rank", "whole-word+rule-rank", "longest-first")


class Variants:
    """The encodings of ``spec/variants.py`` on one word, in the reference's ids (see the module docstring)."""

    def __init__(self, reference: Any) -> None:
        table = token_table(reference)
        self.table = table
        self.byte_id = {data[0]: token for token, data in table.items() if len(data) == 1}
        self.bytes_rank: dict[bytes, tuple[int, int]] = {bytes([b]): (-1, t) for b, t in self.byte_id.items()}
        self._pair_rank: dict[tuple[int, int], tuple[int, int]] | None = None
        self._pairs: dict[tuple[int, int], tuple[int, int] | None] = {}  # the rules recovered so far
        rules = _own_rules(reference)
        if rules is not None:
            self._pair_rank = {}
            for index, (a, b, c) in enumerate(rules):
                self._pair_rank.setdefault((a, b), (index, c))
                if c in table:
                    self.bytes_rank.setdefault(table[c], (index, c))
        else:
            for token, data in sorted(table.items()):
                if len(data) > 1:
                    self.bytes_rank.setdefault(data, (token, token))

    def pair(self, a: int, b: int) -> tuple[int, int] | None:
        """(rank, id) of the rule joining ``a`` and ``b``: from the reference's own list, or (a rank file) the rule
        ``tiktoken_rules`` recovers for the token their bytes spell, if that token is made of exactly them."""
        if self._pair_rank is not None:
            return self._pair_rank.get((a, b))
        key = (a, b)
        if key not in self._pairs:
            self._pairs[key] = self._recovered(a, b)
        return self._pairs[key]

    def _recovered(self, a: int, b: int) -> tuple[int, int] | None:
        left, right = self.table.get(a), self.table.get(b)
        if left is None or right is None:
            return None
        found = self.bytes_rank.get(left + right)
        if found is None or found[0] < 0:
            return None
        parts = self._merged(left + right, found[0], None)  # tiktoken's merge with the ranks below the token's
        if len(parts) != 2 or (self.bytes_rank[parts[0]][1], self.bytes_rank[parts[1]][1]) != (a, b):
            return None
        return found

    def _merged(self, data: bytes, below: int | None, without: int | None) -> list[bytes]:
        """``data`` merged by the lowest rank of the joined bytes (ranks under ``below``, the token ``without``
        left out)."""
        get = self.bytes_rank.get

        def code(x: bytes, y: bytes) -> int | None:
            found = get(x + y)
            if found is None or (below is not None and found[0] >= below) or found[1] == without:
                return None
            return found[0]

        return merge([bytes([b]) for b in data], code, _join_bytes)

    def rule_rank(self, data: bytes, without: int | None = None) -> list[int] | None:
        def code(a: int, b: int) -> int | None:
            found = self.pair(a, b)
            return None if found is None or found[1] == without else found[0]

        def join(a: int, b: int, rank: int) -> int:
            found = self.pair(a, b)
            assert found is not None
            return found[1]

        return merge([self.byte_id[b] for b in data], code, join)

    def bytes_rank_parts(self, data: bytes, without: int | None = None) -> list[int] | None:
        """``data`` merged by the lowest rank of the joined bytes; None when a byte has no token (a vocabulary of
        characters, such as a sentencepiece model without byte pieces)."""
        if any(b not in self.byte_id for b in data):
            return None
        return [self.bytes_rank[p][1] for p in self._merged(data, None, without)]

    def whole(self, data: bytes, fallback: Callable[[bytes, int | None], list[int] | None],
              without: int | None = None) -> list[int] | None:
        found = self.bytes_rank.get(data)
        return [found[1]] if data and found is not None and found[1] != without else fallback(data, without)

    def longest_first(self, data: bytes, without: int | None = None) -> list[int]:
        """``data`` as the longest token at each position, left to right (every byte is a token: ``encode``)."""
        found = self.bytes_rank
        out: list[int] = []
        start = 0
        while start < len(data):
            end = len(data)
            while end > start + 1 and (data[start:end] not in found or found[data[start:end]][1] == without):
                end -= 1
            out.append(found[data[start:end]][1])
            start = end
        return out

    def encode(self, name: str, data: bytes, without: int | None = None) -> list[int] | None:
        """``data`` merged by the variant ``name`` (a key of ``VARIANT_TEXT``), with the token ``without`` left out
        of the vocabulary; None when a byte has no token."""
        if any(b not in self.byte_id for b in data):
            return None
        if name in ("sequential", "rule-rank"):  # (i) = (ii) on every valid rule list (spec/variants.py)
            return self.rule_rank(data, without)
        if name == "bytes-rank":
            return self.bytes_rank_parts(data, without)
        if name == "whole-word+rule-rank":
            return self.whole(data, self.rule_rank, without)
        if name == "longest-first":
            return self.longest_first(data, without)
        return self.whole(data, self.bytes_rank_parts, without)

    def agreeing(self, data: bytes, ids: list[int]) -> list[str]:
        """The names in ``bpeproof.spec.variants.VARIANTS`` whose encoding of ``data`` is ``ids``."""
        return [name for name in VARIANT_TEXT if self.encode(name, data) == ids]


# ---------------------------------------------------------------------------
# Pattern variants
# ---------------------------------------------------------------------------


#: ECMAScript's ``\s`` as the inside of a character class: WhiteSpace and LineTerminator (U+FEFF in; U+0085 and
#: U+001C–U+001F, which Python's regex counts, out).  A port to JavaScript that keeps the pattern splits by this.
JS_SPACE = r"\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def with_js_whitespace(pattern: str) -> str | None:
    r"""``pattern`` with ``\s`` and ``\S`` read as JavaScript reads them; None when that cannot be written
    (``\S`` inside a character class)."""
    return with_space(pattern, JS_SPACE)


#: ``\s`` with U+180E MONGOLIAN VOWEL SEPARATOR, white space (Zs) until Unicode 6.3 made it a format character:
#: an engine on older tables (or a C library's ``iswspace``) cuts by this.
U180E_SPACE = r"\s\u180e"


def with_u180e_space(pattern: str) -> str | None:
    r"""``pattern`` with U+180E read as white space by ``\s`` and not by ``\S``."""
    return with_space(pattern, U180E_SPACE)


def with_space(pattern: str, body: str) -> str | None:
    r"""``pattern`` with ``\s`` read as the class whose inside is ``body`` and ``\S`` as its complement; None when
    that cannot be written (``\S`` inside a character class)."""
    out: list[str] = []
    in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            escape = pattern[index : index + 2]
            if escape == "\\s":
                out.append(body if in_class else f"[{body}]")
            elif escape == "\\S":
                if in_class:
                    return None
                out.append(f"[^{body}]")
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


def without_inline_case(pattern: str) -> str | None:
    """``pattern`` with its case-insensitive groups ``(?i:…)`` matched case-sensitively (as it is when it has
    none: one expression of a pipeline may have them, the others not)."""
    return pattern.replace("(?i:", "(?:")


def as_written(pattern: str) -> str | None:
    return pattern


def without_lookahead(pattern: str) -> str | None:
    """``pattern`` with its negative lookahead ``(?!\\S)`` dropped, as an engine without lookaround (RE2, Go's
    regexp, Rust's regex crate) has to; None when it has none."""
    return pattern.replace("(?!\\S)", "") if "(?!\\S)" in pattern else None


def lookahead_neutral(text: str) -> str:
    """``text`` with each run of white space before a non-space cut to one character (where ``\\s+(?!\\S)`` and
    ``\\s+`` cut alike)."""
    import regex

    return str(regex.sub(r"\s+(?=\S)", lambda match: match.group()[-1], text))


def lookahead_examples() -> list[str]:
    return ["  a", "a  b", "x\n\n y", "  \tb", " \n a", "a   1", "\t\tx", "a\n  b", "  !", "x \u3000y"]


#: White space to Python's ``\s`` only, and to JavaScript's only.
_PYTHON_ONLY_SPACE = frozenset("\x1c\x1d\x1e\x1f\x85")
_JS_ONLY_SPACE = frozenset("\ufeff")


def js_neutral(text: str) -> str:
    """``text`` with the characters on which the two ``\\s`` disagree replaced by ones they agree on."""
    return "".join("\t" if char in _PYTHON_ONLY_SPACE else "!" if char in _JS_ONLY_SPACE else char for char in text)


def u180e_neutral(text: str) -> str:
    """``text`` with U+180E replaced by U+00AD, a format character to both readings."""
    return text.replace("\u180e", "\xad")


def u180e_examples() -> list[str]:
    return [template.format(c="\u180e") for template in ("{c}", "a{c}b", " {c}a", "{c} a", "a {c}", "a{c} ", "{c}\n",
                                                         "x{c}{c}y", "{c}'s", "{c}1", " {c} ", "a{c}  b", "{c}!")]


def case_neutral(text: str) -> str:
    """``text`` with the letters after each apostrophe in lower case (where case-sensitive contractions agree)."""
    import regex

    return str(regex.sub(r"(['\u2019])(\p{L}+)", lambda match: match.group(1) + match.group(2).lower(), text))


def unicode_neutral(text: str) -> str:
    """``text`` with the code points whose class changed between Unicode versions replaced by stand-ins."""
    from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins

    return str(stand_ins(text))


def js_examples() -> list[str]:
    # White space to Python only (U+FEFF, white space to JavaScript only, is often a port's other bug: a missing
    # token for its bytes, a decode that drops it), in short contexts, trailing white space among them (which a
    # port that drops (?!\S) cuts as the reference does, JavaScript's \s not).
    return [template.format(c=char) for char in sorted(_PYTHON_ONLY_SPACE)
            for template in ("{c}", " {c}", "{c} ", "  {c}", "{c}a", " {c}a", "a {c}b", "{c}{c}", "a{c}", "{c}\n",
                             "{c}!", "{c}  ", "a{c} ", "{c} a", " {c} ", "{c}\ta", "x{c}  y")]


def case_examples() -> list[str]:
    return [f"{before}{apostrophe}{ending}" for apostrophe in ("'", "\u2019") for before in ("", "I", "DON")
            for ending in ("S", "T", "LL", "VE", "Re", "M", "D")]


def unicode_examples() -> list[str]:
    from bpeproof.impl.pre_tokenizers.unicode_classes import changed_code_points

    changed = changed_code_points()
    chars = [chr(code) for code in changed[:: max(1, len(changed) // 6)][:6]]
    return [template.format(c=char) for char in chars for template in ("{c}", "a{c}", "{c}s", "'{c}", " {c}1")]


@dataclass(frozen=True)
class PatternVariant:
    """A way a port reads the reference's pattern otherwise: its name in group keys, what it does, the pattern it
    gives (None: not possible), the text with what it changes taken out, short texts on which it differs from the
    reference (the two checks that it is the cause, ``Reruns.needed``), and whether code points are classified as
    the reference does (``stand_ins``).  ``cut``: how it cuts a text when that is no rewrite of the expressions
    (``special_names_variant``)."""

    name: str
    description: str
    transform: Callable[[str], str | None]
    neutral: Callable[[str], str]
    examples: Callable[[], list[str]]
    pinned: bool = True
    cut: Callable[[str], list[str]] | None = None


PATTERN_VARIANTS = (
    PatternVariant("js-whitespace", "\\s is JavaScript's (U+0085 and U+001C–U+001F not white space, U+FEFF white"
                   " space)", with_js_whitespace, js_neutral, js_examples),
    PatternVariant("case-sensitive", "the contractions are matched case-sensitively ((?i:…) dropped, as an engine"
                   " without inline modifiers does)", without_inline_case, case_neutral, case_examples),
    PatternVariant("unicode-version", "code points are classified by the regex module's newer Unicode tables, not"
                   " by the version the reference pins", as_written, unicode_neutral, unicode_examples, pinned=False),
    PatternVariant("u180e-space", "U+180E is white space to \\s (as before Unicode 6.3, in engines on older tables)",
                   with_u180e_space, u180e_neutral, u180e_examples),
    PatternVariant("no-lookahead", "the negative lookahead (?!\\S) is dropped, as an engine without lookaround"
                   " (RE2, Go, Rust's regex crate) must: a run of white space is no longer cut before its last"
                   " character", without_lookahead, lookahead_neutral, lookahead_examples),
)


def special_names_variant(reference: Any) -> PatternVariant | None:
    """The reference's special tokens' names cut out of the text before its pre-tokenization, where they are not
    allowed, and each then pre-tokenized and encoded as ordinary text on its own (a port that finds every name
    first and only then asks whether it is allowed); None without special tokens."""
    import re

    names = sorted(reference.special_tokens, key=lambda name: (-len(name), name))
    if not names:
        return None
    finder = re.compile("|".join(map(re.escape, names)))

    def cut(text: str) -> list[str]:
        out: list[str] = []
        start = 0
        for match in finder.finditer(text):
            out += reference.pre_tokenize(text[start : match.start()]) + reference.pre_tokenize(match.group())
            start = match.end()
        out += reference.pre_tokenize(text[start:])
        return out

    def neutral(text: str) -> str:
        return finder.sub("", text)

    def examples() -> list[str]:
        return [template.format(n=name) for name in names[:2]
                for template in ("a{n}b", " {n}", "{n} a", "{n}'s", "x{n}1", "  {n}", "{n}\n", "hello {n}world")]

    return PatternVariant("special-names", "special tokens' names are cut out of the text where they are not"
                          " allowed, each then encoded as ordinary text on its own", as_written, neutral, examples,
                          cut=cut)


#: Characters that some engines' whitespace classes hold and others not (Python's ``str.isspace`` and
#: ``\s`` of the regex module, JavaScript's ``\s``, Unicode's White_Space, C's ``isspace``, older Unicode):
#: a cut next to one is a class change, since an implementation may well have split there.
CONTESTED_SPACES = frozenset("\x1c\x1d\x1e\x1f\x85\u180e\u200b\ufeff")


def same_kind(char: str) -> str:
    """The kind of character a pre-tokenizer may cut between (letter, digit, space, punctuation…): two
    neighbours of one kind are cut apart by a split only rarely, by a merge often."""
    if char in CONTESTED_SPACES:
        return f"contested {ord(char):04X}"
    return "Z" if char.isspace() else unicodedata.category(char)[0]


def may_cut(left: str, right: str) -> bool:
    """Whether a pre-tokenizer may cut between the neighbours ``left`` and ``right``: of two kinds (``same_kind``),
    or both white space, since patterns cut runs of it (``\\s+(?!\\S)`` leaves the last one to the word after it,
    ``\\s*[\\r\\n]`` ends at a line break) and a port that cuts them otherwise cuts between two spaces."""
    kind = same_kind(left)
    return kind != same_kind(right) or kind == "Z"


def cut_by_merge(text: str, ids: Sequence[int], table: dict[int, bytes]) -> bool:
    """Whether the tokens ``ids`` of ``text`` cut inside a character or where no pre-tokenizer cuts (``may_cut``):
    a cut that the merge (the vocabulary) made."""
    data = text.encode("utf-8")
    starts = {0}
    position = 0
    for char in text:
        position += len(char.encode("utf-8"))
        starts.add(position)
    position = 0
    for token in ids[:-1]:
        position += len(table.get(token, b""))
        if position not in starts:
            return True
        index = len(data[:position].decode("utf-8"))
        if 0 < index < len(text) and not may_cut(text[index - 1], text[index]):
            return True
    return False


# ---------------------------------------------------------------------------
# Re-running the reference
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Explanation:
    """A variant run that reproduces the implementation's ids: the pattern variant, the merge variant (None: the
    reference's), the token left out of the vocabulary (a port's vocabulary lacks it), the pieces of the text."""

    pattern: PatternVariant | None
    merge: str | None
    pieces: tuple[str, ...]
    missing: bytes | None = None

    def describe(self) -> str:
        what = []
        if self.pattern is not None:
            how = "the text cut so that" if self.pattern.cut is not None else "the pattern read so that"
            what.append(f"{how} {self.pattern.description}, which cuts the text into {list(self.pieces)!r}")
        if self.merge is not None:
            what.append(f"each piece merged by {self.merge}: {VARIANT_TEXT[self.merge]}")
        if self.missing is not None:
            what.append(f"the token {self.missing!r} left out of the vocabulary (the implementation does not make"
                        " it even from its own text)")
        return " and ".join(what)


class Reruns:
    """The reference run again with one variant (or one of each kind) on a failing text; the tables are built
    once per check, on first use."""

    def __init__(self, reference: Any) -> None:
        self.reference = reference
        self._variants: Variants | None = None
        self._words: dict[bytes, list[int] | None] = {}
        self._confirmed: dict[str, bool] = {}  # pattern variant → whether the implementation follows it
        self._cutters: dict[str, Callable[[str], list[str]] | None] = {}  # pattern variant → its pre-tokenizer
        special = special_names_variant(reference)
        #: The pattern variants tried: ``PATTERN_VARIANTS`` and, with special tokens, ``special_names_variant``.
        self.pattern_variants = PATTERN_VARIANTS + ((special,) if special is not None else ())
        pattern = getattr(reference, "pattern", None)
        #: The reference's pattern when it is one bare pattern (its alternatives name a split), else None.
        pipeline = getattr(reference, "pipeline", None)  # a Tokenizer's; a stand-in may have none
        self.pattern = pattern if ((pipeline is None or isinstance(pipeline, PatternPipeline))
                                   and getattr(reference, "pretokenizer", None) is None
                                   and isinstance(pattern, str)) else None
        #: The merge variant that is the reference's own (a missing token is left out of it).
        self.own_variant = "whole-word+bytes-rank" if getattr(reference, "semantics", None) == "tiktoken" \
            else "rule-rank"

    @property
    def variants(self) -> Variants:
        if self._variants is None:
            self._variants = Variants(self.reference)
        return self._variants

    def own(self, data: bytes) -> list[int] | None:
        """One word merged as the reference merges it (None: it cannot be)."""
        if data not in self._words:
            if len(self._words) > 50_000:
                self._words.clear()
            try:
                self._words[data] = list(self.reference.model.encode_word(data))
            except Exception:
                self._words[data] = None
        return self._words[data]

    def pieces(self, variant: PatternVariant, text: str) -> list[str] | None:
        """``text`` cut by the reference with every regular expression of its pre-tokenization read as the
        pattern variant reads it, in every stage (the pattern, each split step, each ``Split`` and ``ByteLevel``
        step of a tokenizer.json's pipeline: ``Tokenizer.rewritten_pre_tokenize``), the words as the reference's
        own ``pre_tokenize`` gives them; None when the variant does not apply (no regular expression, or one it
        cannot rewrite)."""
        if variant.name not in self._cutters:
            rewrite = getattr(self.reference, "rewritten_pre_tokenize", None)
            cutter = variant.cut
            if cutter is None and rewrite is not None:
                with contextlib.suppress(Exception):
                    cutter = rewrite(variant.transform, variant.pinned)
            self._cutters[variant.name] = cutter
        cutter = self._cutters[variant.name]
        return None if cutter is None else list(cutter(text))

    def _merged(self, pieces: Iterable[str], merge: Callable[[bytes], list[int] | None], actual: Sequence[int],
                ) -> list[int] | None:
        """The ids of ``pieces`` each merged by ``merge``; None as soon as they part from ``actual``."""
        out: list[int] = []
        for piece in pieces:
            ids = merge(piece.encode("utf-8"))
            if ids is None or list(actual[len(out) : len(out) + len(ids)]) != ids:
                return None
            out += ids
        return out

    def _first_differing(self, pieces: Sequence[str], actual: Sequence[int]) -> tuple[int, int] | None:
        """(index, offset in ``actual``) of the first piece whose own merge ``actual`` does not hold there."""
        offset = 0
        for index, piece in enumerate(pieces):
            ids = self.own(piece.encode("utf-8"))
            if ids is None or list(actual[offset : offset + len(ids)]) != ids:
                return index, offset
            offset += len(ids)
        return None

    def _reproduces(self, pieces: Sequence[str], merge: Callable[[bytes], list[int] | None],
                    actual: Sequence[int], first: tuple[int, int] | None = None) -> bool:
        """Whether merging ``pieces`` gives ``actual``, stopping at the first piece that does not.  ``first``:
        the piece where the reference's own merging parts from ``actual`` (tried first: where a variant that
        merges the pieces before it as the reference does must differ), and its offset."""
        if first is not None:
            index, offset = first
            ids = merge(pieces[index].encode("utf-8"))
            if ids is None or list(actual[offset : offset + len(ids)]) != ids:
                return False
        merged = self._merged(pieces, merge, actual)
        return merged is not None and len(merged) == len(actual)

    def explain(self, text: str, expected: Sequence[int], actual: Sequence[int],
                probe: Callable[[str], Any] | None = None) -> list[Explanation]:
        """The variant runs that reproduce ``actual``: each variant alone first (a pattern variant, a merge
        variant, a token missing from the vocabulary), pairs of a pattern variant and a merge change only when
        none does.  ``probe(text)`` asks the implementation for a text's ids: a pattern variant counts only when
        the text without what it changes is answered right, a token as missing only when the implementation does
        not make it from its own text."""
        own_pieces = self.reference.pre_tokenize(text)
        variant_pieces: list[tuple[PatternVariant, list[str]]] = []
        for variant in self.pattern_variants:
            with contextlib.suppress(Exception):
                pieces = self.pieces(variant, text)
                # The variant cuts the same words otherwise (a normalizer may have changed them from the text).
                if pieces is not None and "".join(pieces) == "".join(own_pieces) and pieces != own_pieces:
                    variant_pieces.append((variant, pieces))
        found = [Explanation(variant, None, tuple(pieces)) for variant, pieces in variant_pieces
                 if self._reproduces(pieces, self.own, actual) and self.needed(variant, text, probe)]
        first = self._first_differing(own_pieces, actual)
        found += [Explanation(None, name, tuple(own_pieces)) for name in MERGE_VARIANTS
                  if self._reproduces(own_pieces, self._merge(name), actual, first)]
        found += [Explanation(None, None, tuple(own_pieces), missing) for missing in
                  self._missing(own_pieces, expected, actual, probe, first)]
        if found:
            return found
        for variant, pieces in variant_pieces:
            pairs = [Explanation(variant, name, tuple(pieces)) for name in MERGE_VARIANTS
                     if self._reproduces(pieces, self._merge(name), actual)]
            own_ids = [token for piece in pieces for token in (self.own(piece.encode("utf-8")) or [])]
            pairs += [Explanation(variant, None, tuple(pieces), missing) for missing in
                      self._missing(pieces, own_ids, actual, probe)]
            if pairs and self.needed(variant, text, probe):
                found += pairs
        return found

    def needed(self, variant: PatternVariant, text: str, probe: Callable[[str], Any] | None) -> bool:
        """Whether the pattern variant, which gives the implementation's ids on ``text``, is their cause: the
        implementation answers ``text`` with what the variant changes taken out as the reference does, and three
        in four of the variant's short examples on which it differs from the reference (``PatternVariant.examples``;
        when there are two at least) as the variant does (else a port with another bug merely agrees with the
        variant on this text)."""
        if probe is None:
            return True
        neutral = variant.neutral(text)
        if neutral != text and probe(neutral) != list(self.reference.encode(neutral)):
            return False
        if variant.name not in self._confirmed:
            agree = differ = 0
            for example in variant.examples():
                pieces = self.pieces(variant, example)
                ids = None if pieces is None else [t for piece in pieces for t in self.own(piece.encode()) or []]
                if ids is None or ids == list(self.reference.encode(example)):
                    continue
                differ += 1
                agree += probe(example) == ids
            self._confirmed[variant.name] = differ < 2 or 4 * agree >= 3 * differ
        return self._confirmed[variant.name]

    def _missing(self, pieces: Sequence[str], expected: Sequence[int], actual: Sequence[int],
                 probe: Callable[[str], Any] | None, first: tuple[int, int] | None = None) -> list[bytes]:
        """The token of ``expected`` (one of the first three ``actual`` lacks) whose absence from the vocabulary
        gives ``actual``, and which the implementation does not make from its own text either."""
        if probe is None:
            return []
        made = set(actual)
        table = self.variants.table
        if self.cut_otherwise(pieces, actual):
            return []  # the pieces the implementation produced, each merged as the reference merges: a cut
        for token in [t for t in dict.fromkeys(expected) if t not in made][:3]:
            data = table.get(token)
            if data is None or not self._reproduces(pieces, self._merge(self.own_variant, token), actual, first):
                continue
            try:
                own_text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if list(self.reference.encode(own_text)) != [token]:
                continue
            made_alone = probe(own_text)
            if isinstance(made_alone, list) and made_alone != [token] and cut_by_merge(own_text, made_alone, table):
                return [data]
        return []

    def cut_otherwise(self, pieces: Sequence[str], actual: Sequence[int], longest: int = 8) -> bool:
        """Whether ``actual`` is the reference's own merging of pieces cut otherwise than ``pieces`` where a
        pre-tokenizer may cut (``may_cut``, or at a border of ``pieces``): the pieces the implementation produced
        (runs of at most ``longest`` of its tokens, re-encoded one by one), not a token its vocabulary lacks."""
        table = self.variants.table
        data = "".join(pieces).encode("utf-8")
        borders = {0}
        for piece in pieces:
            borders.add(max(borders) + len(piece.encode("utf-8")))
        offsets = [0]
        for token in actual:
            token_bytes = table.get(token)
            if token_bytes is None:
                return False
            offsets.append(offsets[-1] + len(token_bytes))
        if offsets[-1] != len(data):
            return False

        def cuttable(offset: int) -> bool:
            if offset in borders:
                return True
            try:
                before, after = data[:offset].decode("utf-8"), data[offset:].decode("utf-8")
            except UnicodeDecodeError:
                return False  # inside a character: only a merge cuts there
            return bool(before) and bool(after) and may_cut(before[-1], after[0])

        reached = [False] * len(offsets)
        reached[0] = True
        for end in range(1, len(offsets)):
            if end < len(offsets) - 1 and not cuttable(offsets[end]):
                continue
            for start in range(max(0, end - longest), end):
                if reached[start] and self.own(data[offsets[start] : offsets[end]]) == list(actual[start:end]):
                    reached[end] = True
                    break
        return reached[-1]

    def _merge(self, name: str, without: int | None = None) -> Callable[[bytes], list[int] | None]:
        def merge(data: bytes) -> list[int] | None:
            try:
                return self.variants.encode(name, data, without)
            except Exception:
                return None

        return merge
