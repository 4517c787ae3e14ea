"""bpeproof.impl.trainer against bpeproof.spec.bpe.train: def-bpe, rem-faster-training, prop-bpe-training-termination.

The trainer is checked differentially: on generated corpora (small alphabets,
runs, repeated words, many ties), on the article's trace corpus and on a slice
of real text, every backend (the C loop when it is built, the string loop, the
list loop) must return exactly the specification's rule list; bad input must
raise the specification's error classes; and the rules must not depend on
``PYTHONHASHSEED``.  The C loop is also run on its words in several partitions
(``THREADED``): on 2, 3 and 5 threads with every step in parallel, on several
partitions in turn (as it runs without threads), and on the corpus cut into
packed tables that share words, as worker processes hand it over.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bpeproof.spec.bpe
from bpeproof.impl import trainer
from bpeproof.impl.io.packed_counts import pack_counts, table_words, unpack_counts
from bpeproof.proofs_tests.checker.strategies import corpora, runs_over, words
from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, InvalidCorpusError, InvalidTextError, Rule

ROOT = Path(__file__).resolve().parents[3]
SHAKESPEARE = ROOT.parent / "shared" / "corpora" / "en_shakespeare.txt.gz"

BACKENDS = [
    pytest.param(name, marks=pytest.mark.skipif(not trainer.HAVE_C_LOOP, reason="impl._c._fastbpe is not built"))
    if name == "c"
    else name
    for name in trainer.BACKENDS
]
AVAILABLE = [name for name in trainer.BACKENDS if name != "c" or trainer.HAVE_C_LOOP]

# ex-training-trace: the article's corpus and the rules def-bpe learns from it.
TRACE_CORPUS = [b"slow"] * 4 + [b"slower"] * 2 + [b"lowest"] * 3 + [b"newest"] * 3
TRACE_RULES = [Rule(108, 111, 256), Rule(256, 119, 257), Rule(101, 115, 258), Rule(115, 257, 259), Rule(258, 116, 260)]

merge_bounds = st.one_of(st.none(), st.integers(0, 10))

#: The C loop on partitions: (threads, packed tables the corpus is cut into, the fewest positions of a step run in
#: parallel).  0: every step on every thread; 2**62: the partitions one after the other, as without threads.
THREADED = [(2, 1, 0), (3, 2, 0), (5, 3, 0), (1, 3, 0), (3, 1, 2**62)] if trainer.HAVE_C_LOOP else []


def train_with(backend: str, corpus: list[bytes], num_merges: int | None) -> list[Rule]:
    """impl's trainer on ``corpus`` with one backend forced."""
    return trainer.train_distinct(Counter(corpus), num_merges, False, backend)


def cut_into_tables(counts: Counter[bytes], tables: int) -> list[bytes]:
    """``counts`` as ``tables`` packed tables (some may be empty) that together hold each word's count: every third
    word is split between two tables, as when two worker processes both counted it."""
    parts: list[dict[bytes, int]] = [{} for _ in range(tables)]
    for index, (word, count) in enumerate(sorted(counts.items())):
        if tables > 1 and count > 1 and index % 3 == 0:
            parts[index % tables][word] = count - 1
            parts[(index + 1) % tables][word] = 1
        else:
            parts[index % tables][word] = count
    return [pack_counts(part) for part in parts]


def train_threaded(corpus: list[bytes], num_merges: int | None, threads: int, tables: int,
                   parallel_min: int) -> list[Rule]:
    """The C loop on ``threads`` partitions of the words of ``corpus`` cut into ``tables`` packed tables."""
    from bpeproof.impl._c import _fastbpe  # type: ignore[attr-defined]

    counts = Counter(corpus)
    packed = cut_into_tables(counts, tables)
    rules, distinct, words = _fastbpe.train_tables(packed, num_merges, threads=threads, parallel_min=parallel_min)
    assert (distinct, words) == (len(counts), len(corpus))
    return [Rule(*rule) for rule in rules]


def assert_threaded_equal(corpus: list[bytes], num_merges: int | None, expected: list[Rule]) -> None:
    for threads, tables, parallel_min in THREADED:
        assert train_threaded(corpus, num_merges, threads, tables, parallel_min) == expected, (threads, tables)


