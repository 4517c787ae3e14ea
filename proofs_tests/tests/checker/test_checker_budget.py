"""The budget of a text → ids check: ``seconds`` bounds the whole run, and a process's first call may load.

A port that hangs on many texts cost a time limit per text when its batches were run text by text, and a check
ran far past ``--seconds``; confirming and shrinking came on top.  A port that loads its vocabulary on its first
call got ``timeout`` on its first text, in every fresh process.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bpeproof.proofs_tests.checker.tokenizer_check import TargetError, check_tokenizer
from bpeproof.proofs_tests.fixtures.vocab import write_rank_file

#: What a run may take past its budget: the last call's limit, the process's end, the report.
SLACK = 3.0


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_rank_file(tmp_path_factory.mktemp("vocab") / "trained.tiktoken"))


def _port(tmp_path: Path, body: str) -> str:
    path = tmp_path / "budget_port.py"
    path.write_text("import time\nfrom bpeproof.proofs_tests.planted import ports\n" + body, encoding="utf-8")
    return f"{path}:encode"


def test_a_port_that_hangs_often_ends_within_the_budget(vocab: str, tmp_path: Path) -> None:
    port = _port(tmp_path, "def encode(text):\n    if 'e' in text:\n        time.sleep(30)\n"
                           "    return ports.encode(text)\n")
    # 8 s: the budget covers the start of the processes too, which on a loaded 2-core machine took 5 s before any
    # text was sent (then the run ends on time, but has nothing to report).
    began = time.monotonic()
    result = check_tokenizer(port, vocab=vocab, pattern="cl100k", seconds=8, seed=1, call_timeout=0.5)
    took = time.monotonic() - began
    assert result.found and "timeout" in [group.key for group in result.groups], result.report()
    assert took < 8 + SLACK, f"{took:.1f} s for a budget of 8 s"


def test_the_first_call_may_load(vocab: str, tmp_path: Path) -> None:
    """A port whose first call takes 2 s (it loads) with calls limited to 0.5 s: no finding with the load limit;
    with too short a one, one error line that says which limit to raise (it was a timeout on its first text, in
    every fresh process)."""
    port = _port(tmp_path, "LOADED = []\ndef encode(text):\n    if not LOADED:\n        time.sleep(2)\n"
                           "        LOADED.append(True)\n    return ports.encode(text)\n")
    loads = check_tokenizer(port, vocab=vocab, pattern="cl100k", seconds=60, examples=400, seed=1,
                            call_timeout=0.5)
    assert loads.ran and not loads.found, loads.report()
    assert loads.note is None or "earlier text" not in loads.note
    with pytest.raises(TargetError, match=r"its first call .* --load-timeout"):
        check_tokenizer(port, vocab=vocab, pattern="cl100k", seconds=20, examples=400, seed=1, call_timeout=0.5,
                        load_timeout=0.5)
    with pytest.raises(TargetError, match="load_timeout must be a positive number"):
        check_tokenizer(port, vocab=vocab, pattern="cl100k", seconds=5, load_timeout=0)
