"""sentencepiece BPE models run by the engine (``bpeproof.impl.models.sentencepiece.SentencePieceModel``) against
the library itself.

The oracle is the installed ``sentencepiece`` package: the ids of ``SentencePieceProcessor.encode(text)``.

* models trained here with ``SentencePieceTrainer`` (BPE; nmt_nfkc, nfkc_cf and identity rules, byte fallback,
  user-defined and control symbols, white space as suffix, no dummy prefix, extra white space kept);
* hand-written models with every piece type, equal and signed-zero scores, unused pieces, NUL pieces, no
  ``unk``, spaces not escaped: the engine loads exactly the models the library loads and gives its ids;
* the real models: ``mistral_tokenizer.model.v1`` of the shared folder and those of ``mistral-common``'s
  package data, on generated text and on the lines of the shared corpora (skipped when absent);
* the normalizer alone against ``SentencePieceProcessor.normalize``; gzip-compressed models; the command line;
  the audit of a gzip-compressed model runs the library; bad models are refused with one line.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import importlib.util
import io
import pickle
import random
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpeproof.audit.report import audit
from bpeproof.audit.sampling import BUILTIN_TEXT
from bpeproof.impl import encoder as encoder_module
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.models import sentencepiece as sentencepiece_module
from bpeproof.impl.models.sentencepiece import SentencePieceModel
from bpeproof.impl.pipelines.registry import read_parts
from bpeproof.impl.tokenizer import Tokenizer, load_tokenizer
from bpeproof.proofs_tests.fixtures.vocab_files import varint

spm: Any = pytest.importorskip("sentencepiece")

#: The engine follows sentencepiece 0.2.3; earlier releases give other ids on models with unused or reserved
#: pieces among the merged parts, which the hand-written models have.
_VERSION = tuple(int(part) for part in importlib.metadata.version("sentencepiece").split(".")[:3] if part.isdigit())
needs_current = pytest.mark.skipif(_VERSION < (0, 2, 3), reason="the hand-written models need sentencepiece 0.2.3")

SHARED = Path(__file__).resolve().parents[4] / "shared"
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------

#: Spaces of every kind, letters with and without marks, digits, CJK, compatibility forms (which NFKC changes),
#: emoji, the space symbol itself, controls, NUL and U+FFFD.
ALPHABET = list("  \t\n\r\u3000\u00a0\u2009abAB xyz0123456789٣¹½éÉ\u0301\u0308日本語あアｱｲ①ﬁ™😀👩\u200d💻▁")
ALPHABET += list("\x00\x07\ufffd.,!'-") + ["ab", "abc", "xy", "ab!", "A\u0300", "\u3042"]
spaces = st.lists(st.sampled_from([" ", "  ", "\t", "\u3000", "\n"]), max_size=4).map("".join)
sp_texts = st.one_of(
    st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=30),
    st.tuples(spaces, st.lists(st.sampled_from(ALPHABET), max_size=20).map("".join), spaces).map("".join),
)


def _library(data: bytes) -> Any:
    return spm.SentencePieceProcessor(model_proto=data)


# ---------------------------------------------------------------------------
# Models trained here
# ---------------------------------------------------------------------------

TRAINED: dict[str, dict[str, Any]] = {
    "nmt_nfkc-byte_fallback": {"normalization_rule_name": "nmt_nfkc", "byte_fallback": True},
    "identity-user_defined": {"normalization_rule_name": "identity",
                              "user_defined_symbols": ["<mask>", "ab", "\u2581the", "@@", "[X]", "[X][Y]"]},
    "nfkc_cf-suffix": {"normalization_rule_name": "nfkc_cf", "treat_whitespace_as_suffix": True},
    "nmt_nfkc-raw_spaces": {"normalization_rule_name": "nmt_nfkc", "remove_extra_whitespaces": False,
                            "add_dummy_prefix": False, "split_by_whitespace": False, "split_digits": True},
    "nfkc-control": {"normalization_rule_name": "nfkc", "control_symbols": ["<c1>", "<c2>"],
                     "allow_whitespace_only_pieces": True, "byte_fallback": True},
    "custom-rules": {"rules": True, "user_defined_symbols": ["ab!"]},
}

#: A rule set of our own (``normalization_rule_tsv``: source and replacement code points): rules that are
#: prefixes of one another, that delete, that make or merge spaces, that change a user-defined symbol's text.
CUSTOM_RULES = "61\t62\n61 62\t63 63\n61 62 63\t\n78 79\t20 20\n20 20\t20\n3042\t61 20 62\n41 300\tC0\n7A\t\n"


def training_lines() -> list[str]:
    """The built-in sample text and generated lines of syllables, spaces, digits and CJK (deterministic)."""
    rng = random.Random(0)
    syllables = ["ka", "to", "re", "mi", "sa", "lo", "ne", "ti", "qu", "ab", "the", "ing", " ", "  ", "12", "3",
                 "é", "日本", "ー", "①", "ﬁ"]
    lines = [line for line in BUILTIN_TEXT.splitlines() if line.strip()]
    return lines + ["".join(rng.choice(syllables) for _ in range(rng.randint(5, 40))) for _ in range(300)]


def train(**options: Any) -> bytes:
    model = io.BytesIO()
    settings_: dict[str, Any] = {"model_type": "bpe", "vocab_size": 800, "hard_vocab_limit": False,
                                 "character_coverage": 1.0, "minloglevel": 2}
    settings_.update(options)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(training_lines()), model_writer=model, **settings_)
    return model.getvalue()


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Tokenizer, Any, bytes]]:
    """Each configuration of ``TRAINED``: the engine's tokenizer, the library's processor, the model's bytes."""
    folder = tmp_path_factory.mktemp("trained")
    out: dict[str, tuple[Tokenizer, Any, bytes]] = {}
    rules = folder / "rules.tsv"
    rules.write_text(CUSTOM_RULES, encoding="ascii")
    for name, options in TRAINED.items():
        if options.get("rules"):
            options = {key: value for key, value in options.items() if key != "rules"}
            options["normalization_rule_tsv"] = str(rules)
        data = train(**options)
        path = folder / f"{name}.model"
        path.write_bytes(data)
        out[name] = (load_tokenizer(str(path)), _library(data), data)
    return out