@st.composite
def tie_heavy(draw: st.DrawFn) -> list[bytes]:
    """Every word of one length over a small alphabet, each the same number of times: all pairs tie at first."""
    alphabet = draw(st.lists(st.integers(0, ALPHABET_SIZE - 1), min_size=1, max_size=3, unique=True))
    length = draw(st.integers(2, 4 if len(alphabet) < 3 else 3))
    every = [bytes(w) for w in itertools.product(alphabet, repeat=length)]
    chosen = draw(st.lists(st.sampled_from(every), min_size=1, max_size=len(every), unique=True))
    repeat = draw(st.integers(1, 3))
    return draw(st.permutations([w for w in chosen for _ in range(repeat)]))


@st.composite
def long_run_corpora(draw: st.DrawFn) -> list[bytes]:
    """Few words with long runs (a a a a …, a b a b …) over one or two symbols."""
    alphabet = draw(st.lists(st.sampled_from(b"ab"), min_size=1, max_size=2, unique=True))
    return draw(st.lists(runs_over(alphabet, max_size=40, min_size=1), min_size=1, max_size=4))


# ---------------------------------------------------------------------------
# def-bpe: the same rules as the specification
# ---------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(corpus=corpora(), num_merges=merge_bounds)
def test_train_equals_spec(corpus: list[bytes], num_merges: int | None) -> None:
    expected = bpeproof.spec.bpe.train(corpus, num_merges)
    assert trainer.train(corpus, num_merges) == expected
    for backend in AVAILABLE:
        assert train_with(backend, corpus, num_merges) == expected, backend
    assert_threaded_equal(corpus, num_merges, expected)


@settings(max_examples=100, deadline=None)
@given(corpus=tie_heavy(), num_merges=merge_bounds)
def test_train_equals_spec_on_ties(corpus: list[bytes], num_merges: int | None) -> None:
    expected = bpeproof.spec.bpe.train(corpus, num_merges)
    for backend in AVAILABLE:
        assert train_with(backend, corpus, num_merges) == expected, backend
    assert_threaded_equal(corpus, num_merges, expected)


