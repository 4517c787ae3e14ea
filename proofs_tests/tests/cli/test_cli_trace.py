"""``bpeproof trace``: the article's training table from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpeproof.cli import main


def test_trace_of_the_article_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--merges", "5"]) == 0
    out = capsys.readouterr().out
    assert "K = 12 words, N = 64 bytes" in out
    rows = [line.split() for line in out.splitlines() if line[:4].strip().isdigit()]
    assert [row[-3] for row in rows] == ["64", "55", "46", "40", "34", "28"]
    assert "(s, t), (s, low)" in out and rows[-1][-1] == "2.29"


def test_trace_json_unbounded(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert len(table["steps"]) == 12 and table["steps"][-1]["total_tokens"] == 12
    assert table["steps"][3]["tied"] == [["s", "t"], ["s", "low"]]


def test_trace_of_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("ab ab ab bcd bcd bc", encoding="utf-8")
    assert main(["trace", str(corpus), "--merges", "2", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["words"] == 6 and len(table["steps"]) == 3


def test_trace_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", str(tmp_path / "missing.txt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.txt: no such file" in err
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ab \xff cd")
    assert main(["trace", str(bad)]) == 2
    assert "not valid UTF-8 at byte 3" in capsys.readouterr().err
    assert main(["trace", "--merges", "-1"]) == 2
    assert "negative" in capsys.readouterr().err
