"""Loading a vocabulary, and one command-line call: the project against the file's own library, each in a fresh
process, as CPU seconds (user + system of that process, interpreter start-up included), median of several runs.

    python bench/bench_load.py [FILE ...] [--runs N] [--json FILE] [--markdown]
    python bench/bench_load.py --from results.json --markdown       # the docs' table from an earlier run

Default files: the rank files, DeepSeek's tokenizer.json and Mistral's sentencepiece model in ``shared/vocabs``
beside the repository (or above it), and the largest GGUF vocabulary of ``proofs_tests/fixtures/llama_cpp``.

For each file, every measurement a fresh process that loads the file, encodes one line and prints the ids:

- ``library``: the file's own library in a few lines, as its users load it: tiktoken (the rank file read as
  tiktoken reads it, then ``tiktoken.Encoding`` with the pattern as text), Hugging Face ``tokenizers``
  (``Tokenizer.from_str``), ``sentencepiece`` (``SentencePieceProcessor``); none for GGUF (llama.cpp is C++);
- ``same ranks``: for a file that is no rank file, tiktoken's script on its tokens written as one (``bpeproof
  convert --to tiktoken``, ids as ranks, with cl100k's pattern): the load the goals compare every format with;
- ``first``: ``bpeproof.impl.tokenizer.load_tokenizer`` with an empty compiled-vocabulary cache: the file
  read, the tokenizer built and its entry written (``bpeproof.impl.io.vocab_cache``);
- ``no cache``: the same with ``BPEPROOF_NO_CACHE=1``: read and built, nothing written;
- ``cached``: the same with the entry in the cache;
- ``cli``: ``bpeproof encode TEXT --vocab FILE`` (``python -m bpeproof``), the entry in the cache.

``impl x`` is the reference's time ÷ the project's, as in every script of ``bench/``: above 1, bpeproof is
faster (the goals: ``cached`` and ``cli`` at least 1.0, ``first`` at least 0.67, i.e. within 1.5 times
tiktoken's time on the same ranks; a GGUF file cached within 0.3 s).  Each time is the median of ``--runs``
runs, shown with the smallest and largest; the peak resident memory of the median run is shown beside it.
CPU time, not wall time: on a shared machine the wall time counts the other processes too.  The children cache
their bytecode in a private directory (as an installed package has its ``.pyc`` files), which one warm-up run
of each script fills.  Linux and macOS (each process's own usage comes from ``wait4``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = "Hello, wörld! 12345 テスト  def f(x): return x"
DEFAULT = ["r50k_base.tiktoken.gz", "cl100k_base.tiktoken.gz", "o200k_base.tiktoken.gz", "deepseek_tokenizer.json.gz",
           "mistral_tokenizer.model.v1"]
FIXTURES = ROOT / "proofs_tests" / "fixtures" / "llama_cpp"

TIKTOKEN = r"""
import base64, gzip, json, sys, tiktoken
path, pattern, sample = sys.argv[1:4]
data = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
ranks = {base64.b64decode(t): int(r) for t, r in (line.split() for line in data.splitlines() if line)}
enc = tiktoken.Encoding("bench", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
print(json.dumps(enc.encode_ordinary(sample)))
"""

TOKENIZERS = r"""
import gzip, json, sys, tokenizers
path, sample = sys.argv[1], sys.argv[3]
text = gzip.open(path, "rt", encoding="utf-8").read() if path.endswith(".gz") else open(path, encoding="utf-8").read()
tok = tokenizers.Tokenizer.from_str(text)
print(json.dumps(tok.encode(sample, add_special_tokens=False).ids))
"""

SENTENCEPIECE = r"""
import json, sys, sentencepiece
path, sample = sys.argv[1], sys.argv[3]
sp = sentencepiece.SentencePieceProcessor(model_file=path)
print(json.dumps(sp.encode(sample)))
"""

PROJECT = r"""
import json, sys
from bpeproof.impl.tokenizer import load_tokenizer
print(json.dumps(load_tokenizer(sys.argv[1]).encode(sys.argv[2])))
"""


def shared_vocabs() -> Path | None:
    """``shared/vocabs`` next to the repository or to a folder above it (a worktree's)."""
    for parent in ROOT.parents:
        if (parent / "shared" / "vocabs").is_dir():
            return parent / "shared" / "vocabs"
    return None


def library_of(path: Path) -> tuple[str, str] | None:
    """(library name, its script) for a file, None when none loads it here."""
    name = path.name.lower()
    if ".tiktoken" in name:
        return "tiktoken", TIKTOKEN
    if name.endswith((".json", ".json.gz")):
        return "tokenizers", TOKENIZERS
    if ".model" in name:
        return "sentencepiece", SENTENCEPIECE
    return None


def measure(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(CPU seconds, peak resident MB, standard output) of one process, from its own resource usage (``wait4``).
    It runs in the temporary directory: ``python -c`` and ``-m`` look for modules in the current directory first,
    which must not be a checkout other than the one measured (``--tree``)."""
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, env=env,
                                   cwd=tempfile.gettempdir())
        assert process.stdout is not None
        out = process.stdout.read()
        process.stdout.close()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"{' '.join(command[:4])}… failed: {errors.read().decode(errors='replace')[-2000:]}")
    scale = 1 << 20 if sys.platform == "darwin" else 1 << 10  # ru_maxrss: bytes on macOS, KiB on Linux
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / scale, out.decode()


def series(command: list[str], env: dict[str, str], runs: int, before: Any = None) -> dict[str, Any]:
    """``runs`` runs of a command (``before()`` ahead of each): median, smallest and largest CPU seconds."""
    results = []
    for _ in range(runs):
        if before is not None:
            before()
        results.append(measure(command, env))
    times = sorted(seconds for seconds, _, _ in results)
    median = statistics.median(times)
    middle = min(results, key=lambda result: abs(result[0] - median))
    return {"median": median, "min": times[0], "max": times[-1], "runs": times, "peak_mb": middle[1],
            "ids": json.loads(middle[2]) if middle[2].lstrip().startswith("[") else None}


def rank_count(path: Path) -> int:
    """The lines of a rank file (read in pieces: the benchmark's own process stays small, as its children's peak
    memory would otherwise start from its size)."""
    import gzip

    with (gzip.open(path) if path.name.endswith(".gz") else open(path, "rb")) as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def bench_file(path: Path, runs: int, work: Path, tree: Path = ROOT) -> dict[str, Any]:
    from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, guess_pattern

    cache = work / "cache"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPYCACHEPREFIX=str(work / "pycache"), BPEPROOF_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")])))
    uncached = {**env, "BPEPROOF_NO_CACHE": "1"}

    def empty_cache() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    result: dict[str, Any] = {"file": path.name, "bytes": path.stat().st_size}
    library = library_of(path)
    project = [sys.executable, "-c", PROJECT, str(path), SAMPLE]
    cli = [sys.executable, "-m", "bpeproof", "encode", SAMPLE, "--vocab", str(path)]
    measure(project, env)  # warm-up: bytecode and the cache's entry
    measure(cli, env)
    if library is not None:
        name, script = library
        pattern = ""
        if name == "tiktoken":
            pattern = PATTERNS[guess_pattern(str(path), rank_count(path)) or "words"]
        command = [sys.executable, "-c", script, str(path), pattern, SAMPLE]
        measure(command, env)
        result["library"] = {"name": name, **series(command, env, runs)}
    if library is None or library[0] != "tiktoken":
        ranks = work / f"{path.name}.tiktoken"
        converted = subprocess.run([sys.executable, "-m", "bpeproof", "convert", str(path), str(ranks), "--to",
                                    "tiktoken"], env=env, capture_output=True, check=False, cwd=work)
        if converted.returncode == 0:
            command = [sys.executable, "-c", TIKTOKEN, str(ranks), PATTERNS["cl100k"], SAMPLE]
            measure(command, env)
            result["same_ranks"] = {"name": "tiktoken, same ranks", **series(command, env, runs)}
            result["same_ranks"].pop("ids")
    result["first"] = series(project, env, runs, before=empty_cache)
    result["no_cache"] = series(project, uncached, runs)
    measure(project, env)  # the entry again
    result["cached"] = series(project, env, runs)
    result["cli"] = series(cli, env, runs)
    result["cli"]["ids"] = None
    if "library" in result:
        result["same_ids"] = result["library"]["ids"] == result["cached"]["ids"] == result["first"]["ids"]
    for key in ("library", "first", "no_cache", "cached"):
        if key in result:
            result[key].pop("ids")
    return result


REFERENCES = ("library", "same_ranks")
PROJECT_ROWS = (("first", "bpeproof, first load"), ("no_cache", "bpeproof, --no-cache"),
                ("cached", "bpeproof, cached"), ("cli", "bpeproof encode (CLI)"))


def ratio(result: dict[str, Any], key: str, reference: str) -> float | None:
    """The reference's median ÷ the project's (``impl x``)."""
    if reference not in result:
        return None
    return float(result[reference]["median"]) / float(result[key]["median"])


def show(result: dict[str, Any]) -> str:
    lines = [result["file"]]
    rows = [(key, result[key]["name"] + ("" if key == "same_ranks" else " script")) for key in REFERENCES
            if key in result]
    for key, label in [*rows, *PROJECT_ROWS]:
        entry = result[key]
        ratios = [] if key in REFERENCES else [(x, name) for name in REFERENCES
                                               for x in [ratio(result, key, name)] if x is not None]
        ratio_text = ", ".join(f"impl x {x:5.2f} ({'library' if name == 'library' else 'same ranks'})"
                               for x, name in ratios)
        lines.append(f"  {label:24} {entry['median']:6.3f} s  [{entry['min']:.3f}–{entry['max']:.3f}]"
                     f"  {entry['peak_mb']:6.0f} MB  {ratio_text}")
    if "same_ids" in result:
        lines.append(f"  same ids as the library: {'yes' if result['same_ids'] else 'NO'}")
    return "\n".join(lines)


def markdown(results: list[dict[str, Any]]) -> str:
    """The docs' table: CPU seconds (median) and impl x against each reference, a row per reference."""
    lines = ["| file | compared with | its s | first load s (impl x) | --no-cache s (impl x) | cached s (impl x) |"
             " `bpeproof encode` s (impl x) |", "|---|---|---|---|---|---|---|"]
    for result in results:
        references: list[str | None] = [key for key in REFERENCES if key in result] or [None]
        for reference in references:
            cells = []
            for key, _ in PROJECT_ROWS:
                x = ratio(result, key, reference) if reference is not None else None
                cells.append(f"{result[key]['median']:.3f}" + (f" ({x:.2f})" if x is not None else ""))
            name, seconds = ((result[reference]["name"], f"{result[reference]['median']:.3f}") if reference
                             else ("—", "—"))
            lines.append(f"| {result['file']} | {name} | {seconds} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, help="vocabulary files (default: see above)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each measurement (default 5)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every run's numbers as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the docs' table as well")
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE", help="results of an earlier --json run")
    parser.add_argument("--tree", type=Path, default=ROOT, metavar="DIR",
                        help="the checkout whose bpeproof is measured (default: this one): an older commit's, with its"
                        " C extensions built, gives the numbers before a change")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.source is not None:
        document = json.loads(args.source.read_text(encoding="utf-8"))
        print(markdown(document["results"]))
        return 0
    files = [path.resolve() for path in args.files]
    if not files:
        shared = shared_vocabs()
        files = [shared / name for name in DEFAULT if shared is not None and (shared / name).exists()]
        ggufs = sorted(FIXTURES.glob("*.gguf*"), key=lambda path: path.stat().st_size)
        files += [path for path in ggufs if path.name.endswith((".gguf", ".gguf.gz"))][-1:]
    if not files:
        print("no vocabulary files: pass some, or place shared/vocabs beside the repository")
        return 2
    print(__doc__.split("\n\n")[0].replace("\n", " "))
    results = []
    with tempfile.TemporaryDirectory(prefix="bpeproof-bench-load-") as work:
        for path in files:
            result = bench_file(path, args.runs, Path(work), args.tree.resolve())
            print(show(result), flush=True)
            results.append(result)
    try:
        load = os.getloadavg()
    except OSError:  # pragma: no cover - no load average here
        load = (float("nan"),) * 3
    if args.markdown:
        print(markdown(results))
    if args.json is not None:
        document = {"runs": args.runs, "cpus": os.cpu_count(), "load_average": list(load), "sample": SAMPLE,
                    "tree": str(args.tree.resolve()), "results": results}
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
