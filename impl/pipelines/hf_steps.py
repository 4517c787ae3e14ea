"""The pre-tokenizer steps of a ``tokenizer.json``, each cutting from one computation of where it cuts: on
``Piece`` objects (text with alignments) and on plain strings.

A step (``PreTokenizerCut``) says which characters of a text its pieces are: ``spans(text)``, the step's matches
formed into pieces as the library's ``NormalizedString::split`` forms them (``split_spans``).  On a ``Piece``
(calling the step, as ``HFPipeline`` runs it when it follows alignments) the piece is cut at those spans; on a
plain string (``words``) the string is sliced at them.  A step that changes its text first (``Metaspace``: spaces
to the replacement character, the replacement before the piece; ``ByteLevel``: a space before it) decides when by
one predicate for both.  Where ``words`` is a faster formulation than slicing at the spans (one compiled
expression's ``findall`` for the character classes, a piece from each replacement character for ``Metaspace``),
``proofs_tests/tests/impl/test_hf_steps.py`` checks it equal to the spans on generated text.

``plain_words`` chains the steps' ``words`` into one function of a stretch of text, for a pipeline whose normalizer
reads only text and whose steps map no bytes (``HFPipeline.cut_by``): there the pieces and their alignments would
only be built to be read as text.  ``Metaspace`` with ``prepend_scheme: first`` reads where its piece starts in the
original text; the plain words answer that exactly only where the first piece of the stretch that starts the text is
the one piece that starts there (``plain_words`` says when), else the step stays on the pieces.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any

import regex

from bpeproof.impl.formats.vocab import PreTokenizerStep
from bpeproof.impl.normalizers.hf import Piece, byte_level_piece, prepend, replace
from bpeproof.impl.pre_tokenizers import hf_chars, splitter
from bpeproof.impl.pre_tokenizers.char_table import char_table
from bpeproof.impl.pre_tokenizers.hf_splits import GPT2_SPLIT, SplitStep, split_spans

__all__ = [
    "ByteLevelCut",
    "CharClassCut",
    "MetaspaceCut",
    "PreTokenizerCut",
    "Rewrite",
    "SplitCut",
    "Step",
    "WhitespaceCut",
    "Words",
    "cut_pieces",
    "cuts_from_file",
    "needs_alignment",
    "pattern_step",
    "plain_words",
    "steps_from_file",
]

#: A pre-tokenizer step: one piece to the pieces it is cut into.
Step = Callable[[Piece], list[Piece]]
#: The words of a plain stretch of text.
Words = Callable[[str], list[str]]
#: How every regular expression of a pipeline is read otherwise (``HFPipeline.rewritten``): a transform of each
#: expression's source (``SplitStep.rewritten``) and whether the classes stay ``UNICODE_VERSION``'s.
Rewrite = tuple[Callable[[str], str | None], bool]


def cut_pieces(piece: Piece, spans: Iterable[tuple[int, int]]) -> list[Piece]:
    """The non-empty spans of ``piece`` as pieces of their own."""
    return [piece.cut(start, end) for start, end in spans if end > start]


@cache
def _single(name: str) -> Any:
    """A regex matching one character of a table of ``bpeproof.impl.pre_tokenizers.hf_chars``."""
    return regex.compile(f"[{hf_chars.class_body(name)}]")


@cache
def _whitespace_runs() -> Any:
    """The ``Whitespace`` pre-tokenizer's ``\\w+|[^\\w\\s]+`` with the regex crate's classes."""
    word, space = hf_chars.class_body("word"), hf_chars.class_body("whitespace")
    return regex.compile(f"[{word}]+|[^{word}{space}]+")


class PreTokenizerCut:
    """One pre-tokenizer step: where it cuts a text (``spans``), run on a piece (calling it) or on a string
    (``words``, ``text_words``)."""

    #: It puts text before a piece: a later piece may then start where the original text does.
    inserts: bool = False
    #: It drops characters: its first piece may start after the text does.
    removes: bool = False
    #: It reads whether its piece starts the original text (``Metaspace``, ``prepend_scheme: first``).
    reads_start: bool = False
    #: Its words are plain text (False: it maps them to GPT-2's byte characters, which only the pieces do).
    plain: bool = True

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The spans of the pieces of ``text`` (after the step's change of the text, if any), empty ones too."""
        raise NotImplementedError

    def words(self, text: str) -> list[str]:
        """The non-empty pieces of ``text`` (after the step's change of the text, if any): ``spans`` sliced."""
        return [text[start:end] for start, end in self.spans(text) if end > start]

    def text_words(self, starts_text: bool) -> Words:
        """The step on a plain string: its change of the text, then ``words``; ``starts_text``: the string is the
        first piece of the stretch that starts the original text."""
        return self.words

    def __call__(self, piece: Piece) -> list[Piece]:
        return cut_pieces(piece, self.spans(piece.text))


