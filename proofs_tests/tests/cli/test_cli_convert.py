"""``bpeproof convert``: the output format by name or ``--to``, ids kept across formats, and one-line refusals.

The real rank file r50k comes from ``shared/vocabs`` next to the project; the test that needs it skips when it
is absent.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import regex

from bpeproof.cli import main
from bpeproof.commands.convert import merges_path, target_of
from bpeproof.impl.formats import Vocab, hf_json_bytes, load, read_tiktoken, write_hf_json, write_tiktoken
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.impl.trainer import train
from bpeproof.proofs_tests.tests.formats.test_formats import model_proto
from bpeproof.proofs_tests.tests.formats.test_gguf import SMALL_MERGES, gguf_bytes, tokenizer_pairs

SHARED = Path(__file__).resolve().parents[4] / "shared"
VOCABS = SHARED / "vocabs"

SAMPLE = "the lowest newer slower widest kakikuku, ring-ring 12 34!\n\tAnd ünïcödé: トークン 数字 😀"


def _corpus() -> str:
    rng = random.Random(7)
    syllables = ["ka", "ki", "ku", "ra", "ro", "n", "to", "the", "er", "ing", " ", "low", "est", ", "]
    return "".join(rng.choice(syllables) for _ in range(6000))


def _trained(tmp_path: Path, merges: int = 200) -> tuple[Path, Tokenizer]:
    """A tokenizer trained on a small corpus with the ``words`` pattern and saved with ``Tokenizer.save``."""
    text = _corpus()
    words = [match.group().encode("utf-8") for match in regex.finditer(PATTERNS["words"], text)]
    tokenizer = Tokenizer(train(words, merges), "words", {"<|end|>": 10_000})
    path = tmp_path / "trained.json"
    tokenizer.save(path)
    return path, tokenizer


def _encode(capsys: pytest.CaptureFixture[str], vocab: Path, text: str, *options: str) -> list[int]:
    """The ids ``bpeproof encode`` prints for ``text``."""
    capsys.readouterr()
    assert main(["encode", text, "--vocab", str(vocab), "--json", *options]) == 0
    ids = json.loads(capsys.readouterr().out)["ids"]
    assert isinstance(ids, list)
    return [int(token) for token in ids]


def test_output_format_by_name() -> None:
    assert target_of("a/r50k.tiktoken") == target_of("x.TIKTOKEN.gz") == "tiktoken"
    assert target_of("tok.bpeproof.json") == target_of("tok.bpeproof.json.gz") == "bpeproof"
    assert target_of("tokenizer.json") == target_of("t.json.gz") == "hf"
    assert target_of("gpt2_encoder.json") == target_of("encoder.json.gz") == "gpt2"
    assert target_of("model.txt") is None and target_of("tokenizer") is None
    assert merges_path("d/gpt2_encoder.json.gz") == Path("d/gpt2_vocab.bpe.gz")
    assert merges_path("d/enc.json") == Path("d/vocab.bpe")


def test_project_to_tiktoken_and_back_keeps_the_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """trained project file → rank file → project file: encode gives the same ids from all three."""
    source, tokenizer = _trained(tmp_path)
    ranks, back = tmp_path / "trained.tiktoken", tmp_path / "back.bpeproof.json"
    assert main(["convert", str(source), str(ranks)]) == 0
    summary = capsys.readouterr().out.strip()
    assert len(summary.splitlines()) == 1 and "(tiktoken)" in summary and "1 special token left out" in summary
    assert "a rank file holds no pattern: pass --pattern words when you use it" in summary
    assert main(["convert", str(ranks), str(back), "--pattern", "words"]) == 0
    assert "(bpeproof)" in capsys.readouterr().out
    assert load(back).kind == "bpeproof"
    assert read_tiktoken(ranks).tokens == {t: d for t, d in load(source).tokens.items()}
    returned = Tokenizer.load(back)
    assert returned.pattern_name == "words" and returned.special_tokens == {}
    for text in (SAMPLE, _corpus()[:2000], "kakikuraroto the ring nering"):
        expected = tokenizer.encode(text)
        assert returned.encode(text) == expected
        assert _encode(capsys, source, text) == expected
        assert _encode(capsys, ranks, text, "--pattern", "words") == expected
        assert _encode(capsys, back, text) == expected


def test_project_to_tokenizer_json_and_gpt2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A trained project file as tokenizer.json and as GPT-2 files: same tokens and merges, ids kept."""
    source, _ = _trained(tmp_path, merges=60)
    original = load(source)
    assert main(["convert", str(source), str(tmp_path / "tokenizer.json")]) == 0
    as_hf = load(tmp_path / "tokenizer.json")
    assert as_hf.kind == "hf-bpe" and as_hf.merges == original.merges and as_hf.pattern == PATTERNS["words"]
    assert {t: as_hf.tokens[t] for t in original.tokens} == original.tokens and as_hf.specials == original.specials
    assert main(["convert", str(source), str(tmp_path / "gpt2_encoder.json.gz")]) == 0
    assert (tmp_path / "gpt2_vocab.bpe.gz").is_file()
    as_gpt2 = load(tmp_path / "gpt2_encoder.json.gz")
    assert as_gpt2.kind == "gpt2" and as_gpt2.merges == original.merges
    assert main(["convert", str(source), str(tmp_path / "copy.data"), "--to", "bpeproof"]) == 0
    assert (tmp_path / "copy.data").read_bytes() == source.read_bytes()
    assert "+" in capsys.readouterr().out.splitlines()[1]  # the GPT-2 summary names both files


