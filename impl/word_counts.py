"""Counting a corpus's words for training: the distinct words of texts, cut as a tokenizer cuts them, with their
frequencies (rem-faster-training), added up over any number of batches.

``WordCounts`` is ``bpeproof.impl.trainer.count_words`` with ``pattern_splitter(pattern)`` as its pre-tokenizer
(``bpeproof.impl.pre_tokenizers.splitter``), kept open so that the texts may come in batches (the worker pools of
``bpeproof.impl.parallel`` feed it one range of a file at a time).  For tiktoken's patterns with the C extension
built, the C scanner counts the words as it finds them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from bpeproof.impl.io.packed_counts import pack_counts
from bpeproof.impl.pre_tokenizers import splitter
from bpeproof.impl.pre_tokenizers.char_table import char_table
from bpeproof.impl.pre_tokenizers.patterns import resolve_pattern
from bpeproof.impl.trainer import count_words
from bpeproof.spec.types import BPETypeError, InvalidTextError

__all__ = ["WordCounts"]


def _text_to_count(text: str) -> str:
    if not isinstance(text, str):
        raise BPETypeError(f"a text to count must be str, not {type(text).__name__}")
    return text


class WordCounts:
    """The words of texts with their frequencies, the texts cut as ``pattern_splitter(pattern)`` cuts them:
    ``trainer.count_words(texts, pretokenize=pattern_splitter(pattern))``, added up over the calls of ``add``.  For
    the patterns of the hand-written scanners with the C extension built, the pieces are counted in C as the
    scanner finds them (``_fastenc.WordCounter``: a str and a count for each distinct word, no object for each
    piece), unless ``c_loop`` is False (then as any other pattern: ``count_words`` and the ``regex`` module)."""

    def __init__(self, pattern: str, *, c_loop: bool = True) -> None:
        self._source = resolve_pattern(pattern)
        self._split = splitter.pattern_splitter(self._source, c_loop=c_loop)
        which = splitter.c_scanner(self._source, c_loop)
        self._c: Any = None
        if which >= 0:
            from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]

            self._c, self._which, self._table = _fastenc.WordCounter(), which, char_table()
        self._counts: Counter[bytes] = Counter()

    def add(self, texts: Iterable[str]) -> None:
        """Count the words of every text (str)."""
        if self._c is None:
            self._counts.update(count_words(map(_text_to_count, texts), pretokenize=self._split))
            return
        add, table, which = self._c.add, self._table, self._which
        long_texts: list[str] = []
        for text in map(_text_to_count, texts):
            if len(text) < splitter.C_TEXT_LIMIT:
                add(text, table, which)
            else:  # beyond the scanner's limit: the regex module
                long_texts.append(text)
        if long_texts:
            self._counts.update(count_words(long_texts, pretokenize=self._split))

    def packed(self) -> bytes:
        """Every word counted so far as one packed count table (``impl.io.packed_counts``), the trainer's input."""
        if self._c is None or self._counts:
            return pack_counts(self.counts())
        try:
            packed: bytes = self._c.pack()
        except UnicodeEncodeError as error:  # a lone surrogate, as count_words reports it
            raise InvalidTextError(f"word {error.object!r} cannot be encoded as UTF-8: {error.reason}") from None
        return packed

    def counts(self) -> Counter[bytes]:
        """Every word counted so far (UTF-8 bytes) with its count."""
        if self._c is None:
            return Counter(self._counts)
        try:
            counts: Counter[bytes] = Counter(self._c.counts())
        except UnicodeEncodeError as error:  # a lone surrogate, as count_words reports it
            raise InvalidTextError(f"word {error.object!r} cannot be encoded as UTF-8: {error.reason}") from None
        counts.update(self._counts)
        return counts
