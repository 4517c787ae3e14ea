"""llama.cpp's SPM tokenizer (``tokenizer.ggml.model`` = ``llama``) and its BPE over raw UTF-8 (``gemma4``).

The acceptance test is llama.cpp's own vectors (llama-spm, phi-3, gemma-4), run with the byte-level ones by
``test_gguf.py`` on the reduced files of ``proofs_tests/fixtures/llama_cpp`` (and on the whole files of
``BPEPROOF_LLAMA_CPP_MODELS``).  Where they do not reach, llama.cpp's code is the oracle: its SPM session
(``llm_tokenizer_spm_session``) and its BPE session over text (``llm_tokenizer_bpe_session`` with
``byte_encode`` false) are ported line by line below and compared with the engine on generated vocabularies;
the flags (``add_space_prefix``, ``remove_extra_whitespaces``, integer scores, byte fallback) are checked on
small files written here.
"""

from __future__ import annotations

import functools
import heapq
import math
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof.impl import formats
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.models import llama_cpp_spm as llama_cpp_spm_module
from bpeproof.impl.models.llama_cpp import LlamaCppTextModel
from bpeproof.impl.models.llama_cpp_spm import LlamaCppSpmModel
from bpeproof.impl.pipelines.llama_cpp import LlamaCppPipeline
from bpeproof.impl.pipelines.llama_cpp_spm import SpmPipeline, TextBpePipeline
from bpeproof.impl.tokenizer import Tokenizer, load_tokenizer
from bpeproof.spec.types import InvalidTextError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "llama_cpp"
SPACE = "\u2581"

# ---------------------------------------------------------------------------------------------------------
# Small GGUF files
# ---------------------------------------------------------------------------------------------------------

STRING, ARRAY, U32, I32, F32, BOOL = 8, 9, 4, 5, 6, 7


def _string(value: str) -> bytes:
    data = value.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _value(kind: int, value: Any) -> bytes:
    if kind == STRING:
        return _string(value)
    if kind == ARRAY:
        item, items = value
        return struct.pack("<IQ", item, len(items)) + b"".join(_value(item, x) for x in items)
    return struct.pack("<" + {U32: "I", I32: "i", F32: "f", BOOL: "?"}[kind], value)


def write(tmp_path: Path, pairs: list[tuple[str, int, Any]], name: str = "v.gguf") -> Path:
    body = b"".join(_string(key) + struct.pack("<I", kind) + _value(kind, value) for key, kind, value in pairs)
    path = tmp_path / name
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs)) + body)
    return path


BYTES = [f"<0x{byte:02X}>" for byte in range(256)]


def vocabulary_pairs(tokens: list[tuple[str, float, int]], *, model: str = "llama", pre: str | None = None,
                     merges: list[str] | None = None, integer_scores: bool = False,
                     extra: list[tuple[str, int, Any]] = ()) -> list[tuple[str, int, Any]]:  # type: ignore[assignment]
    """The key-value pairs of a tokenizer: ``<unk>``, ``<s>``, ``</s>`` (ids 0-2), the 256 byte tokens, then
    ``tokens`` as (text, score, type)."""
    every = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3), *((text, 0.0, 6) for text in BYTES), *tokens]
    pairs: list[tuple[str, int, Any]] = [("general.architecture", STRING, "llama"),
                                         ("tokenizer.ggml.model", STRING, model)]
    if pre is not None:
        pairs.append(("tokenizer.ggml.pre", STRING, pre))
    scores = (I32, [int(score) for _, score, _ in every]) if integer_scores else (F32, [s for _, s, _ in every])
    pairs += [("tokenizer.ggml.tokens", ARRAY, (STRING, [text for text, _, _ in every])),
              ("tokenizer.ggml.scores", ARRAY, scores),
              ("tokenizer.ggml.token_type", ARRAY, (I32, [kind for _, _, kind in every]))]
    if merges is not None:
        pairs.append(("tokenizer.ggml.merges", ARRAY, (STRING, merges)))
    return pairs + list(extra)


def load(path: Path) -> Tokenizer:
    tokenizer = load_tokenizer(str(path))
    assert isinstance(tokenizer.pipeline, LlamaCppPipeline)
    return tokenizer


