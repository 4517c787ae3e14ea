"""``bpeproof demo`` prints the article's §7 results, computed by the project's own code."""

from __future__ import annotations

import pytest

from bpeproof.cli import main


def test_demo_reproduces_the_article(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    expected = [
        "256 b'l' + b'o' -> b'lo'",
        "257 b'lo' + b'w' -> b'low'",
        "258 b'e' + b's' -> b'es'",
        "259 b's' + b'low' -> b'slow'",
        "260 b'es' + b't' -> b'est'",
        "[b'slow', b'est']",
        "roundtrip ok: 2000",
        "merges: [(b'a', b'b'), (b'b', b'c'), (b'bc', b'd')]",
        "vocab : [b'a', b'ab', b'b', b'bc', b'bcd', b'c', b'd']",
        "BPE   : [b'ab', b'c', b'd'] 3",
        "DP    : [b'a', b'bcd'] 2",
        "あ = e3 81 82 / い = e3 81 84",
        "merge: e3 + 81",
        "ids  : [256, 130] ['e381', '82']",
        "256 -> UnicodeDecodeError: unexpected end of data",
        "130 -> UnicodeDecodeError: invalid start byte",
        "whole: あ",
    ]
    printed = [line for line in lines if not line.startswith("==")]
    assert printed[: len(expected)] == expected


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage" in capsys.readouterr().out