@pytest.mark.parametrize("name", sorted(TRAINED))
def test_trained_models_give_the_librarys_ids(trained: dict[str, tuple[Tokenizer, Any, bytes]], name: str) -> None:
    tokenizer, library, _ = trained[name]
    assert tokenizer.semantics == "sentencepiece-bpe"

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(sp_texts)
    def check(text: str) -> None:
        assert tokenizer.encode(text) == library.encode(text)

    check()
    for line in training_lines()[:60]:
        assert tokenizer.encode(line) == library.encode(line)


@pytest.mark.parametrize("name", sorted(TRAINED))
@pytest.mark.parametrize("segmented_from", [0, 40, 10**9])
def test_texts_cut_or_whole_give_the_same_ids(trained: dict[str, tuple[Tokenizer, Any, bytes]], name: str,
                                             segmented_from: int, monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    """A text merged whole gives the ids of its parts merged on their own (cut where no piece holds two adjacent
    characters), short or long, and those are the library's."""
    monkeypatch.setattr(sentencepiece_module, "SEGMENTED_FROM", segmented_from)
    _, library, data = trained[name]
    path = tmp_path / f"{name}.model"
    path.write_bytes(data)
    tokenizer = load_tokenizer(str(path), cache=False)  # (a model of its own: no part merged in another mode)
    lines = training_lines()
    for text in ["".join(lines[:40]), " ".join(lines[40:45]), lines[50], "ab" * 300]:
        assert tokenizer.encode(text) == library.encode(text)


@pytest.mark.parametrize("name", ["nmt_nfkc-byte_fallback", "nfkc_cf-suffix", "identity-user_defined", "custom-rules"])
def test_normalizer_is_the_librarys(trained: dict[str, tuple[Tokenizer, Any, bytes]], name: str) -> None:
    tokenizer, library, _ = trained[name]
    model = tokenizer.model
    assert isinstance(model, SentencePieceModel)
    assert model.normalizer.has_rules == (name != "identity-user_defined")

    @settings(max_examples=200, deadline=None)
    @given(sp_texts)
    def check(text: str) -> None:
        assert model.normalizer.normalize(text.encode("utf-8")) == library.normalize(text)

    check()


def test_invalid_utf8_bytes_as_the_library_takes_them(trained: dict[str, tuple[Tokenizer, Any, bytes]]) -> None:
    """Bytes that are not UTF-8: each bad byte is one U+FFFD to the library's normalizer, then byte fallback."""
    tokenizer, library, _ = trained["nmt_nfkc-byte_fallback"]

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.sampled_from([b"a", b" ", b"\xff", b"\xc3", b"\xc3\xa9", b"\xe3\x81", b"\xed\xa0\x80",
                                     b"\xf4\x90\x80\x80", b"\xef\xbf\xbd", b"\x00", b"ab"]), max_size=12).map(b"".join))
    def check(data: bytes) -> None:
        assert tokenizer.encode_bytes(data) == library.encode(data)

    check()


