r"""Encoding speed: bpeproof's Tokenizer against tiktoken, bpe-openai and riptoken, side by side in one run.

Usage::

    python bench/bench_encode.py [--mb 4] [--vocabs cl100k,o200k] [--texts multilingual,code] [--runs 5]
                                 [--systems impl,tiktoken,bpe-openai,riptoken] [--json FILE] [--markdown]
    python bench/bench_encode.py --from FILE --markdown        # the manual's tables from an earlier run

What is measured.  Two texts of ``--mb`` megabytes each, cut into documents of 1 to 12 KB at line ends (what a
service encodes, one call per document): *multilingual*, equal shares of the English, Japanese, Chinese, Vim
tutor (some thirty languages) and emoji corpora of ``../shared/corpora``, and *code*, the Python standard
library; without those corpora, generated text of the same shape.  Every system encodes every document of a
text with the vocabulary's own pattern, and is measured in a fresh process of its own:

* *cold*: the first pass over the documents in that process (for bpeproof, an empty word cache);
* *warm*: the median of three more passes (a long-running process, whose word cache has seen the words);
* *batch*: the documents given at once to the batch call (bpeproof ``Tokenizer.encode_batch(num_workers=N)``,
  tiktoken and bpe-openai ``encode_ordinary_batch(num_threads=N)``, riptoken's with ``RAYON_NUM_THREADS=N``) on
  1 and on 2 workers, each a fresh process, cold.

Making the tokenizer from the rank file's tokens is outside every time and reported apart (``bench_load.py``
measures loading files), with the peak resident memory of the processes (the rank table and the documents
included).  The whole set of processes is run ``--runs`` times, round after round, so that a change in the load of
the machine touches every system alike; each ratio is computed within a round and reported as the median over the
rounds with the lowest and highest beside it.  ``impl x PEER`` is the peer's time ÷ bpeproof's: above 1 bpeproof is
faster.  The ids of every system are compared with tiktoken's (a digest of all ids); a difference is printed and
makes the exit status 1.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TEXTS = {
    "multilingual": ["en_shakespeare", "ja_manpages", "zh_CN_manpages", "multi_vim_tutors", "unicode_emoji-test"],
    "code": ["code_python311_stdlib"],
}
PEERS = ("tiktoken", "bpe-openai", "riptoken")
WARM_PASSES = 3
#: The words of the generated text, used when the corpora are not present.
GENERATED_WORDS = (
    "the of and to in is that for it as with was on be by this are from at or an tokenizer merge rule 語彙 符号化"
    " 復号 文字列 トークン 規則 頻度 def return import class self None True False print range len 😀 é naïve"
    " Straße 数字 123 4567"
)


# ---------------------------------------------------------------------------
# The documents
# ---------------------------------------------------------------------------


def generated(kind: str, size: int, rng: random.Random) -> str:
    lines: list[str] = []
    total = 0
    while total < size:
        vocabulary = GENERATED_WORDS.split(' ')
        words = rng.choices(vocabulary, [1 / (rank + 1) for rank in range(len(vocabulary))], k=rng.randint(3, 14))
        line = ("    " + "_".join(words) + "(x)" if kind == "code" else " ".join(words) + ".") + "\n"
        lines.append(line)
        total += len(line.encode("utf-8"))
    return "".join(lines)


def documents(kind: str, megabytes: float) -> tuple[list[str], str]:
    """The documents of a text, and where the text comes from."""
    size = int(megabytes * 1_000_000)
    rng = random.Random(f"{kind} {megabytes}")
    paths = [SHARED / "corpora" / f"{name}.txt.gz" for name in TEXTS[kind]]
    if all(path.exists() for path in paths):
        share = size // len(paths)
        parts = []
        for path in paths:
            data = gzip.decompress(path.read_bytes())[:share]
            parts.append(data[: data.rfind(b"\n") + 1].decode("utf-8"))
        text, origin = "".join(parts), "corpora " + ", ".join(TEXTS[kind])
    else:
        text, origin = generated(kind, size, rng), "generated (../shared/corpora is not present)"
    lines = text.splitlines(keepends=True)
    docs: list[str] = []
    start = 0
    while start < len(lines):
        want = rng.randint(1_000, 12_000)
        end, taken = start, 0
        while end < len(lines) and taken < want:
            taken += len(lines[end])
            end += 1
        docs.append("".join(lines[start:end]))
        start = end
    return docs, origin


# ---------------------------------------------------------------------------
# One system in one process
# ---------------------------------------------------------------------------


def _peak_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1e6 if sys.platform == "darwin" else peak / 1e3


def _encoder(system: str, vocab: str, ranks: dict[bytes, int], workers: int) -> Any:
    """A function from a list of documents to their ids, for one system (made here, outside the times)."""
    from bpeproof.impl.pre_tokenizers.patterns import PATTERNS

    pattern = PATTERNS[vocab]
    if system == "impl":
        from bpeproof.impl.tokenizer import Tokenizer

        tokenizer = Tokenizer.from_tiktoken_ranks(ranks, vocab)
        if workers:
            return lambda docs: tokenizer.encode_batch(docs, num_workers=workers)
        return lambda docs: [tokenizer.encode(doc) for doc in docs]
    if system == "tiktoken":
        import tiktoken

        encoding = tiktoken.Encoding(name=vocab, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    elif system == "bpe-openai":
        import bpe_openai

        encoding = bpe_openai.get_encoding(f"{vocab}_base")
    elif system == "riptoken":
        import riptoken

        core = riptoken.CoreBPE(ranks, {}, pattern)
        if workers:
            return core.encode_ordinary_batch  # its threads: RAYON_NUM_THREADS, set by the parent
        return lambda docs: [core.encode_ordinary(doc) for doc in docs]
    else:
        raise SystemExit(f"unknown system {system!r}")
    if workers:
        return lambda docs: encoding.encode_ordinary_batch(docs, num_threads=workers)
    return lambda docs: [encoding.encode_ordinary(doc) for doc in docs]


def child(system: str, vocab: str, docs_path: str, workers: int) -> dict[str, Any]:
    from bpeproof.impl.formats.tiktoken_file import load_tiktoken_ranks

    docs = json.loads(Path(docs_path).read_text(encoding="utf-8"))
    ranks = load_tiktoken_ranks(SHARED / "vocabs" / f"{vocab}_base.tiktoken.gz")
    begin = time.perf_counter()
    encode = _encoder(system, vocab, ranks, workers)
    setup = time.perf_counter() - begin
    encode([""])  # what a first call imports or starts (a module, a thread pool) is not part of the times
    passes: list[float] = []
    digest = ""
    for index in range(1 if workers else 1 + WARM_PASSES):
        begin = time.perf_counter()
        ids = encode(docs)
        passes.append(time.perf_counter() - begin)
        if index == 0:
            digest = hashlib.sha256(b"".join(array("I", doc_ids).tobytes() for doc_ids in ids)).hexdigest()[:16]
    return {"setup_s": setup, "passes_s": passes, "digest": digest, "peak_mb": _peak_mb()}


# ---------------------------------------------------------------------------
# The parent: every process, round after round
# ---------------------------------------------------------------------------


def _measure(system: str, vocab: str, docs_path: Path, workers: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONHASHSEED="0", TOKENIZERS_PARALLELISM="false",
               RAYON_NUM_THREADS=str(max(workers, 1)))
    command = [sys.executable, __file__, "--child", system, "--vocabs", vocab, "--docs", str(docs_path),
               "--workers", str(workers)]
    return run_child(command, env)


def run_child(command: list[str], env: dict[str, str]) -> dict[str, Any]:
    """A measuring child process's JSON result (its last line), or its last error line as ``{"error": …}``."""
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def load_average() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def run(args: argparse.Namespace) -> dict[str, Any]:
    systems = args.systems.split(",")
    cases = [(vocab, kind) for vocab in args.vocabs.split(",") for kind in args.texts.split(",")]
    measurements: list[dict[str, Any]] = []
    texts: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as work:
        paths: dict[str, Path] = {}
        for kind in sorted({kind for _, kind in cases}):
            docs, origin = documents(kind, args.mb)
            paths[kind] = Path(work) / f"{kind}.json"
            paths[kind].write_text(json.dumps(docs), encoding="utf-8")
            texts[kind] = {"origin": origin, "documents": len(docs), "bytes": sum(len(d.encode()) for d in docs)}
            print(f"{kind}: {texts[kind]['bytes'] / 1e6:.2f} MB in {len(docs)} documents, {origin}", flush=True)
        plan = [(vocab, kind, system, workers) for vocab, kind in cases for system in systems for workers in (0, 1, 2)]
        for round_number in range(args.runs):
            print(f"round {round_number + 1} of {args.runs} (load {load_average():.2f})", flush=True)
            for vocab, kind, system, workers in plan:
                result = _measure(system, vocab, paths[kind], workers)
                result.update(round=round_number, vocab=vocab, text=kind, system=system, workers=workers)
                measurements.append(result)
                if "error" in result:
                    print(f"  {system} {vocab} {kind} workers={workers}: {result['error']}", flush=True)
    return {
        "benchmark": "encode",
        "command": "python bench/bench_encode.py " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "load_after": load_average()},
        "runs": args.runs,
        "texts": texts,
        "measurements": measurements,
    }


