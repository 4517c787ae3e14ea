"""Hugging Face pre-tokenizers as a sequence of ``Split`` steps (the pre-tokenization of def-bpe, def-utf8).

A ``tokenizer.json`` file may cut the text into words with several steps
(DeepSeek's files do: digits, then CJK runs, then a GPT-style pattern).  Each
step refines the pieces of the previous one: it runs on every piece on its own,
so its expression never sees the text beyond the piece.  ``PreTokenizer``
reproduces the ``tokenizers`` library's semantics:

* ``Split(pattern, behavior, invert)``.  The pattern's matches, searched left
  to right, cut the piece into matched and unmatched stretches (``invert``
  swaps the two kinds).  ``behavior``:

  - ``isolated``: every stretch is a piece;
  - ``removed``: the matched stretches are dropped, the others are pieces;
  - ``merged_with_previous``: a matched stretch joins the piece before it;
  - ``merged_with_next``: a matched stretch joins the piece after it;
  - ``contiguous``: adjacent stretches of the same kind are joined.

  Empty pieces are dropped.
* ``ByteLevel(use_regex=true)`` is ``Split`` by GPT-2's pattern, isolated;
  ``ByteLevel(use_regex=false, add_prefix_space=false)`` only maps bytes to
  the characters of GPT-2's table and cuts nothing, so at the byte level it is
  no step at all.  ``add_prefix_space=true`` adds text and is not supported.

Expressions are written for Oniguruma (Ruby syntax), as ``tokenizer.json``
files hold them; ``translate_oniguruma`` rewrites the few constructs whose
meaning differs in the ``regex`` module (``^``/``$`` are line anchors,
``(?m)`` is "dot matches newline", ``\\h`` is a hexadecimal digit).  The
matches are searched as Oniguruma's iterator does: an empty match directly
after the previous match is skipped.

``SplitStep.rewritten`` and ``PreTokenizer.rewritten`` give the steps with
every expression read otherwise (a transform of its ``regex``-module source,
the ``regex`` module's own Unicode tables): how a port that reads them so
cuts, for a diagnosis.  They are new steps; the file's own never change.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from bpeproof.impl.pre_tokenizers.patterns import PatternTimeoutError, backtracks, time_limit
from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins
from bpeproof.spec.types import BPETypeError

if TYPE_CHECKING:
    from bpeproof.impl.formats.vocab import PreTokenizerStep

__all__ = [
    "BEHAVIORS",
    "GPT2_SPLIT",
    "PreTokenizer",
    "SplitStep",
    "split_spans",
    "steps_from_hf",
    "to_oniguruma",
    "translate_oniguruma",
]

#: The behaviours of a ``Split`` step, in the project's spelling (snake case of Hugging Face's names).
BEHAVIORS = ("isolated", "removed", "merged_with_previous", "merged_with_next", "contiguous")

_HF_NAMES = {
    "Isolated": "isolated",
    "Removed": "removed",
    "MergedWithPrevious": "merged_with_previous",
    "MergedWithNext": "merged_with_next",
    "Contiguous": "contiguous",
}

#: GPT-2's pattern as Hugging Face's ``ByteLevel`` pre-tokenizer applies it when ``use_regex`` is true.
GPT2_SPLIT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


#: Oniguruma's word characters (``\\w``) in the ``regex`` module's terms: Alphabetic, marks, decimal digits,
#: connector punctuation, and the Latin-1 superscripts and fractions; not the joiners U+200C, U+200D.
#: Inside a character class Oniguruma leaves the Latin-1 superscripts and fractions out.
_WORD = r"\p{Alpha}\p{M}\p{Nd}\p{Pc}\xb2\xb3\xb9\xbc-\xbe"
_CLASS_WORD = r"\p{Alpha}\p{M}\p{Nd}\p{Pc}"


@cache
def _interval() -> Any:
    """A counted repetition ``{m,n}``, as the ``regex`` module (imported when a step is first made) reads it."""
    import regex

    return regex.compile(r"\{\d*(?:,\d*)?\}")


def to_oniguruma(source: str) -> str:
    """A ``regex``-module expression rewritten for Oniguruma (Ruby syntax), the inverse of ``translate_oniguruma``.

    Outside character classes: a possessive interval ``X{1,3}+`` becomes the atomic group ``(?>X{1,3})`` (Ruby
    reads ``{1,3}+`` as a repeated interval), ``^`` becomes ``\\A`` and ``$`` becomes ``(?=\\n?\\z)`` (in Ruby
    they are line anchors), and the inline flag ``s`` becomes Ruby's ``m``.  Everything else means the same in
    both engines and is kept.
    """
    out: list[str] = []
    depth = 0
    atom = 0
    groups: list[int] = []
    i = 0
    n = len(source)
    while i < n:
        char = source[i]
        if char == "\\" and i + 1 < n:
            end = i + 2
            if source[i + 1] in "pPxNgk" and source.startswith("{", end):
                close = source.find("}", end)
                end = close + 1 if close >= 0 else end
            if not depth:
                atom = len(out)
            out.append(source[i:end])
            i = end
            continue
        if depth:
            if char == "[":
                depth += 1
            elif char == "]":
                depth -= 1
            out.append(char)
            i += 1
            continue
        interval = _interval().match(source, i)
        if interval is not None and source.startswith("+", interval.end()) and out:
            out[atom:] = ["(?>", *out[atom:], interval.group(), ")"]
            i = interval.end() + 1
            continue
        if char == "[":
            atom = len(out)
            depth = 1
            start = i + 2 if source.startswith("^", i + 1) else i + 1
            if source.startswith("]", start):
                start += 1
            out.append(source[i:start])
            i = start
            continue
        if char == "(":
            groups.append(len(out))
            if source.startswith("(?", i) and i + 2 < n and source[i + 2] not in "<=!:>#'P":
                end = i + 2
                while end < n and source[end] not in ":)":
                    end += 1
                out.append("(?" + source[i + 2 : end].replace("s", "m"))
                i = end
                continue
        elif char == ")" and groups:
            atom = groups.pop()
        elif char not in "*+?{":
            atom = len(out)
        out.append({"^": "\\A", "$": "(?=\\n?\\z)"}.get(char, char))
        i += 1
    return "".join(out)


def translate_oniguruma(source: str) -> str:
    """An Oniguruma (Ruby syntax) expression rewritten for the ``regex`` module.

    Outside character classes ``^`` and ``$`` become line anchors
    (``(?m:^)``, ``(?m:$)``), ``\\h``/``\\H`` (hexadecimal digit) become
    classes, ``\\w``/``\\W`` and ``\\b``/``\\B`` use Oniguruma's word
    characters; inside classes ``\\h`` and ``\\w`` are spelled out and
    ``[:punct:]`` is punctuation and symbols; the inline flag ``m`` (Ruby's
    "dot matches newline") becomes ``s``.  Everything else is passed through:
    the constructs the two engines share (classes, ``\\p{..}``, ``\\d``,
    look-around, ``*+ ++ ?+`` as possessive, lazy quantifiers, ``\\s`` as
    White_Space) mean the same in both.  An interval followed by ``+``
    (``\\p{N}{1,3}+``) is possessive in the ``regex`` module but, in Ruby
    syntax, the interval repeated: it becomes ``(?:\\p{N}{1,3})+``.  General
    categories are read as Unicode 16.0 has them (``bpeproof.impl.pre_tokenizers.unicode_classes``).
    """
    out: list[str] = []
    depth = 0  # nesting of character classes
    atom = 0  # where in ``out`` the last atom (character, escape, class or group) starts
    groups: list[int] = []  # where the open groups start in ``out``
    i = 0
    n = len(source)
    while i < n:
        char = source[i]
        if not depth:
            interval = _interval().match(source, i)
            if interval is not None and source.startswith("+", interval.end()) and out:
                out[atom:] = ["(?:", *out[atom:], interval.group(), ")"]
                out.append("+")
                i = interval.end() + 1
                continue
            if char == "(":
                groups.append(len(out))
            elif char == ")" and groups:
                atom = groups.pop()
            elif char not in "*+?{":
                atom = len(out)
        if char == "\\" and i + 1 < n:
            escaped = source[i + 1]
            if escaped == "h":
                out.append("0-9a-fA-F" if depth else "[0-9a-fA-F]")
            elif escaped == "H" and not depth:
                out.append("[^0-9a-fA-F]")
            elif escaped == "w":
                out.append(_CLASS_WORD if depth else f"[{_WORD}]")
            elif escaped == "W" and not depth:
                out.append(f"[^{_WORD}]")
            elif escaped == "b" and not depth:
                out.append(f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))")
            elif escaped == "B" and not depth:
                out.append(f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))")
            else:
                end = i + 2
                if escaped in "pPxNgk" and source.startswith("{", end):  # \p{..}, \x{..}, …: one atom
                    close = source.find("}", end)
                    end = close + 1 if close >= 0 else end
                out.append(source[i:end])
                i = end
                continue
            i += 2
            continue
        if depth:
            if source.startswith("[:punct:]", i):
                out.append(r"\p{P}\p{S}")  # Oniguruma's punct is every punctuation and symbol
                i += len("[:punct:]")
                continue
            if char == "[":
                depth += 1
                out.append(char)
                # "[[" opens a nested class; a "]" first in a class is a literal in both engines.
            elif char == "]":
                depth -= 1
                out.append(char)
            else:
                out.append(char)
            i += 1
            continue
        if char == "[":
            depth = 1
            out.append(char)
            i += 1
            if i < n and source[i] == "^":
                out.append("^")
                i += 1
            if i < n and source[i] == "]":
                out.append("\\]")
                i += 1
            continue
        if char == "^":
            out.append("(?m:^)")
        elif char == "$":
            out.append("(?m:$)")
        elif char == "(" and source.startswith("(?", i) and i + 2 < n and source[i + 2] not in "<=!:>#'P":
            end = i + 2
            while end < n and source[end] not in ":)":
                end += 1
            flags = source[i + 2 : end].replace("m", "s")
            out.append("(?" + flags)
            i = end
            continue
        else:
            out.append(char)
        i += 1
    return "".join(out)


class SplitStep:
    """One Hugging Face ``Split`` step: ``pattern`` (Oniguruma syntax), ``behavior`` (one of ``BEHAVIORS``), ``invert``.

    ``behavior`` also accepts Hugging Face's spelling ("Isolated",
    "MergedWithPrevious", ...) and is stored in the project's.  Raises
    ``ValueError`` for an unknown behaviour or an expression the ``regex``
    module cannot compile, ``TypeError`` for values of the wrong type.  A value: frozen, equal to another of the
    same three fields (written by hand rather than by ``dataclasses``, whose import a load would otherwise pay).
    """

    __match_args__ = ("pattern", "behavior", "invert")
    pattern: str
    behavior: str
    invert: bool
    _compiled: Any

    def __init__(self, pattern: str, behavior: str = "isolated", invert: bool = False) -> None:
        if not isinstance(pattern, str):
            raise TypeError(f"a split pattern must be a str, not {type(pattern).__name__}")
        if not isinstance(behavior, str):
            raise TypeError(f"a split behavior must be a str, not {type(behavior).__name__}")
        if not isinstance(invert, bool):
            raise TypeError(f"invert must be a bool, not {type(invert).__name__}")
        canonical = _HF_NAMES.get(behavior, behavior)
        if canonical not in BEHAVIORS:
            raise ValueError(f"unknown split behavior {behavior!r}; expected one of {', '.join(BEHAVIORS)}")
        import regex  # here: a load whose pre-tokenizer has no split step never needs the module

        try:
            compiled = regex.compile(translate_oniguruma(pattern))
        except regex.error as error:
            raise ValueError(f"invalid split pattern {pattern!r}: {error}") from None
        except (OverflowError, RecursionError, MemoryError) as error:
            raise ValueError(f"invalid split pattern {pattern!r}: {type(error).__name__}") from None
        for name, value in (("pattern", pattern), ("behavior", canonical), ("invert", invert), ("_compiled", compiled)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a SplitStep")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a SplitStep")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, SplitStep)
        return (self.pattern, self.behavior, self.invert) == (other.pattern, other.behavior, other.invert)

    def __hash__(self) -> int:
        return hash((self.pattern, self.behavior, self.invert))

    def __repr__(self) -> str:
        return f"SplitStep(pattern={self.pattern!r}, behavior={self.behavior!r}, invert={self.invert!r})"

    @property
    def source(self) -> str:
        """The expression as the ``regex`` module runs it (``translate_oniguruma`` of ``pattern``)."""
        return str(self._compiled.pattern)

    def to_json_value(self) -> dict[str, Any]:
        """The step as the project's file stores it: ``{"pattern", "behavior", "invert"}``."""
        return {"pattern": self.pattern, "behavior": self.behavior, "invert": self.invert}

    def matches(self, text: str) -> list[tuple[int, int]]:
        """The spans of the pattern's matches in ``text``, as Oniguruma's iterator finds them.

        After a match ending at e the search goes on from e; an empty match at
        the end of the previous match is skipped by moving on one character.
        """
        compiled = self._compiled
        text = stand_ins(text)  # classes as Unicode 16.0 has them, same spans (unicode_classes)
        limit = time_limit(text) if backtracks(compiled.pattern) else None
        try:
            return self._matches(compiled, text, limit)
        except TimeoutError:
            raise self._timed_out(limit, text) from None

    def _timed_out(self, limit: float | None, text: str) -> PatternTimeoutError:
        return PatternTimeoutError(
            f"the split pattern {self.pattern[:60]!r} ran more than {limit or 0:.0f} s on a text of {len(text)}"
            " characters: it backtracks without end (a repeated group that repeats or alternates)"
        )

    @staticmethod
    def _matches(compiled: Any, text: str, limit: float | None) -> list[tuple[int, int]]:
        spans = [match.span() for match in compiled.finditer(text, timeout=limit)]
        if all(start != end for start, end in spans):
            # No empty match: each search found a non-empty match from the previous end, as Oniguruma's does.
            return spans
        spans = []
        position = 0
        last_end = -1
        size = len(text)
        while position <= size:
            match = compiled.search(text, position, timeout=limit)
            if match is None:
                break
            start, end = match.span()
            if start == end and end == last_end:
                position += 1
                continue
            spans.append((start, end))
            position = last_end = end
        return spans

    def split(self, text: str) -> list[str]:
        """The non-empty pieces this step cuts ``text`` into (see the module docstring)."""
        if not text:
            return []
        spans = split_spans(len(text), self.matches(text), self.behavior, self.invert)
        return [text[start:end] for start, end in spans if end > start]

    def rewritten(self, transform: Callable[[str], str | None], pinned: bool = True) -> SplitStep | None:
        """This step as a port that reads its expression otherwise cuts: the expression (in the ``regex``
        module's syntax, as ``translate_oniguruma`` gives it, so that a rewrite means the same for every file)
        passed through ``transform``, and, unless ``pinned``, its classes the ``regex`` module's own instead of
        ``UNICODE_VERSION``'s.  None when ``transform`` gives None (the expression cannot be read that way) or
        an expression that does not compile.  The step itself is left as it is: a diagnosis asks for this once,
        and the engine's own steps never pay for it."""
        import regex

        source = transform(self._compiled.pattern)
        if source is None:
            return None
        try:
            compiled = regex.compile(source)
        except (regex.error, OverflowError, RecursionError, MemoryError):
            return None
        step = object.__new__(_RewrittenSplitStep)
        for name, value in (("pattern", self.pattern), ("behavior", self.behavior), ("invert", self.invert),
                            ("_compiled", compiled), ("pinned", pinned)):
            object.__setattr__(step, name, value)
        return step