def test_r50k_to_tokenizer_json_agrees_with_tiktoken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    tokenizers = pytest.importorskip("tokenizers")
    path = VOCABS / "r50k_base.tiktoken.gz"
    if not path.is_file():
        pytest.skip(f"{path} is absent (real vocabularies are not shipped with the project)")
    out = tmp_path / "tokenizer.json"
    assert main(["convert", str(path), str(out)]) == 0  # the pattern is guessed from the name: r50k
    assert "(hf)" in capsys.readouterr().out
    vocab = read_tiktoken(path)
    ranks = {data: token for token, data in vocab.tokens.items()}
    encoding = tiktoken.Encoding(name="r50k", pat_str=PATTERNS["r50k"], mergeable_ranks=ranks, special_tokens={})
    library = tokenizers.Tokenizer.from_file(str(out))
    text = "Hello world, it's 2026: ünïcödé and 数字 tokens   spaced\n\tout! 😀"
    assert library.encode(text).ids == encoding.encode_ordinary(text)


_DIGITS_AND_SPACES = {bytes([byte]): byte for byte in range(256)}
for _token in (b"00", b"000", b"12", b"123", b"  ", b" \n", b"\n\n", b"ab", b" ab", b"'s", b"\xe0\xb3"):
    _DIGITS_AND_SPACES[_token] = len(_DIGITS_AND_SPACES)


@pytest.mark.parametrize("pattern", ["r50k", "cl100k", "o200k"])
def test_converted_tokenizer_json_runs_as_tiktoken_in_its_library(pattern: str, tmp_path: Path) -> None:
    """The pattern is rewritten for Oniguruma (possessive intervals, anchors), so the library cuts as tiktoken."""
    tiktoken = pytest.importorskip("tiktoken")
    tokenizers = pytest.importorskip("tokenizers")
    ranks = tmp_path / "small.tiktoken"
    write_tiktoken(Vocab(tokens={rank: data for data, rank in _DIGITS_AND_SPACES.items()}, merges=[]), ranks)
    out = tmp_path / "tokenizer.json"
    assert main(["convert", str(ranks), str(out), "--pattern", pattern]) == 0
    library = tokenizers.Tokenizer.from_file(str(out))
    encoding = tiktoken.Encoding(name="small", pat_str=PATTERNS[pattern], mergeable_ranks=_DIGITS_AND_SPACES,
                                 special_tokens={})
    for text in ["1234567 0000 12", "ab  \n\n  ab \n", "x   ", " 1\n", "\u0cdc's ab", "a\n\n\n", "٣٣٣٣ 00000"]:
        assert library.encode(text, add_special_tokens=False).ids == encoding.encode_ordinary(text), text


def _tiny_vocab(skip_byte: int | None = None) -> Vocab:
    tokens = {byte: bytes([byte]) for byte in range(256) if byte != skip_byte}
    tokens[256] = b"ab"
    return Vocab(tokens=tokens, merges=[(97, 98, 256)], kind="hf-bpe")


