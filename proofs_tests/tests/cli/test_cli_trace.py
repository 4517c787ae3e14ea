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


def test_trace_of_a_vocabulary_replays_its_merges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The project's file trained on the article's corpus, replayed on it: the training table again."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("slow slow slow slow slower slower lowest lowest lowest newest newest newest\n", encoding="utf-8")
    vocab = tmp_path / "tok.json"
    assert main(["train", str(corpus), "--merges", "5", "-o", str(vocab)]) == 0
    capsys.readouterr()
    assert main(["trace", "--vocab", str(vocab), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["semantics"] == "sequential" and table["article"] == {"differ": [], "unapplied": 0}
    assert [row["total_tokens"] for row in table["steps"]] == [64, 55, 46, 40, 34, 28]
    assert [(row["merge"], row["count"]) for row in table["steps"][1:]] == [
        ("r1", 9), ("r2", 9), ("r3", 6), ("r4", 6), ("r5", 6)]
    assert main(["trace", "--vocab", str(vocab), "--merges", "2"]) == 0
    out = capsys.readouterr().out
    assert "5 merges of the file fire on the corpus (2 rows shown); 28 ids" in out


def test_trace_of_a_rank_file_marks_the_whole_piece_lookup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bpeproof.proofs_tests.fixtures.vocab import UNREACHABLE, write_rank_file

    vocab = write_rank_file(tmp_path / "ranks.tiktoken", merges=60, unreachable=True)
    word = UNREACHABLE[-1].decode()
    assert main(["trace", "--vocab", str(vocab), "--pattern", "cl100k", "--word", word, "--word", "the",
                 "--word", word, "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    whole = table["steps"][1]
    assert whole["merge"] == "whole piece" and whole["count"] == 2 * (len(word) - 1)
    (differ,) = table["article"]["differ"]
    assert differ["piece"] == word and len(differ["ids"]) == 1 and len(differ["article_ids"]) > 1


def test_trace_of_a_vocabulary_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--pattern", "cl100k"]) == 2
    assert "--pattern: only with --vocab" in capsys.readouterr().err
    assert main(["trace", "--vocab", str(tmp_path / "none.json")]) == 2
    assert f"{tmp_path / 'none.json'}: no such file" in capsys.readouterr().err
    ranks = tmp_path / "small.tiktoken"
    ranks.write_text("YQ== 0\nYg== 1\nYWI= 2\n", encoding="ascii")
    assert main(["trace", "--vocab", str(ranks), "--word", "ab"]) == 2  # a rank file needs a pattern
    assert "--pattern" in capsys.readouterr().err
    assert main(["trace", "--vocab", str(ranks), "--pattern", "words", "--word", ""]) == 2
    assert "the corpus is empty" in capsys.readouterr().err
