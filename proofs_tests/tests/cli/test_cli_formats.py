"""Every command that reads a vocabulary, on every format the loader reads, plain and gzip: each works, or refuses
in one line naming what it lacks (exit 2); a damaged gzip file is one line naming the file (exit 2) in every
command.  The files are the small ones of ``proofs_tests.fixtures.vocab_files`` (no ``../shared`` needed)."""

from __future__ import annotations

import json
import shutil
import xml.dom.minidom
from pathlib import Path

import pytest

from bpeproof.cli import main
from bpeproof.proofs_tests.fixtures.vocab_files import FORMATS, write_vocab

TEXT = "Hello world, it's the best of times"

#: The semantics each format runs (``Tokenizer.semantics``).
SEMANTICS = {"bpeproof": "sequential", "tiktoken": "tiktoken", "tokenizer.json": "hf-bpe", "gpt2": "hf-bpe",
             "clip": "hf-bpe", "sentencepiece": "sentencepiece-bpe", "tekken": "tiktoken", "gguf": "llama.cpp"}

#: Command × format that refuse, with what the one line says they lack.
REFUSED = {
    ("convert", "sentencepiece"): "merges characters, not bytes",
    ("convert", "clip"): "CLIP's tokenizer cleans and lowercases the text",
    ("audit", "clip"): "the audit does not cover CLIP's merges file",
    ("audit", "gguf"): "the audit does not cover GGUF files",
}

COMMANDS = ("encode", "decode", "explain", "explain-svg", "trace", "convert", "audit", "check")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, bool], Path]:
    root = tmp_path_factory.mktemp("vocabs")
    return {(kind, gz): write_vocab(kind, root / f"{kind}{'-gz' if gz else ''}", gz=gz)
            for kind in FORMATS for gz in (False, True)}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _encoded(vocab: Path, capsys: pytest.CaptureFixture[str]) -> list[int]:
    code, out, err = _run(["encode", TEXT, "--vocab", str(vocab), "--json"], capsys)
    assert code == 0, err
    ids: list[int] = json.loads(out)["ids"]
    return ids