# ---------------------------------------------------------------------------
# Reading the results
# ---------------------------------------------------------------------------


def spread(values: list[float]) -> str:
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def _times(results: dict[str, Any], vocab: str, kind: str, system: str, workers: int, which: str) -> dict[int, float]:
    """Seconds per round of one measurement: ``which`` is cold, warm or setup."""
    out: dict[int, float] = {}
    for item in results["measurements"]:
        if (item["vocab"], item["text"], item["system"], item["workers"]) != (vocab, kind, system, workers):
            continue
        if "error" in item:
            continue
        passes = item["passes_s"]
        value = {"cold": passes[0], "warm": statistics.median(passes[1:]) if len(passes) > 1 else passes[0],
                 "setup": item["setup_s"]}[which]
        out[item["round"]] = value
    return out


def _ratios(mine: dict[int, float], theirs: dict[int, float]) -> list[float]:
    return [theirs[round_number] / mine[round_number] for round_number in sorted(mine) if round_number in theirs]


def differences(results: dict[str, Any]) -> list[str]:
    """Every system whose ids differ from tiktoken's on some text."""
    reference = {(m["vocab"], m["text"]): m["digest"] for m in results["measurements"]
                 if m["system"] == "tiktoken" and "digest" in m}
    return sorted({f"{m['system']} (workers {m['workers']}) on {m['vocab']} {m['text']}"
                   for m in results["measurements"]
                   if "digest" in m and (m["vocab"], m["text"]) in reference
                   and m["digest"] != reference[m["vocab"], m["text"]]})


