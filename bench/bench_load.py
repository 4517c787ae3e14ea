"""Loading a vocabulary: the project's loader against the file's own library, each in a fresh process.

    python bench/bench_load.py [FILE ...]     # default: the rank files and tokenizer.json in ../shared/vocabs

For each file: seconds for the library to read it and be ready to encode (tiktoken: the rank file read as
tiktoken reads it, then ``tiktoken.Encoding``; Hugging Face: ``Tokenizer.from_str``), seconds for
``bpeproof.impl.pipelines.registry.load_tokenizer`` to do the same, and ``impl x``: the project's speed ÷ the library's
(the
library's seconds ÷ the project's), how many times faster bpeproof is, as in every script of ``bench/`` (above 1
faster, below 1 slower); then whether the ids of both on one line of text are equal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "vocabs"
DEFAULT = ["r50k_base.tiktoken.gz", "cl100k_base.tiktoken.gz", "o200k_base.tiktoken.gz", "deepseek_tokenizer.json.gz"]
SAMPLE = "Hello, wörld! 12345 テスト  def f(x): return x"

LIBRARY = r"""
import base64, gzip, json, sys, time
path, sample = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if ".tiktoken" in path:
    import tiktoken
    from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
    name = next(n for n in ("r50k", "cl100k", "o200k") if n in path)
    data = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    ranks = {base64.b64decode(t): int(r) for t, r in (line.split() for line in data.splitlines() if line)}
    enc = tiktoken.Encoding(name, pat_str=PATTERNS[name], mergeable_ranks=ranks, special_tokens={})
    ids = enc.encode_ordinary(sample)
else:
    import tokenizers
    text = gzip.open(path, "rt").read() if path.endswith(".gz") else open(path).read()
    tok = tokenizers.Tokenizer.from_str(text)
    ids = tok.encode(sample, add_special_tokens=False).ids
print(json.dumps({"seconds": time.perf_counter() - start, "ids": ids}))
"""

PROJECT = r"""
import json, sys, time
start = time.perf_counter()
from bpeproof.impl.pipelines.registry import load_tokenizer
tokenizer = load_tokenizer(sys.argv[1])
ids = tokenizer.encode(sys.argv[2])
print(json.dumps({"seconds": time.perf_counter() - start, "ids": ids, "semantics": tokenizer.semantics}))
"""


def run(script: str, path: Path) -> dict[str, object]:
    result = subprocess.run([sys.executable, "-c", script, str(path), SAMPLE], capture_output=True, text=True,
                            check=True)
    value: dict[str, object] = json.loads(result.stdout)
    return value


def main(argv: list[str]) -> int:
    files = [Path(name) for name in argv] or [SHARED / name for name in DEFAULT if (SHARED / name).exists()]
    if not files:
        print("no vocabulary files: pass some, or place ../shared/vocabs beside the repository")
        return 2
    print("impl x: the project's speed ÷ the library's (the library's time ÷ the project's), how many times faster"
          " bpeproof is")
    print(f"{'file':32} {'library s':>10} {'project s':>10} {'impl x':>7}  semantics  same ids")
    for path in files:
        library = min((run(LIBRARY, path) for _ in range(3)), key=lambda r: float(str(r["seconds"])))
        project = min((run(PROJECT, path) for _ in range(3)), key=lambda r: float(str(r["seconds"])))
        lib_s, own_s = float(str(library["seconds"])), float(str(project["seconds"]))
        print(f"{path.name:32} {lib_s:10.2f} {own_s:10.2f} {lib_s / own_s:6.2f}x  {project['semantics']!s:10} "
              f"{library['ids'] == project['ids']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
