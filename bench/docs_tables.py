"""The manual's benchmark tables, made from the benchmarks' saved results.

Usage::

    python bench/docs_tables.py            # rewrite every table in docs/ from bench/results/*.json
    python bench/docs_tables.py --check    # exit 1 when a table in docs/ differs from its results

A table in a page of ``docs/`` sits between two markers that name the benchmark script and its results file::

    <!-- bench: bench_load.py results/load.json -->
    | file | ... |
    <!-- /bench -->

and is what ``python bench/SCRIPT --from bench/RESULTS --markdown`` prints: each script renders its own results
(it alone knows what its columns mean), and the results file is the ``--json`` output of one run of it, kept in
``bench/results/`` beside the scripts, so that every number in the manual comes from a run that can be read again.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent / "docs"
BLOCK = re.compile(r"(<!-- bench: (\S+) (\S+) -->\n)(.*?)(<!-- /bench -->)", re.DOTALL)


def render(script: str, results: str) -> str:
    """What ``script`` prints for the saved ``results`` with ``--markdown``."""
    source = HERE / results
    if not source.is_file():
        raise SystemExit(f"bench/{results}: no such results file (run bench/{script} with --json {results} first)")
    done = subprocess.run(
        [sys.executable, str(HERE / script), "--from", str(source), "--markdown"],
        capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"bench/{script} --from {results}: {done.stderr.strip().splitlines()[-1:]}")
    return done.stdout.strip() + "\n"


def refresh(page: str) -> str:
    """``page`` with every benchmark block made again from its results."""
    return BLOCK.sub(lambda match: match[1] + render(match[2], match[3]) + match[5], page)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only say which pages differ from their results")
    args = parser.parse_args(argv)
    stale: list[str] = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        if not BLOCK.search(text):
            continue
        fresh = refresh(text)
        if fresh != text:
            stale.append(page.name)
            if not args.check:
                page.write_text(fresh, encoding="utf-8")
    if args.check and stale:
        print(f"tables differ from bench/results in: {', '.join(stale)} (run python bench/docs_tables.py)")
        return 1
    print(("rewrote: " + ", ".join(stale)) if stale and not args.check else "every table matches its results")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
