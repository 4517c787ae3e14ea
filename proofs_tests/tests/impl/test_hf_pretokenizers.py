"""Hugging Face pre-tokenizers and byte tokens at any ids, against the ``tokenizers`` library and the spec.

``bpeproof.impl.pre_tokenizers.hf_splits`` must cut text exactly as the library's ``Split``,
``Sequence`` and ``ByteLevel`` pre-tokenizers do, on generated text; a
``Tokenizer`` read from a ``tokenizer.json`` file must give the library's ids
(a small file trained by the library here, and DeepSeek's file on slices of
the shared corpora when ``../shared`` is present); and a ``Tokenizer`` whose
byte tokens sit at arbitrary ids must encode as ``spec.enc`` does with the
bytes renamed, decode back, and survive saving and loading.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bpeproof import spec
from bpeproof.commands._vocab import load_tokenizer
from bpeproof.impl.formats.project_file import FORMAT_VERSION, PRETOKENIZER_FORMAT_VERSION
from bpeproof.impl.formats.vocab import PreTokenizerStep, token_string_to_bytes
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.errors import FormatError as FileFormatError
from bpeproof.impl.models.sequential import SequentialModel
from bpeproof.impl.pre_tokenizers.hf_splits import (
    BEHAVIORS,
    GPT2_SPLIT,
    PreTokenizer,
    SplitStep,
    steps_from_hf,
    translate_oniguruma,
)
from bpeproof.impl.pre_tokenizers.unicode_classes import changed_code_points
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.proofs_tests.checker.strategies import rule_lists, texts
from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError, InvalidTokenError, Rule

tokenizers = pytest.importorskip("tokenizers")
pre_tokenizers = tokenizers.pre_tokenizers

SHARED = Path(__file__).resolve().parents[4] / "shared"
DEEPSEEK = SHARED / "vocabs" / "deepseek_tokenizer.json.gz"
CORPORA = sorted((SHARED / "corpora").glob("*.txt.gz"))

#: Hugging Face's names of the behaviours, in the order of ``BEHAVIORS``.
HF_BEHAVIORS = {
    "isolated": "isolated",
    "removed": "removed",
    "merged_with_previous": "merged_with_previous",
    "merged_with_next": "merged_with_next",
    "contiguous": "contiguous",
}

#: Expressions exercising what the two engines might read differently: empty matches, anchors, look-around,
#: Unicode classes, possessive quantifiers, inline flags, Oniguruma's ``\h``.
PATTERNS = [
    r"\s+",
    r"\p{N}{1,3}",
    r"[一-龥぀-ゟ゠-ヿ]+",
    r"[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    GPT2_SPLIT,
    r"a*",
    r"x|",
    r"(?=a)",
    r"\b",
    r"^",
    r"$",
    r"^a|b$",
    r"(?i)ab",
    r"(?m:.)b",
    r"\h+",
    r"[\h ]",
    r"'(?i:[sdmt]|ll|ve|re)|\p{L}++",
    r"\s+$",
    r"\w+",
    r"[\w']+",
    r"\W",
    r"\B",
    r"[[:punct:]]+",
    r"\p{N}{1,3}+",
    r"(?:a|b){1,2}+",
    r"[a ]{2}+x?",
    r"\p{L}{2,}+",
]

#: Characters the generated texts are made of (letters, digits, marks, spaces, line ends, CJK, punctuation).
ALPHABET = list("ab AB x1239 \n\r\t'.,!-_日本語あアé\u0301😀\u3000\u00a0٣¹½\u200d+\u0cdc\u0295")

#: Any text the library takes (no lone surrogates), with code points assigned after Unicode 16.0 (Oniguruma's
#: tables and the project's classes are of 16.0; the regex module's own are newer).
_NEWER = st.sampled_from([chr(code) for code in changed_code_points()] or ["\u0cdc"])
hf_texts = st.text(st.sampled_from(ALPHABET), max_size=40) | st.text(
    st.characters(exclude_categories=["Cs"]) | _NEWER, max_size=30
)


def hf_split(pattern: str, behavior: str, invert: bool) -> Any:
    """The library's ``Split`` pre-tokenizer for a regular expression."""
    return pre_tokenizers.Split(tokenizers.Regex(pattern), HF_BEHAVIORS[behavior], invert=invert)