class SplitCut(PreTokenizerCut):
    """``Split`` (and ``pattern_step``'s rewritten expressions): the matches of an expression, by its behaviour."""

    def __init__(self, step: SplitStep) -> None:
        self._step = step
        self.removes = step.behavior == "removed"
        # An expression a hand-written C scanner runs, its matches kept apart: the scanner's words are the step's
        # (its matches cover a text), without the regex module's call per piece (GPT-2's, after Digits).
        plain = type(step) is SplitStep and step.behavior == "isolated" and not step.invert
        self._scanner = splitter.c_scanner(step.source) if plain else -1
        self._split: Callable[[str, bytes, int], list[str]] | None = None
        if self._scanner >= 0:
            from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]

            self._split = _fastenc.split_pattern

    def spans(self, text: str) -> list[tuple[int, int]]:
        step = self._step
        return split_spans(len(text), step.matches(text), step.behavior, step.invert)

    def words(self, text: str) -> list[str]:
        if self._split is not None and len(text) < splitter.C_TEXT_LIMIT:
            return self._split(text, char_table(), self._scanner)
        return self._step.split(text)  # (the same spans, sliced)


#: For each behaviour, an expression whose ``findall`` gives the pieces of a split at every single character of a
#: class ``{c}`` (``split_spans`` of one-character matches), checked against the spans by the tests.
_CLASS_PIECES = {
    "isolated": "[{c}]|[^{c}]+",
    "removed": "[^{c}]+",
    "merged_with_previous": "[^{c}]*[{c}]|[^{c}]+",
    "merged_with_next": "[{c}]?[^{c}]+|[{c}]",
    "contiguous": "[{c}]+|[^{c}]+",
}


@cache
def _class_pieces(name: str, behavior: str) -> Any:
    # ``re``, whose classes of many ranges are a table look-up: four times the ``regex`` module's speed here.
    return re.compile(_CLASS_PIECES[behavior].format(c=hf_chars.class_body(name)))


class CharClassCut(PreTokenizerCut):
    """``Digits``, ``WhitespaceSplit``, ``Punctuation``: a split at every character of one of the library's tables
    (``hf_chars``), by a behaviour."""

    def __init__(self, name: str, behavior: str) -> None:
        self._name, self._behavior = name, behavior
        self.removes = behavior == "removed"
        self._findall = _class_pieces(name, behavior).findall

    def spans(self, text: str) -> list[tuple[int, int]]:
        matches = [match.span() for match in _single(self._name).finditer(text)]
        return split_spans(len(text), matches, self._behavior)

    def words(self, text: str) -> list[str]:
        found: list[str] = self._findall(text)
        return found


class WhitespaceCut(PreTokenizerCut):
    """``Whitespace``: the runs of word characters and of other characters but white space."""

    removes = True

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [match.span() for match in _whitespace_runs().finditer(text)]

    def words(self, text: str) -> list[str]:
        found: list[str] = _whitespace_runs().findall(text)
        return found


class MetaspaceCut(PreTokenizerCut):
    """``Metaspace``: spaces to the replacement character, the replacement before the piece as ``prepend_scheme``
    says (``first``: only before the piece that starts the original text), and, when ``split``, a piece from each
    replacement character on (the library's split at the replacement, merged with the next)."""

    def __init__(self, replacement: str, scheme: str, split: bool) -> None:
        self._replacement, self._scheme, self._split = replacement, scheme, split
        self.inserts = scheme != "never"
        self.reads_start = scheme == "first"
        escaped = re.escape(replacement)
        self._findall = re.compile(f"[^{escaped}]+|{escaped}[^{escaped}]*").findall

    def prepends(self, text: str, starts_text: bool) -> bool:
        """Whether the replacement goes before ``text`` (spaces replaced), which does or does not start the
        original text."""
        scheme = self._scheme
        return not text.startswith(self._replacement) and (scheme == "always" or (scheme == "first" and starts_text))

    def spans(self, text: str) -> list[tuple[int, int]]:
        if not self._split:
            return [(0, len(text))]
        places = [(index, index + 1) for index, char in enumerate(text) if char == self._replacement]
        return split_spans(len(text), places, "merged_with_next")

    def words(self, text: str) -> list[str]:
        if not self._split:
            return [text] if text else []
        found: list[str] = self._findall(text)
        return found

    def text_words(self, starts_text: bool) -> Words:
        replacement, prepends, words = self._replacement, self.prepends, self.words

        def run(text: str) -> list[str]:
            text = text.replace(" ", replacement)
            if prepends(text, starts_text):
                text = replacement + text
            return words(text)

        return run

    def __call__(self, piece: Piece) -> list[Piece]:
        text = piece.text
        piece = replace(piece, [(index, index + 1) for index, char in enumerate(text) if char == " "],
                        self._replacement)
        if self.prepends(piece.text, piece.shift == 0):
            piece = prepend(piece, self._replacement)
        if not self._split:
            return [piece]
        return cut_pieces(piece, self.spans(piece.text))