@pytest.mark.parametrize("kind", FORMATS)
def test_explain_on_each_format(kind: str, files: dict[tuple[str, bool], Path], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    """explain shows each pre-token's merges under the file's own semantics, ends in encode's ids, compares
    with the article's definitions (except on the project's own files, which are the article's), and draws
    the trees as well-formed SVG."""
    vocab = files[(kind, False)]
    ids = _encoded(vocab, capsys)
    svg = tmp_path / "trees.svg"
    code, out, err = _run(["explain", TEXT, "--vocab", str(vocab), "--json", "--svg", str(svg)], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["semantics"] == SEMANTICS[kind] and report["ids"] == ids and "encoded" not in report
    steps = [step for word in report["words"] for step in word["steps"]]
    assert steps and all(step["label"] and len(step["pair"]) == 2 for step in steps)
    for word in report["words"]:
        if kind == "bpeproof":
            assert "article" not in word
        elif word["article"] is not None:
            assert word["article"]["same"]  # the small files are proper: the article's def-bpe agrees
    xml.dom.minidom.parseString(svg.read_text(encoding="utf-8"))
    code, out, err = _run(["explain", TEXT, "--vocab", str(vocab)], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[-1 if kind == "bpeproof" else -2] == f"ids: {ids}"
    if kind != "bpeproof":
        assert lines[0].startswith("semantics: ") and lines[-1].startswith("the article's def-bpe")


def _argv(command: str, vocab: Path, folder: Path, ids: list[int]) -> list[str]:
    path = str(vocab)
    if command == "check":
        module = folder / f"reference_{abs(hash(path))}.py"
        module.write_text(f"import bpeproof\n_tokenizer = bpeproof.load({path!r})\n\n\ndef encode(text):\n"
                          "    return _tokenizer.encode(text)\n", encoding="utf-8")
        return ["check", "--tokenizer", f"{module}:encode", "--vocab", path, "--examples", "3", "--seed", "1",
                "--seconds", "60"]
    return {
        "encode": ["encode", TEXT, "--vocab", path],
        "decode": ["decode", *map(str, ids), "--vocab", path],
        "explain": ["explain", TEXT, "--vocab", path],
        "explain-svg": ["explain", TEXT, "--vocab", path, "--svg", str(folder / "trees.svg")],
        "trace": ["trace", "--vocab", path, "--word", "hello", "--word", "the best"],
        "convert": ["convert", path, str(folder / "out.tiktoken")],
        "audit": ["audit", path, "--samples", "20"],
    }[command]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize("kind", FORMATS)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_on_every_format(command: str, kind: str, gz: bool, files: dict[tuple[str, bool], Path],
                                       tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vocab = files[(kind, gz)]
    ids = _encoded(vocab, capsys) if command == "decode" else []
    code, out, err = _run(_argv(command, vocab, tmp_path, ids), capsys)
    lack = REFUSED.get((command, kind))
    if lack is None:
        assert code == 0, err
        assert out.strip()
        if command == "decode":
            # The tokens' bytes joined: CLIP's end each word with a space, sentencepiece's start with its dummy prefix.
            expected = {"clip": "hello world , it 's the best of times ", "sentencepiece": " " + TEXT}.get(kind, TEXT)
            assert out == expected
        return
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"bpeproof: error: {vocab}: ") and lack in err, err


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "flipped":
        data[len(data) // 2] ^= 0x10  # one bit of the deflate data
    else:
        del data[len(data) * 2 // 3 :]
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["flipped", "truncated"])
@pytest.mark.parametrize("kind", FORMATS)
@pytest.mark.parametrize("command", COMMANDS)
def test_damaged_gzip_is_one_line_in_every_command(command: str, kind: str, how: str,
                                                   files: dict[tuple[str, bool], Path], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # A copy of the module's gzip file(s) of the format, damaged here (writing CLIP's anew took 0.6 s a test).
    source = files[(kind, True)]
    (tmp_path / "vocab").mkdir()
    for packed in source.parent.glob("*.gz"):
        shutil.copy(packed, tmp_path / "vocab")
    vocab = tmp_path / "vocab" / source.name
    for packed in (tmp_path / "vocab").glob("*.gz"):  # GPT-2's pair: both files damaged, the first one read named
        _damage(packed, how)
    code, out, err = _run(_argv(command, vocab, tmp_path, [72]), capsys)
    assert code == 2 and out == "", err
    assert err.count("\n") == 1 and "corrupt or truncated gzip data" in err, err
    assert err.startswith(f"bpeproof: error: {vocab}: "), err


#: GGUF files of llama.cpp's tokenizers over text with U+2581 spaces (reduced to what their vectors need), by kind.
LLAMA_CPP_TEXT = {"llama-spm": "llama.cpp-spm", "phi-3": "llama.cpp-spm", "gemma-4": "llama.cpp"}
LLAMA_CPP_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "llama_cpp"


@pytest.mark.parametrize("kind", sorted(LLAMA_CPP_TEXT))
def test_explain_and_trace_on_llama_cpp_text_files(kind: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """llama.cpp's SPM (llama-spm, phi-3) and its BPE over text (Gemma 4): explain, as text, JSON and SVG, ends
    in encode's ids under the file's semantics; trace --vocab replays the file's merges."""
    vocab = LLAMA_CPP_FIXTURES / f"ggml-vocab-{kind}.gguf.gz"
    text = "Hello world, it's the best of times 🦙"
    code, out, err = _run(["encode", text, "--vocab", str(vocab), "--json"], capsys)
    assert code == 0, err
    ids = json.loads(out)["ids"]
    svg = tmp_path / "trees.svg"
    code, out, err = _run(["explain", text, "--vocab", str(vocab), "--json", "--svg", str(svg)], capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["semantics"] == LLAMA_CPP_TEXT[kind] and report["ids"] == ids and "encoded" not in report
    assert [step for word in report["words"] for step in word["steps"]]
    xml.dom.minidom.parseString(svg.read_text(encoding="utf-8"))
    code, out, err = _run(["explain", text, "--vocab", str(vocab)], capsys)
    assert code == 0, err
    assert f"ids: {ids}" in out.splitlines() and out.splitlines()[-1].startswith("the article's def-bpe")
    code, out, err = _run(["trace", "--vocab", str(vocab), "--word", "hello", "--word", "the best"], capsys)
    assert code == 0 and out.strip(), err
