"""The command line's messages: a subcommand's usage error shows that subcommand's usage line, counts agree with
their number, and the checker's claim line names the claim once."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from bpeproof.cli import build_parser, main
from bpeproof.impl.io.wording import count, token_count
from bpeproof.proofs_tests.checker.functions import CheckResult
from bpeproof.proofs_tests.checker.properties import CLAIMS


def _subcommands() -> list[str]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(action.choices)


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err.splitlines()


@pytest.mark.parametrize("command", _subcommands())
def test_an_unknown_option_shows_the_subcommands_usage(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``bpeproof COMMAND --nonsense``: the usage line and the error are the subcommand's, not the top level's."""
    err = _usage_error([command, "--nonsense"], capsys)
    assert err[0].startswith(f"usage: bpeproof {command} "), err
    assert err[-1].startswith(f"bpeproof {command}: error: "), err


def test_unknown_arguments_after_valid_ones_are_the_subcommands_error(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(["encode", "--vocab", "x.tiktoken", "--nonsense", "hi"], capsys)
    assert err[0].startswith("usage: bpeproof encode ")
    assert err[-1] == "bpeproof encode: error: unrecognized arguments: --nonsense"
    err = _usage_error(["audit"], capsys)
    assert err[0].startswith("usage: bpeproof audit ") and err[-1].endswith("required: PATH")
    err = _usage_error(["audit", "x.tiktoken", "extra"], capsys)
    assert err[0].startswith("usage: bpeproof audit ") and err[-1].endswith("unrecognized arguments: extra")


def test_top_level_usage_errors_stay_top_level(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(["--nonsense"], capsys)
    assert err[0].startswith("usage: bpeproof [-h]")
    assert err[-1] == "bpeproof: error: unrecognized arguments: --nonsense"


def test_count_wording() -> None:
    assert [count(n, "example") for n in (0, 1, 2)] == ["0 examples", "1 example", "2 examples"]
    assert count(1, "special token") == "1 special token" and count(3, "special token") == "3 special tokens"
    assert token_count(50256, 0) == "50256 tokens" and token_count(1, 0) == "1 token"
    assert token_count(128000, 3) == "128000 tokens (127997 ordinary + 3 special)"


def test_trace_counts_one_merge_in_the_singular(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--word", "ab", "--merges", "3"]) == 0
    out = capsys.readouterr().out
    assert "corpus: K = 1 word, N = 2 bytes; bound N − K = 1 merge" in out
    assert "\n1 merge; steps counted as in prop-bpe-training-cost:" in out


def _found(claim: str, function: str = "enc") -> CheckResult:
    return CheckResult(found=True, targets={function: "mymodule:f"}, examples=1, seconds=0.1, seed=1,
                       backend="hypothesis", function=function, claim=claim, detail="the lists differ",
                       input={"rules": [], "data": b"a"}, expected=[97], actual=[98])


@pytest.mark.parametrize("key", sorted(CLAIMS))
def test_claim_line_names_the_claim_once(key: str) -> None:
    """``claim    : def-bpe — <statement>``: the statement without the id that ``CLAIMS`` writes before it."""
    claim, _, function = key.partition("/")
    report = _found(claim, function or "enc").report()
    (line,) = [line for line in report.splitlines() if line.startswith("  claim    : ")]
    statement = CLAIMS[key].removeprefix(f"{claim}: ")
    assert line == f"  claim    : {claim} — {statement}"
    assert line.count(claim) == 1 + statement.count(claim)
    assert "after 1 example in" in report


def test_claim_line_without_a_statement_is_the_id_alone() -> None:
    (line,) = [line for line in _found("thm-unlisted").report().splitlines() if line.startswith("  claim")]
    assert line == "  claim    : thm-unlisted"


def _error_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1, captured.err
    return captured.err.strip()


@pytest.mark.parametrize(
    "argv",
    [
        ["encode", "hi", "--vocab", "{missing}"],
        ["decode", "1", "--vocab", "{missing}"],
        ["explain", "hi", "--vocab", "{missing}"],
        ["audit", "{missing}"],
        ["convert", "{missing}", "out.tiktoken"],
        ["train", "{missing}", "--merges", "2", "-o", "tok.json"],
        ["trace", "{missing}"],
        ["trace", "--vocab", "{missing}"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_missing_file_is_named_in_one_wording(argv: list[str], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "nothing.json")
    line = _error_line([part.format(missing=missing) for part in argv], capsys)
    assert line == f"bpeproof: error: {missing}: no such file", line


def test_a_missing_output_folder_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower lowest\n", encoding="utf-8")
    target = tmp_path / "nodir" / "tok.json"
    line = _error_line(["train", str(corpus), "--merges", "2", "-o", str(target)], capsys)
    assert line == f"bpeproof: error: {target}: cannot write it: the folder {target.parent} does not exist", line
    assert not target.parent.exists()