def markdown(results: dict[str, Any]) -> str:
    """The manual's tables: speed and ratios per vocabulary and text, then the batch calls."""
    cases = sorted({(m["vocab"], m["text"]) for m in results["measurements"]},
                   key=lambda case: (case[0], case[1] != "multilingual"))
    systems = list(dict.fromkeys(m["system"] for m in results["measurements"]))
    peers = [system for system in systems if system != "impl"]
    lines = ["| vocabulary, text | pass | impl MB/s | " + " | ".join(f"impl x {peer}" for peer in peers) + " |",
             "|---|---|---|" + "---|" * len(peers)]
    for vocab, kind in cases:
        size = results["texts"][kind]["bytes"] / 1e6
        for which in ("cold", "warm"):
            mine = _times(results, vocab, kind, "impl", 0, which)
            speed = spread([size / seconds for seconds in mine.values()])
            ratios = [spread(_ratios(mine, _times(results, vocab, kind, peer, 0, which))) for peer in peers]
            lines.append(f"| {vocab}, {kind} | {which} | {speed} | " + " | ".join(ratios) + " |")
    lines += ["", "| vocabulary, text | batch, 1 worker MB/s | 2 workers MB/s | impl 2 ÷ 1 worker | "
              + " | ".join(f"impl x {peer}, 2 each" for peer in peers) + " |",
              "|---|---|---|---|" + "---|" * len(peers)]
    for vocab, kind in cases:
        size = results["texts"][kind]["bytes"] / 1e6
        one = _times(results, vocab, kind, "impl", 1, "cold")
        two = _times(results, vocab, kind, "impl", 2, "cold")
        ratios = [spread(_ratios(two, _times(results, vocab, kind, peer, 2, "cold"))) for peer in peers]
        lines.append(f"| {vocab}, {kind} | {spread([size / s for s in one.values()])} | "
                     f"{spread([size / s for s in two.values()])} | {spread(_ratios(two, one))} | "
                     + " | ".join(ratios) + " |")
    vocabs = sorted({vocab for vocab, _ in cases})
    lines += ["", "| system | tokenizer made from the ranks, s (" + " / ".join(vocabs) + ") | peak MB, one document "
              "at a time | peak MB, batch on 2 workers |", "|---|---|---|---|"]
    for system in systems:
        setups = [spread(list(_times(results, vocab, cases[0][1], system, 0, "setup").values())) for vocab in vocabs]
        peaks = {workers: [m["peak_mb"] for m in results["measurements"]
                           if m["system"] == system and m["workers"] == workers and "peak_mb" in m]
                 for workers in (0, 2)}
        lines.append(f"| {system} | {' / '.join(setups)} | "
                     + " | ".join(f"{max(values):.0f}" if values else "—" for values in peaks.values()) + " |")
    texts = "; ".join(f"{kind}: {info['bytes'] / 1e6:.1f} MB in {info['documents']} documents"
                      for kind, info in results["texts"].items())
    lines += ["", f"Median of {results['runs']} rounds (lowest–highest), {texts}; {results['machine']['cores']} cores, "
              f"Python {results['machine']['python']}, {results['date']}. Identical ids: "
              + ("every system." if not differences(results) else "NOT " + ", ".join(differences(results)) + ".")]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=4.0, help="megabytes of each text (default 4)")
    parser.add_argument("--vocabs", default="cl100k,o200k", help="rank files of ../shared/vocabs (default both)")
    parser.add_argument("--texts", default="multilingual,code")
    parser.add_argument("--systems", default="impl," + ",".join(PEERS))
    parser.add_argument("--runs", type=int, default=5, help="rounds of every measurement (default 5)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every measurement as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the manual's tables")
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE", help="results of an earlier --json run")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--docs", help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.vocabs, args.docs, args.workers)))
        return 0
    if args.source is not None:
        results = json.loads(args.source.read_text(encoding="utf-8"))
    else:
        for vocab in args.vocabs.split(","):
            if not (SHARED / "vocabs" / f"{vocab}_base.tiktoken.gz").exists():
                print(f"{SHARED / 'vocabs'}/{vocab}_base.tiktoken.gz is not present: the benchmark needs the rank "
                      "files", file=sys.stderr)
                return 2
        results = run(args)
        if args.json is not None:
            args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(markdown(results))
    return 1 if differences(results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