@settings(max_examples=80, deadline=None)
@given(corpus=long_run_corpora(), num_merges=merge_bounds)
def test_train_equals_spec_on_long_runs(corpus: list[bytes], num_merges: int | None) -> None:
    expected = bpeproof.spec.bpe.train(corpus, num_merges)
    for backend in AVAILABLE:
        assert train_with(backend, corpus, num_merges) == expected, backend
    assert_threaded_equal(corpus, num_merges, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_article_trace(backend: str) -> None:
    """ex-training-trace: five merges, then eleven in all when unbounded."""
    assert train_with(backend, TRACE_CORPUS, 5) == TRACE_RULES
    unbounded = train_with(backend, TRACE_CORPUS, None)
    assert len(unbounded) == 11
    assert unbounded[:5] == TRACE_RULES
    assert unbounded == bpeproof.spec.bpe.train(TRACE_CORPUS, None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_overlapping_runs(backend: str) -> None:
    """def-merge: a a a with (a, a ↦ c) is c a, and cnt counts overlapping occurrences."""
    assert train_with(backend, [b"aaa"], None) == [Rule(97, 97, 256), Rule(256, 97, 257)]
    # (a, a) occurs 3 times in a a a a, more than (a, b) twice: the runs decide.
    assert train_with(backend, [b"aaaa", b"ab", b"ab"], 1) == [Rule(97, 97, 256)]
    for corpus in ([b"aaaa"], [b"abab"], [b"aaaaaaaaab", b"abababab"], [b"a" * 33, b"ba" * 17]):
        assert train_with(backend, corpus, None) == bpeproof.spec.bpe.train(corpus, None)


def test_backends_agree_on_longer_words() -> None:
    """Words beyond what the specification evaluates quickly: the three loops still agree."""
    corpus = [bytes(w) for w in itertools.product(b"abc", repeat=5)] + [b"ab" * 300, b"a" * 500, b"abcabcab" * 40]
    results = {backend: train_with(backend, corpus, None) for backend in AVAILABLE}
    first = next(iter(results.values()))
    assert all(result == first for result in results.values())
    assert_threaded_equal(corpus, None, first)
    assert len(first) <= sum(map(len, corpus)) - len(corpus)


# ---------------------------------------------------------------------------
# prop-bpe-training-termination: at most N − K merges
# ---------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(corpus=corpora(max_word=12))
def test_termination_bound(corpus: list[bytes]) -> None:
    n_symbols, n_words = sum(map(len, corpus)), len(corpus)
    rules = trainer.train(corpus, None)
    assert len(rules) <= n_symbols - n_words
    assert [rule.c for rule in rules] == list(range(ALPHABET_SIZE, ALPHABET_SIZE + len(rules)))
    # Unbounded training ends when no word has two tokens left: one more merge is impossible,
    # and every bound at least m' gives the same rules.
    assert trainer.train(corpus, len(rules) + 3) == rules
    if rules:
        assert trainer.train(corpus, len(rules) - 1) == rules[:-1]


def test_termination_bound_is_reached() -> None:
    """One word of n distinct bytes needs exactly n − 1 merges: the bound N − K is tight."""
    assert len(trainer.train([b"abcdefgh"], None)) == 7


# ---------------------------------------------------------------------------
# Counting words: train_counts, train_iter, count_words
# ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(corpus=corpora(), num_merges=merge_bounds)
def test_counts_and_stream_entries_equal_train(corpus: list[bytes], num_merges: int | None) -> None:
    expected = trainer.train(corpus, num_merges)
    assert trainer.train_counts(Counter(corpus), num_merges) == expected
    assert trainer.train_iter(iter(corpus), num_merges) == expected
    # str items are their UTF-8 bytes; bytearray items are accepted like bytes.
    mixed: list[bytes | str] = [w.decode("latin-1") if w.isascii() and i % 2 else w for i, w in enumerate(corpus)]
    assert trainer.train_iter(mixed, num_merges) == expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(st.text(st.sampled_from(list("ab  \n\tあé\u3000")), max_size=20), min_size=1, max_size=6),
    num_merges=merge_bounds,
)
def test_pretokenized_stream_equals_train(texts: list[str], num_merges: int | None) -> None:
    pieces = [piece.encode("utf-8") for text in texts for piece in text.split()]
    splitters: list[Callable[[str], list[str]]] = [str.split, lambda text: text.split(" ")]
    for pretokenize in splitters:
        pieces = [piece.encode("utf-8") for text in texts for piece in pretokenize(text) if piece]
        if not pieces:
            with pytest.raises(InvalidCorpusError):
                trainer.train_iter(texts, num_merges, pretokenize=pretokenize)
            continue
        expected = bpeproof.spec.bpe.train(pieces, num_merges)
        assert trainer.train_iter(texts, num_merges, pretokenize=pretokenize) == expected
        as_bytes = [text.encode("utf-8") for text in texts]
        assert trainer.train_iter(as_bytes, num_merges, pretokenize=pretokenize) == expected


def test_count_words_streams_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trainer, "_CHUNK_ITEMS", 3)
    lines = ["to be or", "not to be", "", "that is", "the question", "to be"]
    counts = trainer.count_words(iter(lines), pretokenize=str.split)
    assert counts == Counter(word.encode() for line in lines for word in line.split())
    items = ["a", b"a", bytearray(b"a"), "é"]
    assert trainer.count_words(items) == Counter({b"a": 3, "é".encode(): 1})  # type: ignore[arg-type]


@pytest.mark.parametrize("backend", BACKENDS)
def test_large_frequencies(backend: str) -> None:
    """Counts beyond 32 bits are exact; f copies of a word count f times (rem-faster-training)."""
    counts = {b"abab": 2**40, b"bab": 2**40 + 1, b"aa": 3, b"ba": 2**33}
    # (a, b): 2·2^40 + 2^40 + 1 beats (b, a): 2^40 + 2^40 + 1 + 2^33; 32-bit counts would get this wrong.
    rules = trainer.train_distinct(counts, None, False, backend)
    assert rules == trainer.train_distinct(counts, None, False, "lists")
    assert rules[0] == Rule(97, 98, 256)
    small = {b"abab": 4, b"bab": 5, b"aa": 3, b"ba": 2}
    assert trainer.train_distinct(small, None, False, backend) == bpeproof.spec.bpe.train(
        [w for w, n in small.items() for _ in range(n)], None
    )


