"""A ``bpeproof check --cmd`` adapter in Python: tiktoken on a rank file, over the line protocol.

    bpeproof check --cmd 'python examples/adapters/tiktoken_adapter.py' --vocab cl100k_base.tiktoken

The protocol (README, "Check a tokenizer in any language"): write one hello line, then
answer each request line with one reply line, until stdin ends.  Copy this file and
replace ``make_encoding`` to check your own tokenizer.  The vocabulary file and the
pattern come from the environment the checker sets (``BPEPROOF_CHECK_VOCAB``,
``BPEPROOF_CHECK_PATTERN``) or from the command line: ``tiktoken_adapter.py FILE [PATTERN]``.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import sys
from typing import Any


def make_encoding(path: str, pattern: str) -> Any:
    import tiktoken

    from bpeproof.impl.pre_tokenizers.patterns import PATTERNS  # the regexes of r50k, cl100k and o200k, by name

    raw = open(path, "rb").read()  # noqa: SIM115 - read once
    if path.endswith(".gz"):
        raw = gzip.decompress(raw)
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in raw.splitlines() if line)}
    return tiktoken.Encoding("adapter", pat_str=PATTERNS.get(pattern, pattern), mergeable_ranks=ranks,
                             special_tokens={})


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else os.environ["BPEPROOF_CHECK_VOCAB"]
    pattern = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("BPEPROOF_CHECK_PATTERN", "cl100k")
    encoding = make_encoding(path, pattern)
    out = sys.stdout
    out.write(json.dumps({"protocol": "bpeproof-check", "version": 1, "name": "tiktoken " + pattern,
                          "decode": True, "special": False}) + "\n")
    out.flush()
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
        out.write(json.dumps({"results": results}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
