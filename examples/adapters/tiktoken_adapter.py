"""A ``bpeproof check --cmd`` adapter in Python: tiktoken on a rank file, over the line protocol.

    bpeproof check --cmd 'python examples/adapters/tiktoken_adapter.py' --vocab cl100k_base.tiktoken

The protocol (README, "Check a tokenizer in any language"): write one hello line, then
answer each request line with one reply line, until stdin ends.  Copy this file and
replace ``make_encoding`` to check your own tokenizer.  The vocabulary file and the
pattern come from the environment the checker sets (``BPEPROOF_CHECK_VOCAB``,
``BPEPROOF_CHECK_PATTERN``: the checker always sets the pattern it compares against) or
from the command line: ``tiktoken_adapter.py FILE PATTERN``.  What the adapter cannot
honour (no pattern, a pattern tiktoken cannot compile, a file that is not a tiktoken
rank file) it refuses with a hello that holds an ``error``, rather than checking
something else than what the checker compares against.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import os
import sys
from typing import Any

HELLO = {"protocol": "bpeproof-check", "version": 1}


def make_encoding(path: str, pattern: str) -> Any:
    """tiktoken's encoding of the rank file ``path`` with ``pattern`` (a name or a regular expression);
    ``ValueError`` for what it cannot do."""
    import tiktoken

    from bpeproof.impl.pre_tokenizers.patterns import PATTERNS  # the regexes of r50k, cl100k, o200k, by name

    with open(path, "rb") as handle:
        raw = handle.read()
    if path.endswith(".gz"):
        raw = gzip.decompress(raw)
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        try:
            if len(fields) != 2:
                raise ValueError
            ranks[base64.b64decode(fields[0], validate=True)] = int(fields[1])
        except (ValueError, binascii.Error):
            raise ValueError(f"{path} is not a tiktoken rank file (line {number} is not 'base64 rank')") from None
    if pattern.isidentifier() and pattern not in PATTERNS:
        raise ValueError(f"no pattern is named {pattern!r} ({', '.join(PATTERNS)} or a regex)")
    regex = PATTERNS.get(pattern, pattern)
    try:
        return tiktoken.Encoding("adapter", pat_str=regex, mergeable_ranks=ranks, special_tokens={})
    except Exception as error:  # tiktoken's regex engine refuses the expression
        raise ValueError(f"tiktoken cannot use the pattern {pattern!r}: {error}") from None


def main() -> None:
    out = sys.stdout

    def send(value: Any) -> None:
        out.write(json.dumps(value) + "\n")
        out.flush()

    path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BPEPROOF_CHECK_VOCAB")
    pattern = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("BPEPROOF_CHECK_PATTERN")
    if not path or not pattern:
        send({**HELLO, "error": "tiktoken_adapter.py needs a tiktoken rank file and a pattern (BPEPROOF_CHECK_VOCAB"
              " and BPEPROOF_CHECK_PATTERN, or FILE PATTERN on the command line); it was given"
              f" {path or 'no file'} and {pattern or 'no pattern'}"})
        return
    try:
        encoding = make_encoding(path, pattern)
    except (OSError, ValueError) as error:
        send({**HELLO, "error": f"tiktoken_adapter.py: {error}"})
        return
    send({**HELLO, "name": "tiktoken " + pattern[:40], "decode": True, "special": False})
    for line in sys.stdin:
        request = json.loads(line)
        if request is None:
            break
        results: list[Any] = []
        for item in request.get("encode", []):
            try:
                results.append(encoding.encode_ordinary(item))
            except Exception as error:
                results.append({"error": f"{type(error).__name__}: {error}"})
        for item in request.get("decode", []):
            try:
                results.append(encoding.decode(item, errors="strict"))
            except Exception as error:
                results.append({"error": f"{type(error).__name__}: {error}"})
        send({"results": results})


if __name__ == "__main__":
    main()
