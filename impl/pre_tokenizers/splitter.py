"""Cutting a text into words with one pattern: the ``regex`` module's matches, or the hand-written C scanner.

``regex_pieces`` is the reference: a compiled pattern's matches, with the characters classified by
``UNICODE_VERSION`` and, for a pattern that may backtrack without end, under a time limit.  For the patterns of
``char_table.HAND_WRITTEN`` (tiktoken's, Llama 3's, Qwen2's) with the C extension built, the scanners of
``impl/_c/_fastenc_scan.h`` find the same words without the ``regex`` module.  ``pattern_splitter``
chooses between the two as a tokenizer with that pattern does, so that training and encoding cut a text alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bpeproof.impl import encoder
from bpeproof.impl.pre_tokenizers.char_table import HAND_WRITTEN, HAND_WRITTEN_STEPS, char_table, spelt_out
from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer
from bpeproof.impl.pre_tokenizers.patterns import (
    PatternTimeoutError,
    backtracks,
    compile_pattern,
    resolve_pattern,
    time_limit,
)
from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins

__all__ = ["C_TEXT_LIMIT", "c_scanner", "pattern_splitter", "regex_pieces", "steps_scanner", "unpinned_pieces"]

#: Texts of at least this many characters are cut and encoded by the Python loops: the C loop takes words below
#: 2**31 bytes.  The tokenizer and the word counter read it from here when they run, so one setting governs all.
C_TEXT_LIMIT = 2**29


def regex_pieces(compiled: Any, text: str) -> list[str]:
    """The matches of a compiled pattern in ``text`` (whole matches, also when it has groups), classified by
    ``UNICODE_VERSION`` (``bpeproof.impl.pre_tokenizers.unicode_classes.stand_ins``); a pattern that ``backtracks``
    runs under ``time_limit`` (``PatternTimeoutError`` past it)."""
    pinned = stand_ins(text)
    if not backtracks(compiled.pattern):
        if pinned is not text:
            return [text[match.start() : match.end()] for match in compiled.finditer(pinned)]
        return [match.group() for match in compiled.finditer(text)] if compiled.groups else list(compiled.findall(text))
    limit = time_limit(text)
    try:
        return [text[match.start() : match.end()] for match in compiled.finditer(pinned, timeout=limit)]
    except TimeoutError:
        raise PatternTimeoutError(
            f"the pre-tokenization pattern {compiled.pattern[:60]!r} ran more than {limit:.0f} s on a text of"
            f" {len(text)} characters: it backtracks without end (a repeated group that repeats or alternates)"
        ) from None


def unpinned_pieces(compiled: Any, text: str) -> list[str]:
    """``regex_pieces`` with the ``regex`` module's own classes, not ``UNICODE_VERSION``'s: how a port built on
    newer Unicode tables cuts (``Tokenizer.rewritten_pre_tokenize``)."""
    limit = time_limit(text) if backtracks(compiled.pattern) else None
    try:
        return [match.group() for match in compiled.finditer(text, timeout=limit)]
    except TimeoutError:
        raise PatternTimeoutError(
            f"the pre-tokenization pattern {compiled.pattern[:60]!r} ran more than {limit:.0f} s on a text of"
            f" {len(text)} characters: it backtracks without end (a repeated group that repeats or alternates)"
        ) from None


def _runs_here(which: int, c_loop: bool = True) -> int:
    return which if which >= 0 and encoder.HAVE_C_LOOP and c_loop else -1


def c_scanner(source: str, c_loop: bool = True) -> int:
    """The number of ``source``'s hand-written C scanner in ``impl/_c/_fastenc_scan.h`` when the extension is
    built and ``c_loop``, else -1 (a tokenizer cuts with it only beside a model that merges in C)."""
    return _runs_here(HAND_WRITTEN.get(spelt_out(source), -1), c_loop)


def steps_scanner(steps: PreTokenizer) -> int:
    """The number of the hand-written C scanner that cuts a text as ``steps`` do, when the extension is built, else
    -1: steps that keep their matches apart (``isolated``, not inverted), one of an expression a scanner runs
    (every such scanner's matches cover a text, so the step's pieces are those matches) or a sequence written out
    by hand (``char_table.HAND_WRITTEN_STEPS``).  A tokenizer cuts with it only beside a model that merges in C."""
    if not steps.steps or any(step.behavior != "isolated" or step.invert for step in steps.steps):
        return -1
    if len(steps.steps) == 1:
        return c_scanner(steps.steps[0].source)
    return _runs_here(HAND_WRITTEN_STEPS.get(tuple(spelt_out(step.source) for step in steps.steps), -1))


def pattern_splitter(pattern: str, *, c_loop: bool = True) -> Callable[[str], list[str]]:
    """The words a pattern (a name of ``PATTERNS`` or an expression) cuts a text into, as a tokenizer with that
    pattern finds them: the patterns of the hand-written C scanners by those when the extension is built, any
    pattern otherwise by ``regex_pieces``.  Training counts its words with this, so that a trained tokenizer
    encodes a text with the words it was trained on.  ``c_loop``: False cuts with ``regex_pieces`` always."""
    source = resolve_pattern(pattern)
    compiled = compile_pattern(source)
    which = c_scanner(source, c_loop)
    if which >= 0:
        from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]

        split, table = _fastenc.split_pattern, char_table()

        def hand_written(text: str) -> list[str]:
            if len(text) >= C_TEXT_LIMIT:
                return regex_pieces(compiled, text)
            pieces: list[str] = split(text, table, which)
            return pieces

        return hand_written

    def with_regex(text: str) -> list[str]:
        return regex_pieces(compiled, text)

    return with_regex