def test_refusals_are_one_line_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Unsupported conversions write nothing and print one line naming the problem: among them every source whose
    library does to text what no byte-level file written here holds (CLIP's cleaning and word ends, llama.cpp's own
    pre-tokenizers, tokens of text, word prefixes and suffixes, a normalizer outside a tokenizer.json)."""
    source, _ = _trained(tmp_path, merges=20)
    ranks = tmp_path / "small.tiktoken"
    write_tiktoken(_tiny_vocab(), ranks)
    no_byte = tmp_path / "no_byte.json"
    write_hf_json(_tiny_vocab(skip_byte=0), no_byte)
    spm = tmp_path / "m.model"
    pieces = [("<unk>", 0.0, 2), ("ab", -1.0, 1), ("a", -2.0, 1), ("b", -3.0, 1)]
    spm.write_bytes(model_proto(pieces, byte_fallback=False))
    clip = Path(__file__).resolve().parents[2] / "fixtures" / "bpe_simple_vocab_16e6.txt.gz"
    qwen2 = tmp_path / "qwen2.gguf"
    qwen2.write_bytes(gguf_bytes(tokenizer_pairs(SMALL_MERGES, pre="qwen2")))
    text_model = tmp_path / "text.json"  # no ByteLevel step: its tokens are text
    text_model.write_text(json.dumps({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}))
    suffixed = tmp_path / "suffixed.json"
    document = json.loads(hf_json_bytes(_tiny_vocab()))
    document["model"]["end_of_word_suffix"] = "</w>"
    suffixed.write_text(json.dumps(document))
    normalized = tmp_path / "nfc.json"
    document = json.loads(hf_json_bytes(_tiny_vocab()))
    document["normalizer"] = {"type": "NFC"}
    normalized.write_text(json.dumps(document))
    before = sorted(path.name for path in tmp_path.iterdir())
    cases = [
        (["convert", str(clip), str(tmp_path / "out.json")], "CLIP's tokenizer cleans and lowercases"),
        (["convert", str(qwen2), str(tmp_path / "out.json")], "its own code for its pre-tokenizer"),
        (["convert", str(text_model), str(tmp_path / "out.tiktoken")], "its tokens are text, not bytes"),
        (["convert", str(suffixed), str(tmp_path / "out2.json")], "end_of_word_suffix"),
        (["convert", str(normalized), str(tmp_path / "out.tiktoken")], "its normalizer (NFC) would be lost"),
        (["convert", str(normalized), str(tmp_path / "encoder.json")], "its normalizer (NFC) would be lost"),
        (["convert", str(source), str(tmp_path / "out.txt")], "cannot tell the output format"),
        (["convert", str(ranks), str(tmp_path / "out.bpeproof.json")], "pass --pattern"),
        (["convert", str(spm), str(tmp_path / "out.tiktoken")], "sentencepiece"),
        (["convert", str(no_byte), str(tmp_path / "out.tiktoken")], "no token stands for the byte 0x00"),
        (["convert", str(no_byte), str(tmp_path / "out.bpeproof.json"), "--pattern", "words"], "byte 0x00"),
        (["convert", str(tmp_path / "absent.json"), str(tmp_path / "out.tiktoken")], "absent.json"),
        (["convert", str(source), str(source), "--to", "bpeproof"], "would replace the input"),
        (["convert", str(ranks), str(tmp_path / "o.bpeproof.json"), "--pattern", "(open"], "--pattern"),
        (["convert", str(source), str(tmp_path / "nodir" / "out.tiktoken")], "nodir"),
    ]
    for argv, expected in cases:
        capsys.readouterr()
        assert main(argv) == 2, argv
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("bpeproof: error: "), captured.err
        assert expected in lines[0], lines[0]
        assert captured.out == ""
    assert sorted(path.name for path in tmp_path.iterdir()) == before
    # A normalizer that changes no text (DeepSeek's empty Sequence) is not lost: the file converts.
    empty = tmp_path / "empty-normalizer.json"
    document = json.loads(hf_json_bytes(_tiny_vocab()))
    document["normalizer"] = {"type": "Sequence", "normalizers": []}
    empty.write_text(json.dumps(document))
    assert main(["convert", str(empty), str(tmp_path / "empty.tiktoken")]) == 0


def test_writer_refusal_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A model the target cannot hold (two tokens with the same bytes, for a rank file) is refused by the
    writer's FormatError, as one line with exit 2."""
    tokens = {byte: bytes([byte]) for byte in range(256)} | {256: b"ab", 257: b"ab"}
    source = tmp_path / "twice.bpeproof.json"
    twice = Tokenizer([(97, 98, 256), (97, 98, 257)], "words")
    twice.save(source)
    assert load(source).tokens == tokens
    assert main(["convert", str(source), str(tmp_path / "out.tiktoken")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("bpeproof: error: ") and "same bytes" in error and "\n" not in error
    assert not (tmp_path / "out.tiktoken").exists()


def test_ids_too_large_for_the_target_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A project file may hold any id; converting one above what the target's library reads (tiktoken: ranks up to
    2**32 - 2; tokenizers: ids up to 2**32 - 1) is one line with exit 2 naming the id and the limit, and writes
    nothing."""
    source = tmp_path / "big.bpeproof.json"
    Tokenizer([(97, 98, 10**100), (97, 97, 2**32 - 1)], "words").save(source)
    before = sorted(path.name for path in tmp_path.iterdir())
    cases = [("out.tiktoken", "token 4294967295: the id is above 4294967294"),  # 10**100 is "1 more"
             ("tokenizer.json", f"token {10**100}: the id is above 4294967295"),
             ("encoder.json", f"token {10**100}: the id is above 4294967295")]
    for name, expected in cases:
        capsys.readouterr()
        assert main(["convert", str(source), str(tmp_path / name)]) == 2, name
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("bpeproof: error: "), captured.err
        assert expected in lines[0] and str(source) in lines[0], lines[0]
        assert lines[0].endswith("(and 1 more)") == (name == "out.tiktoken"), lines[0]
        assert captured.out == ""
    assert sorted(path.name for path in tmp_path.iterdir()) == before
