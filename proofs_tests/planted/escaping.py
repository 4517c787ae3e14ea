"""Planted ports that start processes which escape their process group: nothing they start may outlive a check.

Each answers correctly (the pure-Python port of ``ports``, ``enc_correct`` of the function checker), but on its
first call it leaves a process behind that a process-group kill misses:

* ``setsid``: a child that calls ``setsid()`` (a session and group of its own) and runs forever;
* ``double-fork``: a child that forks a grandchild and exits at once, the grandchild calling ``setsid()`` and
  running forever as an orphan (what a daemon does).

The process left behind runs ``python -c <loop> TAG``, ``TAG`` taken from the environment variable
``BPEPROOF_PLANTED_TAG``, so that a test finds any survivor by its command line in ``/proc``
(``proofs_tests/tests/checker/test_containment.py``).  As ``--tokenizer``: ``escaping:encode_setsid`` and
``escaping:encode_double_fork``; as ``--enc``: ``escaping:enc_setsid`` and ``escaping:enc_double_fork``; as
``--cmd``: ``python -m bpeproof.proofs_tests.planted.escaping setsid|double-fork``, a program speaking the line
protocol.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable

from bpeproof.proofs_tests.planted import ports
from bpeproof.proofs_tests.planted._common import RuleLike, enc_correct

#: The environment variable holding the tag that marks the processes left behind.
TAG_VARIABLE = "BPEPROOF_PLANTED_TAG"
_LOOP = "import time\nwhile True: time.sleep(0.05)"
_started: list[str] = []


def _run_forever() -> None:
    """In a forked child: leave the worker's session, then become the marked endless process."""
    os.setsid()
    tag = os.environ.get(TAG_VARIABLE, "bpeproof-planted-escapee")
    os.execv(sys.executable, [sys.executable, "-c", _LOOP, tag])


def escape(how: str) -> None:
    """Leave one process behind (once per process), as ``how`` (``setsid`` or ``double-fork``) says."""
    if _started:
        return
    _started.append(how)
    pid = os.fork()
    if pid == 0:
        try:
            if how == "double-fork" and os.fork() != 0:
                os._exit(0)  # the middle process: its child becomes an orphan
            _run_forever()
        finally:
            os._exit(0)
    if how == "double-fork":
        os.waitpid(pid, 0)


def encode_setsid(text: str) -> list[int]:
    escape("setsid")
    return ports.encode(text)


def encode_double_fork(text: str) -> list[int]:
    escape("double-fork")
    return ports.encode(text)


def enc_setsid(rules: Iterable[RuleLike], data: bytes) -> list[int]:
    escape("setsid")
    return enc_correct(rules, data)


def enc_double_fork(rules: Iterable[RuleLike], data: bytes) -> list[int]:
    escape("double-fork")
    return enc_correct(rules, data)


def main() -> None:
    """A ``--cmd`` program: the line protocol, answered by the correct port, with a process left behind."""
    how = sys.argv[1] if len(sys.argv) > 1 else "setsid"
    escape(how)
    out = sys.stdout
    out.write(json.dumps({"protocol": "bpeproof-check", "version": 1, "name": f"escaping {how}",
                          "decode": False, "special": False}) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if request is None:
            break
        out.write(json.dumps({"results": [ports.encode(text) for text in request.get("encode", [])]}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