def test_gzip_model_loads_the_same(trained: dict[str, tuple[Tokenizer, Any, bytes]], tmp_path: Path) -> None:
    tokenizer, library, data = trained["nmt_nfkc-byte_fallback"]
    path = tmp_path / "m.model.gz"
    path.write_bytes(gzip.compress(data))
    packed = load_tokenizer(str(path))
    for line in training_lines()[:40]:
        assert packed.encode(line) == tokenizer.encode(line) == library.encode(line)


# ---------------------------------------------------------------------------
# Hand-written models
# ---------------------------------------------------------------------------


def _field(number: int, wire: int, payload: bytes | int) -> bytes:
    key = varint(number << 3 | wire)
    if isinstance(payload, int):
        return key + varint(payload)
    return key + (varint(len(payload)) + payload if wire == 2 else payload)


def model_proto(pieces: list[tuple[str, float, int]], *, byte_fallback: bool = False, model_type: int = 2,
                dummy: bool = True, remove: bool = True, escape: bool = True, suffix: bool = False,
                charsmap: bytes | None = None) -> bytes:
    """A serialized ``ModelProto`` with these ``(piece, score, type)`` entries and options."""
    out = bytearray()
    for text, score, kind in pieces:
        body = _field(1, 2, text.encode("utf-8")) + _field(2, 5, struct.pack("<f", score)) + _field(3, 0, kind)
        out += _field(1, 2, body)
    out += _field(2, 2, _field(3, 0, model_type) + _field(35, 0, int(byte_fallback)) + _field(24, 0, int(suffix)))
    normalizer = _field(1, 2, b"identity") + _field(3, 0, int(dummy)) + _field(4, 0, int(remove))
    normalizer += _field(5, 0, int(escape))
    if charsmap is not None:
        normalizer += _field(2, 2, charsmap)
    out += _field(3, 2, normalizer)
    return bytes(out)


BYTE_PIECES = [(f"<0x{byte:02X}>", 0.0, BYTE) for byte in range(256)]


@st.composite
def crafted_models(draw: st.DrawFn) -> bytes:
    """Small models over "ab▁c" with pieces of every type (an unknown piece sometimes missing, a NUL piece
    sometimes there), scores that tie or differ only in the sign of zero, and every white space option."""
    byte_fallback = draw(st.booleans())
    pieces: list[tuple[str, float, int]] = [("<s>", 0.0, CONTROL)]
    if draw(st.integers(0, 9)):
        pieces.append(("<unk>", 0.0, UNKNOWN))
    if byte_fallback:
        pieces += BYTE_PIECES
    if not draw(st.integers(0, 9)):
        pieces.append(("\0", 0.0, draw(st.sampled_from([NORMAL, UNUSED]))))
    texts = draw(st.lists(st.text(st.sampled_from("ab\u2581c"), min_size=1, max_size=3), max_size=14, unique=True))
    for text in texts:
        kind = draw(st.sampled_from([NORMAL, NORMAL, NORMAL, UNUSED, UNUSED, USER_DEFINED, CONTROL, UNKNOWN]))
        pieces.append((text, draw(st.sampled_from([-1.0, -2.0, -0.5, 0.0, -0.0])), kind))
    order = draw(st.permutations(range(len(pieces))))
    return model_proto([pieces[index] for index in order], byte_fallback=byte_fallback, dummy=draw(st.booleans()),
                       remove=draw(st.booleans()), escape=draw(st.integers(0, 4)) > 0, suffix=draw(st.booleans()))