class _RewrittenSplitStep(SplitStep):
    """A ``SplitStep`` whose expression was rewritten (``SplitStep.rewritten``): ``pattern`` is still the file's,
    the step runs the rewritten one, classified by ``UNICODE_VERSION`` only when ``pinned``."""

    pinned: bool

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, _RewrittenSplitStep)
        return (self.pattern, self.behavior, self.invert, self._compiled.pattern, self.pinned) == (
            other.pattern, other.behavior, other.invert, other._compiled.pattern, other.pinned)

    def __hash__(self) -> int:
        return hash((self.pattern, self.behavior, self.invert, self._compiled.pattern, self.pinned))

    def __repr__(self) -> str:
        return (f"SplitStep(pattern={self.pattern!r}, behavior={self.behavior!r}, invert={self.invert!r}) rewritten"
                f" to {self._compiled.pattern!r}" + ("" if self.pinned else ", the regex module's classes"))

    def to_json_value(self) -> dict[str, Any]:
        raise ValueError("a rewritten split step is no file's step; it is not saved")

    def matches(self, text: str) -> list[tuple[int, int]]:
        if self.pinned:
            return super().matches(text)
        compiled = self._compiled
        limit = time_limit(text) if backtracks(compiled.pattern) else None
        try:
            return self._matches(compiled, text, limit)
        except TimeoutError:
            raise self._timed_out(limit, text) from None


