"""A ``tokenizer.json`` pipeline as the ``tokenizers`` library runs it: added tokens, normalizer, pre-tokenizer.

``Tokenizer.encode(text, add_special_tokens=False)`` in the library does, and ``HFPipeline.pieces`` does alike:

1. the added tokens with ``normalized: false`` are found in the original text (leftmost, longest first; with
   ``single_word`` only between non-word characters, ``lstrip``/``rstrip`` taking the white space around them);
2. each stretch between them is normalized (``impl.normalizers.hf``), and the added tokens with ``normalized: true``
   (their contents normalized too) are found in it;
3. each remaining stretch is cut by the pre-tokenizer steps, each step on every piece of the one before:
   ``Split`` (an Oniguruma regex or a string, five behaviours, ``invert``), ``ByteLevel`` (a space before a piece
   that does not start with one when ``add_prefix_space``; GPT-2's split when ``use_regex``; then every byte as
   GPT-2's character for it), ``Metaspace`` (spaces to the replacement character, the replacement before the
   piece as ``prepend_scheme`` says: ``always``, ``first`` — only the piece that starts the original text — or
   ``never``; pieces beginning at each replacement when ``split``), ``Digits``, ``Whitespace``,
   ``WhitespaceSplit``, ``Punctuation``; ``Sequence`` is its steps in turn.

The result is the model's words (strings) and the added tokens' ids, in order.  Special added tokens are
found only when ``allowed`` names them: otherwise they stay text, as the library's ``encode_special_tokens``
leaves them.  Classes of characters are the library's own (``bpeproof.impl.pre_tokenizers.hf_chars``); regular
expressions are run as
Oniguruma runs them (``bpeproof.impl.pre_tokenizers.hf_splits.SplitStep``).

The steps (``bpeproof.impl.pipelines.hf_steps``) run on pieces of text that keep their alignments; where the
normalizer reads only text and no step maps bytes, the stretches between added tokens are cut as plain strings
instead (``cut_by``), the same cuts from the same computations.

``map_bytes=False`` leaves out the last ``ByteLevel`` step's byte mapping, for a model that takes the bytes of
the words itself (``bpeproof.impl.models.hugging_face.HuggingFaceModel``); every other step runs as written.

``HFPipeline.rewritten`` makes the pipeline again with every regular expression of its pre-tokenizer read
otherwise (each ``Split`` step's, GPT-2's of a ``ByteLevel`` step): how a port that reads them so (JavaScript's
``\\s``, newer Unicode tables) cuts, for a diagnosis.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from bpeproof.impl.formats.vocab import AddedToken, PreTokenizerStep
from bpeproof.impl.normalizers.hf import Normalizer, Piece
from bpeproof.impl.pipelines.hf_steps import Rewrite, Step, Words
from bpeproof.impl.pipelines.special_tokens import AllowedSpecial
from bpeproof.impl.pipelines.text_pipeline import TextPipeline
from bpeproof.impl.pre_tokenizers import hf_chars

__all__ = ["HFPipeline", "LiteralFinder", "TextPipelineRecipe"]


@dataclass(frozen=True)
class TextPipelineRecipe:
    """What a ``tokenizer.json``'s text pipeline is built from: the file's normalizer (canonical JSON, None for
    none), added tokens and pre-tokenizer steps, ``--pattern`` (replacing the steps), the file's pattern, whether
    its vocabulary is byte-level and whether the model runs on the words' bytes (``HuggingFaceModel``).  The
    compiled-vocabulary cache keeps this beside the model: the pipeline holds functions, which it does not store."""

    normalizer: str | None
    added_tokens: tuple[AddedToken, ...]
    steps: tuple[PreTokenizerStep, ...]
    pattern: str | None
    file_pattern: str | None
    byte_level: bool
    byte_model: bool


# -- added tokens --------------------------------------------------------------------------------------------


class LiteralMatch:
    """A match of ``LiteralFinder``, as much of ``re.Match`` as ``_Matcher.find`` reads."""

    __slots__ = ("_end", "_start", "_text")

    def __init__(self, text: str, start: int, end: int) -> None:
        self._text, self._start, self._end = text, start, end

    def span(self) -> tuple[int, int]:
        return self._start, self._end

    def group(self) -> str:
        return self._text


class LiteralFinder:
    """``re.compile("|".join(map(re.escape, ordered)))`` for non-empty literals ordered longest first: at the
    leftmost place where one starts, the longest.  An alternation of a thousand added tokens took about a second to
    compile (cold loads, every checker process); this compiles a class of their first characters and, where one is
    found, looks the text up by the literals' lengths, longest first."""

    def __init__(self, ordered: Sequence[str]) -> None:
        self._by_length: dict[int, frozenset[str]] = {}
        for length in sorted({len(text) for text in ordered}, reverse=True):
            self._by_length[length] = frozenset(text for text in ordered if len(text) == length)
        self._starts = re.compile("[" + "".join(sorted({re.escape(text[0]) for text in ordered})) + "]")

    def finditer(self, text: str) -> Iterator[LiteralMatch]:
        at = 0
        search = self._starts.search
        while True:
            found = search(text, at)
            if found is None:
                return
            start = found.start()
            for length, literals in self._by_length.items():
                piece = text[start : start + length]
                if len(piece) == length and piece in literals:
                    yield LiteralMatch(piece, start, start + length)
                    at = start + length
                    break
            else:
                at = start + 1


