"""Real text for every user: the multilingual sample shipped with the package, and ``--corpus FILE…``."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tomllib
import unicodedata
from pathlib import Path

import pytest

from bpeproof.proofs_tests.checker.texts import SAMPLE, TextGenerator, corpus_lines, read_corpus
from bpeproof.proofs_tests.checker.tokenizer_check import TargetError, check_tokenizer
from bpeproof.proofs_tests.fixtures.vocab import write_rank_file

ROOT = Path(__file__).resolve().parents[3]
#: Scripts the shipped sample must hold, by a word in their characters' Unicode names.
SCRIPTS = ["LATIN", "CYRILLIC", "GREEK", "ARABIC", "HEBREW", "DEVANAGARI", "BENGALI", "TAMIL", "THAI", "CJK",
           "HIRAGANA", "KATAKANA", "HANGUL", "GEORGIAN", "ARMENIAN", "ETHIOPIC"]


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_rank_file(tmp_path_factory.mktemp("vocab") / "trained.tiktoken"))


def test_the_sample_is_many_scripts_and_code() -> None:
    text = SAMPLE.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    assert 40 <= len(lines) <= 200
    names = {unicodedata.name(char, "") for char in text}
    for script in SCRIPTS:
        assert any(script in name for name in names), script
    assert "def " in text and "{" in text and "\t" in text and "\u00a0" in text


def test_the_sample_is_installed_with_the_package() -> None:
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]
    assert "data/*.txt" in package_data["bpeproof.proofs_tests.checker"]
    assert SAMPLE.parent.name == "data" and SAMPLE.parent.parent.name == "checker"


def test_the_sample_is_the_default_corpus() -> None:
    """Without --corpus the real-text lines are the package's sample, wherever the check runs."""
    corpus_lines.cache_clear()
    assert corpus_lines() == tuple(line for line in SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
                                   if line.strip())
    generator = TextGenerator(1)
    assert "corpus" in generator.sources and set(generator.lines) == set(corpus_lines())


def test_read_corpus_reads_plain_and_gzip_lines(tmp_path: Path) -> None:
    plain = tmp_path / "a.txt"
    plain.write_text("first line\n\n  \nsecond ünï\r\n", encoding="utf-8")
    packed = tmp_path / "b.txt.gz"
    packed.write_bytes(gzip.compress("日本語の行\n".encode()))
    assert read_corpus([str(plain), str(packed)]) == ("first line\n", "second ünï\r\n", "日本語の行\n")


@pytest.mark.parametrize(("content", "message"), [
    (None, "no such file"),
    (b"ok\n\xff\xfe bad\n", "not UTF-8 text (byte 0xff at offset 3)"),
    (b"\n \n", "holds no line of text"),
    (b"not gzip at all", "cannot be read"),
])
def test_bad_corpus_files_are_one_error(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / ("bad.txt.gz" if content == b"not gzip at all" else "bad.txt")
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(TargetError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_corpus([str(path)])


def test_bad_corpus_on_the_command_line_is_exit_2(vocab: str, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.run(
        [sys.executable, "-m", "bpeproof.cli", "check", "--tokenizer", "bpeproof.proofs_tests.planted.ports:encode",
         "--vocab", vocab, "--pattern", "cl100k", "--corpus", str(tmp_path / "missing.txt"), "--seconds", "5"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert process.returncode == 2 and process.stdout == ""
    assert process.stderr.strip().splitlines() == [f"bpeproof: error: --corpus {tmp_path / 'missing.txt'}: no such"
                                                   " file"]


def test_corpus_lines_are_checked(vocab: str, tmp_path: Path) -> None:
    """A port wrong only on a word of the given corpus is caught through the corpus source."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"line {n} of plain text\n" for n in range(50)) + "the zqxj word\n", encoding="utf-8")
    module = tmp_path / "zqxj_port.py"
    module.write_text("from bpeproof.proofs_tests.planted import ports\n"
                      "def encode(text):\n"
                      "    return [] if 'zqxj' in text else ports.encode(text)\n", encoding="utf-8")
    result = check_tokenizer(f"{module}:encode", vocab=vocab, pattern="cl100k", seconds=60, seed=1, examples=3000,
                             corpus=[str(corpus)], weights={"corpus": 50.0})
    assert result.found and result.source == "corpus" and result.text is not None and "zqxj" in result.text, \
        result.report()