def gguf_pipeline(tokenizer: Tokenizer) -> LlamaCppPipeline:
    """llama.cpp's pipeline of a GGUF file's tokenizer (its special-token partition and the file as read)."""
    assert isinstance(tokenizer.pipeline, LlamaCppPipeline)
    return tokenizer.pipeline


def ids_of(tokenizer: Tokenizer, *texts: str) -> list[int]:
    table = {text: token for token, text in enumerate(gguf_pipeline(tokenizer).gguf.texts)}
    return [table[text] for text in texts]


# ---------------------------------------------------------------------------------------------------------
# The vectors
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "kind"), [("llama-spm", SpmPipeline), ("phi-3", SpmPipeline),
                                            ("gemma-4", TextBpePipeline)])
def test_vectors_of_spm_and_gemma4_are_committed(name: str, kind: type) -> None:
    """Their vectors run in ``test_gguf.test_llama_cpp_vectors``; here: the files are there and load as what
    their model names, every special token flag as llama.cpp sets it."""
    tokenizer = load(FIXTURES / f"ggml-vocab-{name}.gguf.gz")
    assert type(tokenizer.pipeline) is kind
    assert (FIXTURES / f"ggml-vocab-{name}.gguf.out").exists()
    assert gguf_pipeline(tokenizer).gguf.add_bos and not gguf_pipeline(tokenizer).gguf.add_eos
    assert gguf_pipeline(tokenizer).gguf.add_space_prefix == (name != "gemma-4")