def split_spans(
    length: int, matches: Iterable[tuple[int, int]], behavior: str, invert: bool = False
) -> list[tuple[int, int]]:
    """The spans of the pieces a split keeps of a text of ``length`` characters, from the matches' spans (in order,
    not overlapping) and a behaviour of ``BEHAVIORS``, as the library's ``NormalizedString::split`` forms them;
    empty spans included."""
    # (start, end, is_match): the matched and unmatched stretches, in order, as the library lists them.
    stretches: list[tuple[int, int, bool]] = []
    previous = 0
    for start, end in matches:
        if start != previous:
            stretches.append((previous, start, False))
        stretches.append((start, end, True))
        previous = end
    if previous != length:
        stretches.append((previous, length, False))
    if invert:
        stretches = [(start, end, not is_match) for start, end, is_match in stretches]
    return _apply_behavior(stretches, _HF_NAMES.get(behavior, behavior))


def _apply_behavior(stretches: list[tuple[int, int, bool]], behavior: str) -> list[tuple[int, int]]:
    """The spans of the pieces kept, from the stretches, as the library's ``NormalizedString::split`` forms them."""
    if behavior == "isolated":
        return [(start, end) for start, end, _ in stretches]
    if behavior == "removed":
        return [(start, end) for start, end, is_match in stretches if not is_match]
    spans: list[list[int]] = []
    previous_match = False
    if behavior == "merged_with_next":
        for start, end, is_match in reversed(stretches):
            if is_match and not previous_match and spans:
                spans[-1][0] = start
            else:
                spans.append([start, end])
            previous_match = is_match
        spans.reverse()
    else:
        for start, end, is_match in stretches:
            join = is_match == previous_match if behavior == "contiguous" else is_match and not previous_match
            if join and spans:
                spans[-1][1] = end
            else:
                spans.append([start, end])
            previous_match = is_match
    return [(start, end) for start, end in spans]