def hf_pieces(pre_tokenizer: Any, text: str, byte_level: bool) -> list[str]:
    """The library's pieces, mapped back from GPT-2's byte characters when a ``ByteLevel`` step made them."""
    pieces: list[str] = []
    for piece, _ in pre_tokenizer.pre_tokenize_str(text):
        data = token_string_to_bytes(piece) if byte_level else None
        pieces.append(piece if data is None else data.decode("utf-8"))
    return pieces


# -- Split, Sequence and ByteLevel against the library --------------------------------------------------------


@given(hf_texts, st.sampled_from(PATTERNS), st.sampled_from(BEHAVIORS), st.booleans())
@settings(max_examples=400)
def test_split_matches_the_library(text: str, pattern: str, behavior: str, invert: bool) -> None:
    """One ``Split`` step gives the library's pieces for every behaviour, inverted or not."""
    expected = [piece for piece, _ in hf_split(pattern, behavior, invert).pre_tokenize_str(text)]
    assert SplitStep(pattern, behavior, invert).split(text) == expected


@pytest.mark.parametrize("pattern", [r"\p{N}{1,3}+", r"(?:a|b){1,2}+", r"[a ]{2}+x?", r"\p{L}{2,}+", r"\d{2}+"])
@pytest.mark.parametrize("text", ["1234567 12", "ababab aab", "a a a ax", "abcde f", "٣٣٣٣٣"])
def test_interval_then_plus_is_a_repeated_interval(pattern: str, text: str) -> None:
    """Ruby syntax reads ``X{1,3}+`` as ``(?:X{1,3})+``, not as the regex module's possessive interval."""
    expected = [piece for piece, _ in hf_split(pattern, "isolated", False).pre_tokenize_str(text)]
    assert SplitStep(pattern).split(text) == expected


steps = st.tuples(st.sampled_from(PATTERNS), st.sampled_from(BEHAVIORS), st.booleans())


@given(hf_texts, st.lists(steps, max_size=3), st.sampled_from([None, False, True]))
@settings(max_examples=300)
def test_sequence_matches_the_library(text: str, chosen: list[tuple[str, str, bool]], byte_level: bool | None) -> None:
    """A sequence of splits, with or without a trailing ``ByteLevel`` step, gives the library's pieces."""
    hf_steps = [hf_split(*step) for step in chosen]
    ours = [SplitStep(*step) for step in chosen]
    if byte_level is not None:
        hf_steps.append(pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=byte_level))
        if byte_level:
            ours.append(SplitStep(GPT2_SPLIT))
    # With no split at all the library keeps an empty text as one empty piece; it gives no tokens either way.
    expected = [piece for piece in hf_pieces(pre_tokenizers.Sequence(hf_steps), text, byte_level is not None) if piece]
    assert PreTokenizer(ours).split(text) == expected


def test_deepseek_steps_from_the_file() -> None:
    """``steps_from_hf`` keeps Split steps, drops a plain ByteLevel step and turns ``use_regex`` into GPT-2's split."""
    split = PreTokenizerStep("Split", "{}", r"\p{N}{1,3}", "Isolated", False)
    plain = PreTokenizerStep("ByteLevel", "{}", None, add_prefix_space=False, use_regex=False)
    regex = PreTokenizerStep("ByteLevel", "{}", GPT2_SPLIT, add_prefix_space=False, use_regex=True)
    assert steps_from_hf([split, plain]).steps == (SplitStep(r"\p{N}{1,3}", "isolated"),)
    assert steps_from_hf([regex]).steps == (SplitStep(GPT2_SPLIT),)
    assert steps_from_hf([]).split("a b") == ["a b"]


