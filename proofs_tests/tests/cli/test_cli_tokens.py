"""``bpeproof train``, ``encode``, ``decode`` and ``explain`` from the command line, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpeproof import spec
from bpeproof.cli import main

SHARED = Path(__file__).resolve().parents[4] / "shared"
CORPUS = "slow slow slow slow slower slower lowest lowest lowest newest newest newest\n"


@pytest.fixture
def vocab(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    out = tmp_path / "tok.json"
    assert main(["train", str(corpus), "--merges", "5", "-o", str(out), "--special", "<|end|>=1000"]) == 0
    assert "learned 5 merges" in capsys.readouterr().out
    return out


def test_train_learns_what_the_spec_learns(vocab: Path) -> None:
    saved = json.loads(vocab.read_text(encoding="utf-8"))
    words = spec.corpus_from_text(CORPUS)
    assert [tuple(rule) for rule in saved["rules"]] == [tuple(rule) for rule in spec.train(words, 5)]
    assert saved["special_tokens"] == {"<|end|>": 1000}


def test_encode_decode_round_trip(vocab: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["encode", "slowest lower<|end|>", "--vocab", str(vocab), "--specials"]) == 0
    ids = [int(x) for x in capsys.readouterr().out.split()]
    assert ids[:2] == [259, 260] and ids[-1] == 1000
    assert main(["decode", *map(str, ids), "--vocab", str(vocab)]) == 0
    assert capsys.readouterr().out == "slowest lower<|end|>"


def test_explain_shows_the_article_steps(vocab: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    svg = tmp_path / "tree.svg"
    assert main(["explain", "slowest", "--vocab", str(vocab), "--json", "--svg", str(svg)]) == 0
    report = json.loads(capsys.readouterr().out)
    (word,) = report["words"]
    assert [" ".join(step["after"]) for step in word["steps"]] == [
        "s lo w e s t", "s low e s t", "s low es t", "slow es t", "slow est"]
    assert word["tokens"] == ["slow", "est"]
    picture = svg.read_text(encoding="utf-8")
    assert picture.startswith("<svg") and "slow (4)" in picture and "est (5)" in picture


def test_errors_are_one_line(vocab: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["encode", "x", "--vocab", str(tmp_path / "none.json")]) == 2
    assert "none.json: no such file" in capsys.readouterr().err
    assert main(["decode", "12", "abc", "--vocab", str(vocab)]) == 2
    assert "'abc' is not a token id" in capsys.readouterr().err
    assert main(["decode", "227", "--vocab", str(vocab)]) == 2
    assert "not valid UTF-8" in capsys.readouterr().err
    assert main(["decode", "227", "--vocab", str(vocab), "--replace"]) == 0
    assert capsys.readouterr().out == "\ufffd"
    assert main(["train", str(tmp_path / "none.txt"), "--merges", "3", "-o", str(tmp_path / "x.json")]) == 2
    assert not (tmp_path / "x.json").exists()
    assert "none.txt: no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "bpeproof-tokenizer", "version": 1}', encoding="utf-8")
    assert main(["encode", "x", "--vocab", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json" in err


def test_failed_training_keeps_the_old_file(vocab: Path, tmp_path: Path) -> None:
    before = vocab.read_bytes()
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    assert main(["train", str(empty), "--merges", "3", "-o", str(vocab)]) == 2
    assert vocab.read_bytes() == before


@pytest.mark.skipif(not (SHARED / "vocabs" / "cl100k_base.tiktoken.gz").exists(), reason="needs ../shared/vocabs")
def test_encode_with_a_rank_file_matches_tiktoken(capsys: pytest.CaptureFixture[str]) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    from bpeproof.impl.formats.tiktoken_file import load_tiktoken_ranks
    from bpeproof.impl.pre_tokenizers.patterns import PATTERNS

    path = SHARED / "vocabs" / "cl100k_base.tiktoken.gz"
    text = "Tokenization: バイト対符号化 (BPE) — 2,000 round trips ✓"
    reference = tiktoken.Encoding("cl100k", pat_str=PATTERNS["cl100k"], mergeable_ranks=load_tiktoken_ranks(path),
                                  special_tokens={})
    assert main(["encode", text, "--vocab", str(path)]) == 0
    assert [int(x) for x in capsys.readouterr().out.split()] == reference.encode_ordinary(text)


@pytest.mark.parametrize("ids", ["[1e400]", "[" * 100_000, "[104.9, 101.2]", "[true, 104]", "[1,,2]", "-1", "１２",
                                 "[104] 101", "104 abc"])
def test_decode_takes_integers_only(vocab: Path, ids: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Anything but integer ids is one error line and exit 2: no traceback, no float or boolean read as an id."""
    assert main(["decode", ids, "--vocab", str(vocab)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1 and "Traceback" not in captured.err


def test_decode_of_a_rank_file_needs_no_pattern(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ranks = tmp_path / "small.tiktoken"
    ranks.write_text("YQ== 0\nYg== 1\nYWI= 2\n", encoding="ascii")
    assert main(["decode", "[2, 0]", "--vocab", str(ranks)]) == 0
    assert capsys.readouterr().out == "aba"
    assert main(["encode", "ab", "--vocab", str(ranks)]) == 2  # encoding does need one
    assert "--pattern" in capsys.readouterr().err


def test_svg_is_well_formed_xml_whatever_the_text(vocab: Path, tmp_path: Path) -> None:
    """Control characters cannot stand in XML: they are written as escapes, so the picture always parses."""
    import xml.dom.minidom

    svg = tmp_path / "tree.svg"
    assert main(["explain", "slow\x01est \x1f<&>\x0b\"'", "--vocab", str(vocab), "--svg", str(svg)]) == 0
    picture = svg.read_text(encoding="utf-8")
    xml.dom.minidom.parseString(picture)
    assert "\\x01" in picture and "\x01" not in picture


def test_explain_columns_align_with_wide_characters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The token column starts at the same terminal column whatever the rule's characters (CJK take two)."""
    from bpeproof.impl.explain import display_width, explain, render_text
    from bpeproof.impl.tokenizer import Tokenizer

    corpus = tmp_path / "cjk.txt"
    corpus.write_text("日本語 日本語 日本 日本 本語 ab ab\n" * 3, encoding="utf-8")
    vocab = tmp_path / "cjk.json"
    assert main(["train", str(corpus), "--merges", "8", "-o", str(vocab)]) == 0
    explanation = explain(Tokenizer.load(vocab), "日本語ab")
    rows = [line for line in render_text(explanation).splitlines() if line.startswith("  r")]
    steps = [step for word in explanation.words for step in word.steps]
    assert len(rows) == len(steps) >= 4
    assert any(display_width(row) != len(row) for row in rows)  # some rows hold wide characters
    for row, step in zip(rows, steps, strict=True):
        tokens = " ".join(step.tokens)
        assert row.endswith(tokens) and display_width(row) - display_width(tokens) == 33, row
    assert display_width("日本") == 4 and display_width("e\u0301") == 1


def test_explain_marks_the_whole_piece_lookup_and_the_article(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A rank file with a token only tiktoken's whole-piece look-up gives: explain shows the merges, the look-up
    that decides, and that the article's def-bpe on the recovered merge list gives other tokens."""
    from bpeproof.proofs_tests.fixtures.vocab import UNREACHABLE, write_rank_file

    vocab = write_rank_file(tmp_path / "ranks.tiktoken", merges=60, unreachable=True)
    word = UNREACHABLE[-1].decode()
    svg = tmp_path / "tree.svg"
    assert main(["explain", f"{word} the", "--vocab", str(vocab), "--pattern", "cl100k", "--svg", str(svg)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("semantics: tiktoken: the whole pre-token if it is a token")
    assert any(line.startswith(f"  whole piece: {word} is token ") and "taken whole instead of the merged" in line
               for line in lines)
    assert any(line.startswith("  ≠ the article's def-bpe on the recovered merge list: ") for line in lines)
    assert lines[-2] == "the article's def-bpe on the recovered merge list: other tokens for 1 of 2 pieces"
    assert f"{word} (whole)" in svg.read_text(encoding="utf-8")
    assert main(["explain", word, "--vocab", str(vocab), "--pattern", "cl100k", "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["words"]
    assert entry["whole"]["token"] == word and entry["article"]["same"] is False
    assert entry["ids"] == [entry["whole"]["id"]] != entry["article"]["ids"]