class PreTokenizer:
    """A sequence of ``SplitStep``: each step cuts every piece of the previous one (Hugging Face ``Sequence``).

    ``split(text)`` returns the pieces; with no steps the whole text is one
    piece.  ``covers`` tells whether the pieces always join to the text (no
    step removes anything).
    """

    __slots__ = ("_steps",)

    def __init__(self, steps: Iterable[SplitStep | Mapping[str, Any]]) -> None:
        checked: list[SplitStep] = []
        if isinstance(steps, (str, bytes)):
            raise TypeError("a pre-tokenizer is a sequence of split steps, not a string")
        for step in steps:
            if isinstance(step, SplitStep):
                checked.append(step)
            elif isinstance(step, Mapping):
                checked.append(_step_from_mapping(step))
            else:
                raise TypeError(f"a pre-tokenizer step must be a SplitStep, not {type(step).__name__}")
        self._steps = tuple(checked)

    @classmethod
    def of(cls, steps: PreTokenizer | Sequence[SplitStep] | None) -> PreTokenizer | None:
        """``steps`` as a ``PreTokenizer`` (None stays None), refused with ``BPETypeError`` naming what is not one."""
        if steps is None or isinstance(steps, PreTokenizer):
            return steps
        if isinstance(steps, (str, bytes)) or not isinstance(steps, Sequence):
            raise BPETypeError(
                f"pretokenizer must be a PreTokenizer or a sequence of SplitStep, not {type(steps).__name__}")
        for index, step in enumerate(steps):
            if not isinstance(step, SplitStep):
                raise BPETypeError(f"pretokenizer[{index}] must be a SplitStep, not {type(step).__name__}")
        return cls(steps)

    @property
    def steps(self) -> tuple[SplitStep, ...]:
        """The steps, in order."""
        return self._steps

    @property
    def covers(self) -> bool:
        """True when no step removes text, so that the pieces always join to the text."""
        return not any((step.behavior == "removed") for step in self._steps)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PreTokenizer) and other._steps == self._steps

    def __hash__(self) -> int:
        return hash(self._steps)

    def __repr__(self) -> str:
        return f"PreTokenizer({list(self._steps)!r})"

    def rewritten(self, transform: Callable[[str], str | None], pinned: bool = True) -> PreTokenizer | None:
        """These steps as a port that reads every expression otherwise cuts (``SplitStep.rewritten``); None when
        there is no step or one cannot be rewritten."""
        steps = [step.rewritten(transform, pinned) for step in self._steps]
        kept = [step for step in steps if step is not None]
        return PreTokenizer(kept) if kept and len(kept) == len(steps) else None

    def split(self, text: str) -> list[str]:
        """The pieces of ``text``: every step applied in turn to every piece of the step before."""
        pieces = [text] if text else []
        for step in self._steps:
            cut = step.split
            pieces = [part for piece in pieces for part in cut(piece)]
        return pieces

    def to_json_value(self) -> list[dict[str, Any]]:
        """The steps as the project's file stores them."""
        return [step.to_json_value() for step in self._steps]

    def to_json(self) -> str:
        """``to_json_value`` as compact JSON."""
        return json.dumps(self.to_json_value(), ensure_ascii=False)