def test_translation_of_oniguruma() -> None:
    """The constructs whose meaning differs between the engines are rewritten, the rest passed through."""
    assert translate_oniguruma("^a$") == "(?m:^)a(?m:$)"
    assert translate_oniguruma("[^a$]") == "[^a$]"
    assert translate_oniguruma(r"\h[\h]") == "[0-9a-fA-F][0-9a-fA-F]"
    assert translate_oniguruma("(?m:.)(?im)") == "(?s:.)(?is)"
    assert translate_oniguruma(r"(?<=a)(?!b)\p{L}[]a]") == r"(?<=a)(?!b)\p{L}[\]a]"


def test_split_step_errors() -> None:
    """Unknown behaviours, invalid expressions and values of the wrong type are refused."""
    with pytest.raises(ValueError, match="unknown split behavior"):
        SplitStep("a", "sideways")
    with pytest.raises(ValueError, match="invalid split pattern"):
        SplitStep("(")
    with pytest.raises(TypeError):
        SplitStep("a", "isolated", 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        SplitStep(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        PreTokenizer("abc")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        PreTokenizer([5])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="missing"):
        PreTokenizer([{"pattern": "a", "behavior": "isolated"}])
    assert SplitStep("a", "MergedWithNext").behavior == "merged_with_next"
    prefix = PreTokenizerStep("ByteLevel", "{}", None, add_prefix_space=True, use_regex=False)
    with pytest.raises(ValueError, match="prefix space"):
        steps_from_hf([prefix])
    with pytest.raises(ValueError, match="Whitespace"):
        steps_from_hf([PreTokenizerStep("Whitespace", "{}")])


# -- a tokenizer.json trained by the library: byte tokens at 1..256, a Sequence pre-tokenizer --------------------

TRAINING_TEXT = ["the lowest newest slowest wider 12345 6789 日本語のテキスト don't I'M  tabs\there"] * 30


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Tokenizer]:
    """A byte-level BPE file trained by the library (special token at 0, bytes after it) and our reading of it."""
    model = tokenizers.Tokenizer(tokenizers.models.BPE())
    model.pre_tokenizer = pre_tokenizers.Sequence(
        [
            hf_split(r"\p{N}{1,3}", "isolated", False),
            hf_split(r"[一-龥぀-ゟ゠-ヿ]+", "isolated", False),
            hf_split(r"\s+", "merged_with_next", False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    model.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    model.train_from_iterator(TRAINING_TEXT, trainer)
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    path.write_text(model.to_str(), encoding="utf-8")
    return model, load_tokenizer(str(path))


def test_trained_file_has_bytes_away_from_0_255(trained: tuple[Any, Tokenizer]) -> None:
    """The file's byte tokens are not the ids 0..255, and its pre-tokenizer is the three splits."""
    _, ours = trained
    assert sorted(ours.byte_ids) != list(range(ALPHABET_SIZE))
    assert ours.pretokenizer is not None and len(ours.pretokenizer.steps) == 3


@given(hf_texts | texts(60))
@settings(max_examples=300)
def test_trained_file_ids_match_the_library(trained: tuple[Any, Tokenizer], text: str) -> None:
    """Our ids for the library's own file are the library's, and decode to the text."""
    model, ours = trained
    assume("<s>" not in text)
    ids = ours.encode(text)
    assert ids == model.encode(text, add_special_tokens=False).ids
    assert ours.decode(ids) == text


# -- DeepSeek's file on the shared corpora ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def deepseek() -> tuple[Any, Tokenizer]:
    """The library's tokenizer and ours for DeepSeek's ``tokenizer.json``."""
    if not DEEPSEEK.exists():
        pytest.skip(f"{DEEPSEEK} is absent (the shared vocabularies are not on this machine)")
    with gzip.open(DEEPSEEK, "rt", encoding="utf-8") as handle:
        model = tokenizers.Tokenizer.from_str(handle.read())
    return model, load_tokenizer(str(DEEPSEEK))


@pytest.mark.parametrize("corpus", CORPORA or [None], ids=[path.name for path in CORPORA] or ["absent"])
def test_deepseek_ids_match_the_library(deepseek: tuple[Any, Tokenizer], corpus: Path | None) -> None:
    """On 20 KB slices (start and middle) of each corpus our ids are the library's, and decode back.

    The file's bytes are the ids 3..258 (in the order of GPT-2's byte characters), its merges 259 and up.
    """
    if corpus is None:
        pytest.skip(f"no corpora under {SHARED / 'corpora'}")
    model, ours = deepseek
    assert sorted(ours.byte_ids) == list(range(3, 259))
    with gzip.open(corpus, "rt", encoding="utf-8") as handle:
        text = handle.read()
    for start in (0, len(text) // 2):
        piece = text[start : start + 20_000]
        ids = ours.encode(piece)
        assert ids == model.encode(piece, add_special_tokens=False).ids, (corpus.name, start)
        assert ours.decode(ids) == piece


def test_deepseek_special_tokens_and_command_line(
    deepseek: tuple[Any, Tokenizer], capsys: pytest.CaptureFixture[str]
) -> None:
    """Special tokens in the text are cut out as the library does (``--specials``); the command prints the ids."""
    from bpeproof.cli import main

    model, ours = deepseek
    text = "<｜User｜>hi 12345<｜Assistant｜> ok 世界<｜end▁of▁sentence｜>"
    assert ours.encode(text, allowed_special="all") == model.encode(text, add_special_tokens=False).ids
    plain = "Hello, 世界 12345 ﾃｽﾄ"
    assert main(["encode", plain, "--vocab", str(DEEPSEEK)]) == 0
    printed = [int(token) for token in capsys.readouterr().out.split()]
    assert printed == model.encode(plain, add_special_tokens=False).ids
    assert main(["decode", *map(str, printed), "--vocab", str(DEEPSEEK)]) == 0
    assert capsys.readouterr().out.rstrip("\n") == plain


def test_deepseek_saved_and_loaded(deepseek: tuple[Any, Tokenizer], tmp_path: Path) -> None:
    """The file runs the Hugging Face semantics, which the project's file (the article's rules) cannot hold:
    saving is refused; its split steps still round-trip through a version 2 file."""
    _, ours = deepseek
    assert ours.semantics == "hf-bpe"
    with pytest.raises(BPEValueError, match="hf-bpe"):
        ours.save(tmp_path / "refused.json")
    assert not (tmp_path / "refused.json").exists()
    path = tmp_path / "deepseek.json"
    sequential = Tokenizer([], pretokenizer=ours.pretokenizer)
    sequential.save(path)
    again = Tokenizer.load(path)
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == PRETOKENIZER_FORMAT_VERSION
    assert again.pretokenizer == ours.pretokenizer
    sample = "Hello, 世界 12345 ﾃｽﾄ\n\n  def f(x): return x**2  # ok 😀"
    assert again.pre_tokenize(sample) == ours.pre_tokenize(sample)
    assert load_tokenizer(str(path)).encode(sample) == list(sample.encode("utf-8"))


# -- byte tokens at arbitrary ids -------------------------------------------------------------------------------


@st.composite
def placed_bytes(draw: st.DrawFn) -> tuple[list[Rule], list[int]]:
    """A rule list and 256 distinct byte ids away from its new ids: shifted, spread out, or above them all."""
    rules = draw(rule_lists())
    taken = {rule.c for rule in rules}
    order = draw(st.permutations(range(ALPHABET_SIZE)))
    how = draw(st.sampled_from(["shifted", "spread", "above"]))
    if how == "shifted":
        base = draw(st.integers(0, 8))
        byte_ids = [base + b for b in order]
    elif how == "spread":
        byte_ids = [7 * b + draw(st.integers(0, 6)) for b in order[:1]] + [7 * b for b in order[1:]]
    else:
        byte_ids = [max(taken, default=ALPHABET_SIZE) + 1 + b for b in order]
    assume(len(set(byte_ids)) == ALPHABET_SIZE and not taken & set(byte_ids))
    return rules, byte_ids


@given(placed_bytes(), texts(40), st.booleans())
@settings(max_examples=150)
def test_byte_ids_anywhere_match_the_spec(placed: tuple[list[Rule], list[int]], text: str, fast: bool) -> None:
    """encode = spec.enc per word with byte b renamed byte_ids[b]; decode, files and token bytes agree."""
    rules, byte_ids = placed
    if fast:  # with the C merge loop (when built), else with the Python loops
        tokenizer = Tokenizer(rules, "words", byte_ids=byte_ids)
    else:
        tokenizer = Tokenizer.from_model(SequentialModel.checked(rules, byte_ids, c_loop=False), "words")
    expected = [
        byte_ids[t] if t < ALPHABET_SIZE else t
        for word in tokenizer.pre_tokenize(text)
        for t in spec.enc(rules, word.encode("utf-8"))
    ]
    ids = tokenizer.encode(text)
    assert ids == expected
    assert tokenizer.decode(ids) == text
    assert tokenizer.decode_bytes(ids) == text.encode("utf-8")
    assert tokenizer.byte_ids == tuple(byte_ids)
    assert all(tokenizer.token_bytes(byte_ids[b]) == bytes([b]) for b in range(0, ALPHABET_SIZE, 17))
    again = Tokenizer.from_json(tokenizer.to_json())
    assert again.byte_ids == tokenizer.byte_ids and again.encode(text) == ids
    assert json.loads(tokenizer.to_json())["version"] == FORMAT_VERSION
    data = text.encode("utf-8") + b"\xff\xc3"
    assert tokenizer.decode_bytes(tokenizer.encode_bytes(data)) == data


def test_byte_ids_errors() -> None:
    """Byte ids must be 256 distinct non-negative ints apart from the rules' new ids and the special ids."""
    rules = [Rule(97, 98, 300)]
    shifted = list(range(1000, 1256))
    assert Tokenizer(rules, byte_ids=shifted).encode("ab a") == [300, 1000 + 32, 1000 + 97]
    with pytest.raises(BPEValueError, match=r"gives the id"):
        Tokenizer(rules, byte_ids=[1000] * 256)
    with pytest.raises(BPEValueError, match="negative"):
        Tokenizer(rules, byte_ids=[-1, *range(1001, 1256)])
    with pytest.raises(BPEValueError, match="new id of a rule"):
        Tokenizer(rules, byte_ids=list(range(100, 356)))
    with pytest.raises(InvalidTokenError):
        Tokenizer(rules, special_tokens={"<e>": 1005}, byte_ids=shifted)
    assert Tokenizer(rules, special_tokens={"<e>": 5}, byte_ids=shifted).encode("<e>", allowed_special="all") == [5]
    with pytest.raises(BPETypeError):
        Tokenizer(rules, byte_ids=list(range(255)))
    with pytest.raises(InvalidTokenError):
        Tokenizer(rules, byte_ids=shifted).decode([5])


# -- the project file with split steps ---------------------------------------------------------------------------


def split_tokenizer() -> Tokenizer:
    """A small tokenizer with two split steps and its bytes at 3..258."""
    steps = [SplitStep(r"\p{N}{1,3}"), SplitStep(r"\s+", "merged_with_previous")]
    return Tokenizer([Rule(97, 98, 300)], special_tokens={"<e>": 0}, byte_ids=list(range(3, 259)), pretokenizer=steps)


def test_pretokenizer_round_trip_and_version_1_still_read() -> None:
    """Version 2 holds the steps; a tokenizer without steps is still written and read as version 1."""
    tokenizer = split_tokenizer()
    document = json.loads(tokenizer.to_json())
    assert document["version"] == 2 and document["pretokenizer"][1] == {
        "pattern": r"\s+",
        "behavior": "merged_with_previous",
        "invert": False,
    }
    again = Tokenizer.from_json(tokenizer.to_json())
    assert again.pretokenizer == tokenizer.pretokenizer
    assert again.encode("ab 12345  ab") == tokenizer.encode("ab 12345  ab")
    assert tokenizer.pre_tokenize("ab 12345  ab") == ["ab ", "123", "45", "  ", "ab"]
    plain = Tokenizer([Rule(97, 98, 300)])
    assert "pretokenizer" not in json.loads(plain.to_json())
    assert Tokenizer.from_json(plain.to_json()).encode("ab") == [300]


def test_removed_behaviour_drops_text() -> None:
    """A "removed" step drops the matches from the ids, as the library does."""
    tokenizer = Tokenizer([Rule(97, 98, 256)], pretokenizer=[SplitStep(r"\s+", "removed")])
    assert tokenizer.decode(tokenizer.encode("ab  ab\n")) == "abab"


BROKEN_STEPS: list[tuple[object, str]] = [
    ({}, "pretokenizer"),
    ([5], "pretokenizer[0]"),
    ([{"pattern": "a", "behavior": "isolated"}], "pretokenizer[0].invert"),
    ([{"pattern": "a", "behavior": "isolated", "invert": 0}], "pretokenizer[0].invert"),
    ([{"pattern": 1, "behavior": "isolated", "invert": False}], "pretokenizer[0].pattern"),
    ([{"pattern": "a", "behavior": "isolated", "invert": False, "x": 1}], "pretokenizer[0].x"),
    ([{"pattern": "a", "behavior": "sideways", "invert": False}], "pretokenizer[0]"),
    ([{"pattern": "(", "behavior": "isolated", "invert": False}], "pretokenizer[0]"),
]


@pytest.mark.parametrize(("value", "key"), BROKEN_STEPS)
def test_malformed_pretokenizer(value: object, key: str) -> None:
    """Every malformed step raises ``FormatError`` naming the key."""
    document = json.loads(split_tokenizer().to_json())
    document["pretokenizer"] = value
    with pytest.raises(FormatError) as info:
        Tokenizer.from_json(json.dumps(document))
    assert info.value.key == key


def test_version_and_key_must_agree() -> None:
    """Version 2 needs the steps; version 1 knows no such key; other versions are refused."""
    document = json.loads(split_tokenizer().to_json())
    del document["pretokenizer"]
    with pytest.raises(FormatError) as info:
        Tokenizer.from_json(json.dumps(document))
    assert info.value.key == "version"
    document = json.loads(split_tokenizer().to_json())
    document["version"] = 1
    with pytest.raises(FormatError) as info:
        Tokenizer.from_json(json.dumps(document))
    assert info.value.key == "pretokenizer"
    document["version"] = 3
    with pytest.raises(FormatError) as info:
        Tokenizer.from_json(json.dumps(document))
    assert info.value.key == "version"


def test_project_file_reader_takes_byte_ids_anywhere(tmp_path: Path) -> None:
    """``bpeproof.impl.formats`` reads a version 1 file whose bytes are at 3..258, and refuses ids a rule makes."""
    from bpeproof.impl.formats import FormatError as VocabFormatError
    from bpeproof.impl.formats import load

    tokenizer = Tokenizer([Rule(97, 98, 300)], "words", {"<e>": 0}, byte_ids=list(range(3, 259)))
    path = tmp_path / "t.json"
    tokenizer.save(path)
    vocab = load(path)
    assert vocab.tokens[3 + 97] == b"a" and vocab.tokens[300] == b"ab" and vocab.merges == [(100, 101, 300)]
    document = json.loads(path.read_text(encoding="utf-8"))
    document["byte_ids"] = list(range(45, 301))
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(VocabFormatError, match="is also the new id of a rule"):
        load(path)


def test_load_tokenizer_refuses_unsupported_steps(tmp_path: Path) -> None:
    """A ``tokenizer.json`` whose pre-tokenizer cannot be reproduced is a usage error naming the step."""
    model = tokenizers.Tokenizer(tokenizers.models.BPE())
    model.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(), pre_tokenizers.UnicodeScripts()])
    model.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    model.train_from_iterator(["ab ab"], trainer)
    document = json.loads(model.to_str())
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(FileFormatError, match="UnicodeScripts"):
        load_tokenizer(str(path))
    assert load_tokenizer(str(path), "words").pretokenizer is None
