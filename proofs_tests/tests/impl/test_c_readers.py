"""The loaders' C readers (``impl/_c/_fastload.c``, ``bpeproof.impl.io.c_readers``) against their Python paths, on
generated input: the same values, or the same error, for well-formed files and for damaged ones."""

from __future__ import annotations

import base64
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof.impl.formats.tiktoken_file import parse_tiktoken
from bpeproof.impl.io import c_readers
from bpeproof.impl.io.errors import FormatError

FAST = c_readers.c_readers()
pytestmark = pytest.mark.skipif(FAST is None, reason="the C readers are not built")

FUZZ = settings(max_examples=300)


def both(monkeypatch: pytest.MonkeyPatch, read: Callable[[], Any]) -> tuple[Any, Any]:
    """What ``read`` gives (or the message it raises) with the C readers, then with the Python paths."""
    results = []
    for use in (True, False):
        monkeypatch.setattr(c_readers, "USE_C_READERS", use)
        try:
            results.append(read())
        except FormatError as error:
            results.append(("FormatError", str(error)))
    return results[0], results[1]


# -- tiktoken rank files -------------------------------------------------------------------------------------

#: What a damaged rank file may hold: separators, base64 and digit characters, padding, other bytes.
_NOISE = [b" ", b"\t", b"\r", b"\n", b"\r\n", b"=", b"==", b"A", b"/", b"+", b"-", b"0", b"9", b"\x0b", b"\x0c",
          b"\x1c", b"\xc3\xa9", b"\x00", b"12345678901234567890123456789012"]


def _rank_file(tokens: list[bytes], ranks: list[int], separator: bytes, ending: bytes) -> bytes:
    lines = [base64.b64encode(token) + separator + str(rank).encode() for token, rank in zip(tokens, ranks,
                                                                                             strict=True)]
    return ending.join(lines) + ending


@st.composite
def rank_files(draw: st.DrawFn) -> bytes:
    tokens = draw(st.lists(st.binary(min_size=0, max_size=7), min_size=0, max_size=30))
    ranks = draw(st.lists(st.integers(0, 10**25), min_size=len(tokens), max_size=len(tokens)))
    data = _rank_file(tokens, ranks, draw(st.sampled_from([b" ", b"\t", b"  "])),
                      draw(st.sampled_from([b"\n", b"\r\n"])))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(data)))
        lines = data.split(b"\n")
        if draw(st.booleans()) and len(lines) > 1:  # a line given twice
            line = draw(st.sampled_from(lines))
            data += line + b"\n"
        elif draw(st.booleans()):
            data = data[:at] + draw(st.sampled_from(_NOISE)) + data[at:]
        else:
            data = data[:at] + data[at + 1 :]
    return data


@FUZZ
@given(rank_files())
def test_rank_files_read_alike(data: bytes) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fast, slow = both(monkeypatch, lambda: parse_tiktoken("x.tiktoken", data))
    assert fast == slow
    if isinstance(fast, dict):
        assert list(fast.items()) == list(slow.items())  # the file's order too


def test_rank_file_reads_a_well_formed_file_in_one_pass() -> None:
    randomly = random.Random(5)
    tokens = list(dict.fromkeys(randomly.randbytes(randomly.randint(1, 9)) for _ in range(2000)))
    ranks = randomly.sample(range(10**6), len(tokens))
    data = _rank_file(tokens, ranks, b" ", b"\n")
    found = FAST.rank_file(data)
    assert found == dict(zip(tokens, ranks, strict=True)) and list(found) == tokens
    assert FAST.rank_file(data.replace(b"\n", b"\r\n", 3)) == found
    assert FAST.rank_file(b"=  5\n") is None  # the empty token: the line reader's
    assert FAST.rank_file(b"QQ== 1\n") == {b"A": 1}
    assert FAST.rank_file(b"QQ== 1\nQQ== 1\n") is None  # a token given twice, even with the same rank
    assert FAST.rank_file(b"QR== 1\n") is None  # not canonical: bits left over that b2a_base64 never sets
