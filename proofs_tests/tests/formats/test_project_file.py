"""The project's tokenizer file has one reader and one writer (``impl.formats.project_file``): ``Tokenizer.load``,
``encode``, ``audit`` and ``convert`` read the same files the same way, version 2 and gzip included."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from bpeproof.cli import main
from bpeproof.impl.formats import FormatError, load
from bpeproof.impl.pre_tokenizers.hf_splits import SplitStep
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.spec.types import Rule

TEXT = "ab 12 abab"


def _version_2(tmp_path: Path) -> Path:
    steps = [SplitStep(r"\p{N}{1,3}"), SplitStep(r" ?\p{L}+|\s+")]
    tokenizer = Tokenizer([Rule(97, 98, 256), Rule(256, 256, 257)], "words", {"<e>": 900}, pretokenizer=steps)
    path = tmp_path / "tok.json"
    tokenizer.save(path)
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == 2
    return path


@pytest.mark.parametrize("compressed", [False, True])
def test_every_command_reads_version_2_and_gzip(tmp_path: Path, compressed: bool,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = _version_2(tmp_path)
    expected = Tokenizer.load(path).encode(TEXT)
    if compressed:
        gz = tmp_path / "tok.json.gz"
        gz.write_bytes(gzip.compress(path.read_bytes()))
        path.unlink()
        path = gz
    assert Tokenizer.load(path).encode(TEXT) == expected
    assert main(["encode", TEXT, "--vocab", str(path)]) == 0
    assert capsys.readouterr().out.split() == [str(token) for token in expected]
    vocab = load(path)
    assert vocab.kind == "bpeproof" and [step.type for step in vocab.pre_tokenizers] == ["Split", "Split"]
    assert main(["audit", str(path), "--quiet", "--samples", "20"]) == 0
    out = tmp_path / "copy.bpeproof.json"
    assert main(["convert", str(path), str(out)]) == 0
    assert Tokenizer.load(out).encode(TEXT) == expected  # the split steps survive the round trip


def test_a_key_given_twice_is_refused_by_every_reader(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Python's json keeps the last of two equal keys: a file with two "rules" would give other ids silently."""
    text = Tokenizer([Rule(97, 98, 256)], "words").to_json()
    path = tmp_path / "twice.json"
    path.write_text(text.replace('"rules": [', '"rules": [[98, 97, 256]], "rules": [', 1), encoding="utf-8")
    with pytest.raises(FormatError, match="rules: the key occurs twice"):
        Tokenizer.load(path)
    with pytest.raises(FormatError, match="rules: the key occurs twice"):
        load(path)
    for argv in (["encode", "ab", "--vocab", str(path)], ["audit", str(path)],
                 ["convert", str(path), str(tmp_path / "x.tiktoken")]):
        assert main(argv) == 2
        assert "the key occurs twice" in capsys.readouterr().err


def test_writer_is_the_tokenizers_own(tmp_path: Path) -> None:
    """``convert`` to the project's format writes what ``Tokenizer.save`` writes for the same tokenizer."""
    path = _version_2(tmp_path)
    out = tmp_path / "again.bpeproof.json"
    assert main(["convert", str(path), str(out)]) == 0
    assert out.read_bytes() == path.read_bytes()