@pytest.mark.parametrize("name", ["llama-spm", "phi-3"])
@pytest.mark.parametrize("segmented_from", [0, 8, 10**9])
def test_texts_cut_or_whole_give_the_vectors(name: str, segmented_from: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A text merged whole gives the ids of its parts merged on their own (cut where no token holds two adjacent
    symbols): llama.cpp's vectors, and texts far longer than they are, either way."""
    path = FIXTURES / f"ggml-vocab-{name}.gguf.gz"
    texts = (FIXTURES / f"ggml-vocab-{name}.gguf.inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    lines = (FIXTURES / f"ggml-vocab-{name}.gguf.out").read_text(encoding="utf-8").splitlines()
    whole = " ".join(texts) * 3
    monkeypatch.setattr(llama_cpp_spm_module, "SEGMENTED_FROM", 0)  # every text cut
    expected = load_tokenizer(str(path), cache=False).encode(whole)
    monkeypatch.setattr(llama_cpp_spm_module, "SEGMENTED_FROM", segmented_from)
    tokenizer = load_tokenizer(str(path), cache=False)  # (a model of its own: no part merged in another mode)
    for text, line in zip(texts, lines, strict=False):
        assert tokenizer.encode(text) == [int(token) for token in line.split()], text
    assert tokenizer.encode(whole) == expected


def test_phi3_special_tokens_strip_the_spaces_after_them() -> None:
    """Phi-3 (by the model's name): every special token but ``<unk>``, ``<s>`` and ``<|endoftext|>`` takes the
    spaces after it; ``</s>`` is user-defined but, recognised as end of generation, made control, so it is cut
    only when special tokens are parsed; the fragment after a special token gets the space prefix again."""
    tokenizer = load(FIXTURES / "ggml-vocab-phi-3.gguf.gz")
    model = tokenizer.model
    hello = list(model.encode_word(f"{SPACE}Hello".encode()))
    assert gguf_pipeline(tokenizer).always_parsed == {}
    assert tokenizer.encode("Hello</s>   world") == list(model.encode_word(
        f"{SPACE}Hello</s>{SPACE * 3}world".encode()))
    assert tokenizer.encode("Hello</s>   world", allowed_special="all") == [
        *hello, 2, *model.encode_word(f"{SPACE}world".encode())]
    assert tokenizer.encode("Hello<|end|> world", allowed_special="all") == [
        *hello, 32007, *model.encode_word(f"{SPACE}world".encode())]
    assert tokenizer.encode("Hello<s> world", allowed_special="all") == [
        *hello, 1, *model.encode_word(f"{SPACE}{SPACE}world".encode())]


@functools.cache
def _llama_spm() -> Tokenizer:
    return load(FIXTURES / "ggml-vocab-llama-spm.gguf.gz")


def test_code_points_round_trip_as_in_llama_cpp_test() -> None:
    """llama.cpp's ``test-tokenizer-1-spm``: every code point (surrogates and U+40000..U+E0000 aside) decodes
    back to itself, U+2581 to a space; here every 61st one and the ASCII ones."""
    tokenizer = _llama_spm()
    for code in [*range(128), *range(128, 0x110000, 61)]:
        if 0xD800 <= code <= 0xDFFF or 0x40000 <= code <= 0xE0000:
            continue
        text = chr(code)
        assert tokenizer.decode(tokenizer.encode(text)) == (" " if code == 0x2581 else text), hex(code)


def test_decoding_drops_the_first_space_only() -> None:
    tokenizer = _llama_spm()
    ids = tokenizer.encode("  Hello world")
    assert tokenizer.decode(ids) == "  Hello world"
    assert tokenizer.decode_bytes([1, *ids]) == b"<s>   Hello world"
    stream = tokenizer.stream_decoder()
    assert "".join(stream.feed([token]) for token in ids) + stream.finish() == "  Hello world"


def test_invalid_utf8_is_cut_as_llama_cpp_cuts_it() -> None:
    """SPM takes the bytes as they are: 0xC3 swallows the byte after it into one symbol."""
    tokenizer = _llama_spm()
    fallback = ids_of(tokenizer, "<0xC3>", "<0x41>")
    assert tokenizer.encode_bytes(b"\xc3A") == [*ids_of(tokenizer, SPACE), *fallback]
    assert tokenizer.decode_bytes(tokenizer.encode_bytes(b"x\xff\xfey")) == b"x\xff\xfey"


def test_spm_vocabulary_is_no_byte_level_vocab() -> None:
    with pytest.raises(FormatError, match="not byte-level BPE") as refusal:
        formats.load(FIXTURES / "ggml-vocab-llama-spm.gguf.gz")
    assert "\n" not in str(refusal.value)


def test_sequential_only_features_are_refused() -> None:
    from bpeproof.spec.types import BPEValueError

    with pytest.raises(BPEValueError, match="SPM tokenizer"):
        _ = _llama_spm().rules


# ---------------------------------------------------------------------------------------------------------
# The flags, on small files
# ---------------------------------------------------------------------------------------------------------

SMALL = [(f"{SPACE}a", -1.0, 1), ("ab", -2.0, 1), ("bc", -2.0, 1), ("a", -3.0, 1), ("b", -3.0, 1), ("c", -3.0, 1),
         (SPACE, -4.0, 1), ("<b>", 0.0, 4)]


def test_space_prefix_and_its_flag(tmp_path: Path) -> None:
    tokenizer = load(write(tmp_path, vocabulary_pairs(SMALL)))
    assert isinstance(tokenizer.pipeline, SpmPipeline)
    assert tokenizer.encode("abc") == ids_of(tokenizer, f"{SPACE}a", "bc")
    # the user-defined <b> is always cut; the fragment after it gets the prefix again
    assert tokenizer.encode("a<b>a") == ids_of(tokenizer, f"{SPACE}a", "<b>", f"{SPACE}a")
    assert tokenizer.decode(tokenizer.encode("a<b>a")) == "a<b> a"
    plain = write(tmp_path, vocabulary_pairs(SMALL, extra=[("tokenizer.ggml.add_space_prefix", BOOL, False)]),
                  "plain.gguf")
    tokenizer = load(plain)
    assert tokenizer.encode("abc") == ids_of(tokenizer, "ab", "c")  # equal scores: the leftmost pair first
    assert tokenizer.decode(tokenizer.encode(" a")) == " a"


def test_remove_extra_whitespaces_is_ignored_as_llama_cpp_ignores_it(tmp_path: Path) -> None:
    flag = [("tokenizer.ggml.remove_extra_whitespaces", BOOL, True)]
    squeezing = load(write(tmp_path, vocabulary_pairs(SMALL, extra=flag), "squeeze.gguf"))
    plain = load(write(tmp_path, vocabulary_pairs(SMALL)))
    assert gguf_pipeline(squeezing).gguf.remove_extra_whitespaces
    assert squeezing.encode("  a   b  ") == plain.encode("  a   b  ")
    assert squeezing.encode("  a   b  ").count(ids_of(plain, SPACE)[0]) == 7  # ▁▁ ▁a ▁▁▁ b ▁▁: none squeezed


def test_integer_scores_are_floats_as_in_llama_cpp(tmp_path: Path) -> None:
    """2**24 + 1 is 2**24 as a float32: the two pairs tie and the leftmost one is joined first."""
    tokens = [("ab", 2.0**24, 1), ("bc", 2.0**24 + 1, 1), ("a", 0.0, 1), ("b", 0.0, 1), ("c", 0.0, 1)]
    extra = [("tokenizer.ggml.add_space_prefix", BOOL, False)]
    tokenizer = load(write(tmp_path, vocabulary_pairs(tokens, integer_scores=True, extra=extra)))
    assert gguf_pipeline(tokenizer).gguf.scores[-4:-3] == [16777216.0]
    assert tokenizer.encode("abc") == ids_of(tokenizer, "ab", "c")


def test_nan_score_is_refused(tmp_path: Path) -> None:
    tokens = [("ab", math.nan, 1), ("a", 0.0, 1), ("b", 0.0, 1)]
    with pytest.raises(FormatError, match=r"tokenizer\.ggml\.scores.*NaN"):
        load(write(tmp_path, vocabulary_pairs(tokens)))


def test_byte_fallback_and_its_failure(tmp_path: Path) -> None:
    tokenizer = load(write(tmp_path, vocabulary_pairs(SMALL)))
    assert tokenizer.encode("é") == ids_of(tokenizer, SPACE, "<0xC3>", "<0xA9>")
    assert tokenizer.decode(tokenizer.encode("é")) == "é"
    # Without <0x78> the ASCII byte falls back to the token "x"; without either llama.cpp fails.
    pairs = vocabulary_pairs([*SMALL, ("x", -5.0, 1)])
    texts = next(value for key, _, value in pairs if key == "tokenizer.ggml.tokens")[1]
    texts[3 + 0x78] = "<0x78-gone>"
    texts[3 + 0x79] = "<0x79-gone>"
    tokenizer = load(write(tmp_path, pairs, "gaps.gguf"))
    assert tokenizer.encode("ax") == ids_of(tokenizer, f"{SPACE}a", "x")
    with pytest.raises(InvalidTextError, match=r"llama\.cpp fails"):
        tokenizer.encode("ay")
    result = subprocess.run([sys.executable, "-m", "bpeproof.cli", "encode", "ay", "--vocab",
                             str(tmp_path / "gaps.gguf")], capture_output=True, text=True, check=False)
    assert result.returncode != 0 and "Traceback" not in result.stderr and result.stderr.count("\n") == 1


def test_text_bpe_files(tmp_path: Path) -> None:
    """``gemma4`` and the raw-UTF-8 pre-tokenizers of ``gpt2``: spaces as U+2581, runs of newlines, merges over
    characters, <0xXX> byte fallback; for gemma4 a run of newlines that is a token is that token."""
    tokens = [(SPACE, 0.0, 1), ("a", 0.0, 1), ("é", 0.0, 1), (f"{SPACE}a", 0.0, 1), (f"{SPACE}aé", 0.0, 1),
              ("\n", 0.0, 1), ("\n\n\n", 0.0, 1)]
    merges = [f"{SPACE} a", f"{SPACE}a é", "\n \n"]
    gemma = load(write(tmp_path, vocabulary_pairs(tokens, model="gemma4", merges=merges)))
    assert isinstance(gemma.pipeline, TextBpePipeline) and gguf_pipeline(gemma).gguf.add_bos
    assert gemma.encode(" aé\n\n\n a") == ids_of(gemma, f"{SPACE}aé", "\n\n\n", f"{SPACE}a")
    assert gemma.encode("ü") == ids_of(gemma, "<0xC3>", "<0xBC>")
    assert gemma.decode(gemma.encode(" aé\n\n\n aü")) == " aé\n\n\n aü"
    assert gemma.encode_bytes(b"a\xff a") == ids_of(gemma, "a", "<0xEF>", "<0xBF>", "<0xBD>", f"{SPACE}a")
    # sarvam-moe has no such rule: the first two newlines merge into no token and fall back to their bytes
    for pre, expected in (("granite-embed-multi-311m", ["\n\n\n"]), ("sarvam-moe", ["<0x0A>", "<0x0A>", "\n"])):
        other = load(write(tmp_path, vocabulary_pairs(tokens, model="gpt2", pre=pre, merges=merges),
                                         f"{pre}.gguf"))
        assert isinstance(other.pipeline, TextBpePipeline)
        assert other.encode("\n\n\n") == ids_of(other, *expected)


# ---------------------------------------------------------------------------------------------------------
# llama.cpp's SPM session (llm_tokenizer_spm_session), ported
# ---------------------------------------------------------------------------------------------------------

_LENGTH = (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4)


def port_spm(text: bytes, lookup: dict[bytes, int], scores: list[float]) -> list[int] | None:
    """One text through llama.cpp's symbols, bigram queue (score, then left index), ``resegment`` and
    ``byte_to_token``; None where llama.cpp throws (a byte without a token)."""
    symbols: list[list[int]] = []  # [offset, n, prev, next]
    offset = 0
    while offset < len(text):
        n = min(_LENGTH[text[offset] >> 4], len(text) - offset)
        index = len(symbols)
        symbols.append([offset, n, index - 1, -1 if offset + n == len(text) else index + 1])
        offset += n
    queue: list[tuple[float, int, int, int]] = []
    rev_merge: dict[bytes, tuple[int, int]] = {}

    def try_add_bigram(left: int, right: int) -> None:
        if left == -1 or right == -1:
            return
        start = symbols[left][0]
        joined = text[start : start + symbols[left][1] + symbols[right][1]]
        token = lookup.get(joined)
        if token is None:
            return
        heapq.heappush(queue, (-scores[token], left, right, len(joined)))
        rev_merge[joined] = (left, right)

    for i in range(1, len(symbols)):
        try_add_bigram(i - 1, i)
    while queue:
        _, left, right, size = heapq.heappop(queue)
        if symbols[left][1] == 0 or symbols[right][1] == 0 or symbols[left][1] + symbols[right][1] != size:
            continue
        symbols[left][1] += symbols[right][1]
        symbols[right][1] = 0
        symbols[left][3] = symbols[right][3]
        if symbols[right][3] >= 0:
            symbols[symbols[right][3]][2] = left
        try_add_bigram(symbols[left][2], left)
        try_add_bigram(left, symbols[left][3])
    out: list[int] = []

    def byte_to_token(byte: int) -> int:
        found = lookup.get(f"<0x{byte:02X}>".encode())
        return found if found is not None else lookup[bytes([byte]) if byte else b""]

    def resegment(symbol: list[int]) -> None:
        piece = text[symbol[0] : symbol[0] + symbol[1]]
        token = lookup.get(piece)
        if token is not None:
            out.append(token)
            return
        split = rev_merge.get(piece)
        if split is None:
            out.extend(byte_to_token(byte) for byte in piece)
            return
        resegment(symbols[split[0]])
        resegment(symbols[split[1]])

    i = 0
    try:
        while symbols and i != -1:
            resegment(symbols[i])
            i = symbols[i][3]
    except KeyError:
        return None
    return out


ALPHABET = ["a", "b", SPACE, "é"]
#: Pieces of two characters mostly (they compete for the same symbols), some longer ones built on them.
PIECES = st.sampled_from([a + b for a in "ab" + SPACE for b in "ab" + SPACE]
                         + ["aba", f"ab{SPACE}", f"{SPACE}ab", "bab", f"{SPACE}{SPACE}a", "éa", "aé", f"{SPACE}aé"])
#: Texts of those characters, "x" and "q" (no token of their own) and bytes that are not UTF-8.
TEXTS = st.lists(st.sampled_from([b"a", b"b", SPACE.encode(), b"a", b"b", SPACE.encode(), "é".encode(), b"x", b"q",
                                  b"\xc3", b"\xff", b"\xe2\x96", b"\n"]), min_size=3, max_size=16).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.tuples(PIECES, st.sampled_from([-3.0, -2.0, -1.0, -0.0, 0.0, 1.5])), min_size=2,
                      max_size=10),
       singles=st.sets(st.sampled_from([*ALPHABET, "x"])),
       missing=st.sets(st.sampled_from([0x78, 0x71, 0xC3, 0xFF])),
       texts=st.lists(TEXTS, min_size=1, max_size=6))