def test_counts_too_large_for_the_c_loop_use_python() -> None:
    counts = {b"ab": 2**70, b"ba": 1}
    assert trainer.choose_backend(list(counts), list(counts.values()), 4, 2) == "strings"
    assert trainer.train_counts(counts, None) == [Rule(97, 98, 256), Rule(98, 97, 257)]


needs_c_loop = pytest.mark.skipif(not trainer.HAVE_C_LOOP, reason="bpeproof.impl._c._fastbpe is not built")


@needs_c_loop
def test_c_loop_counts_up_to_int64_and_no_further() -> None:
    """Counts are int64: a pair count of 2^63 − 1 trains exactly; one more is an OverflowError, never wrong rules."""
    from bpeproof.impl._c import _fastbpe  # type: ignore[attr-defined]

    for largest in ({b"ab": 2**62, b"xab": 2**62 - 1}, {b"abab": 2**62 - 1, b"ab": 1, b"xa": 2**62}):
        # (a, b) occurs 2^63 − 1 times; in the second corpus all the counts add up to more (only each must fit).
        assert trainer.train_distinct(largest, None, False, "c") == trainer.train_distinct(
            largest, None, False, "lists"
        )
    for beyond in ({b"ab": 2**62, b"xab": 2**62}, {b"abab": 2**62, b"ba": 1}):
        # (a, b) occurs 2^63 times: a count that wrapped round to -2^63 would put another pair first.
        assert trainer.train_distinct(beyond, None, False, "lists")[0] == Rule(97, 98, 256)
        with pytest.raises(OverflowError, match=r"^a pair count exceeds 2\*\*63 - 1"):
            trainer.train_distinct(beyond, None, False, "c")
        assert trainer.choose_backend(list(beyond), list(beyond.values()), 6, 3) != "c"  # train() never asks the C loop
    with pytest.raises(OverflowError, match=r"^the frequency of word 1 does not fit in 64 bits"):
        _fastbpe.train([b"ab", b"ba"], [1, 2**63], 2)


_HOSTILE_SCRIPT = """
import json, sys
from bpeproof.impl._c import _fastbpe
words = [b"ab" * (1 + i % 4) + bytes([99 + i % 5]) + str(i).encode() for i in range(300)]
freqs = list(range(1, 301))
class Shrinking:
    # Python code that runs while the C loop converts the frequencies: it empties both lists and frees the words.
    def __index__(self):
        words[:] = [b"x"]
        freqs[:] = [1]
        return 7
freqs[int(sys.argv[1])] = Shrinking()
print(json.dumps(_fastbpe.train(words, freqs, 40)))
"""