crafted_texts = st.lists(st.sampled_from(["a", "b", "c", " ", "  ", "x", "é", "\0", "<s>", "\u2581", "ab", "ba"]),
                         max_size=10).map("".join)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("crafted")


def _load(data: bytes, path: Path, *, c_loop: bool = True) -> Tokenizer | None:
    path.write_bytes(data)
    try:
        if not c_loop:  # the model built to merge in its Python loop
            return Tokenizer.from_parts(read_parts(str(path), c_loop=False))
        return load_tokenizer(str(path))
    except FormatError as error:
        assert "\n" not in str(error)
        return None


@needs_current
@settings(max_examples=160, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crafted_models(), st.lists(crafted_texts, min_size=1, max_size=8))
def test_crafted_models_load_and_encode_as_the_library(workdir: Path, data: bytes, texts: list[str]) -> None:
    try:
        library = _library(data)
    except (RuntimeError, OSError):
        library = None
    tokenizer = _load(data, workdir / "crafted.model")
    assert (tokenizer is None) == (library is None)
    if tokenizer is None:
        return
    for text in texts:
        assert tokenizer.encode(text) == library.encode(text)


@st.composite
def merged_models(draw: st.DrawFn) -> bytes:
    """Models the C merges run on (normal pieces only, no unused or user-defined one) over "abé日▁", two or more
    characters long, of few scores, so that pieces of one score compete for a character."""
    byte_fallback = draw(st.booleans())
    pieces: list[tuple[str, float, int]] = [("<unk>", 0.0, UNKNOWN)] + (BYTE_PIECES if byte_fallback else [])
    pieces += [(char, -9.0, NORMAL) for char in draw(st.sets(st.sampled_from("ab\u00e9\u65e5\u2581")))]
    texts = draw(st.lists(st.text(st.sampled_from("ab\u00e9\u65e5\u2581"), min_size=2, max_size=3), max_size=16,
                          unique=True))
    pieces += [(text, draw(st.sampled_from([-1.0, -2.0])), NORMAL) for text in texts]
    return model_proto(pieces, byte_fallback=byte_fallback, dummy=draw(st.booleans()))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(merged_models() | crafted_models(),
       st.lists(crafted_texts | st.text(st.sampled_from("ab c▁\u00e9\u65e5x"), max_size=300)
                | st.text(st.sampled_from("ab\u00e9\u65e5"), max_size=40), min_size=1, max_size=6))
def test_the_c_merges_are_the_python_merges(workdir: Path, data: bytes, texts: list[str]) -> None:
    """sentencepiece's merges in C (``impl/models/char_merges.py``: characters put together from their bytes
    first, then pieces by score, the leftmost of equal scores first, unknown characters as byte pieces) give the
    Python loop's ids, on texts long and short, with and without byte fallback; a model that has merged in C
    still pickles (as worker processes get it) and its copy merges alike."""
    if not encoder_module.HAVE_C_LOOP:
        pytest.skip("the C extension bpeproof.impl._c._fastenc is not built")
    c_loops = _load(data, workdir / "c.model")
    if c_loops is None:
        return
    python_loops = _load(data, workdir / "python.model", c_loop=False)
    assert python_loops is not None
    expected = [python_loops.encode(text) for text in texts]
    assert [c_loops.encode(text) for text in texts] == expected
    copy = pickle.loads(pickle.dumps(c_loops.model))
    assert [copy.encode_word(text.encode()) for text in texts] == [c_loops.model.encode_word(text.encode())
                                                                    for text in texts]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crafted_models(), st.lists(crafted_texts, min_size=1, max_size=6))