class ByteLevelCut(PreTokenizerCut):
    """``ByteLevel``: a space before a piece that does not start with one when ``add_prefix_space``, GPT-2's split
    when ``use_regex``, then (``map_bytes``) every byte as GPT-2's character for it; without the mapping (the
    model maps the bytes) its words are plain text."""

    def __init__(self, add_prefix_space: bool, use_regex: bool, map_bytes: bool, rewrite: Rewrite | None) -> None:
        self._prefix = add_prefix_space
        self._splitter = SplitCut(_rewritten(SplitStep(GPT2_SPLIT), rewrite)) if use_regex else None
        self._map_bytes = map_bytes
        self.inserts = add_prefix_space
        self.plain = not map_bytes

    def spans(self, text: str) -> list[tuple[int, int]]:
        return self._splitter.spans(text) if self._splitter is not None else [(0, len(text))]

    def words(self, text: str) -> list[str]:
        if self._splitter is not None:
            return self._splitter.words(text)
        return [text] if text else []

    def text_words(self, starts_text: bool) -> Words:
        if not self._prefix:
            return self.words
        words = self.words

        def run(text: str) -> list[str]:
            return words(text if text.startswith(" ") else " " + text)

        return run

    def __call__(self, piece: Piece) -> list[Piece]:
        if self._prefix and not piece.text.startswith(" "):
            piece = prepend(piece, " ")
        pieces = cut_pieces(piece, self.spans(piece.text)) if self._splitter is not None else [piece]
        if not self._map_bytes:  # the model maps the bytes; the library's mapping could still fail on the piece
            for part in pieces:
                part.check_transformable("ByteLevel")
            return pieces
        return [byte_level_piece(part) for part in pieces]


def _rewritten(step: SplitStep, rewrite: Rewrite | None) -> SplitStep:
    """``step``, or its expression read as ``rewrite`` says; ``ValueError`` when it cannot be."""
    if rewrite is None:
        return step
    found = step.rewritten(*rewrite)
    if found is None:
        raise ValueError(f"the expression {step.pattern!r} cannot be rewritten so")
    return found


_BEHAVIORS = {"Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"}
_SNAKE = {"Isolated": "isolated", "Removed": "removed", "MergedWithPrevious": "merged_with_previous",
          "MergedWithNext": "merged_with_next", "Contiguous": "contiguous"}


def _flag(step: Mapping[str, Any], key: str, default: bool, where: str) -> bool:
    value = step.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ValueError(f"{where}: {key!r} must be true or false, not {value!r}")
    return value


def _behavior(step: Mapping[str, Any], where: str) -> str:
    value = step.get("behavior", "Isolated")
    if value not in _BEHAVIORS:
        raise ValueError(f"{where}: unknown behavior {value!r}")
    return _SNAKE[str(value)]


def _step(step: PreTokenizerStep, index: int, map_bytes: bool, rewrite: Rewrite | None = None) -> PreTokenizerCut:
    """The executable form of one (flattened) pre-tokenizer step of a tokenizer.json file."""
    value = json.loads(step.raw)
    where = f"pre-tokenizer step {index} ({step.type})"
    kind = step.type
    if kind == "Split":
        if step.pattern is None or step.behavior is None:
            raise ValueError(f"{where}: a Split step needs a pattern and a behavior")
        return SplitCut(_rewritten(SplitStep(step.pattern, step.behavior, step.invert), rewrite))
    if kind == "ByteLevel":
        return ByteLevelCut(_flag(value, "add_prefix_space", True, where), _flag(value, "use_regex", True, where),
                            map_bytes, rewrite)
    if kind == "Metaspace":
        replacement = value.get("replacement")
        if not isinstance(replacement, str) or len(replacement) != 1:
            raise ValueError(f"{where}: the replacement must be one character, not {replacement!r}")
        scheme = value.get("prepend_scheme", "always")
        if scheme not in ("always", "first", "never"):
            raise ValueError(f"{where}: unknown prepend_scheme {scheme!r}")
        if value.get("add_prefix_space") is False:
            if "prepend_scheme" in value and scheme != "never":
                raise ValueError(f"{where}: add_prefix_space false does not match the prepend_scheme {scheme!r}")
            scheme = "never"
        return MetaspaceCut(replacement, str(scheme), _flag(value, "split", True, where))
    if kind == "Digits":
        individual = _flag(value, "individual_digits", False, where)
        return CharClassCut("numeric", "isolated" if individual else "contiguous")
    if kind == "Whitespace":
        return WhitespaceCut()
    if kind == "WhitespaceSplit":
        return CharClassCut("whitespace", "removed")
    if kind == "Punctuation":
        return CharClassCut("punctuation", _behavior(value, where))
    raise ValueError(f"{where} is not supported")