class _Matcher:
    """The library's ``find_matches`` for one set of added tokens (patterns → the token)."""

    def __init__(self, patterns: Mapping[str, AddedToken]) -> None:
        self._tokens = dict(patterns)
        self._ordered = sorted(patterns, key=lambda text: (-len(text), text))
        # The first characters of the tokens, when they are few: a text that holds none of them holds no token,
        # and the expression (an alternation of every token: tens of milliseconds to compile for a thousand) is
        # compiled only for a text that may hold one.
        firsts = frozenset(text[:1] for text in self._ordered)
        self._firsts = firsts if "" not in patterns and len(firsts) <= 8 else None
        self._compiled: Any = None

    def __bool__(self) -> bool:
        return bool(self._ordered)

    def tokens(self) -> Iterable[AddedToken]:
        """The added tokens this finds."""
        return self._tokens.values()

    def _finder(self) -> Any:
        if self._compiled is None:
            self._compiled = (re.compile("|".join(map(re.escape, self._ordered))) if "" in self._tokens
                              else LiteralFinder(self._ordered))
        return self._compiled

    def find(self, text: str, allowed: Collection[str] | None) -> list[tuple[AddedToken | None, int, int]]:
        """The stretches of ``text``: (token, start, end) for an added token, (None, start, end) between."""
        if not self._ordered or not text:
            return [(None, 0, len(text))]
        if self._firsts is not None and not any(first in text for first in self._firsts):
            return [(None, 0, len(text))]
        out: list[tuple[AddedToken | None, int, int]] = []
        offset = 0
        for match in self._finder().finditer(text):
            start, stop = match.span()
            token = self._tokens[match.group()]
            if token.special and (allowed is None or token.content not in allowed):
                continue
            if token.single_word:
                word = hf_chars.code_points("word")  # (the tables are read only for tokens with these flags)
                before = start == 0 or ord(text[start - 1]) not in word
                after = stop == len(text) or ord(text[stop]) not in word
                if not (before and after):
                    continue
            space = hf_chars.code_points("whitespace") if token.lstrip or token.rstrip else frozenset()
            if token.lstrip:
                begin = start
                while begin > 0 and ord(text[begin - 1]) in space:
                    begin -= 1
                start = max(begin, offset)
            if token.rstrip:
                while stop < len(text) and ord(text[stop]) in space:
                    stop += 1
            if offset < start:
                out.append((None, offset, start))
            out.append((token, start, stop))
            offset = stop
        if offset != len(text):
            out.append((None, offset, len(text)))
        return out