def test_spm_session_matches_llama_cpp_code(pieces: list[tuple[str, float]], singles: set[str], missing: set[int],
                                            texts: list[bytes]) -> None:
    vocabulary: dict[str, float] = {text: 0.0 for text in (BYTES[b] for b in range(256) if b not in missing)}
    vocabulary.update({char: -5.0 for char in singles})
    for piece, score in pieces:
        vocabulary.setdefault(piece, score)
    texts_list = list(vocabulary)
    scores = list(vocabulary.values())
    model = LlamaCppSpmModel(texts_list, scores, {}, cache_size=8)
    lookup = {text.encode(): token for token, text in enumerate(texts_list)}
    for text in texts:
        expected = port_spm(text, lookup, scores)
        if expected is None:
            with pytest.raises(InvalidTextError):
                model.encode_word(text)
        else:
            assert list(model.encode_word(text)) == expected, text


# ---------------------------------------------------------------------------------------------------------
# llama.cpp's BPE session over text (byte_encode false), ported
# ---------------------------------------------------------------------------------------------------------


def port_text_bpe(word: bytes, ranks: dict[tuple[bytes, bytes], int], lookup: dict[bytes, int],
                  newline_runs: bool) -> list[int]:
    """One word through llama.cpp's symbols (a character each), its queue of bigrams (rank, then left index)
    and its final look-up with ``<0xXX>`` byte tokens."""
    if newline_runs and not word.strip(b"\n") and word in lookup:
        return [lookup[word]]
    symbols: list[list[int]] = []  # [offset, n]
    offset = 0
    while offset < len(word):
        n = min(_LENGTH[word[offset] >> 4], len(word) - offset)
        symbols.append([offset, n])
        offset += n
    nxt = [*range(1, len(symbols)), -1]
    prv = list(range(-1, len(symbols) - 1))
    queue: list[tuple[int, int, int, bytes]] = []

    def text(i: int) -> bytes:
        return word[symbols[i][0] : symbols[i][0] + symbols[i][1]]

    def add(left: int, right: int) -> None:
        if left != -1 and right != -1 and (text(left), text(right)) in ranks:
            heapq.heappush(queue, (ranks[(text(left), text(right))], left, right, text(left) + text(right)))

    for i in range(1, len(symbols)):
        add(i - 1, i)
    while queue:
        _, left, right, joined = heapq.heappop(queue)
        if symbols[left][1] == 0 or symbols[right][1] == 0 or text(left) + text(right) != joined:
            continue
        symbols[left][1] += symbols[right][1]
        symbols[right][1] = 0
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prv[nxt[right]] = left
        add(prv[left], left)
        add(left, nxt[left])
    out: list[int] = []
    for i in range(len(symbols)):
        piece = text(i)
        if not piece:
            continue
        if piece in lookup:
            out.append(lookup[piece])
        else:
            out += [lookup[key] for key in (f"<0x{b:02X}>".encode() for b in piece) if key in lookup]
    return out