def test_a_cached_model_encodes_and_explains_as_the_model_read(workdir: Path, data: bytes, texts: list[str]) -> None:
    """The model made from its cache entry (its codes and scores by text made again from the ids' dict and the
    lists by id, its C loop unpacked) gives the ids and the merge steps of the model read from the file."""
    path = workdir / "cached.model"
    path.write_bytes(data)
    try:
        fresh = load_tokenizer(str(path), cache=False)
    except FormatError:
        return
    load_tokenizer(str(path))  # (the entry written)
    cached = load_tokenizer(str(path))
    assert isinstance(cached.model, SentencePieceModel) and isinstance(fresh.model, SentencePieceModel)
    # The C loop comes with the entry: a cached load does without the pass over the pieces that makes it.
    assert ("_char_merger" in vars(cached.model)) == encoder_module.HAVE_C_LOOP
    for text in texts:
        assert cached.encode(text) == fresh.encode(text)
        word = text.encode("utf-8")
        assert isinstance(cached.model, SentencePieceModel) and isinstance(fresh.model, SentencePieceModel)
        assert cached.model.merge_steps(word) == fresh.model.merge_steps(word)


@needs_current
def test_unused_piece_split_again(workdir: Path) -> None:
    """'ab' unused: split back into a and b; 'abc' built on it stays whole."""
    pieces = [("<unk>", 0.0, UNKNOWN), ("a", -1.0, NORMAL), ("b", -1.0, NORMAL), ("c", -1.0, NORMAL),
              ("ab", -0.5, UNUSED), ("abc", -0.7, NORMAL), ("bc", -0.6, NORMAL), ("\u2581", -3.0, NORMAL)]
    data = model_proto(pieces)
    tokenizer = _load(data, workdir / "unused.model")
    assert tokenizer is not None
    library = _library(data)
    for text in ["ab", "abc", "bca", "abab", "cab c", "a b c"]:
        assert tokenizer.encode(text) == library.encode(text)


@needs_current
@pytest.mark.parametrize("scores", [(-0.0, 0.0), (0.0, -0.0), (-1.0, -1.0), (-1.0, -2.0)])
def test_merge_order_equal_scores_and_signed_zero(workdir: Path, scores: tuple[float, float]) -> None:
    """Equal scores: the leftmost pair first, whatever the pieces' texts or ids; +0.0 ranks above -0.0."""
    pieces = [("<unk>", 0.0, UNKNOWN), ("a", -5.0, NORMAL), ("b", -5.0, NORMAL), ("c", -5.0, NORMAL),
              ("bc", scores[1], NORMAL), ("ab", scores[0], NORMAL), ("ba", scores[0], NORMAL),
              ("cb", scores[1], NORMAL)]
    data = model_proto(pieces, dummy=False)
    tokenizer = _load(data, workdir / "ties.model")
    assert tokenizer is not None
    library = _library(data)
    for text in ["abc", "cba", "abcba", "cbabc", "bcab"]:
        assert tokenizer.encode(text) == library.encode(text)


# ---------------------------------------------------------------------------
# Real models
# ---------------------------------------------------------------------------


def _mistral_data() -> Path | None:
    spec = importlib.util.find_spec("mistral_common")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "data"
    return folder if folder.is_dir() else None


def real_models() -> list[Any]:
    """The shared folder's model and mistral-common's, each distinct file once."""
    found: list[Any] = []
    seen: set[str] = set()
    shared = SHARED / "vocabs" / "mistral_tokenizer.model.v1"
    if shared.is_file():
        seen.add(hashlib.sha256(shared.read_bytes()).hexdigest())
    found.append(pytest.param(shared, id="shared-mistral-v1",
                              marks=pytest.mark.skipif(not shared.is_file(), reason=f"{shared} is not there")))
    data = _mistral_data()
    paths = sorted(data.glob("*.model.v*")) if data is not None else []
    for path in paths:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            found.append(pytest.param(path, id=path.name))
    if not paths:
        found.append(pytest.param(Path("mistral-common"), id="mistral-common",
                                  marks=pytest.mark.skip(reason="mistral-common (its package data) is not installed")))
    return found


