"""tokenizer.json pipelines and CLIP's merges file, against the libraries that own them.

* ``tokenizer.json`` files built and trained by the ``tokenizers`` library itself, one for each normalizer,
  pre-tokenizer and BPE model option the engine executes (and their sequences), give the library's ids on
  generated text of every kind (Unicode of all planes, runs of white space, digits, accents, case, added
  tokens) and on lines of the shared corpora; with special tokens allowed and as text
  (``encode_special_tokens``);
* the character tables the engine classifies by (``impl/data/tokenizers-classes.txt``) are the library's, and
  the engine's normalizers and character splits give the library's output on every code point of a wide sample;
* ``HuggingFaceTextModel`` is its definition ``bpeproof.spec.variants.enc_hf_bpe`` (word prefix, suffix, byte fallback,
  unknown tokens) and the library's BPE model;
* what the engine does not execute is refused with a ``FormatError`` naming it;
* CLIP's merges file gives the ids of CLIP's own ``SimpleTokenizer`` (when OpenAI's ``clip`` package is
  installed) and of the same pipeline built in ``tokenizers`` on text that CLIP's ``ftfy`` step leaves alone.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import json
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof.impl.encoder import HAVE_C_LOOP
from bpeproof.impl.formats.vocab import token_string_to_bytes
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.models.hugging_face import HuggingFaceTextModel
from bpeproof.impl.normalizers.hf import Normalizer, Piece
from bpeproof.impl.pipelines.tokenizer_json import LiteralFinder
from bpeproof.impl.pre_tokenizers import hf_chars
from bpeproof.impl.pre_tokenizers.char_table import SCANNERS, STEP_SCANNERS
from bpeproof.impl.pre_tokenizers.hf_splits import to_oniguruma
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, SPLIT_SEQUENCES
from bpeproof.impl.tokenizer import Tokenizer, load_tokenizer
from bpeproof.proofs_tests.probes import tokenizers_library as probes
from bpeproof.spec.types import InvalidTextError
from bpeproof.spec.variants import enc_hf_bpe

tokenizers = pytest.importorskip("tokenizers")
normalizers = tokenizers.normalizers
pre_tokenizers = tokenizers.pre_tokenizers
AddedToken = tokenizers.AddedToken
Regex = tokenizers.Regex

SHARED = Path(__file__).resolve().parents[4] / "shared"
CORPORA = sorted((SHARED / "corpora").glob("*.txt.gz"))
DEEPSEEK = SHARED / "vocabs" / "deepseek_tokenizer.json.gz"
CLIP_MERGES = Path(__file__).resolve().parents[2] / "fixtures" / "bpe_simple_vocab_16e6.txt.gz"

TRAINING_TEXT = [
    "Hello World, this is a test of the tokenizer. The QUICK brown fox jumps over 12345 lazy dogs!",
    "Café naïve façade — “quoted” ﬁne; Ǆemal İstanbul ΣΑΣ straße ½ ² ① Ａｂｃ",
    "日本語のテキストです。中文文本。한국어 텍스트 😀🎉👍🏽",
    "don't it's we'll I'M they've  many   spaces\tand\nnew lines\r\n",
    "def f(x):\n    return x ** 2  # a-b_c.d/e\\f <tag> &amp; 3.14159",
] * 4

#: Pieces of text that exercise what the pipelines treat specially; generated texts mix them with any character.
FRAGMENTS = [
    " ", "  ", "   ", "\t", "\n", "\r\n", " \n ", "\u00a0", "\u3000", "\u2028", "\u200b", "\ufeff", "\x00", "\x1f",
    "0", "7", "42", "2024", "١٢", "½", "²", "①", "a", "ab", "hello", "World", "QUICK", "İ", "ı", "Σ", "ς", "ß",
    "ǅ", "e\u0301", "é", "\u0301", "\u0316", "\u0345", "a\u0345\u0301", "\u1e08", "ﬁ", "Ａ", "ｶ", "가",
    "\u1100\u1161\u11a8", "日本", "😀", "👍🏽", "-", "_", "'s", "'T", ",", "...", "“", "”", "—", "&amp;",
    "<s>", "</s>", "<mask>", "▁", "Ġ", "##", "</w>",
    # code points the library's tables do not have as Python's do
    "\U0001fbf0", "\u0898", "\U00011935\U00011930", "\u1c89", "\U00016ea0", "\U00011de0", "\u0cdc", "\u2e60",
]

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.characters(exclude_categories=["Cs"])),
                 max_size=16).map("".join)


# -- tokenizer.json files built by the library -----------------------------------------------------------------


def _trained(
    normalizer: Any,
    pre_tokenizer: Any,
    *,
    byte_level: bool = True,
    prefix: str | None = None,
    suffix: str | None = None,
    unk: str | None = None,
    fuse_unk: bool = False,
    vocab_size: int = 320,
) -> Any:
    model_options: dict[str, Any] = {"unk_token": unk, "fuse_unk": fuse_unk}
    trainer_options: dict[str, Any] = {}
    if prefix is not None:
        model_options["continuing_subword_prefix"] = trainer_options["continuing_subword_prefix"] = prefix
    if suffix is not None:
        model_options["end_of_word_suffix"] = trainer_options["end_of_word_suffix"] = suffix
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE(**model_options))
    if normalizer is not None:
        tokenizer.normalizer = normalizer
    if pre_tokenizer is not None:
        tokenizer.pre_tokenizer = pre_tokenizer
    if byte_level:
        tokenizer.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<s>", "</s>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet() if byte_level else [], **trainer_options)
    tokenizer.train_from_iterator(TRAINING_TEXT, trainer)
    return tokenizer


def _edited(tokenizer: Any, edit: Callable[[dict[str, Any]], None]) -> Any:
    document = json.loads(tokenizer.to_str())
    edit(document)
    return tokenizers.Tokenizer.from_str(json.dumps(document))


def _byte_fallback(document: dict[str, Any]) -> None:
    vocab = document["model"]["vocab"]
    for byte in range(256):
        vocab.setdefault(f"<0x{byte:02X}>", len(vocab))
    document["model"]["byte_fallback"] = True


def _ignore_merges(document: dict[str, Any]) -> None:
    document["model"]["ignore_merges"] = True


def _with_added_tokens(tokenizer: Any) -> Any:
    tokenizer.add_special_tokens([AddedToken("<mask>", lstrip=True, normalized=False, special=True)])
    tokenizer.add_tokens([
        AddedToken("hello", single_word=True),
        AddedToken("World", normalized=True, rstrip=True),
        AddedToken("ab", normalized=False),
        AddedToken("QUICK", normalized=False, lstrip=True, rstrip=True),
    ])
    return tokenizer


def _with_raw_added_tokens(tokenizer: Any) -> Any:
    """Added tokens all read in the original text (``normalized: false``)."""
    tokenizer.add_special_tokens([AddedToken("<mask>", lstrip=True, normalized=False, special=True)])
    tokenizer.add_tokens([AddedToken("ab", normalized=False), AddedToken("QUICK", normalized=False, rstrip=True)])
    return tokenizer


BYTE_LEVEL = pre_tokenizers.ByteLevel(add_prefix_space=False)


def _split_then_bytes(*expressions: str) -> Any:
    """A Split of each expression (isolated), then ByteLevel without its own expression (Llama 3's, Qwen2's and
    DeepSeek-V3's pre-tokenizer)."""
    splits = [pre_tokenizers.Split(Regex(expression), "isolated") for expression in expressions]
    return pre_tokenizers.Sequence([*splits, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])

CLIP_REGEX = r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""

#: One library tokenizer per configuration: each normalizer, pre-tokenizer and model option, and combinations.
CONFIGS: dict[str, Callable[[], Any]] = {
    "nfc": lambda: _trained(normalizers.NFC(), BYTE_LEVEL),
    "nfd-lowercase": lambda: _trained(normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase()]), BYTE_LEVEL),
    "nfkc-digits-prefix-space": lambda: _trained(normalizers.NFKC(), pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=True)])),
    "nfkd-strip-accents-whitespace": lambda: _trained(
        normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents()]), pre_tokenizers.Whitespace(),
        byte_level=False, unk="<s>"),
    "replace-strip-metaspace-byte-fallback": lambda: _edited(_trained(
        normalizers.Sequence([normalizers.Replace("``", '"'), normalizers.Replace(Regex(r"\s+"), " "),
                              normalizers.Strip(left=True, right=False)]),
        pre_tokenizers.Metaspace(), byte_level=False, unk="<s>"), _byte_fallback),
    "llama-prepend-replace-byte-fallback": lambda: _edited(_trained(
        normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]), None,
        byte_level=False, unk="<s>", fuse_unk=True), _byte_fallback),
    "metaspace-first-added-tokens": lambda: _with_added_tokens(_trained(
        normalizers.NFKC(), pre_tokenizers.Metaspace(prepend_scheme="first"), byte_level=False, unk="<s>")),
    "metaspace-never-unsplit": lambda: _trained(
        None, pre_tokenizers.Metaspace(replacement="_", prepend_scheme="never", split=False), byte_level=False),
    # Pipelines cut as plain strings (hf_steps.plain_words): text-only normalizers, steps that map no bytes.
    "metaspace-always-split-byte-fallback": lambda: _edited(_trained(
        None, pre_tokenizers.Metaspace(prepend_scheme="always", split=True), byte_level=False, unk="<s>"),
        _byte_fallback),
    "metaspace-always-unsplit-nfc-added-tokens": lambda: _with_added_tokens(_trained(
        normalizers.NFC(), pre_tokenizers.Metaspace(prepend_scheme="always", split=False), byte_level=False)),
    "metaspace-never-split-lowercase": lambda: _trained(
        normalizers.Lowercase(), pre_tokenizers.Metaspace(prepend_scheme="never", split=True), byte_level=False),
    "metaspace-first-split-added-tokens": lambda: _with_added_tokens(_trained(
        None, pre_tokenizers.Metaspace(prepend_scheme="first", split=True), byte_level=False, unk="<s>")),
    "metaspace-first-unsplit-lowercase-raw-added-tokens": lambda: _with_raw_added_tokens(_trained(
        normalizers.Lowercase(), pre_tokenizers.Metaspace(prepend_scheme="first", split=False), byte_level=False)),
    "metaspace-first-split-nfc": lambda: _trained(
        normalizers.NFC(), pre_tokenizers.Metaspace(prepend_scheme="first", split=True), byte_level=False),
    "digits-then-metaspace-first": lambda: _with_added_tokens(_trained(None, pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.Metaspace(prepend_scheme="first")]),
        byte_level=False)),
    "digits-individual-metaspace": lambda: _trained(normalizers.NFKC(), pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.Metaspace()]), byte_level=False),
    "digits-split-lowercase": lambda: _trained(normalizers.Lowercase(), pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=False), pre_tokenizers.Split(Regex(r"\s+"), "merged_with_next")]),
        byte_level=False),
    "whitespace-split-nfd-prefix": lambda: _trained(normalizers.NFD(), pre_tokenizers.WhitespaceSplit(),
                                                    byte_level=False, prefix="##", unk="<s>"),
    **{f"punctuation-{behavior}-whitespace": functools.partial(
        lambda behavior: _trained(None, pre_tokenizers.Sequence([
            pre_tokenizers.Punctuation(behavior), pre_tokenizers.Whitespace()]), byte_level=False, unk="<s>"),
        behavior) for behavior in ("isolated", "removed", "merged_with_previous", "merged_with_next")},
    "sequence-split-digits-punctuation-metaspace-nfkd": lambda: _with_added_tokens(_trained(
        normalizers.NFKD(), pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(r"\p{L}+"), "contiguous", invert=True), pre_tokenizers.Digits(),
            pre_tokenizers.Punctuation("removed"), pre_tokenizers.Metaspace(replacement="_", split=True)]),
        byte_level=False, unk="<s>")),
    "strip-whitespace-split-prefix": lambda: _trained(
        normalizers.Strip(left=False, right=True), pre_tokenizers.WhitespaceSplit(), byte_level=False,
        prefix="##", unk="<s>", fuse_unk=True),
    "punctuation-whitespace-suffix": lambda: _trained(
        normalizers.Lowercase(), pre_tokenizers.Sequence(
            [pre_tokenizers.Punctuation("contiguous"), pre_tokenizers.Whitespace()]),
        byte_level=False, suffix="</w>", unk="<s>"),
    "prefix-and-suffix": lambda: _trained(normalizers.NFC(), pre_tokenizers.Whitespace(), byte_level=False,
                                          prefix="##", suffix="</w>"),
    "digits-punctuation-bytes": lambda: _trained(None, pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=False), pre_tokenizers.Punctuation("merged_with_next"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])),
    "splits-bytes-ignore-merges": lambda: _edited(_trained(None, pre_tokenizers.Sequence([
        pre_tokenizers.Split("o", "merged_with_previous"),
        pre_tokenizers.Split(Regex(r"\s+"), "removed", invert=True),
        BYTE_LEVEL])), _ignore_merges),
    "byte-level-normalizer-then-split": lambda: _trained(
        normalizers.Sequence([normalizers.Nmt(), normalizers.ByteLevel()]),
        pre_tokenizers.Split(Regex("Ġ"), "merged_with_next")),
    "byte-level-in-the-middle": lambda: _trained(None, pre_tokenizers.Sequence(
        [BYTE_LEVEL, pre_tokenizers.Split(Regex("Ġ+"), "isolated"), pre_tokenizers.Punctuation()])),
    "added-tokens-lowercase": lambda: _with_added_tokens(_trained(normalizers.Lowercase(), BYTE_LEVEL)),
    # The expressions a hand-written C scanner cuts as (impl/pre_tokenizers/char_table.py), before ByteLevel.
    "llama3-split-nfc-added-tokens": lambda: _with_added_tokens(_trained(normalizers.NFC(), _split_then_bytes(
        PATTERNS["llama3"]))),
    "qwen2-split": lambda: _trained(None, _split_then_bytes(PATTERNS["qwen2"])),
    "o200k-split-lowercase": lambda: _trained(normalizers.Lowercase(), _split_then_bytes(PATTERNS["o200k"])),
    "cl100k-as-the-project-writes-it": lambda: _trained(None, _split_then_bytes(to_oniguruma(PATTERNS["cl100k"]))),
    "deepseek3-splits-added-tokens": lambda: _with_added_tokens(_trained(None, _split_then_bytes(
        *SPLIT_SEQUENCES["deepseek3"]))),
    "clip-like": lambda: _trained(
        normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()]),
        pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(CLIP_REGEX), "removed", invert=True),
                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        suffix="</w>", prefix=""),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Any, Tokenizer]]:
    """Each configuration: the library's tokenizer, the same with special tokens as text, and ours of its file."""
    folder = tmp_path_factory.mktemp("pipelines")
    out: dict[str, tuple[Any, Any, Tokenizer]] = {}
    for name, make in CONFIGS.items():
        library = make()
        path = folder / f"{name}.json"
        path.write_text(library.to_str(), encoding="utf-8")
        as_text = tokenizers.Tokenizer.from_file(str(path))
        as_text.encode_special_tokens = True
        out[name] = (library, as_text, load_tokenizer(str(path)))
    return out