@settings(max_examples=300, deadline=None)
@given(merges=st.lists(st.tuples(st.sampled_from(["a", "b", "é", SPACE, "ab", "éa", "\n"]),
                                 st.sampled_from(["a", "b", "é", "bé", SPACE, "\n"])), max_size=10),
       tokens=st.sets(st.sampled_from(["ab", "éa", "abé", f"{SPACE}a", "\n\n", "a", "é"])),
       missing=st.sets(st.sampled_from([0xC3, 0xA9, 0x61])), words=st.lists(TEXTS, max_size=6),
       newline_runs=st.booleans())
def test_text_bpe_session_matches_llama_cpp_code(merges: list[tuple[str, str]], tokens: set[str], missing: set[int],
                                                 words: list[bytes], newline_runs: bool) -> None:
    vocabulary = [BYTES[b] for b in range(256) if b not in missing] + sorted(tokens)
    lookup = {text.encode(): token for token, text in enumerate(vocabulary)}
    pairs = [(left.encode(), right.encode()) for left, right in merges]
    model = LlamaCppTextModel(lookup, pairs, {}, newline_runs=newline_runs)
    ranks: dict[tuple[bytes, bytes], int] = {}
    for rank, pair in enumerate(pairs):
        ranks.setdefault(pair, rank)
    for word in [*words, b"\n\n", b"\n\n\n"]:
        assert list(model.encode_word(word)) == port_text_bpe(word, ranks, lookup, newline_runs), word
