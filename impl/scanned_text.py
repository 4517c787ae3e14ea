"""A tokenizer's C path for a pipeline that a hand-written scanner cuts: each stretch of text cut and merged in one
call of the C loop (``_fastenc.Merger.encode_text``), through that loop's own word cache, and batches of texts on
threads of that loop with the GIL released (``encode_texts``).

``Tokenizer`` makes one when its pipeline names a scanner (``TextPipeline.c_scanner``) and its model merges in C;
the pipeline still finds the added tokens and normalizes (``TextPipeline.stretches``) unless it reads a text whole.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from bpeproof.impl.pipelines.text_pipeline import TextPipeline
from bpeproof.impl.pre_tokenizers import splitter
from bpeproof.spec.types import InvalidTextError

__all__ = ["FAILED", "ScannedText"]

#: What ``batch`` returns when the C loop could not encode the batch (a surrogate, a byte without an id, an id of
#: 2**32 or more as uint32): the caller encodes it again text by text, for the error ``encode`` raises.
FAILED = False


class ScannedText:
    """The scanner ``which`` of ``pipeline`` and the C loop ``fast``, with a word cache of ``cache_size`` words."""

    def __init__(self, fast: Any, which: int, pipeline: TextPipeline, cache_size: int) -> None:
        self._fast = fast
        self._which = which
        self._pipeline = pipeline
        self._cache_size = cache_size
        self._table = pipeline.scanner_table()

    def stretch(self, text: str) -> list[int]:
        """The ids of one stretch of under ``splitter.C_TEXT_LIMIT`` characters (a surrogate escaping a byte is that
        byte, as ``encode_bytes`` gives it)."""
        try:
            ids: list[int] = self._fast.encode_text(text, self._table, self._which, self._cache_size)
        except ValueError as error:
            if type(error) is not ValueError:
                raise
            raise InvalidTextError(str(error)) from None  # a word that needs a byte without an id
        return ids

    def whole_text(self, text: str) -> list[int] | None:
        """The ids of a text the pipeline reads whole, in one strict call (which looks for a surrogate before any
        word: a cached word may hold an escaped byte); None when the text holds a surrogate or is too long for the C
        loop (the caller refuses or encodes it otherwise)."""
        if len(text) >= splitter.C_TEXT_LIMIT:
            return None
        try:
            ids: list[int] = self._fast.encode_text(text, self._table, self._which, self._cache_size, True)
        except UnicodeError:
            return None
        except ValueError as error:
            if type(error) is not ValueError:
                raise
            raise InvalidTextError(str(error)) from None
        return ids

    def batch(self, texts: Sequence[str], threads: int, names: frozenset[str] | None, as_uint32: bool) -> Any:
        """The ids of each text on ``threads`` threads (as bytes of little-endian uint32 when ``as_uint32``), or
        ``FAILED``.  A text the pipeline reads whole goes to the threads as it is; otherwise its stretches do, and
        its added tokens' ids are put back between them."""
        if any(len(text) >= splitter.C_TEXT_LIMIT for text in texts):
            return FAILED
        if names is None and self._pipeline.whole_when_unnamed:
            return self._on_threads(texts, threads, as_uint32)
        try:
            for text in texts:  # what encode refuses, before the pipeline reads the text
                text.encode("utf-8")
            items = [self._pipeline.stretches(text, names) for text in texts]
        except ValueError:
            return FAILED
        stretches = [item for text_items in items for item in text_items if isinstance(item, str)]
        found = self._on_threads(stretches, threads, as_uint32)
        if found is FAILED:
            return FAILED
        ids = iter(found)
        if as_uint32:
            try:
                return [b"".join(next(ids) if isinstance(item, str) else struct.pack("<I", item)
                                 for item in text_items) for text_items in items]
            except struct.error:  # an added token's id of 2**32 or more
                return FAILED
        out: list[list[int]] = []
        for text_items in items:
            text_ids: list[int] = []
            for item in text_items:
                if isinstance(item, str):
                    text_ids += next(ids)
                else:
                    text_ids.append(item)
            out.append(text_ids)
        return out

    def _on_threads(self, texts: Sequence[str], threads: int, as_uint32: bool) -> Any:
        try:
            return self._fast.encode_texts(texts, self._table, self._which, self._cache_size, threads, True,
                                           as_uint32)
        except (ValueError, MemoryError, OverflowError):  # UnicodeError is a ValueError
            return FAILED