@needs_c_loop
@pytest.mark.parametrize("where", [0, 150])
def test_c_loop_survives_a_frequency_that_changes_the_lists(where: int) -> None:
    """The C loop copies its inputs first: it trains on the words as they were passed, and never reads freed memory.

    In a fresh process, so that a crash fails this test instead of ending the test run."""
    done = subprocess.run([sys.executable, "-c", _HOSTILE_SCRIPT, str(where)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, f"the process ended with {done.returncode}: {done.stderr[-2000:]}"
    words = [b"ab" * (1 + i % 4) + bytes([99 + i % 5]) + str(i).encode() for i in range(300)]  # all distinct
    counts = {word: 7 if i == where else i + 1 for i, word in enumerate(words)}
    expected = trainer.train_distinct(counts, 40, False, "lists")
    assert [Rule(*rule) for rule in json.loads(done.stdout)] == expected


def test_bytearray_words_are_accepted() -> None:
    corpus: list[bytes] = [bytearray(b"abab"), b"ab", bytearray(b"ba")]  # type: ignore[list-item]
    assert trainer.train(corpus, None) == bpeproof.spec.bpe.train(corpus, None)


# ---------------------------------------------------------------------------
# Partitions and threads: the same rules for any number
# ---------------------------------------------------------------------------


def _generated_counts(seed: int, words: int) -> Counter[bytes]:
    """Made-up words over a few letters (so that many pairs are long and many counts tie), with Zipf-like counts."""
    rng = random.Random(seed)
    letters = b"abcde\xc3\xa9 "
    return Counter({bytes(rng.choice(letters) for _ in range(rng.randint(1, 12))): 1 + int(40 / rng.randint(1, 40))
                    for _ in range(words)})


@needs_c_loop
@pytest.mark.parametrize("seed", [1, 2])
def test_threads_learn_the_rules_of_one_thread(seed: int) -> None:
    """Tens of thousands of words, thousands of merges, steps of every size: 2 and 3 threads with their default
    step size, and every step in parallel, give the rules of one thread; so do the words cut into tables."""
    from bpeproof.impl._c import _fastbpe  # type: ignore[attr-defined]

    counts = _generated_counts(seed, 30_000)
    words, freqs = list(counts), list(counts.values())
    expected = _fastbpe.train(words, freqs, 3000)
    assert len(expected) == 3000
    for threads in (2, 3):
        assert _fastbpe.train(words, freqs, 3000, threads=threads) == expected
        assert _fastbpe.train(words, freqs, 3000, threads=threads, parallel_min=0) == expected
        found = _fastbpe.train_tables(cut_into_tables(counts, threads), 3000, threads=threads)
        assert found == (expected, len(counts), sum(freqs))
    assert trainer.train_counts(counts, 3000, threads=2) == [Rule(*rule) for rule in expected]


@settings(max_examples=60, deadline=None)
@given(corpus=corpora(), num_merges=merge_bounds, tables=st.integers(1, 4), threads=st.integers(1, 4))
def test_train_tables_is_train_counts(corpus: list[bytes], num_merges: int | None, tables: int, threads: int) -> None:
    """train_tables on packed tables that share words: the rules of train_counts on their sum, the number of
    distinct words and of words; without the C loop (or beyond it) the tables are unpacked and added."""
    counts = Counter(corpus)
    packed = cut_into_tables(counts, tables)
    assert unpack_counts(packed) == counts
    assert sum(map(table_words, packed)) >= len(counts)
    expected = (trainer.train_counts(counts, num_merges), len(counts), len(corpus))
    assert trainer.train_tables(packed, num_merges, threads=threads) == expected
    with mock.patch.object(trainer, "_fastbpe", None):
        assert trainer.train_tables(packed, num_merges, threads=threads) == expected


def test_train_tables_errors() -> None:
    with pytest.raises(InvalidCorpusError):
        trainer.train_tables([pack_counts({}), pack_counts({})], 3)
    with pytest.raises(InvalidCorpusError):
        trainer.train_tables([pack_counts({b"ab": 1})], -1)
    with pytest.raises(ValueError, match="threads"):
        trainer.train_tables([pack_counts({b"ab": 1})], 3, threads=0)
    with pytest.raises(ValueError, match="not a packed count table"):
        trainer.train_tables([b"bpecnt0\n" + bytes(16)], 3)
    with pytest.raises(ValueError):
        pack_counts({b"": 2})
    with pytest.raises(OverflowError):
        pack_counts({b"ab": 2**63})
    # Counts the C loop's 64 bits cannot add up: the Python loop trains on the unpacked tables.
    huge = [pack_counts({b"ab": 2**62, b"ba": 1}), pack_counts({b"ab": 2**62})]
    assert trainer.train_tables(huge, None, threads=2) == ([Rule(97, 98, 256), Rule(98, 97, 257)], 2, 2**63 + 1)


@needs_c_loop
def test_damaged_tables_are_refused() -> None:
    from bpeproof.impl._c import _fastbpe  # type: ignore[attr-defined]

    good = pack_counts({b"ab": 3, b"abc": 1})
    empty_word = good[:24] + good[24:40] + bytes(4) + good[44:]  # the first length set to 0
    zero_count = good[:24] + bytes(8) + good[32:]
    for damaged, problem in [(good[:-1], "size does not match"), (good + b"x", "size does not match"),
                             (b"x" * 40, "not a packed count table"), (empty_word, "an empty word"),
                             (zero_count, "a count below 1")]:
        with pytest.raises(ValueError, match=problem):
            _fastbpe.train_tables([good, damaged], 2)
    with pytest.raises(TypeError, match="table 0 must be bytes"):
        _fastbpe.train_tables([bytearray(good)], 2)
    with pytest.raises(ValueError, match="threads must be between 1 and 256"):
        _fastbpe.train_tables([good], 2, threads=257)
    assert _fastbpe.train_tables([], None) == ([], 0, 0)
    # Words beyond 64 bits in all (each count fits): counted exactly.
    many = [pack_counts({b"a": 2**63 - 1, b"b": 2**63 - 1}), pack_counts({b"c": 5})]
    assert _fastbpe.train_tables(many, None, threads=2) == ([], 3, 2**64 + 3)


def test_word_counter_packs_its_counts() -> None:
    """The C word counter's packed table is pack_counts of its counts, byte for byte."""
    from bpeproof.impl.word_counts import WordCounts

    texts = ["Hello world, héllo 語 world!\n", "  tabs\tand 123 4567 's don't\n", ""]
    for pattern in ("r50k", "cl100k", "words"):
        counts = WordCounts(pattern)
        counts.add(texts)
        assert counts.packed() == pack_counts(counts.counts())
        assert unpack_counts([counts.packed()]) == counts.counts()


_INTERRUPT_SCRIPT = """
import os, random, signal, sys, time
from bpeproof.impl._c import _fastbpe
rng = random.Random(3)
words = list({bytes(rng.randrange(256) for _ in range(rng.randint(4, 40))) for _ in range(200_000)})
signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt))
signal.setitimer(signal.ITIMER_REAL, 1.0)
started = time.monotonic()
try:
    _fastbpe.train(words, [1] * len(words), 10**7, threads=2)
except KeyboardInterrupt:
    stopped = time.monotonic() - started
    # The helpers are joined; the thread that frees the run's memory ends on its own, soon after.
    deadline = time.monotonic() + 30
    while os.path.isdir("/proc/self/task") and len(os.listdir("/proc/self/task")) > 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    tasks = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    print(f"interrupted {stopped:.2f} {tasks}")
"""


@needs_c_loop
def test_ctrl_c_stops_the_c_loop() -> None:
    """A signal handler that raises (Ctrl-C's) stops a long run of the C loop within a few hundred merges, and no
    thread is left once its memory is freed (its threads are not Python's: /proc counts them); without it the run
    would take minutes."""
    done = subprocess.run([sys.executable, "-c", _INTERRUPT_SCRIPT], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    word, seconds, threads = done.stdout.split()
    assert word == "interrupted" and float(seconds) < 30 and threads == "1"


# ---------------------------------------------------------------------------
# Bad input: the specification's errors
# ---------------------------------------------------------------------------

BAD_INPUTS: list[tuple[object, object]] = [
    ([], 3),  # K = 0
    ((), None),
    ([b""], 1),  # an empty word
    ([b"ab", b"a", b""], 1),
    ([b"ab", "ab"], 1),  # a str word
    ([b"ab", 7], None),
    ([b"ab", None, b""], 1),
    ("abc", 1),  # a corpus that is not a list of words
    (b"abc", 1),
    (bytearray(b"abc"), 1),
    (42, 1),
    ({b"ab"}, 1),
    ([b"ab"], -1),  # a negative bound
    ([b"ab"], True),  # a bool, a float, a str bound
    ([b"ab"], 2.0),
    ([b"ab"], "3"),
    ([b""], -1),  # both bad: the corpus is checked first
    ([], 1.5),
]


@pytest.mark.parametrize(("corpus", "num_merges"), BAD_INPUTS)
def test_same_errors_as_spec(corpus: object, num_merges: object) -> None:
    with pytest.raises((BPETypeError, InvalidCorpusError)) as expected:
        bpeproof.spec.bpe.train(corpus, num_merges)  # type: ignore[arg-type]
    with pytest.raises((BPETypeError, InvalidCorpusError)) as found:
        trainer.train(corpus, num_merges)  # type: ignore[arg-type]
    assert type(found.value) is type(expected.value)
    # The message names the offending word by its index, as the specification's does.
    for index in range(3):
        assert (f"word {index} " in str(found.value)) == (f"word {index} " in str(expected.value))


@pytest.mark.parametrize(
    ("counts", "error"),
    [
        ({}, InvalidCorpusError),
        ({b"": 2}, InvalidCorpusError),
        ({b"ab": 0}, InvalidCorpusError),
        ({b"ab": -2}, InvalidCorpusError),
        ({b"ab": True}, BPETypeError),
        ({b"ab": 1.0}, BPETypeError),
        ({"ab": 1}, BPETypeError),
        ([b"ab"], BPETypeError),
    ],
)
def test_train_counts_errors(counts: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        trainer.train_counts(counts, 2)  # type: ignore[arg-type]


def test_train_iter_errors() -> None:
    with pytest.raises(InvalidCorpusError, match="word 2 is empty"):
        trainer.train_iter([b"ab", "cd", ""], 2)
    with pytest.raises(BPETypeError, match="word 1 must be bytes or str"):
        trainer.train_iter([b"ab", 5], 2)  # type: ignore[list-item]
    with pytest.raises(InvalidCorpusError):
        trainer.train_iter([], 2)
    with pytest.raises(InvalidCorpusError):
        trainer.train_iter(["   ", "\n"], 2, pretokenize=str.split)
    with pytest.raises(InvalidTextError, match="text 1"):
        trainer.train_iter([b"ok", b"\xff\xfe"], 2, pretokenize=str.split)
    with pytest.raises(InvalidTextError):
        trainer.train_iter(["\ud800"], 2)  # a lone surrogate has no UTF-8 form
    with pytest.raises(BPETypeError):
        trainer.train_iter(["ab"], 2, pretokenize=lambda text: [[text]])  # type: ignore[list-item]
    with pytest.raises(BPETypeError):
        trainer.train_iter(b"abc", 2)  # type: ignore[arg-type]
    with pytest.raises(InvalidCorpusError):
        trainer.train_iter(iter([b"ab"]), -1)


# ---------------------------------------------------------------------------
# Determinism: set and dict order never decides a tie
# ---------------------------------------------------------------------------

_SEED_SCRIPT = """
import itertools, json, sys
from collections import Counter
from bpeproof.impl import trainer
from bpeproof.impl.io.packed_counts import pack_counts, table_words, unpack_counts
corpus = [bytes(w) for w in itertools.product(b"abcd\\xe3\\x81", repeat=3)] * 2 + [b"ab" * 9, b"dcba" * 5]
out = {b: [list(r) for r in trainer.train_distinct(Counter(corpus), None, False, b)] for b in sys.argv[1:]}
out["train"] = [list(r) for r in trainer.train(list(reversed(corpus)), 40)]
print(json.dumps(out))
"""


def test_same_rules_for_every_hash_seed() -> None:
    outputs = []
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        done = subprocess.run(
            [sys.executable, "-c", _SEED_SCRIPT, *AVAILABLE],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        outputs.append(json.loads(done.stdout))
    assert outputs[0] == outputs[1]
    assert all(outputs[0][b] == outputs[0][AVAILABLE[0]] for b in AVAILABLE)
    assert outputs[0]["train"] == outputs[0][AVAILABLE[0]][:40]


# ---------------------------------------------------------------------------
# Real text
# ---------------------------------------------------------------------------


@pytest.mark.skipif(not SHAKESPEARE.exists(), reason=f"{SHAKESPEARE} is not present")
def test_real_text_slice_equals_spec() -> None:
    with gzip.open(SHAKESPEARE, "rt", encoding="utf-8") as handle:
        text = handle.read(60_000)
    corpus = [w.encode("utf-8") for w in text.split()][:2000]
    corpus = [w for w in corpus if len(w) <= 800]
    assert len(corpus) == 2000
    started = time.perf_counter()
    expected = bpeproof.spec.bpe.train(corpus, 30)
    assert time.perf_counter() - started < 20
    assert len(expected) == 30
    for backend in AVAILABLE:
        assert train_with(backend, corpus, 30) == expected, backend
    assert trainer.train_iter(text.splitlines(), 30, pretokenize=str.split) == trainer.train(
        [w.encode("utf-8") for w in text.split()], 30
    )


def test_progress_bar_is_shown_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    corpus = [b"low", b"lower", b"newest"] * 5
    assert trainer.train(corpus, 6, progress=True) == trainer.train(corpus, 6)
    shown = capsys.readouterr().err
    trainer.train(corpus, 6)
    assert capsys.readouterr().err == ""
    assert "merge" in shown
    assert trainer.train_iter(["low lower newest"] * 5, 6, pretokenize=str.split, progress=True) == trainer.train(
        corpus, 6
    )
    assert "item" in capsys.readouterr().err


@given(word=words(max_size=20))
@settings(max_examples=30, deadline=None)
def test_single_word(word: bytes) -> None:
    expected = bpeproof.spec.bpe.train([word], None)
    for backend in AVAILABLE:
        assert train_with(backend, [word], None) == expected
    assert_threaded_equal([word], None, expected)  # more threads than words: empty partitions