def _normalized_patterns(tokens: Iterable[AddedToken], normalizer: Normalizer) -> dict[str, AddedToken]:
    patterns: dict[str, AddedToken] = {}
    for token in tokens:
        pattern = normalizer.normalize_str(token.content)
        if not pattern:
            raise ValueError(f"the added token {token.content!r} normalizes to nothing, which the library cannot"
                             " match")
        if pattern in patterns:
            raise ValueError(f"the added tokens {patterns[pattern].content!r} and {token.content!r} normalize to the"
                             " same text; which of them the library finds depends on its hash order")
        patterns[pattern] = token
    return patterns


class HFPipeline(TextPipeline):
    """Added tokens, a normalizer and pre-tokenizer steps, run on a text as the library runs them.

    ``pattern``: the file's pattern or ``--pattern`` (kept for the word counter and descriptions);
    ``pretokenizer``: the split steps that cut as the pre-tokenizer does, when it is only those."""

    # The library's encode reads every added token, special or not, in any text (only its encode_special_tokens
    # switch, which pieces(text, None) follows, leaves the special ones as text).
    library_allowed_special: AllowedSpecial = "all"

    def __init__(
        self,
        normalizer: Normalizer,
        added_tokens: Sequence[AddedToken],
        steps: Sequence[Step],
        *,
        track: bool = False,
        description: str = "",
        rebuild: Callable[[Rewrite], Sequence[Step]] | None = None,
    ) -> None:
        """``rebuild``: the steps made again with every regular expression read otherwise (``rewritten``);
        None: they have none, or cannot be made again."""
        self._normalizer = normalizer
        #: The types of the normalizer's steps, in order ("NFC", "Lowercase", …): what a diagnosis may run otherwise.
        self.normalizer_kinds = normalizer.kinds
        self._raw = _Matcher({token.content: token for token in added_tokens if not token.normalized})
        self._normalized = _Matcher(_normalized_patterns((t for t in added_tokens if t.normalized), normalizer))
        self._steps = tuple(steps)
        self._track = track
        self.description = description
        self._rebuild = rebuild
        self._words: Words | None = None
        self._first_words: Words | None = None
        self._travel: tuple[Callable[..., HFPipeline], tuple[Any, ...]] | None = None

    def travels_as(self, rebuild: Callable[..., HFPipeline], *args: Any) -> None:
        """How another process makes this pipeline again: ``rebuild(*args)`` (what pickling it gives; its steps are
        functions, which do not pickle)."""
        self._travel = (rebuild, args)

    def __reduce__(self) -> tuple[Callable[..., HFPipeline], tuple[Any, ...]]:
        if self._travel is None:
            raise TypeError("this tokenizer.json pipeline was not built from a file's parts, so it cannot be sent")
        return self._travel

    def rewritten(self, transform: Callable[[str], str | None], pinned: bool = True) -> HFPipeline | None:
        """This pipeline as a port that reads every regular expression of its pre-tokenizer otherwise cuts: each
        ``Split`` step's and GPT-2's of a ``ByteLevel`` step (or ``--pattern``'s) passed through ``transform``
        (``SplitStep.rewritten``: it takes and gives the ``regex`` module's syntax), and, unless ``pinned``, the
        classes the ``regex`` module's own; added tokens, normalizer and the other steps as they are, the words
        in the form the model takes (text for a model on the words' bytes).  None when the pre-tokenizer has no
        regular expression or one cannot be read so.  A new pipeline: this one, and its speed, are untouched."""
        if self._rebuild is None:
            return None
        try:
            steps = tuple(self._rebuild((transform, pinned)))
        except ValueError:
            return None
        copy = object.__new__(HFPipeline)
        copy.__dict__.update(self.__dict__)
        copy._steps = steps
        copy._words = copy._first_words = None  # the steps read otherwise, run as they are
        copy.c_scanner = -1
        copy._travel = None
        return copy

    def _split(self, matcher: _Matcher, piece: Piece, allowed: Collection[str] | None) -> list[Piece | int]:
        out: list[Piece | int] = []
        for token, start, end in matcher.find(piece.text, allowed):
            if end <= start:
                continue
            out.append(piece.cut(start, end) if token is None else token.id)
        return out

    def cut_by(self, words: Words, scanner: int = -1, first: Words | None = None) -> None:
        """Cut the text between added tokens by ``words`` instead of the steps: their cuts as one function of the
        text (``PreTokenizer.split``, ``hf_steps.plain_words``), for a pipeline whose normalizer reads only the
        text (``normalize_str``) and whose words go to the model as text, where the steps' pieces and alignments
        would only be rebuilt.  ``scanner``: the hand-written C scanner that cuts as ``words`` does
        (``TextPipeline.c_scanner``), or -1.  ``first``: the words of the stretch that starts the text (the first
        of ``stretches``), where a step reads where its piece starts (``Metaspace``, ``prepend_scheme: first``);
        ``words`` is then for the others, and no C scanner cuts as ``words`` does."""
        if first is not None and scanner >= 0:
            raise ValueError("a C scanner cuts every stretch alike; it cannot cut the first one otherwise")
        self._words = words
        self._first_words = first
        self.c_scanner = scanner
        # With no special token allowed, the text is still normalized and its other added tokens read.
        self.whole_when_unnamed = not self._normalizer and not any(
            not token.special for token in chain(self._raw.tokens(), self._normalized.tokens()))

    def words(self, stretch: str) -> list[str]:
        if self._words is None:
            raise TypeError("this pipeline cuts its text step by step (cut_by was not given a function)")
        return self._words(stretch)

    def pieces(self, text: str, allowed: Collection[str] | None = None) -> list[str | int]:
        """The model's words of ``text`` and the ids of its added tokens, in order (see the module docstring)."""
        if not text:
            return []
        if self._words is not None:
            return self._plain_pieces(text, allowed)
        items: list[Piece | int] = self._split(self._raw, Piece.original(text, 0, self._track), allowed)
        normalized: list[Piece | int] = []
        for item in items:
            if isinstance(item, int):
                normalized.append(item)
            else:
                normalized.extend(self._split(self._normalized, self._normalizer.normalize(item), allowed))
        items = normalized
        for step in self._steps:
            cut: list[Piece | int] = []
            for item in items:
                if isinstance(item, int):
                    cut.append(item)
                else:
                    cut.extend(step(item))
            items = cut
        return [item if isinstance(item, int) else item.text for item in items]

    def stretches(self, text: str, allowed: Collection[str] | None) -> list[str | int]:
        """Where the normalizer reads only text (``cut_by``): the added tokens found in the text, each stretch
        between them normalized, the normalized added tokens found in it; the ids of the tokens and the normalized
        text between them, in order."""
        normalize = self._normalizer.normalize_str if self._normalizer else None
        out: list[str | int] = []
        for token, start, end in self._raw.find(text, allowed):
            if end <= start:
                continue
            if token is not None:
                out.append(token.id)
                continue
            stretch = normalize(text[start:end]) if normalize is not None else text[start:end]
            for inner, begin, stop in self._normalized.find(stretch, allowed):
                if stop > begin:
                    out.append(stretch[begin:stop] if inner is None else inner.id)
        return out

    def _plain_pieces(self, text: str, allowed: Collection[str] | None) -> list[str | int]:
        """``pieces`` where the normalizer reads only text: ``stretches``, each stretch cut by ``cut_by``'s
        functions."""
        words = self._words
        assert words is not None
        out: list[str | int] = []
        items = self.stretches(text, allowed)
        if self._first_words is not None and items and isinstance(items[0], str):
            out += self._first_words(items[0])  # it starts the text: no added token before it
            items = items[1:]
        for item in items:
            if isinstance(item, int):
                out.append(item)
            else:
                out += words(item)
        return out
