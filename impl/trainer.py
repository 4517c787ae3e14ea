"""The fast BPE trainer: def-bpe's rule list computed the way rem-faster-training describes, from words or texts.

The result is exactly the rule list of def-bpe (largest pair count, ties to the smallest pair (a, b) in integer
order, new ids 256, 257, …, the left-to-right non-overlapping merge of def-merge).  This module is the trainer's
interface: it checks the arguments as the specification does, reduces the corpus to its distinct words with their
frequencies (rem-faster-training; ``count_words`` counts a stream of words or texts as it arrives), bounds the
number of merges by N − K (prop-bpe-training-termination) and runs one of three merge loops, which the tests all
check against the specification:

* ``c``: the merge loop of ``impl/_c/_fastbpe.c`` (``_train_c``, ``train_tables``), used whenever the extension is
  built.  Words are linked lists of positions, a pair lists the positions where it starts, and a merge visits
  those in increasing order (the left-to-right order of M_r); each position knows its pair, so no pair is ever
  looked up.  A merge costs O(occurrences), and all of training O(N log N).  With ``threads`` > 1 the distinct
  words are split by their hash into one partition per thread, every thread applies each merge to its own words,
  and a pair's count is the sum of the partitions' counts: the rules of one thread (``_fastbpe_run.h`` says why);
* ``strings``: ``bpeproof.impl.trainer_loops.train_strings``, the same algorithm in Python on words stored as
  strings of ids, used when the extension is missing;
* ``lists``: ``bpeproof.impl.trainer_loops.train_lists``, for ids above U+10FFFF, which cannot be characters.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice

from bpeproof.impl.io.packed_counts import unpack_counts
from bpeproof.impl.trainer_loops import Bar, merge_list, train_lists, train_strings
from bpeproof.spec.types import (
    ALPHABET_SIZE,
    BPETypeError,
    InvalidCorpusError,
    InvalidTextError,
    Rule,
    RuleTriple,
    is_int,
)

try:
    from bpeproof.impl._c import _fastbpe  # type: ignore[attr-defined]
except ImportError:  # the C extension is optional: the pure-Python trainer gives the same rules
    _fastbpe = None

#: Whether the C merge loop (``impl/_c/_fastbpe.c``) is built and used.
HAVE_C_LOOP: bool = _fastbpe is not None

__all__ = [
    "BACKENDS",
    "HAVE_C_LOOP",
    "Pretokenizer",
    "count_words",
    "train",
    "train_counts",
    "train_iter",
    "train_tables",
]

#: A pre-tokenizer cuts one text into words (rem-faster-training); empty pieces are dropped.
Pretokenizer = Callable[[str], Iterable[str]]

#: The largest code point: ids up to this value are stored as characters of a ``str``.
_MAX_CODE_POINT = 0x10FFFF

#: Items read at a time from a stream of texts or words (bounds the memory of ``count_words``).
_CHUNK_ITEMS = 4096


# ---------------------------------------------------------------------------
# Checking arguments: the same errors as def-bpe's specification
# ---------------------------------------------------------------------------


def _check_num_merges(num_merges: int | None) -> int | None:
    """m ≥ 0, or None for no bound (def-bpe, prop-bpe-training-termination)."""
    if num_merges is None:
        return None
    if not is_int(num_merges):
        raise BPETypeError(f"num_merges must be an int or None, not {type(num_merges).__name__}")
    if num_merges < 0:
        raise InvalidCorpusError(f"num_merges = {num_merges} is negative: def-bpe needs m >= 0")
    return int(num_merges)


def _first_bad_word(corpus: Sequence[object]) -> None:
    """Raise the error for the first word of ``corpus`` that is not in Σ⁺ (def-bpe), if any."""
    for index, word in enumerate(corpus):
        if not isinstance(word, (bytes, bytearray)):
            raise BPETypeError(f"corpus word {index} must be bytes, not {type(word).__name__}")
        if len(word) == 0:
            raise InvalidCorpusError(f"corpus word {index} is empty: words must be in Σ⁺")


def _corpus_counts(corpus: Sequence[bytes]) -> Counter[bytes]:
    """The distinct words of a checked corpus (w_1, …, w_K) with their frequencies (def-bpe, rem-faster-training)."""
    if isinstance(corpus, (str, bytes)) or not isinstance(corpus, Sequence):
        raise BPETypeError(f"corpus must be a sequence of bytes words, not {type(corpus).__name__}")
    if len(corpus) == 0:
        raise InvalidCorpusError("corpus is empty: def-bpe needs K >= 1 words")
    try:
        counts: Counter[object] = Counter(corpus)
    except TypeError:  # an unhashable word: a bytearray (accepted) or something that is not a word
        _first_bad_word(corpus)
        counts = Counter(bytes(w) for w in corpus)
    if set(map(type, counts)) != {bytes} or b"" in counts:
        _first_bad_word(corpus)
    return counts  # type: ignore[return-value]  # every key is a non-empty bytes


def _check_counts(counts: Mapping[bytes, int]) -> Mapping[bytes, int]:
    """A word-count table: distinct words in Σ⁺ with frequencies f ≥ 1, at least one word (def-bpe)."""
    if not isinstance(counts, Mapping):
        raise BPETypeError(f"counts must be a mapping from bytes words to ints, not {type(counts).__name__}")
    if len(counts) == 0:
        raise InvalidCorpusError("counts is empty: def-bpe needs K >= 1 words")
    if (
        set(map(type, counts)) == {bytes}
        and set(map(type, counts.values())) == {int}
        and b"" not in counts
        and min(counts.values()) >= 1
    ):
        return counts  # every check below passes (tested with C-level operations only)
    checked: Counter[bytes] = Counter()
    for word, count in counts.items():
        if not isinstance(word, (bytes, bytearray)):
            raise BPETypeError(f"counts key {word!r} must be bytes, not {type(word).__name__}")
        if len(word) == 0:
            raise InvalidCorpusError("counts has the empty word as a key: words must be in Σ⁺")
        if not is_int(count):
            raise BPETypeError(f"the count of word {bytes(word)!r} must be an int, not {type(count).__name__}")
        if count < 1:
            raise InvalidCorpusError(f"the count of word {bytes(word)!r} is {count}: counts must be >= 1")
        checked[bytes(word)] += count
    return checked


# ---------------------------------------------------------------------------
# Counting words while streaming (rem-faster-training)
# ---------------------------------------------------------------------------


_encode_utf8: Callable[[object], bytes] = str.encode  # type: ignore[assignment]


def _as_text(item: object, index: int) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, (bytes, bytearray)):
        try:
            return bytes(item).decode("utf-8", errors="strict")
        except UnicodeDecodeError as error:
            raise InvalidTextError(f"text {index} is not valid UTF-8 at byte {error.start}: {error.reason}") from None
    raise BPETypeError(f"text {index} must be str or bytes, not {type(item).__name__}")


def _count_chunk(
    counter: Counter[object], chunk: list[object], start: int, pretokenize: Pretokenizer | None
) -> None:
    """Add the words of one chunk of items (items ``start``, ``start + 1``, …) to ``counter``."""
    if pretokenize is None:
        if not set(map(type, chunk)) <= {str, bytes}:
            for offset, item in enumerate(chunk):
                if not isinstance(item, (str, bytes, bytearray)):
                    raise BPETypeError(f"word {start + offset} must be bytes or str, not {type(item).__name__}")
            chunk = [bytes(w) if isinstance(w, bytearray) else w for w in chunk]
        counter.update(chunk)
        if not all(chunk):
            offset = next(i for i, item in enumerate(chunk) if not item)
            raise InvalidCorpusError(f"word {start + offset} is empty: words must be in Σ⁺")
        return
    if pretokenize is str.split:
        # Splitting at white space commutes with joining at a newline, so one call splits the chunk.
        try:
            joined = "\n".join(chunk)  # type: ignore[arg-type]
        except TypeError:
            joined = "\n".join(_as_text(item, start + offset) for offset, item in enumerate(chunk))
        counter.update(joined.split())
        return
    for offset, item in enumerate(chunk):
        try:
            counter.update(pretokenize(_as_text(item, start + offset)))
        except TypeError as error:
            raise BPETypeError(f"the pre-tokenizer's pieces of text {start + offset} must be str: {error}") from None


def count_words(
    items: Iterable[bytes | str], *, pretokenize: Pretokenizer | None = None, progress: bool | None = False
) -> Counter[bytes]:
    """The distinct words of a stream with their frequencies: the corpus of def-bpe as rem-faster-training keeps it.

    With ``pretokenize`` None every item is one word (bytes, or str taken as its
    UTF-8 bytes) and an empty item is an error.  Otherwise every item is a text
    (str, or bytes that must be UTF-8) that ``pretokenize`` cuts into words;
    empty pieces are dropped.  ``str.split`` is recognised and run on many texts
    at once.  Memory is bounded by the distinct words (and one chunk of items):
    strings are counted first and each distinct one is encoded once.
    ``progress`` shows a tqdm bar of the items read (None: if stderr is a
    terminal and counting takes more than a second).
    """
    if pretokenize is not None and not callable(pretokenize):
        raise BPETypeError(f"pretokenize must be callable or None, not {type(pretokenize).__name__}")
    if isinstance(items, (str, bytes, bytearray)) or not isinstance(items, Iterable):
        raise BPETypeError(f"items must be an iterable of bytes or str, not {type(items).__name__}")
    counter: Counter[object] = Counter()
    iterator: Iterator[object] = iter(items)
    start = 0
    bar = _progress_bar(None, progress, "item", "counting words")
    try:
        while chunk := list(islice(iterator, _CHUNK_ITEMS)):
            _count_chunk(counter, chunk, start, pretokenize)
            start += len(chunk)
            if bar is not None:
                bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()
    kinds = set(map(type, counter))
    if kinds <= {str} or kinds <= {bytes}:
        # The usual cases, with C-level loops only.  UTF-8 is injective on str, so the encoded
        # words stay distinct; an error falls through to the loop below, which names the word.
        try:
            keys = map(_encode_utf8, counter) if kinds == {str} else counter
            fast: Counter[bytes] = Counter(dict(zip(keys, counter.values(), strict=True)))  # type: ignore[arg-type]
        except UnicodeEncodeError:
            pass
        else:
            fast.pop(b"", None)
            return fast
    words: Counter[bytes] = Counter()
    for word, count in counter.items():
        if isinstance(word, str):
            try:
                key = word.encode("utf-8", errors="strict")
            except UnicodeEncodeError as error:
                raise InvalidTextError(f"word {word!r} cannot be encoded as UTF-8: {error.reason}") from None
        elif isinstance(word, bytes):
            key = word
        else:
            what = "pre-tokenizer piece" if pretokenize is not None else "word"
            raise BPETypeError(f"{what} {word!r} must be str or bytes, not {type(word).__name__}")
        if key:
            words[key] += count
    return words


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


def _progress_bar(total: int | None, progress: bool | None, unit: str, desc: str) -> Bar | None:
    """A tqdm bar when ``progress`` is True; with None, one that appears after a second if stderr is a terminal."""
    if progress is None:
        progress = sys.stderr.isatty()
        delay = 1.0
    else:
        delay = 0.0
    if not progress:
        return None
    from tqdm import tqdm

    bar: Bar = tqdm(total=total, unit=unit, desc=desc, leave=False, delay=delay)
    return bar


def apply_rule(rule: RuleTriple, tokens: Sequence[int]) -> list[int]:
    """M_r(x) (def-merge), the merge step every training iteration applies to each word; equal to ``spec.apply_rule``.

    Iterative, so without the specification's length limit.
    """
    if not isinstance(rule, tuple) or len(rule) != 3 or not all(is_int(part) for part in rule):
        raise BPETypeError(f"rule must be an (a, b, c) triple of ints, not {rule!r}")
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise BPETypeError(f"tokens must be a list of ints, not {type(tokens).__name__}")
    for index, token in enumerate(tokens):
        if not is_int(token):
            raise BPETypeError(f"tokens[{index}] must be an int, not {type(token).__name__}")
    a, b, c = rule
    return merge_list(list(tokens), a, b, c)


def _train_c(words: list[bytes], freqs: list[int], merges: int, bar: Bar | None, threads: int = 1) -> list[Rule]:
    """rem-faster-training with the merge loop of ``impl/_c/_fastbpe.c``, on ``threads`` threads."""
    assert _fastbpe is not None
    rules = [Rule(a, b, c) for a, b, c in _fastbpe.train(words, freqs, merges, _threads(threads))]
    if bar is not None:
        bar.update(len(rules))
    return rules


#: The ways to run the merge loop, fastest first (see the module docstring).
BACKENDS: dict[str, Callable[[list[bytes], list[int], int, Bar | None], list[Rule]]] = {
    "c": _train_c,
    "strings": train_strings,
    "lists": train_lists,
}

#: Limits of the C loop: 32-bit positions and ids, 64-bit counts, and threads.
_C_INDEX_LIMIT = 2**31 - 1
_C_COUNT_LIMIT = 2**62
_C_THREADS = 256


def _threads(threads: int) -> int:
    """A number of threads for the C loop (more than it takes are as many as it takes: the same rules)."""
    if not is_int(threads) or threads < 1:
        raise ValueError(f"the number of threads must be an int >= 1, not {threads!r}")
    return min(int(threads), _C_THREADS)


def choose_backend(words: list[bytes], freqs: list[int], symbols: int, merges: int) -> str:
    """The fastest backend that can run this training."""
    if (
        _fastbpe is not None
        and symbols <= _C_INDEX_LIMIT
        and ALPHABET_SIZE + merges <= _C_INDEX_LIMIT
        and sum(freqs) * max(map(len, words)) < _C_COUNT_LIMIT
    ):
        return "c"
    if ALPHABET_SIZE + merges - 1 <= _MAX_CODE_POINT:
        return "strings"
    return "lists"


def train_distinct(
    counts: Mapping[bytes, int], bound: int | None, progress: bool | None, backend: str | None = None, threads: int = 1
) -> list[Rule]:
    """def-bpe on the corpus in which word w occurs counts[w] times (rem-faster-training); the C loop runs on
    ``threads`` threads (the same rules for any number)."""
    words = list(counts.keys())
    freqs = list(counts.values())
    symbols = sum(map(len, words))
    # prop-bpe-training-termination: every merge shortens some distinct word by at least one token,
    # and a word never has fewer than one, so there are at most Σ (|w| − 1) merges.
    most = symbols - len(words)
    merges = most if bound is None else min(bound, most)
    name = backend or choose_backend(words, freqs, symbols, merges)
    bar = _progress_bar(merges, progress, "merge", "BPE merges")
    try:
        if name == "c":
            return _train_c(words, freqs, merges, bar, threads)
        return BACKENDS[name](words, freqs, merges, bar)
    finally:
        if bar is not None:
            bar.close()


def train(corpus: Sequence[bytes], num_merges: int | None, *, progress: bool | None = None) -> list[Rule]:
    """The rule list (r_1, …, r_m') that def-bpe learns from ``corpus`` with at most ``num_merges`` merges.

    ``corpus`` is (w_1, …, w_K), K ≥ 1 words in Σ⁺ (bytes); ``num_merges`` is
    m ≥ 0, or None for no bound, in which case training ends when no word has
    two tokens left, after at most N − K merges (prop-bpe-training-termination).
    Computed as rem-faster-training describes; equal to ``bpeproof.spec.bpe.train``.
    ``progress`` shows a tqdm bar of the merges (None: one that appears after a
    second, and only when stderr is a terminal).
    """
    counts = _corpus_counts(corpus)
    bound = _check_num_merges(num_merges)
    return train_distinct(counts, bound, progress)


def train_counts(
    counts: Mapping[bytes, int], num_merges: int | None, *, progress: bool | None = None, threads: int = 1
) -> list[Rule]:
    """def-bpe on the corpus in which each word w occurs ``counts[w]`` ≥ 1 times (rem-faster-training).

    Equal to ``train`` on any list that holds each word that many times, in any order.  The C merge loop runs on
    ``threads`` threads, each applying every merge to its share of the words: the same rules for any number.
    """
    checked = _check_counts(counts)
    bound = _check_num_merges(num_merges)
    return train_distinct(checked, bound, progress, threads=_threads(threads))


def train_tables(
    tables: Sequence[bytes], num_merges: int | None, *, progress: bool | None = None, threads: int = 1
) -> tuple[list[Rule], int, int]:
    """def-bpe on the sum of packed count tables (``impl.io.packed_counts``: what ``parallel.count_tables`` gives,
    one per worker), with the number of distinct words and of words.  The C loop adds the tables itself and trains
    on ``threads`` threads; without it, or beyond its limits, the tables are unpacked for ``train_distinct``."""
    bound = _check_num_merges(num_merges)
    threads = _threads(threads)
    if _fastbpe is not None:
        try:
            found, distinct, words = _fastbpe.train_tables(list(tables), bound, threads)
        except OverflowError:  # counts beyond 64 bits or positions beyond 32: the Python loops
            pass
        else:
            if not distinct:
                raise InvalidCorpusError("the tables hold no words: def-bpe needs K >= 1 words")
            return [Rule(a, b, c) for a, b, c in found], distinct, words
    counts = unpack_counts(tables)
    if not counts:
        raise InvalidCorpusError("the tables hold no words: def-bpe needs K >= 1 words")
    return train_distinct(counts, bound, progress), len(counts), sum(counts.values())


def train_iter(
    items: Iterable[bytes | str],
    num_merges: int | None,
    *,
    pretokenize: Pretokenizer | None = None,
    progress: bool | None = None,
) -> list[Rule]:
    """def-bpe on a stream of words or texts, counted as they arrive (rem-faster-training).

    With ``pretokenize`` None each item is one word; otherwise each item is a
    text that ``pretokenize`` cuts into words (``str.split`` runs fastest).  See
    ``count_words``.  ``num_merges`` is checked before the stream is read.
    """
    bound = _check_num_merges(num_merges)
    counts = count_words(items, pretokenize=pretokenize, progress=progress)
    if not counts:
        raise InvalidCorpusError("the stream holds no words: def-bpe needs K >= 1 words")
    return train_distinct(counts, bound, progress)