def cuts_from_file(steps: Sequence[PreTokenizerStep], map_bytes: bool = True, rewrite: Rewrite | None = None
                   ) -> list[PreTokenizerCut]:
    """The steps of a file's flattened pre-tokenizer (``Vocab.pre_tokenizers``); ``ValueError`` names the first one
    the engine does not execute.  ``map_bytes=False``: the last step, a ``ByteLevel``, leaves the bytes to the
    model.  ``rewrite``: every regular expression (each ``Split`` step's, GPT-2's of a ``ByteLevel`` step) read so
    (``HFPipeline.rewritten``); ``ValueError`` when one cannot be, or there is none."""
    if rewrite is not None and not any(_has_regex(step) for step in steps):
        raise ValueError("the pre-tokenizer has no regular expression to rewrite")
    last = len(steps) - 1
    return [_step(step, index, map_bytes or index != last, rewrite) for index, step in enumerate(steps)]


def steps_from_file(steps: Sequence[PreTokenizerStep], map_bytes: bool = True, rewrite: Rewrite | None = None
                    ) -> list[Step]:
    """``cuts_from_file``, as steps on pieces."""
    return list(cuts_from_file(steps, map_bytes, rewrite))


def _has_regex(step: PreTokenizerStep) -> bool:
    if step.type == "Split":
        return step.pattern is not None
    return step.type == "ByteLevel" and json.loads(step.raw).get("use_regex", True) is not False


def needs_alignment(steps: Sequence[PreTokenizerStep]) -> bool:
    """Whether a step reads where its pieces start in the original text (``Metaspace``, ``prepend_scheme:
    first``): only then are the alignments followed."""
    for step in steps:
        if step.type == "Metaspace":
            value = json.loads(step.raw)
            if value.get("prepend_scheme", "always") == "first" and value.get("add_prefix_space") is not False:
                return True
    return False


def plain_words(cuts: Sequence[PreTokenizerCut], *, normalizes: bool, normalized_tokens: bool
                ) -> tuple[Words, Words | None] | None:
    """The steps' cuts of a plain stretch of text, chained: the words of any stretch, and (when a step reads where
    its piece starts) of the stretch that starts the original text; None when a step maps bytes, or reads where
    its piece starts and the text alone cannot tell.

    A stretch starts the original text when it is the first item of ``HFPipeline.stretches`` (no added token
    before it); of its pieces only the first does, when before the step that reads it no step put text before a
    piece (that text takes the piece's start) or dropped characters, and, where the text is normalized
    (``normalizes``), no step cut it and no normalized added token was read in it (a character the normalizer
    makes of the first one, ``İ`` lower-cased to ``i̇``, would start there too)."""
    if not all(cut.plain for cut in cuts):
        return None
    for index, cut in enumerate(cuts):
        if not cut.reads_start:
            continue
        if any(before.inserts or before.removes for before in cuts[:index]):
            return None
        if normalizes and (index > 0 or normalized_tokens):
            return None
    words = _chained([cut.text_words(False) for cut in cuts])
    if not any(cut.reads_start for cut in cuts):
        return words, None
    return words, _chained_first([(cut.text_words(True), cut.text_words(False)) for cut in cuts])


def _chained(functions: Sequence[Words]) -> Words:
    if len(functions) == 1:
        return functions[0]

    def words(text: str) -> list[str]:
        pieces = [text]
        for function in functions:
            pieces = [part for piece in pieces for part in function(piece)]
        return pieces

    return words


def _chained_first(functions: Sequence[tuple[Words, Words]]) -> Words:
    """``_chained`` where the first piece of each step's result is the one that starts the text: cut by the first
    function of the next step, the others by its second."""

    def words(text: str) -> list[str]:
        pieces = [text]
        for first, other in functions:
            if not pieces:
                break
            cut = first(pieces[0])
            for piece in pieces[1:]:
                cut += other(piece)
            pieces = cut
        return pieces

    return words


def pattern_step(finder: Any, pinned: bool = True) -> Step:
    """A step cutting at a compiled ``regex`` pattern's matches (isolated), classified as the other splits (the
    ``regex`` module's own classes unless ``pinned``, for ``HFPipeline.rewritten``)."""
    from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins

    def run(piece: Piece) -> list[Piece]:
        text = piece.text
        spans = [match.span() for match in finder.finditer(stand_ins(text))]
        return cut_pieces(piece, split_spans(len(text), spans, "isolated"))

    def unpinned(piece: Piece) -> list[Piece]:
        text = piece.text
        spans = [match.span() for match in finder.finditer(text)]
        return cut_pieces(piece, split_spans(len(text), spans, "isolated"))

    return run if pinned else unpinned
