"""``Tokenizer.encode_on_threads`` (the C loop's ``encode_texts``): the ids of ``encode`` of each text, whatever the
number of threads, the word cache's size and what earlier batches left in it; the error of the first failing text;
and the same ids while other threads of the process encode with the same tokenizer."""

from __future__ import annotations

import itertools
import random
import threading
from array import array
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof.impl import parallel
from bpeproof.impl.io.token_arrays import NpyWriter
from bpeproof.impl.models.sequential import SequentialModel
from bpeproof.impl.parallel import cuts, threads
from bpeproof.impl.parallel.cuts import last_line_cut, line_cut_positions
from bpeproof.impl.pre_tokenizers.patterns import compile_pattern
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.impl.trainer import train_iter
from bpeproof.proofs_tests.tests.impl.corpus_files import read_npy, write_files
from bpeproof.spec.types import BPETypeError, InvalidTextError, Rule

PIECES = ["a", "b", "Z", "1", "22", "333", ".", "'", "'s", "'LL", "/", "\n", "\r\n", "\t", " ", "  ", "é", "\u3000",
          "語彙", "😀", "\x1c", "ab", "ba", "low", "lower", "\u0301", "ǅ"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def _tokenizer(pattern: str, cache_size: int, c_loop: bool = True) -> Tokenizer:
    texts = ["".join(pair) for pair in itertools.product(PIECES, repeat=2)]
    rules = train_iter(texts * 2, 200, pretokenize=compile_pattern(pattern).findall)
    if c_loop:
        return Tokenizer(rules, pattern, cache_size=cache_size)
    return Tokenizer.from_model(SequentialModel.checked(rules, c_loop=False), pattern, cache_size=cache_size)


PATTERNS = ("r50k", "cl100k", "o200k")
CACHE_SIZES = (0, 1, 3, 1 << 18)
TOKENIZERS = {(pattern, size): _tokenizer(pattern, size) for pattern in PATTERNS for size in CACHE_SIZES}


def _threaded(tokenizer: Tokenizer, texts: list[str], threads: int) -> list[list[int]]:
    ids = tokenizer.encode_on_threads(texts, threads)
    assert ids is not None, "a named pattern's tokenizer goes through the C loop"
    return ids


def test_the_c_loop_is_built() -> None:
    """Every test below would pass vacuously on the fallback: they need the extension."""
    assert TOKENIZERS["cl100k", 1 << 18]._fast is not None


@settings(max_examples=50, deadline=None)
@given(
    batches=st.lists(st.lists(TEXTS, max_size=12), min_size=1, max_size=3),
    pattern=st.sampled_from(PATTERNS),
    cache_size=st.sampled_from(CACHE_SIZES),
    threads=st.integers(1, 5),
)
def test_every_batch_gives_the_ids_of_encode(
    batches: list[list[str]], pattern: str, cache_size: int, threads: int
) -> None:
    """Batch after batch on one tokenizer (its caches filling, overflowing and read by every thread), with single
    encode calls in between: always the ids of ``encode`` of each text on a tokenizer that has cached nothing."""
    tokenizer = TOKENIZERS[pattern, cache_size]
    fresh = _tokenizer(pattern, 0)
    for texts in batches:
        expected = [fresh.encode(text) for text in texts]
        assert _threaded(tokenizer, texts, threads) == expected
        assert [tokenizer.encode(text) for text in texts] == expected


def test_a_batch_equals_the_pure_python_engine() -> None:
    """Against the engine without its C loops (another merge loop and the regex module's pre-tokenizer)."""
    texts = ["".join(PIECES[(seed * 7 + k * 3) % len(PIECES)] for k in range(seed % 50)) for seed in range(200)]
    threaded = _threaded(TOKENIZERS["o200k", 3], texts, 3)
    python = _tokenizer("o200k", 3, c_loop=False)
    assert python._fast is None
    assert threaded == [python.encode(text) for text in texts]


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_the_error_is_that_of_the_first_failing_text(threads: int) -> None:
    tokenizer = TOKENIZERS["cl100k", 1 << 18]
    texts = ["ab ba", "low \udc80", "fine", "x\ud800y"]
    with pytest.raises(InvalidTextError) as expected:
        tokenizer.encode(texts[1])
    with pytest.raises(InvalidTextError) as raised:
        tokenizer.encode_on_threads(texts, threads)
    assert str(raised.value) == str(expected.value)


def test_a_text_that_is_no_str_is_refused() -> None:
    with pytest.raises(BPETypeError, match=r"texts\[1\] must be str, not bytes"):
        TOKENIZERS["cl100k", 3].encode_on_threads(["ab", b"ab"], 2)  # type: ignore[list-item]
    with pytest.raises(BPETypeError, match="texts must be a list of str, not str"):
        TOKENIZERS["cl100k", 3].encode_on_threads("ab", 2)


def test_a_byte_without_an_id_fails_as_encode_does() -> None:
    ranks = {bytes([byte]): rank for rank, byte in enumerate(b for b in range(256) if b != ord("z"))}
    ranks[b"ab"] = len(ranks)
    tokenizer = Tokenizer.from_tiktoken_ranks(ranks, "cl100k")
    with pytest.raises(InvalidTextError) as expected:
        tokenizer.encode("ab z")
    with pytest.raises(InvalidTextError) as raised:
        tokenizer.encode_on_threads(["ab", "ab z", "zz"], 2)
    assert str(raised.value) == str(expected.value)
    assert tokenizer.encode_on_threads(["ab", "ba ab"], 2) == [tokenizer.encode("ab"), tokenizer.encode("ba ab")]


def test_what_does_not_go_through_the_c_loop_is_left_to_the_caller() -> None:
    tokenizer = Tokenizer(train_iter(["ab ab ab ba"], 3), "cl100k", {"<|s|>": 300})
    texts = ["ab<|s|>ab", "<|s|>", "ba"]
    assert tokenizer.encode_on_threads(texts, 2, allowed_special="all") == [
        tokenizer.encode(text, allowed_special="all") for text in texts]  # the stretches between them on threads
    assert tokenizer.encode_on_threads(["ab"], 2) == [tokenizer.encode("ab")]
    raw = Tokenizer(train_iter(["ab ab ab ba"], 3), r"\S+|\s+")
    assert raw.encode_on_threads(["ab"], 2) is None


@pytest.fixture(scope="module", params=["llama3-split-nfc-added-tokens", "deepseek3-splits-added-tokens", "nfc",
                                        "added-tokens-lowercase"])
def library_file(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    """A configuration of ``test_hf_pipelines`` whose pre-tokenizer a scanner runs, with added tokens or a
    normalizer, made by the ``tokenizers`` library and loaded."""
    pytest.importorskip("tokenizers")
    from bpeproof.proofs_tests.tests.impl.test_hf_pipelines import CONFIGS

    path = tmp_path_factory.mktemp("threads") / "tokenizer.json"
    path.write_text(CONFIGS[request.param]().to_str(), encoding="utf-8")
    return Tokenizer.load(path)


@settings(max_examples=30, deadline=None)
@given(texts=st.lists(st.lists(st.sampled_from([*PIECES, "<s>", "</s>", "hello", "World", " a", "<mask>", "ab"]),
                               max_size=12).map("".join), max_size=6),
       threads=st.integers(1, 3), allowed=st.sampled_from([None, "all"]))
def test_pipelines_with_added_tokens_and_normalizers_on_threads(
        library_file: Tokenizer, texts: list[str], threads: int, allowed: str | None) -> None:
    """The stretches the pipeline leaves between its added tokens go to the threads, and each text's ids are
    ``encode``'s, as lists and as uint32."""
    tokenizer = library_file
    assert tokenizer.encodes_on_threads(allowed)
    expected = [tokenizer.encode(text, allowed_special=allowed) for text in texts]
    assert tokenizer.encode_on_threads(texts, threads, allowed_special=allowed) == expected
    as_uint32 = tokenizer.encode_on_threads_uint32(texts, threads, allowed_special=allowed)
    assert as_uint32 is not None and [list(array("I", ids)) for ids in as_uint32] == expected


@pytest.mark.parametrize("threads", [2, 3])
def test_a_batch_of_more_new_words_than_its_table_takes(threads: int) -> None:
    """Past the room of the batch's table of new words (1,024 words in a batch this size), each thread keeps its
    words in its own cache: still the ids of ``encode``, in the batch, the next batch and single calls."""
    rng = random.Random(threads)
    words = ["".join(rng.choice("abZ1é語😀'") for _ in range(rng.randint(2, 7))) for _ in range(5000)]
    texts = [" ".join(words[start : start + 40]) for start in range(0, len(words), 40)]
    assert len(set(words)) > 3000 and sum(map(len, texts)) < 8 * 4096  # more words than room, the smallest table
    tokenizer = _tokenizer("cl100k", 1 << 18)
    fresh = _tokenizer("cl100k", 0)
    expected = [fresh.encode(text) for text in texts]
    assert _threaded(tokenizer, texts, threads) == expected
    assert _threaded(tokenizer, texts[::-1], threads) == expected[::-1]
    assert [tokenizer.encode(text) for text in texts] == expected


def test_batches_and_single_calls_from_several_threads_at_once() -> None:
    """Batches wait for each other and single calls wait for a batch: no cache is changed while it is read."""
    tokenizer = _tokenizer("cl100k", 5)
    fresh = _tokenizer("cl100k", 0)
    texts = ["".join(PIECES[(seed * 5 + k) % len(PIECES)] for k in range(seed % 40)) for seed in range(300)]
    expected = [fresh.encode(text) for text in texts]
    failures: list[str] = []

    def batches() -> None:
        for _ in range(15):
            if _threaded(tokenizer, texts, 2) != expected:
                failures.append("batch")

    def singles() -> None:
        for _ in range(3):
            if [tokenizer.encode(text) for text in texts] != expected:
                failures.append("single")

    workers = [threading.Thread(target=target) for target in (batches, batches, singles, singles)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert failures == []


# ---------------------------------------------------------------------------
# encode_files on threads (impl.parallel.threads)
# ---------------------------------------------------------------------------


def _text(seed: int, pieces: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice([*PIECES, "\n", "x\n", ".\n"]) for _ in range(pieces))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_files_on_threads_give_the_one_process_ids(
    pattern: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers 2 and 3 run on threads (no process is started) and write the ids of one worker, for files cut
    finely into ranges and pieces, plain and gzip, in batches of a few texts."""
    monkeypatch.setattr(threads, "PIECE", 300)
    monkeypatch.setattr(threads, "TEXTS_PER_THREAD", 2)
    tokenizer = TOKENIZERS[pattern, 3]
    texts = [_text(1, 3000), "", _text(2, 2000), _text(3, 40)]
    names = write_files(tmp_path, texts, {2})
    expected = [token for text in texts for token in tokenizer.encode(text)]
    serial = parallel.encode_files(tokenizer, names, tmp_path / "one.npy", workers=1, range_bytes=900)
    assert read_npy(tmp_path / "one.npy") == expected
    with mock.patch.object(parallel, "run_tasks", side_effect=AssertionError("a worker process was started")):
        for workers in (2, 3):
            out = tmp_path / f"ids{workers}.npy"
            assert parallel.encode_files(tokenizer, names, out, workers=workers, range_bytes=900) == serial
            assert read_npy(out) == expected


def test_a_file_the_threads_cannot_encode_fails_as_one_process_does(tmp_path: Path) -> None:
    ranks = {bytes([byte]): rank for rank, byte in enumerate(b for b in range(256) if b != ord("z"))}
    ranks[b"ab"] = len(ranks)
    tokenizer = Tokenizer.from_tiktoken_ranks(ranks, "cl100k")
    names = write_files(tmp_path, ["ab ab\n" * 50, "ab\nz ab\n", "ab\n"])
    errors = []
    for workers in (1, 2):
        with pytest.raises(InvalidTextError) as raised:
            parallel.encode_files(tokenizer, names, tmp_path / "ids.npy", workers=workers)
        errors.append(str(raised.value))
        assert not (tmp_path / "ids.npy").exists()
    assert errors[0] == errors[1]


def test_ids_that_do_not_fit_uint32_fail_as_one_process_does(tmp_path: Path) -> None:
    tokenizer = Tokenizer([Rule(97, 98, 2**32 + 5)], "cl100k")
    assert tokenizer.encode_on_threads(["ab"], 2) == [[2**32 + 5]]
    assert tokenizer.encode_on_threads_uint32(["ab"], 2) is None
    assert tokenizer.encode_on_threads_uint32(["ba"], 2) == [array("I", [98, 97]).tobytes()]
    names = write_files(tmp_path, ["ba\n" * 10, "x ab\n"])
    errors = []
    for workers in (1, 2):
        with pytest.raises(ValueError, match="does not fit a uint32") as raised:
            parallel.encode_files(tokenizer, names, tmp_path / "ids.npy", workers=workers)
        errors.append(str(raised.value))
    assert errors[0] == errors[1]


@settings(max_examples=400, deadline=None)
@given(data=st.lists(st.sampled_from([b"a", b"/", b"\n", b"\xe8\xaa\x9e", b" ", b"\n\n", b"x\ny"]), max_size=60)
       .map(b"".join), low=st.integers(0, 70), window=st.sampled_from([1, 2, 3, 5, 1 << 12]))
def test_the_last_line_cut_is_the_last_of_every_line_cut(data: bytes, low: int, window: int) -> None:
    """The backwards search by windows finds what a scan of the whole text finds (cuts p with p - 2 >= low), for
    first windows small enough that cuts fall on their edges."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(cuts, "LAST_CUT_WINDOW", window)
        for text in (data, data * 300):
            expected = max((p for p in line_cut_positions(text) if p - 2 >= low), default=0)
            assert last_line_cut(bytearray(text), low) == expected


def test_an_error_writing_the_ids_stops_the_threads_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ids are written on a thread of their own: its error is the run's, and nothing is left behind."""
    monkeypatch.setattr(threads, "PIECE", 300)
    monkeypatch.setattr(threads, "TEXTS_PER_THREAD", 1)
    names = write_files(tmp_path, [_text(5, 4000)])
    calls = []

    def full_disk(self: object, data: bytes) -> None:
        calls.append(len(data))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(NpyWriter, "write", full_disk)
    with pytest.raises(OSError, match="No space left"):
        parallel.encode_files(TOKENIZERS["cl100k", 3], names, tmp_path / "ids.npy", workers=2, range_bytes=500)
    assert len(calls) == 2
    assert sorted(path.name for path in tmp_path.iterdir()) == ["part0.txt"]


@settings(max_examples=60, deadline=None)
@given(data=st.lists(st.sampled_from([b"a", b" ", b"\x80", b"\xff", b"\xc3", b"\xa9", b"ab", "é".encode()]),
                     min_size=1, max_size=8).map(b"".join),
       pattern=st.sampled_from(PATTERNS), threads=st.integers(1, 3))
def test_a_surrogate_fails_after_its_escaped_byte_was_cached(data: bytes, pattern: str, threads: int) -> None:
    """``encode_bytes`` merges a byte that is not UTF-8 as the surrogate escaping it and caches its word; ``encode``,
    ``encode_on_threads`` and ``encode_batch`` of that surrogate text still fail as ``encode`` does, not from the
    cache."""
    text = data.decode("utf-8", "surrogateescape")
    tokenizer = _tokenizer(pattern, 1 << 18)
    tokenizer.encode_bytes(data)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        assert tokenizer.encode(text) == tokenizer.encode_bytes(data)
        return
    with pytest.raises(InvalidTextError) as error:
        tokenizer.encode(text)
    with pytest.raises(InvalidTextError, match=error.value.args[0]):
        tokenizer.encode_on_threads(["a", text], threads)
    with pytest.raises(InvalidTextError, match=error.value.args[0]):
        tokenizer.encode_batch([text], num_workers=1)