def _step_from_mapping(value: Mapping[str, Any]) -> SplitStep:
    """A step from ``{"pattern", "behavior", "invert"}`` (all three required, no others)."""
    keys = {"pattern", "behavior", "invert"}
    missing = sorted(keys - set(value))
    if missing:
        raise ValueError(f"a split step needs the keys pattern, behavior and invert; {missing[0]!r} is missing")
    unknown = sorted(str(key) for key in set(value) - keys)
    if unknown:
        raise ValueError(f"a split step has the unknown key {unknown[0]!r}")
    return SplitStep(value["pattern"], value["behavior"], value["invert"])


def steps_from_hf(steps: Sequence[PreTokenizerStep]) -> PreTokenizer:
    """The ``PreTokenizer`` for the flattened steps of a ``tokenizer.json`` file (``Vocab.pre_tokenizers``).

    ``Split`` steps carry over; ``ByteLevel`` with ``use_regex`` becomes a
    split by GPT-2's pattern and without it no step.  Raises ``ValueError``
    naming the first step it cannot reproduce: ``ByteLevel`` with
    ``add_prefix_space`` (it adds a space to the text) and every other kind.
    """
    out: list[SplitStep] = []
    for index, step in enumerate(steps):
        if step.type == "Split" and step.pattern is not None and step.behavior is not None:
            out.append(SplitStep(step.pattern, step.behavior, step.invert))
        elif step.type == "ByteLevel":
            if step.add_prefix_space:
                raise ValueError(f"pre-tokenizer step {index} (ByteLevel) adds a prefix space; not supported")
            if step.use_regex:
                out.append(SplitStep(GPT2_SPLIT))
        else:
            raise ValueError(f"pre-tokenizer step {index} ({step.type}) is not supported (only Split and ByteLevel)")
    return PreTokenizer(out)
