"""Corpora are read in one place (``impl.io.corpus``): plain or gzip, the same one-line errors for every command."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from bpeproof.cli import main
from bpeproof.impl.io.corpus import iter_lines, read_text
from bpeproof.impl.io.errors import FormatError

TEXT = "slow slower lowest newest\nあい\n"


def _files(tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "good.txt.gz"
    good.write_bytes(gzip.compress(TEXT.encode()))
    raw = good.read_bytes()
    files = {
        "good": good,
        "plain": tmp_path / "plain.txt",
        "truncated": tmp_path / "truncated.txt.gz",
        "crc": tmp_path / "crc.txt.gz",
        "not-gzip": tmp_path / "text.txt.gz",
        "not-utf8": tmp_path / "latin1.txt",
        "directory": tmp_path / "dir",
        "missing": tmp_path / "missing.txt",
    }
    files["plain"].write_text(TEXT, encoding="utf-8")
    files["truncated"].write_bytes(raw[:20])
    files["crc"].write_bytes(raw[:-8] + b"\0\0\0\0" + raw[-4:])
    files["not-gzip"].write_text("plain text", encoding="utf-8")
    files["not-utf8"].write_bytes("caf\xe9\n".encode("latin-1"))
    files["directory"].mkdir()
    return files


PROBLEMS = {
    "truncated": "corrupt or truncated gzip data",
    "crc": "corrupt or truncated gzip data: CRC check failed",
    "not-gzip": "corrupt or truncated gzip data",
    "not-utf8": "not valid UTF-8 at byte 3",
    "directory": "is a directory, not a file",
    "missing": "no such file",
}


def test_plain_and_gzip_read_alike(tmp_path: Path) -> None:
    files = _files(tmp_path)
    assert read_text(files["good"]) == read_text(files["plain"]) == TEXT
    assert list(iter_lines([str(files["good"]), str(files["plain"])])) == TEXT.splitlines(keepends=True) * 2


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_each_problem_is_named(tmp_path: Path, problem: str) -> None:
    path = _files(tmp_path)[problem]
    with pytest.raises(FormatError) as info:
        read_text(path)
    assert str(info.value).startswith(f"{path}: {PROBLEMS[problem]}")


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
@pytest.mark.parametrize("command", ["train", "trace", "audit"])
def test_every_command_says_it_in_one_line(tmp_path: Path, problem: str, command: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    files = _files(tmp_path)
    vocab = tmp_path / "tok.json"
    assert main(["train", str(files["plain"]), "--merges", "3", "-o", str(vocab)]) == 0
    capsys.readouterr()
    path = str(files[problem])
    argv = {
        "train": ["train", path, "--merges", "3", "-o", str(tmp_path / "out.json")],
        "trace": ["trace", path, "--merges", "1"],
        "audit": ["audit", str(vocab), "--corpus", path],
    }[command]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{path}: {PROBLEMS[problem]}" in err[0], err
    assert not (tmp_path / "out.json").exists()


def test_trace_reads_gzip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = _files(tmp_path)
    assert main(["trace", str(files["good"]), "--merges", "1"]) == 0
    from_gzip = capsys.readouterr().out
    assert main(["trace", str(files["plain"]), "--merges", "1"]) == 0
    assert capsys.readouterr().out == from_gzip
