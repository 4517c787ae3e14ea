"""The reference run again with one thing changed, to name a port's difference by the change that reproduces it.

``Reruns.explain`` runs the reference again on a failing text with each known variant and compares the whole id
list: a pattern variant (``bpeproof.impl.pre_tokenizers.pattern_variants``: the pattern as a port reads it
otherwise, with the reference's merging), a merge variant (``bpeproof.impl.models.variants``: the reference's
pieces merged otherwise), a missing token (the reference's own merging with one token left out of the vocabulary,
a port's bundled vocabulary lacking it, counted only when the implementation does not make that token from its
own text either, and cuts that text where no pre-tokenizer would: inside a character, or between two of one kind).

Each variant alone is tried first, then each pattern variant with each merge variant or missing token: a port can
have two bugs, and a text that both touch is explained by the pair.  The merge variants run on the reference's
tables in its own ids (``reference_table``): a token's rank is its rule's position, or its id when the reference
has no rule list (tiktoken: rank = id), whose rules are then recovered only where a word needs them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bpeproof.impl.models.variants import MERGE_VARIANTS, VARIANT_TEXT, MergeTable
from bpeproof.impl.pipelines.text_pipeline import PatternPipeline
from bpeproof.impl.pre_tokenizers.pattern_variants import PATTERN_VARIANTS, PatternVariant, special_names_variant

__all__ = [
    "CONTESTED_SPACES",
    "Explanation",
    "Reruns",
    "cut_by_merge",
    "may_cut",
    "reference_table",
    "same_kind",
    "token_table",
]


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


def _own_rules(reference: Any) -> list[tuple[int, int, int]] | None:
    """The reference's own rule list in external ids, in order; None when it has none (a rank file)."""
    try:
        rules = reference.rules
    except Exception:  # only the sequential semantics has a rule list: the others' is recovered when needed
        return None
    byte_ids = tuple(reference.byte_ids)
    return [(byte_ids[a] if a < 256 else a, byte_ids[b] if b < 256 else b, c) for a, b, c in rules]


def reference_table(reference: Any) -> MergeTable:
    """The merge variants' tables of the reference, in its own ids (see the module docstring)."""
    return MergeTable.of_tokens(token_table(reference), _own_rules(reference))


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
        self._variants: MergeTable | None = None
        self._words: dict[bytes, list[int] | None] = {}
        self._confirmed: dict[str, bool] = {}  # pattern variant → whether the implementation follows it
        self._cutters: dict[str, Callable[[str], list[str]] | None] = {}  # pattern variant → its pre-tokenizer
        special = special_names_variant(reference.special_tokens, reference.pre_tokenize)
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
    def variants(self) -> MergeTable:
        """The merge variants' tables of the reference (``reference_table``), built on first use."""
        if self._variants is None:
            self._variants = reference_table(self.reference)
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
                try:
                    cutter = rewrite(variant.transform, variant.pinned)
                except Exception:  # an expression the rewrite leaves unreadable: the variant does not apply
                    cutter = None
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
            try:
                pieces = self.pieces(variant, text)
            except Exception:  # a rewritten expression that fails on this text: the variant does not explain it
                continue
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
        table = self.variants.token_bytes
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
        table = self.variants.token_bytes
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
