r"""Line cuts and the texts of byte ranges: where a text may be cut so that the encodings of its parts joined are
the encoding of the whole (the package docstring says why), and the text of a range read in pieces cut there."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from bpeproof.impl.io.corpus import read_text
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import gzip_stream
from bpeproof.impl.parallel.progress import Progress

if TYPE_CHECKING:
    from bpeproof.impl.pipelines.special_tokens import AllowedSpecial
    from bpeproof.impl.tokenizer import Tokenizer

__all__ = ["Range", "iter_range_texts", "line_cut_positions", "line_cuts_are_exact", "words_stop_at_line_cuts"]


#: Bytes read at a time when encoding, and the size of the pieces a range is encoded in (unless told otherwise).
BLOCK = 1 << 20


#: A line cut: a newline between two printable ASCII characters, the second not "/" (see the package docstring).
_CUT = re.compile(rb"[\x21-\x7e]\n(?=[\x21-\x2e\x30-\x7e])")
#: The same cuts matched from their newline, which the regex engine finds by its fast search for a literal: five
#: times faster through text with few cuts.
_CUT_FROM_NEWLINE = re.compile(rb"\n(?<=[\x21-\x7e]\n)(?=[\x21-\x2e\x30-\x7e])")


#: The patterns whose words never cross a line cut.
_CUT_PATTERNS = frozenset({"r50k", "cl100k", "o200k", "words"})


#: Semantics whose ids are the concatenation of each word's ids.
_WORD_SEMANTICS = frozenset({"sequential", "tiktoken", "hf-bpe"})


@dataclass(frozen=True)
class Range:
    """Bytes [start, stop) of a file (a gzip file is always read whole)."""

    name: str
    start: int
    stop: int
    gzipped: bool


def words_stop_at_line_cuts(pattern: str) -> bool:
    """Whether no word of ``pattern`` (a name or an expression) crosses a line cut, so that a text may be cut there
    (the package docstring): the named patterns r50k, cl100k, o200k and words."""
    from bpeproof.impl.pre_tokenizers.patterns import pattern_name, resolve_pattern

    return pattern_name(resolve_pattern(pattern)) in _CUT_PATTERNS


def line_cuts_are_exact(tokenizer: Tokenizer, allowed_special: AllowedSpecial = None) -> bool:
    """Whether ``tokenizer.encode`` of a text is the encodings of its parts joined, for parts cut at line cuts
    (see the package docstring): a word semantics, no pipeline or split steps, a named pattern, and no allowed
    special token whose name holds a newline."""
    from bpeproof.impl.pipelines.text_pipeline import PatternPipeline

    if tokenizer.semantics not in _WORD_SEMANTICS or type(tokenizer.pipeline) is not PatternPipeline:
        return False
    if tokenizer.pattern_name not in _CUT_PATTERNS:
        return False
    if allowed_special is None:
        return True
    names = tokenizer.special_tokens if allowed_special == "all" else allowed_special
    return not any("\n" in name for name in names)


def line_cut_positions(data: bytes) -> list[int]:
    """Every line cut of a UTF-8 text: the positions p (in bytes) right after a newline whose neighbours are
    printable ASCII characters, the one after it not ``/``.  Encoding the parts cut there gives the ids of the
    whole when ``line_cuts_are_exact``."""
    return [match.end() for match in _CUT.finditer(data)]


#: The bytes from the end that ``last_line_cut`` searches first (then twice as many, and so on).
LAST_CUT_WINDOW = 1 << 12


def last_line_cut(data: bytes | bytearray, low: int) -> int:
    """The last line cut p in ``data`` with p - 2 >= ``low`` (0: none).

    Searched by the expression in windows that double backwards from the end: a text with few cuts (Japanese or
    Chinese lines hold no ASCII at their ends) costs one scan in C, not one step in Python per newline."""
    window = LAST_CUT_WINDOW
    searched = len(data)  # the cuts starting at or after this were searched for already
    while True:
        start = max(low, len(data) - window)
        last = 0
        for match in _CUT_FROM_NEWLINE.finditer(data, start + 1, min(searched + 2, len(data))):
            last = match.end()
        if last or start == low:
            return last
        searched = start
        window *= 2


def _first_cut(handle: BinaryIO, start: int, stop: int, size: int) -> int | None:
    """The first line cut p in [start, stop) of a file (0 when ``start`` is 0), or None, reading ``size`` bytes at
    a time."""
    if start == 0:
        return 0
    position = max(start - 2, 0)
    handle.seek(position)
    tail = b""
    while position < stop:
        block = handle.read(min(size, stop - position))
        if not block:
            return None
        data = tail + block
        offset = position - len(tail)
        for match in _CUT.finditer(data):
            if offset + match.end() >= start:
                return offset + match.end()
        tail = data[-2:]
        position += len(block)
    return None


def _decode(name: str, data: bytes | bytearray, offset: int) -> str:
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError as error:
        raise FormatError(name, None, f"not valid UTF-8 at byte {offset + error.start}") from None


def _cut_texts(name: str, handle: BinaryIO, base: int, stop: int | None, size: int) -> Iterator[tuple[str, int]]:
    """The text from ``base`` (a line cut) to the first line cut at or after ``stop`` (None: the end), in pieces
    of about ``size`` bytes cut at line cuts, each with its length in bytes."""
    buffer = bytearray()
    end_scan = 0  # where the search for the cut that ends the range resumes (relative to base)
    inner_scan = 0  # where the search for an inner cut resumes
    while True:
        block = handle.read(size)
        buffer += block
        end: int | None = None
        if stop is not None and base + len(buffer) > stop:
            match = _CUT.search(buffer, max(stop - base - 2, end_scan, 0))
            if match is not None:
                end = match.end()
            end_scan = max(len(buffer) - 2, 0)
        if end is not None or not block:
            piece = buffer if end is None else buffer[:end]
            if piece:
                yield _decode(name, piece, base), len(piece)
            return
        if len(buffer) >= size:
            cut = last_line_cut(buffer, max(inner_scan - 2, 0))
            if cut:
                yield _decode(name, buffer[:cut], base), cut
                del buffer[:cut]
                base += cut
                end_scan = max(end_scan - cut, 0)
            inner_scan = max(len(buffer) - 1, 0)


def iter_range_texts(task: Range, *, cut: bool, on_bytes: Progress = None,
                     block: int = BLOCK) -> Iterator[tuple[str, int]]:
    """The text of a range, in pieces (each with its length in bytes) whose encodings joined are the encoding of the
    range: with ``cut``, pieces end at line cuts; otherwise the range is a whole file, read as one text.  A range of
    a plain file starts at its first line cut at or after ``start`` and ends at the first at or after ``stop``, so
    consecutive ranges that cover a file give its text exactly once.  ``on_bytes`` as
    ``impl.io.corpus.iter_range_lines`` calls it: the bytes of [start, stop) read so far (of the compressed file for
    gzip), adding up to stop - start."""
    size = task.stop - task.start
    reported = 0

    def report(done: int) -> None:
        nonlocal reported
        done = min(done, size)
        if on_bytes is not None and done > reported:
            on_bytes(done - reported)
            reported = done

    if task.name == "-" or not cut:
        text = read_text(task.name)
        report(size)
        if text:
            yield text, len(text.encode("utf-8"))
        return
    try:
        with Path(task.name).open("rb") as raw:
            if task.gzipped:
                with gzip_stream(task.name, raw) as unpacked:  # damaged data: impl.io.files' one error
                    for piece in _cut_texts(task.name, unpacked, 0, None, block):
                        report(raw.tell())
                        yield piece
            else:
                first = _first_cut(raw, task.start, task.stop, block)
                if first is not None:
                    raw.seek(first)
                    for piece in _cut_texts(task.name, raw, first, task.stop, block):
                        report(raw.tell() - task.start)
                        yield piece
            report(size)
    except FileNotFoundError:
        raise FormatError(task.name, None, "no such file") from None
    except IsADirectoryError:
        raise FormatError(task.name, None, "is a directory, not a file") from None
    except OSError as error:
        raise FormatError(task.name, None, f"cannot be read: {error.strerror or error}") from None