@pytest.mark.parametrize("name", sorted(CONFIGS))
@given(text=texts)
@settings(max_examples=40)
def test_pipelines_give_the_librarys_ids(built: dict[str, tuple[Any, Any, Tokenizer]], name: str, text: str) -> None:
    library, as_text, ours = built[name]
    assert ours.encode(text, allowed_special="all") == library.encode(text, add_special_tokens=False).ids
    assert ours.encode(text) == as_text.encode(text, add_special_tokens=False).ids


BEHAVIOR_NAMES = ["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"]

normalizer_steps = st.one_of(
    st.sampled_from([{"type": kind} for kind in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Nmt")]),
    st.builds(lambda pattern, content: {"type": "Replace", "pattern": pattern, "content": content},
              st.sampled_from([{"String": "a"}, {"String": " "}, {"String": "é"}, {"Regex": r"\s+"}, {"Regex": r"\d"},
                               {"Regex": "^ "}, {"Regex": "[A-Z]+"}, {"Regex": ""}]),
              st.sampled_from(["", "▁", "XY", " "])),
    st.builds(lambda text: {"type": "Prepend", "prepend": text}, st.sampled_from(["▁", " ", "ab"])),
    st.builds(lambda left, right: {"type": "Strip", "strip_left": left, "strip_right": right}, st.booleans(),
              st.booleans()),
)
pre_tokenizer_steps = st.one_of(
    st.builds(lambda prefix, regex: {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": True,
                                     "use_regex": regex}, st.booleans(), st.booleans()),
    st.builds(lambda scheme, split: {"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme,
                                     "split": split}, st.sampled_from(["always", "first", "never"]), st.booleans()),
    st.builds(lambda individual: {"type": "Digits", "individual_digits": individual}, st.booleans()),
    st.sampled_from([{"type": "Whitespace"}, {"type": "WhitespaceSplit"}]),
    st.builds(lambda behavior: {"type": "Punctuation", "behavior": behavior}, st.sampled_from(BEHAVIOR_NAMES)),
    st.builds(lambda pattern, behavior, invert: {"type": "Split", "pattern": pattern, "behavior": behavior,
                                                 "invert": invert},
              st.sampled_from([{"Regex": r"\s+"}, {"Regex": r"\p{L}+"}, {"String": "o"}, {"Regex": r"\d{1,2}"},
                               {"Regex": "a*"}]),
              st.sampled_from(BEHAVIOR_NAMES), st.booleans()),
)


def _sequence(kind: str, key: str) -> Callable[[list[dict[str, Any]]], dict[str, Any] | None]:
    return lambda steps: None if not steps else steps[0] if len(steps) == 1 else {"type": kind, key: steps}


@st.composite
def documents(draw: st.DrawFn, bases: dict[bool, dict[str, Any]]) -> dict[str, Any]:
    """A trained model (byte-level or not) with any normalizer, pre-tokenizer, model options and added tokens."""
    document: dict[str, Any] = json.loads(json.dumps(bases[draw(st.booleans())]))
    document["normalizer"] = draw(st.lists(normalizer_steps, max_size=3).map(_sequence("Sequence", "normalizers")))
    document["pre_tokenizer"] = draw(st.lists(pre_tokenizer_steps, max_size=3).map(
        _sequence("Sequence", "pretokenizers")))
    model = document["model"]
    model["unk_token"] = draw(st.sampled_from([None, "<s>"]))
    model["fuse_unk"] = draw(st.booleans())
    model["ignore_merges"] = draw(st.booleans())
    if draw(st.booleans()):
        model["byte_fallback"] = True
        for byte in range(256):
            model["vocab"].setdefault(f"<0x{byte:02X}>", len(model["vocab"]))
    flags = st.fixed_dictionaries({"single_word": st.booleans(), "lstrip": st.booleans(), "rstrip": st.booleans(),
                                   "normalized": st.booleans(), "special": st.booleans()})
    for content in draw(st.lists(st.sampled_from(["<m>", "hello", "World", " a", "é"]), unique=True, max_size=3)):
        document["added_tokens"].append({"id": 0, "content": content, **draw(flags)})
    return document


def _library_ids(library: Any, text: str) -> list[int]:
    ids: list[int] = library.encode(text, add_special_tokens=False).ids
    return ids


#: What ``_or_failure`` returns when the library fails.
FAILED = object()


def _or_failure(run: Callable[[], Any]) -> Any:
    """``run()``, or ``FAILED`` when the library raises an error or panics (``PanicException`` is no Exception)."""
    try:
        return run()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:
        return FAILED


@pytest.fixture(scope="module")
def bases() -> dict[bool, dict[str, Any]]:
    """Two trained models without normalizer or pre-tokenizer: one byte-level, one of characters."""
    return {byte_level: json.loads(_trained(None, BYTE_LEVEL if byte_level else pre_tokenizers.Whitespace(),
                                            byte_level=byte_level, vocab_size=300).to_str())
            for byte_level in (True, False)}


def test_an_added_token_in_the_vocabulary_is_its_own_text(bases: dict[bool, dict[str, Any]], tmp_path: Path) -> None:
    """The usual byte-level file whose added tokens are in its vocabulary (as DeepSeek's are), read by the bulk
    path: each added token is its own UTF-8 text, also one that reads as byte-level characters ('é' is the byte
    0xE9 there), and every id is the library's."""
    document = json.loads(json.dumps(bases[True]))
    vocab = document["model"]["vocab"]
    assert list(vocab.values()) == list(range(len(vocab)))  # ids 0, 1, 2, … in order: the usual file
    contents = ("é", "hello", "Çab")
    for content in contents:
        vocab.setdefault(content, len(vocab))
        document["added_tokens"].append({"id": vocab[content], "content": content, "single_word": False,
                                         "lstrip": False, "rstrip": False, "normalized": False, "special": True})
    source = json.dumps(document)
    path = tmp_path / "tokenizer.json"
    path.write_text(source, encoding="utf-8")
    ours = load_tokenizer(str(path))
    library = tokenizers.Tokenizer.from_str(source)
    added = {vocab[content] for content in contents}
    for string, token in vocab.items():  # every token's bytes, against the reader of one string at a time
        assert ours.token_bytes(token) == (string.encode("utf-8") if token in added else
                                           token_string_to_bytes(string)), string
    for text in ("é hello", "xéyÇab", "hello world é", "Ç"):
        assert ours.encode(text, allowed_special="all") == _library_ids(library, text), text


@given(data=st.data())
@settings(max_examples=60)
def test_composed_pipelines_give_the_librarys_ids(
    bases: dict[bool, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """Any sequence of the normalizers and pre-tokenizers, any model options, added tokens with any flags."""
    document = data.draw(documents(bases))
    source = json.dumps(document)
    library = _or_failure(lambda: tokenizers.Tokenizer.from_str(source))
    if library is FAILED:  # the library refuses or fails on the file itself
        return
    path = tmp_path_factory.mktemp("composed") / "tokenizer.json"
    path.write_text(source, encoding="utf-8")
    try:
        ours = load_tokenizer(str(path))
    except FormatError as error:  # refused, by name: only what the library could run otherwise than we can
        assert "normalize" in str(error) or "the unknown token" in str(error), error
        return
    as_text = tokenizers.Tokenizer.from_str(source)
    as_text.encode_special_tokens = True
    for text in data.draw(st.lists(texts, min_size=1, max_size=6)):
        for allowed, reference in (("all", library), (None, as_text)):
            expected = _or_failure(functools.partial(_library_ids, reference, text))
            if expected is FAILED:  # the library fails on this text: the engine refuses it
                with pytest.raises(InvalidTextError):
                    ours.encode(text, allowed_special=allowed)
                continue
            try:
                got = ours.encode(text, allowed_special=allowed)
            except InvalidTextError as error:
                # The one refusal of a text the library encodes: a Replace that matched the empty text at the
                # start, then a step whose result the library computes from an alignment it has lost.
                assert "matched the empty text at the start" in str(error), error
                continue
            assert got == expected


def test_each_configuration_runs_what_it_names(built: dict[str, tuple[Any, Any, Tokenizer]]) -> None:
    """The files hold the features named (so the comparisons above test them), and no file is refused."""
    documents = {name: json.loads(library.to_str()) for name, (library, _, _) in built.items()}
    assert documents["llama-prepend-replace-byte-fallback"]["model"]["byte_fallback"] is True
    assert documents["prefix-and-suffix"]["model"]["continuing_subword_prefix"] == "##"
    assert documents["metaspace-first-added-tokens"]["pre_tokenizer"]["prepend_scheme"] == "first"
    flags = {token["content"]: token for token in documents["added-tokens-lowercase"]["added_tokens"]}
    assert flags["<mask>"]["lstrip"] and flags["hello"]["single_word"] and not flags["ab"]["normalized"]
    assert built["nfc"][2].semantics == "hf-bpe"
    if HAVE_C_LOOP:  # these cut each stretch between added tokens in C, so the comparisons above test that path
        scanners = {name: built[name][2].pipeline.c_scanner for name in (
            "nfc", "added-tokens-lowercase", "llama3-split-nfc-added-tokens", "qwen2-split", "o200k-split-lowercase",
            "cl100k-as-the-project-writes-it", "deepseek3-splits-added-tokens")}
        assert scanners == {"nfc": SCANNERS["r50k"], "added-tokens-lowercase": SCANNERS["r50k"],
                            "llama3-split-nfc-added-tokens": SCANNERS["llama3"], "qwen2-split": SCANNERS["qwen2"],
                            "o200k-split-lowercase": SCANNERS["o200k"],
                            "cl100k-as-the-project-writes-it": SCANNERS["cl100k"],
                            "deepseek3-splits-added-tokens": STEP_SCANNERS["deepseek3"]}
        assert built["digits-punctuation-bytes"][2].pipeline.c_scanner == -1


#: The configurations whose text is cut as the steps' pieces: a normalizer that does more than read the text, a step
#: that maps bytes, or ``Metaspace``'s ``prepend_scheme: first`` where the text alone cannot tell where a piece
#: starts (a normalizer, and normalized added tokens or a step before it); the others are cut as plain strings.
CUT_AS_PIECES = {
    "nfkd-strip-accents-whitespace", "replace-strip-metaspace-byte-fallback", "llama-prepend-replace-byte-fallback",
    "metaspace-first-added-tokens", "strip-whitespace-split-prefix", "byte-level-normalizer-then-split",
    "byte-level-in-the-middle", "clip-like",
}


def _cut_as_strings(tokenizer: Tokenizer) -> bool:
    try:
        tokenizer.pipeline.words("a b")
    except TypeError:  # the pipeline runs its steps on pieces
        return False
    return True


def test_text_only_pipelines_cut_plain_strings(built: dict[str, tuple[Any, Any, Tokenizer]]) -> None:
    """Every configuration but those that need the pieces is cut as plain strings (so the comparisons above test
    that path), each stretch between added tokens read whole only where nothing else is read in it."""
    plain = {name for name, (_, _, ours) in built.items() if _cut_as_strings(ours)}
    assert plain == set(built) - CUT_AS_PIECES
    for name in sorted(plain):
        document = json.loads(built[name][0].to_str())
        ordinary = any(not token["special"] for token in document["added_tokens"])
        assert built[name][2].pipeline.whole_when_unnamed == (document["normalizer"] is None and not ordinary), name


@pytest.mark.parametrize("corpus", CORPORA or [None], ids=[path.name for path in CORPORA] or ["absent"])
def test_pipelines_on_the_corpora(built: dict[str, tuple[Any, Any, Tokenizer]], corpus: Path | None) -> None:
    """120 lines from the start and the middle of each corpus, in every configuration."""
    if corpus is None:
        pytest.skip(f"no corpora under {SHARED / 'corpora'}")
    with gzip.open(corpus, "rt", encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    middle = len(lines) // 2
    sample = [line for line in lines[:60] + lines[middle : middle + 60] if line.strip()]
    for name, (library, _, ours) in built.items():
        for line in sample:
            assert ours.encode(line, allowed_special="all") == library.encode(line, add_special_tokens=False).ids, (
                name, line)


def test_deepseek_stays_identical_on_corpus_lines() -> None:
    if not DEEPSEEK.exists():
        pytest.skip(f"{DEEPSEEK} is absent (the shared vocabularies are not on this machine)")
    if not CORPORA:
        pytest.skip(f"no corpora under {SHARED / 'corpora'}")
    with gzip.open(DEEPSEEK, "rt", encoding="utf-8") as handle:
        library = tokenizers.Tokenizer.from_str(handle.read())
    ours = load_tokenizer(str(DEEPSEEK))
    for corpus in CORPORA:
        with gzip.open(corpus, "rt", encoding="utf-8") as handle:
            lines = handle.read().splitlines()[1000:1100]
        for line in lines:
            assert ours.encode(line, allowed_special="all") == library.encode(line, add_special_tokens=False).ids


# -- the library's character tables ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample() -> list[int]:
    """The first and last code point of every range of the tables and their neighbours outside, every code point
    of the small tables and of the lower-case table, and one in 97 of all the others."""
    chosen: set[int] = set(probes.EVERY_CODE_POINT[::97])
    for name in (*hf_chars.CLASSES, "normalization-gaps", "composition-gaps", "python-unassigned"):
        for low, high in probes.ranges(hf_chars.code_points(name)):
            chosen |= {low - 1, low, high, high + 1}
    for name in ("numeric", "punctuation", "whitespace", "mark", "normalization-gaps", "composition-gaps"):
        chosen |= hf_chars.code_points(name)
    chosen |= set(hf_chars.lowercase_table())
    chosen |= {ord(char) for fragment in FRAGMENTS for char in fragment}
    return sorted(code for code in chosen if 0 <= code < 0x110000 and not 0xD800 <= code < 0xE000)


def test_character_tables_are_the_librarys(sample: list[int]) -> None:
    """The engine's copy of the library's tables holds what the library says of each code point of the sample."""
    chosen = set(sample)
    assert hf_chars.code_points("numeric") & chosen == probes.library_numeric(sample)
    assert hf_chars.code_points("punctuation") & chosen == probes.library_punctuation(sample)
    assert hf_chars.code_points("whitespace") & chosen == probes.library_whitespace(sample)
    assert hf_chars.code_points("mark") & chosen == probes.library_marks(sample)
    word, space = probes.library_word_classes(sample)
    assert hf_chars.code_points("word") & chosen == word
    assert hf_chars.code_points("whitespace") & chosen == space
    lowered = probes.library_lowercase(sample)
    assert {code: text for code, text in hf_chars.lowercase_table().items() if code in chosen} == lowered


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Nmt"])
def test_normalizers_on_every_sampled_code_point(sample: list[int], form: str) -> None:
    """Each code point alone, then after ``a U+0345`` and before ``U+0334`` (which reorders marks by their class):
    the engine's normalizer, with and without the alignment followed, gives the library's text."""
    library = getattr(normalizers, form)()
    ours = Normalizer.from_json({"type": form})
    for before, after in (("", ""), ("a\u0345", ""), ("a", "\u0334")):
        text = "|".join(before + chr(code) + after for code in sample)
        expected = library.normalize_str(text)
        assert ours.normalize_str(text) == expected
        assert ours.normalize(Piece.original(text)).text == expected


@pytest.mark.parametrize(("step", "library"), [
    ({"type": "Digits", "individual_digits": True}, pre_tokenizers.Digits(individual_digits=True)),
    ({"type": "Punctuation", "behavior": "Isolated"}, pre_tokenizers.Punctuation()),
    ({"type": "WhitespaceSplit"}, pre_tokenizers.WhitespaceSplit()),
    ({"type": "Whitespace"}, pre_tokenizers.Whitespace()),
], ids=["Digits", "Punctuation", "WhitespaceSplit", "Whitespace"])
def test_character_splits_on_every_sampled_code_point(sample: list[int], step: dict[str, Any], library: Any) -> None:
    from bpeproof.impl.formats.vocab import PreTokenizerStep
    from bpeproof.impl.pipelines.hf_steps import cuts_from_file

    run = cuts_from_file([PreTokenizerStep(step["type"], json.dumps(step))])[0]
    for separator in ("a", " ", "1"):
        text = separator.join(chr(code) for code in sample)
        expected = [piece for piece, _ in library.pre_tokenize_str(text)]
        assert [piece.text for piece in run(Piece.original(text, track=False))] == expected
        assert run.words(text) == expected  # on plain strings


@pytest.mark.parametrize("form", ["NFC", "NFD", "NFKC", "NFKD"])
def test_lines_normalize_as_the_library(sample: list[int], form: str) -> None:
    """A text of many lines, each sampled code point between marks on a line of its own (where the text holds a
    character Python's tables lack, it is normalized line by line), a line starting with marks, and the parts of a
    composition the library lacks on two lines: the library's text."""
    library = getattr(normalizers, form)()
    ours = Normalizer.from_json({"type": form})
    lines = [f"a\u0345{chr(code)}\u0334" for code in sample]
    text = "\n".join([*lines, "\u0301\u0334e", "\U00011935", "\U00011930", "e", "\u0301", "", "\r\u0301"])
    assert ours.normalize_str(text) == library.normalize_str(text)


@pytest.mark.parametrize("form", ["NFC", "NFKC"])
def test_texts_one_after_another_normalize_as_the_library(sample: list[int], form: str) -> None:
    """Each sampled code point in texts of its own, one after another, then the parts of a composition the library
    lacks apart and together: what the check of one text remembers of its characters never changes another's."""
    library = getattr(normalizers, form)()
    ours = Normalizer.from_json({"type": form})
    texts = [text for code in sample for text in (f"a{chr(code)}", f"{chr(code)}\u0301", f"e\u0301{chr(code)}")]
    texts += ["\U00011935 x", "\U00011930 y", "\U00011935\U00011930"]
    for text in texts:
        assert ours.normalize_str(text) == library.normalize_str(text), text


def test_the_stored_composition_table_is_the_computed_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The composition table read back from the disk cache is the one computed from Python's data."""
    from bpeproof.impl.normalizers import hf

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    hf.composition_table.cache_clear()
    try:
        computed = hf.composition_table()  # computed, then stored
        hf.composition_table.cache_clear()
        assert hf.composition_table() == computed == hf.computed_composition_table()
        assert len(computed) > 900 and computed[("e", "\u0301")] == "\u00e9"
    finally:
        hf.composition_table.cache_clear()


def test_composition_the_library_lacks() -> None:
    """U+11938 is Python's composition of U+11935 U+11930, not the library's; the two stay apart."""
    text = "\U00011935\U00011930 e\u0301"
    for form in ("NFC", "NFKC"):
        expected = getattr(normalizers, form)().normalize_str(text)
        assert Normalizer.from_json({"type": form}).normalize_str(text) == expected
        assert len(expected) == len(text) - 1  # only é is composed


# -- the BPE model against its definition and the library --------------------------------------------------------

PREFIX = "##"
SUFFIX = "</w>"


@st.composite
def text_models(draw: st.DrawFn) -> dict[str, Any]:
    """A small character vocabulary with prefixed and suffixed forms, byte tokens, merges in any order."""
    letters = "abc"
    prefix = draw(st.sampled_from([None, PREFIX]))
    suffix = draw(st.sampled_from([None, SUFFIX]))
    strings: set[str] = {"<unk>"}
    for letter in letters + draw(st.sampled_from(["", "é", "d"])):
        strings |= {letter, *([prefix + letter] if prefix else []), *([letter + suffix] if suffix else []),
                    *([prefix + letter + suffix] if prefix and suffix else [])}
    if draw(st.booleans()):
        strings |= {f"<0x{byte:02X}>" for byte in (0x61, 0x64, 0xC3, 0xA9, 0x23)}
    merges: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(0, 10))):
        left = draw(st.sampled_from(sorted(strings)))
        right = draw(st.sampled_from(sorted(strings)))
        cut = len(prefix.encode()) if prefix else 0
        if right.startswith("<") or left.startswith("<") or len(right.encode()) < cut:
            continue
        try:
            joined = left + right.encode()[cut:].decode("utf-8")
        except UnicodeDecodeError:
            continue  # the library cannot build this merge (it refuses the file)
        strings.add(joined)
        merges.append((left, right))
    order = draw(st.permutations(sorted(strings)))
    return {
        "vocab": {text: index for index, text in enumerate(order)},
        "merges": merges,
        "prefix": prefix,
        "suffix": suffix,
        "unk": draw(st.sampled_from([None, "<unk>", "<missing>"])),
        "fuse_unk": draw(st.booleans()),
        "byte_fallback": draw(st.booleans()),
        "ignore_merges": draw(st.booleans()),
    }


def _text_model(table: dict[str, Any]) -> HuggingFaceTextModel:
    from bpeproof.impl.formats.hf_json import resolve_merges

    vocab = table["vocab"]
    merges = resolve_merges("<table>", [(a, b, "merge") for a, b in table["merges"]], vocab, prefix=table["prefix"])
    return HuggingFaceTextModel(
        {token: text for text, token in vocab.items()}, merges, {token: text.encode() for text, token in vocab.items()},
        prefix=table["prefix"], suffix=table["suffix"], unk_token=table["unk"], fuse_unk=table["fuse_unk"],
        byte_fallback=table["byte_fallback"], ignore_merges=table["ignore_merges"])


def _expected(table: dict[str, Any], word: str) -> list[int] | None:
    try:
        return enc_hf_bpe(table["vocab"], table["merges"], word, prefix=table["prefix"] or "",
                          suffix=table["suffix"] or "", unk=table["unk"], fuse_unk=table["fuse_unk"],
                          byte_fallback=table["byte_fallback"], ignore_merges=table["ignore_merges"])
    except KeyError:
        return None  # the unknown token is needed and is not in the vocabulary


@given(text_models(), st.lists(st.text(alphabet="abcdéxz", max_size=7), min_size=1, max_size=5))
@settings(max_examples=250)
def test_text_model_is_its_definition_and_the_library(table: dict[str, Any], words: list[str]) -> None:
    ours = _text_model(table)
    document = json.loads(tokenizers.Tokenizer(tokenizers.models.BPE()).to_str())
    document["model"].update({
        "vocab": table["vocab"], "merges": [list(pair) for pair in table["merges"]],
        "continuing_subword_prefix": table["prefix"], "end_of_word_suffix": table["suffix"],
        "unk_token": table["unk"], "fuse_unk": table["fuse_unk"], "byte_fallback": table["byte_fallback"],
        "ignore_merges": table["ignore_merges"]})
    library = tokenizers.Tokenizer.from_str(json.dumps(document))
    for word in words:
        expected = _expected(table, word)
        if expected is None:
            with pytest.raises(InvalidTextError, match="unknown token"):
                ours.encode_word(word.encode())
            with pytest.raises(Exception, match=r"nknown|Unk|vocab"):
                library.encode(word, add_special_tokens=False)
            continue
        assert list(ours.encode_word(word.encode())) == expected
        assert library.encode(word, add_special_tokens=False).ids == expected


# -- what is refused -----------------------------------------------------------------------------------------


def _plain_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(_trained(None, BYTE_LEVEL, vocab_size=270).to_str())
    return document


def _set(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    def edit(document: dict[str, Any]) -> None:
        target = document
        keys = path.split(".")
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return edit


def _added(*tokens: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def edit(document: dict[str, Any]) -> None:
        document["normalizer"] = {"type": "Lowercase"}
        base = {"single_word": False, "lstrip": False, "rstrip": False, "normalized": True, "special": False}
        document["added_tokens"] += [base | token for token in tokens]

    return edit


REFUSED = [
    ("bert-normalizer", _set("normalizer", {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                                             "strip_accents": None, "lowercase": True}), "normalizer (BertNormalizer)"),
    ("precompiled", _set("normalizer", {"type": "Precompiled", "precompiled_charsmap": ""}),
     "normalizer (Precompiled)"),
    ("in-a-sequence", _set("normalizer", {"type": "Sequence", "normalizers": [
        {"type": "NFC"}, {"type": "Replace", "pattern": {"String": "a"}, "content": "b"},
        {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
         "lowercase": True}]}), "normalizer (BertNormalizer)"),
    ("dropout", _set("model.dropout", 0.1), "BPE dropout (0.1)"),
    ("unicode-scripts", _set("pre_tokenizer", {"type": "UnicodeScripts"}), "UnicodeScripts"),
    ("char-delimiter", _set("pre_tokenizer", {"type": "CharDelimiterSplit", "delimiter": "x"}), "CharDelimiterSplit"),
    ("bert-pre-tokenizer", _set("pre_tokenizer", {"type": "Sequence", "pretokenizers": [
        {"type": "Digits", "individual_digits": True}, {"type": "BertPreTokenizer"}]}), "BertPreTokenizer"),
    ("fixed-length", _set("pre_tokenizer", {"type": "FixedLength", "length": 5}), "FixedLength"),
    ("word-piece", _set("model.type", "WordPiece"), "WordPiece"),
    ("normalizes-to-nothing", _added({"id": 900, "content": " ", "normalized": True}), None),
    ("same-after-normalization", _added({"id": 900, "content": "AB"}, {"id": 901, "content": "ab"}), "same text"),
]


@pytest.mark.parametrize(("edit", "named"), [(edit, named) for _, edit, named in REFUSED],
                         ids=[name for name, _, _ in REFUSED])
def test_unsupported_features_are_refused_by_name(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None], named: str | None
) -> None:
    document = _plain_document()
    edit(document)
    if named is None:  # the normalizer makes the content empty: the engine cannot match it as the library does
        document["normalizer"] = {"type": "Strip", "strip_left": True, "strip_right": True}
        named = "normalizes to nothing"
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FormatError, match=named.replace("(", r"\(").replace(")", r"\)")) as caught:
        load_tokenizer(str(path))
    assert "\n" not in str(caught.value)


def test_the_command_line_refuses_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bpeproof.cli import main

    document = _plain_document()
    document["pre_tokenizer"] = {"type": "UnicodeScripts"}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert main(["encode", "abc", "--vocab", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "UnicodeScripts" in captured.err


# -- CLIP's merges file --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clip() -> Tokenizer:
    return load_tokenizer(str(CLIP_MERGES))


def _openai_clip() -> ModuleType | None:
    """OpenAI's ``clip/simple_tokenizer.py``, loaded on its own (the package's ``__init__`` imports torch)."""
    try:
        found = importlib.util.find_spec("clip")
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    source = Path(next(iter(found.submodule_search_locations))) / "simple_tokenizer.py"
    spec = importlib.util.spec_from_file_location("openai_clip_simple_tokenizer", source)
    if not source.exists() or spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError:  # ftfy missing
        return None
    return module


@pytest.fixture(scope="module")
def clip_reference() -> Any:
    module = _openai_clip()
    if module is None:
        pytest.skip("OpenAI's CLIP tokenizer is not installed (pip install ftfy; pip install --no-deps openai-clip)")
    return module.SimpleTokenizer(str(CLIP_MERGES))


@given(texts)
@settings(max_examples=300)
def test_clip_gives_clips_own_ids(clip: Tokenizer, clip_reference: Any, text: str) -> None:
    assert clip.encode(text, allowed_special="all") == clip_reference.encode(text)


def test_clip_vocabulary_is_clips(clip: Tokenizer, clip_reference: Any) -> None:
    for string, token in clip_reference.encoder.items():
        data = bytes(clip_reference.byte_decoder[char] for char in string.removesuffix("</w>"))
        if string in ("<|startoftext|>", "<|endoftext|>"):
            assert clip.special_tokens[string] == token
        else:
            assert clip.token_bytes(token) == data + (b" " if string.endswith("</w>") else b"")


def test_clip_on_the_corpora(clip: Tokenizer, clip_reference: Any) -> None:
    if not CORPORA:
        pytest.skip(f"no corpora under {SHARED / 'corpora'}")
    for corpus in CORPORA:
        with gzip.open(corpus, "rt", encoding="utf-8") as handle:
            lines = handle.read().splitlines()[200:260]
        for line in lines:
            assert clip.encode(line, allowed_special="all") == clip_reference.encode(line), (corpus.name, line)


@pytest.fixture(scope="module")
def clip_in_tokenizers() -> Any:
    """CLIP's vocabulary, merges, cleaning and pattern built in ``tokenizers``: CLIP on text ``ftfy`` keeps."""
    lines = gzip.decompress(CLIP_MERGES.read_bytes()).decode("utf-8").split("\n")[1 : 49152 - 256 - 2 + 1]
    merges = [tuple(line.split()) for line in lines]
    from bpeproof.impl.formats.clip_merges import CLIP_SPECIALS, clip_byte_chars

    base = [char for _, char in clip_byte_chars()]
    strings = base + [char + "</w>" for char in base] + ["".join(pair) for pair in merges] + list(CLIP_SPECIALS)
    vocab = {string: index for index, string in enumerate(strings)}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE(vocab=vocab, merges=merges, end_of_word_suffix="</w>"))
    tokenizer.normalizer = normalizers.Sequence([normalizers.Replace(Regex(r"\s+"), " "), normalizers.Strip(),
                                                 normalizers.Lowercase()])
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(CLIP_REGEX), "removed", invert=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    return tokenizer


ASCII_TEXT = st.lists(st.sampled_from(
    [chr(code) for code in range(0x20, 0x7F) if chr(code) not in "&<>|"] + ["\t", "\n", "\r", "   ", "don't"]),
    max_size=40).map("".join)


@given(ASCII_TEXT)
@settings(max_examples=200)
def test_clip_equals_its_pipeline_in_tokenizers(clip: Tokenizer, clip_in_tokenizers: Any, text: str) -> None:
    """On printable ASCII (no ``&``, which CLIP unescapes, no ``<|``) CLIP's cleaning is white space and lower case."""
    assert clip.encode(text, allowed_special="all") == clip_in_tokenizers.encode(text, add_special_tokens=False).ids


@pytest.fixture
def without_ftfy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import bpeproof.impl.pipelines.clip

    monkeypatch.setattr(bpeproof.impl.pipelines.clip, "_fix_text", lambda: None)
    yield


def test_clip_without_ftfy_refuses_what_it_cannot_know(clip: Tokenizer, clip_in_tokenizers: Any,
                                                       without_ftfy: None) -> None:
    text = "A photo of  a CAT,\tdon't you think?\n"
    assert clip.encode(text) == clip_in_tokenizers.encode(text, add_special_tokens=False).ids
    for refused in ("café", "&amp;", "\u201cquoted\u201d", "\x1b[31m", "ﬁ"):
        with pytest.raises(InvalidTextError, match="ftfy"):
            clip.encode(f"a {refused} b")


def test_clip_special_tokens(clip: Tokenizer) -> None:
    """The special tokens are the vocabulary's last two entries; they are found only when allowed, and only as
    written (CLIP matches its pattern ignoring case, but looks the piece up as it is)."""
    start, end = clip.special_tokens["<|startoftext|>"], clip.special_tokens["<|endoftext|>"]
    assert (start, end) == (clip.vocab_size - 2, clip.vocab_size - 1)
    assert clip.encode("<|startoftext|>a cat<|endoftext|>", allowed_special="all") == [start,
                                                                                    *clip.encode("a cat"), end]
    assert start not in clip.encode("<|startoftext|>") and end not in clip.encode("<|endoftext|>", allowed_special=[])
    assert start not in clip.encode("<|ſtartoftext|>", allowed_special="all")


def test_clip_files_are_recognised_by_content(tmp_path: Path, clip_in_tokenizers: Any) -> None:
    renamed = tmp_path / "merges.txt.gz"
    renamed.write_bytes(CLIP_MERGES.read_bytes())
    from bpeproof.impl.formats import load

    vocab = load(renamed)
    assert vocab.kind == "clip" and len(vocab.tokens) == 256 * 2 + len(vocab.merges) + 2
    ours = load_tokenizer(str(renamed))
    rng = random.Random(7)
    words = ["a", "photo", "of", "the", "cat", "dog", "diagram", "42", "!", "Zebra", "naïve"]
    text = " ".join(rng.choice(words) for _ in range(30))
    assert ours.encode(text) == clip_in_tokenizers.encode(text, add_special_tokens=False).ids


@settings(max_examples=300, deadline=None)
@given(literals=st.sets(st.text("ab<|>", min_size=1, max_size=4), min_size=1, max_size=6),
       text=st.text("ab<|>c", max_size=30))
def test_the_added_tokens_finder_is_the_alternation_it_replaces(literals: set[str], text: str) -> None:
    """``LiteralFinder`` (a class of first characters, then a look-up by length) finds what the alternation of the
    literals, longest first, finds with ``re``: the leftmost place, the longest there (0.05 s)."""
    ordered = sorted(literals, key=lambda literal: (-len(literal), literal))
    expected = [(match.span(), match.group()) for match in re.compile("|".join(map(re.escape, ordered))).finditer(text)]
    assert [(match.span(), match.group()) for match in LiteralFinder(ordered).finditer(text)] == expected