def corpus_lines(per_corpus: int = 100) -> Iterator[str]:
    """Lines of every shared corpus: the first ones and an even spread of the rest, with their line ends."""
    for path in sorted((SHARED / "corpora").glob("*.gz")):
        lines = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines(keepends=True)
        step = max(1, len(lines) // per_corpus)
        yield from lines[: per_corpus // 2] + lines[::step][: per_corpus // 2]


@pytest.mark.parametrize("path", real_models())
def test_real_models_give_the_librarys_ids(path: Path) -> None:
    tokenizer = load_tokenizer(str(path))
    library = spm.SentencePieceProcessor(model_file=str(path))

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(sp_texts)
    def check(text: str) -> None:
        assert tokenizer.encode(text) == library.encode(text)

    check()
    lines = list(corpus_lines())
    for line in lines:
        assert tokenizer.encode(line) == library.encode(line), line
    whole = "".join(lines)
    assert tokenizer.encode(whole) == library.encode(whole)


# ---------------------------------------------------------------------------
# Refusals, the command line, the audit
# ---------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bpeproof.cli", *args], capture_output=True, text=True, timeout=120,
                          check=False)


def test_cli_encodes_with_the_librarys_ids(trained: dict[str, tuple[Tokenizer, Any, bytes]], tmp_path: Path) -> None:
    _, library, data = trained["identity-user_defined"]
    path = tmp_path / "tokenizer.model"
    path.write_bytes(data)
    text = "  the <mask> quick[X][Y] 日本 ab  "
    result = _cli("encode", text, "--vocab", str(path))
    assert result.returncode == 0, result.stderr
    assert [int(token) for token in result.stdout.split()] == library.encode(text)


def test_refusals_are_one_line(tmp_path: Path) -> None:
    unigram = tmp_path / "unigram.model"
    unigram.write_bytes(train(model_type="unigram"))
    with pytest.raises(FormatError, match="unigram"):
        load_tokenizer(str(unigram))
    result = _cli("encode", "abc", "--vocab", str(unigram))
    assert result.returncode == 2 and result.stdout == ""
    assert "unigram" in result.stderr and len(result.stderr.strip().splitlines()) == 1

    base = [("<unk>", 0.0, UNKNOWN), ("a", -1.0, NORMAL), ("b", -1.0, NORMAL)]
    bad = {
        "twice": model_proto(base + [("a", -2.0, USER_DEFINED)]),
        "byte piece": model_proto(base + [("<0x41>", 0.0, BYTE)]),
        "no unk": model_proto(base[1:]),
        "charsmap": model_proto(base, charsmap=b"\x00\x04\x00\x00" + bytes(1024) + b"a\0"),
        "short charsmap": model_proto(base, charsmap=b"\x08\x00\x00\x00abcdefgh\0"),
        "nul": model_proto(base + [("a\0b", -1.0, NORMAL)]),
    }
    for name, data in bad.items():
        with pytest.raises(RuntimeError):
            _library(data)  # the library refuses each of them too
        path = tmp_path / f"{name}.model"
        path.write_bytes(data)
        with pytest.raises(FormatError) as caught:
            load_tokenizer(str(path))
        assert "\n" not in str(caught.value) and str(path) in str(caught.value), name
    truncated = tmp_path / "truncated.model"
    truncated.write_bytes(model_proto(base)[:-5])
    with pytest.raises(FormatError):
        load_tokenizer(str(truncated))
    good = tmp_path / "good.model"
    good.write_bytes(model_proto(base))
    assert load_tokenizer(str(good)).encode("ab") == _library(model_proto(base)).encode("ab")
    with pytest.raises(FormatError, match="pattern"):
        load_tokenizer(str(good), "cl100k")


def test_audit_of_a_gzip_model_runs_the_library(trained: dict[str, tuple[Tokenizer, Any, bytes]],
                                                tmp_path: Path) -> None:
    path = tmp_path / "small.model.gz"
    path.write_bytes(gzip.compress(trained["nmt_nfkc-byte_fallback"][2]))
    report = audit(str(path), samples=60)
    assert report["library"]["available"] is True and report["library"]["name"] == "sentencepiece"
    assert report["project"]["compared"] is True and report["project"]["semantics"] == "sentencepiece-bpe"
    assert report["project"]["agree"] is True
