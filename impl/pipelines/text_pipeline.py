"""What turns a text into a merge model's words: the ``TextPipeline`` every front end is, and the two the project's
own files and tiktoken's rank files use (a pattern; split steps), each cutting the allowed special tokens out first.

A ``Tokenizer`` is one text pipeline and one merge model (``bpeproof.impl.models``).  The pipeline turns a text into
the model's words and the ids of the special tokens it reads, in order (``pieces``); the model turns each word's
bytes into ids.  Every format is a pipeline of this kind: a pattern or split steps here, a ``tokenizer.json`` file's
added tokens, normalizer and pre-tokenizer (``bpeproof.impl.pipelines.tokenizer_json``), CLIP's cleaning
(``bpeproof.impl.pipelines.clip``), llama.cpp's special-token partition and pre-tokenizer
(``bpeproof.impl.pipelines.llama_cpp``), sentencepiece's whole text (``WholeText``).

What a pipeline offers beyond ``pieces`` it says by its attributes, read once when the tokenizer is built:

- ``c_scanner``: the number of the hand-written C scanner (``impl/_c/_fastenc_scan.h``) that cuts each stretch
  between special tokens exactly as the pipeline does (``words``), or -1; with a model that has a C loop the
  tokenizer then cuts and merges a stretch in one C call (``stretches`` gives the stretches, as the model's words
  are read from them: normalized where the pipeline normalizes); ``whole_when_unnamed``: with no special token
  allowed, the one stretch is the text as it is (so a batch of texts goes to the C scanner whole, on threads);
  ``scanner_table()``: the classes of every code point the scanner reads (Unicode 16.0's, or llama.cpp's);
- ``rewritten(transform, pinned)``: the pipeline with every regular expression read otherwise, for a diagnosis
  (JavaScript's ``\\s``, newer Unicode tables); None when it has none;
- ``byte_pieces(data, names)``: the words of bytes that are not UTF-8, as bytes, where the pipeline reads such
  bytes its own way (llama.cpp's lenient decoder); None otherwise, and they are read as ``surrogateescape`` text;
- ``strips_space_prefix``: decoding drops the space that encoding put before the first word (llama.cpp's
  ``add_space_prefix``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bpeproof.impl.models.merge_model import MergeModel
from bpeproof.impl.pipelines.special_tokens import AllowedSpecial, names_finder
from bpeproof.impl.pre_tokenizers import splitter
from bpeproof.impl.pre_tokenizers.char_table import char_table
from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, compile_pattern, pattern_name
from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins
from bpeproof.spec.types import BPETypeError, BPEValueError

__all__ = [
    "PatternPipeline",
    "SplitStepsPipeline",
    "TextPipeline",
    "TokenizerParts",
    "WholeText",
    "check_texts",
    "cut_names",
    "pipeline_of",
]

#: The expressions of the named patterns, which are known to compile.
_NAMED_SOURCES = frozenset(PATTERNS.values())


class TextPipeline:
    """A text to the model's words and the ids of the special tokens read in it (see the module docstring).

    ``library_allowed_special``: the ``allowed_special`` under which the pipeline answers as the file's own library
    does when it is given no option ("all" where that library reads special tokens in any text)."""

    description: str = ""
    library_allowed_special: AllowedSpecial = None
    #: The hand-written C scanner that cuts as this pipeline does, or -1 (see the module docstring).
    c_scanner: int = -1
    #: ``stretches(text, None)`` is ``[text]`` for every text (see the module docstring).
    whole_when_unnamed: bool = True
    #: Decoding drops the space encoding put before the first word (llama.cpp's ``add_space_prefix``).
    strips_space_prefix: bool = False
    #: The pattern the pipeline cuts words with, as the project's file and the word counter name it.
    pattern: str = "words"
    #: The split steps that cut as the pipeline does, when it is only those (the project's file format).
    pretokenizer: PreTokenizer | None = None

    def pieces(self, text: str, names: frozenset[str] | None) -> list[str | int]:
        """The words of ``text`` and the ids of the special tokens ``names`` allows, in order."""
        raise NotImplementedError

    def stretches(self, text: str, names: frozenset[str] | None) -> list[str | int]:
        """The text between the allowed special tokens and their ids, in order (for ``c_scanner``)."""
        return [text]

    def scanner_table(self) -> bytes:
        """The classes of every code point ``c_scanner`` reads (``char_table``'s layout): Unicode 16.0's."""
        return char_table()

    def words(self, stretch: str) -> list[str]:
        """The words of one stretch, as ``c_scanner`` cuts it (for a pipeline that has one)."""
        raise NotImplementedError

    def rewritten(self, transform: Callable[[str], str | None], pinned: bool = True) -> TextPipeline | None:
        """The pipeline with every regular expression passed through ``transform`` (the ``regex`` module's syntax
        in and out; None: the expression cannot be read so) and, unless ``pinned``, classified by the ``regex``
        module's own Unicode tables; None when it has no regular expression or one cannot be read so."""
        return None

    def byte_pieces(self, data: bytes, names: frozenset[str] | None) -> list[bytes | int] | None:
        """The words of bytes that are not UTF-8, where the pipeline reads them its own way; None otherwise."""
        return None


def cut_names(text: str, finder: Any, specials: Mapping[str, int]) -> list[str | int]:
    """``text`` cut at every match of ``finder`` (special tokens' names): the stretches between, and the ids."""
    out: list[str | int] = []
    start = 0
    for match in finder.finditer(text):
        if match.start() > start:
            out.append(text[start : match.start()])
        out.append(specials[match.group()])
        start = match.end()
    if start < len(text):
        out.append(text[start:])
    return out


class _NamesFirst(TextPipeline):
    """A pipeline that cuts the allowed special tokens' names out of the text, then each stretch into words."""

    def __init__(self, specials: Mapping[str, int]) -> None:
        self._specials = dict(specials)
        self._finders: dict[frozenset[str], Any] = {}

    def words(self, stretch: str) -> list[str]:
        raise NotImplementedError

    def stretches(self, text: str, names: frozenset[str] | None) -> list[str | int]:
        if names is None:
            return [text]
        finder = self._finders.get(names)
        if finder is None:
            finder = self._finders[names] = names_finder(names)
        return cut_names(text, finder, self._specials)

    def pieces(self, text: str, names: frozenset[str] | None) -> list[str | int]:
        if names is None:
            return list(self.words(text))
        out: list[str | int] = []
        for item in self.stretches(text, names):
            if isinstance(item, int):
                out.append(item)
            else:
                out += self.words(item)
        return out


class PatternPipeline(_NamesFirst):
    """tiktoken's pipeline: special tokens' names cut out, each stretch cut into the matches of one pattern, which
    must cover it (``splitter.regex_pieces``; for tiktoken's own patterns also ``c_scanner``)."""

    def __init__(self, source: str, specials: Mapping[str, int], *, pinned: bool = True, checked: bool = True
                 ) -> None:
        """``source``: a resolved pattern (``patterns.resolve_pattern``).  ``pinned``: classified by
        ``UNICODE_VERSION`` (else by the ``regex`` module's own tables).  ``checked``: a stretch the matches do not
        cover is refused (a port's reading of the pattern, ``rewritten``, is taken as it cuts)."""
        super().__init__(specials)
        self.pattern = source
        self._pinned = pinned
        self._checked = checked
        # A named pattern compiles: compiled when first used (most stretches are cut in C).  Any other is compiled
        # now, to be refused now.
        self._compiled: Any = None if source in _NAMED_SOURCES else compile_pattern(source)
        self.c_scanner = splitter.c_scanner(source) if pinned else -1
        self.description = pattern_name(source) or repr(source)

    @property
    def _regex(self) -> Any:
        if self._compiled is None:
            self._compiled = compile_pattern(self.pattern)
        return self._compiled

    def words(self, stretch: str) -> list[str]:
        if not self._pinned:
            return splitter.unpinned_pieces(self._regex, stretch)
        pieces = splitter.regex_pieces(self._regex, stretch)
        if self._checked and sum(map(len, pieces)) != len(stretch):
            self._raise_uncovered(stretch)
        return pieces

    def _raise_uncovered(self, text: str) -> None:
        position = 0
        for match in self._regex.finditer(stand_ins(text)):
            if match.start() != position:
                break
            position = match.end()
        raise BPEValueError(
            f"the pre-tokenization pattern leaves the text at character {position} unmatched;"
            " a pattern must cover the whole text"
        )

    def rewritten(self, transform: Callable[[str], str | None], pinned: bool = True) -> TextPipeline | None:
        source = transform(self.pattern)
        if source is None:
            return None
        try:
            compile_pattern(source)
        except ValueError:
            return None
        return PatternPipeline(source, self._specials, pinned=pinned, checked=False)


class SplitStepsPipeline(_NamesFirst):
    """Special tokens' names cut out, each stretch cut by Hugging Face ``Split`` steps in turn (``PreTokenizer``)."""

    def __init__(self, pretokenizer: PreTokenizer, specials: Mapping[str, int], pattern: str = "words") -> None:
        super().__init__(specials)
        self.pretokenizer = pretokenizer
        self.pattern = pattern
        self._split = pretokenizer.split
        self.description = f"{len(pretokenizer.steps)} split steps"

    def words(self, stretch: str) -> list[str]:
        return self._split(stretch)

    def rewritten(self, transform: Callable[[str], str | None], pinned: bool = True) -> TextPipeline | None:
        assert self.pretokenizer is not None
        found = self.pretokenizer.rewritten(transform, pinned)
        return None if found is None else SplitStepsPipeline(found, self._specials, self.pattern)


class WholeText(TextPipeline):
    """The whole text is the model's one word: sentencepiece, which normalizes and merges a text as it is."""

    description = "the whole text"
    pretokenizer = PreTokenizer([])  # no step: the whole text is one word

    def pieces(self, text: str, names: frozenset[str] | None) -> list[str | int]:
        return [text] if text else []


def pipeline_of(pattern: str, pretokenizer: PreTokenizer | None, specials: Mapping[str, int]) -> TextPipeline:
    """The pipeline of a pattern (a resolved source) or, when given, of split steps."""
    if pretokenizer is not None:
        return SplitStepsPipeline(pretokenizer, specials, pattern)
    return PatternPipeline(pattern, specials)



@dataclass
class TokenizerParts:
    """What a ``Tokenizer`` is made of: its text pipeline, its merge model, its special tokens (name → id) and the
    size of its word cache.  The loaders (``bpeproof.impl.pipelines.registry``) make these, the compiled-vocabulary
    cache stores them and the worker pools send them; ``Tokenizer.from_parts`` assembles them."""

    pipeline: TextPipeline
    model: MergeModel
    special_tokens: dict[str, int] = field(default_factory=dict)
    cache_size: int = 1 << 18


def check_texts(texts: object) -> None:
    """Refuse a batch that is not a list of str (a str itself included), naming the first item that is not one."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise BPETypeError(f"texts must be a list of str, not {type(texts).__name__}")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise BPETypeError(f"texts[{index}] must be str, not {type(text).__name__}")
