r"""Encoding speed on every format bpeproof loads, against each file's own library and the Rust peers.

Usage::

    python bench/bench_formats.py [--mb 1.5] [--formats deepseek,mistral-sp,...] [--texts multilingual,code]
                                  [--runs 3] [--json FILE] [--markdown]
    python bench/bench_formats.py --quick                      # 0.3 MB a text, one round, for a first look
    python bench/bench_formats.py --from FILE --markdown       # the manual's tables from an earlier run

What is measured.  Every case of ``format_files.py`` (rank files, ``tokenizer.json`` files of each pre-tokenizer
shape, a sentencepiece model, GGUF vocabularies, CLIP's merges) encodes two texts of ``--mb`` megabytes each cut
into documents of about 4 KB at line ends: *multilingual* (English, Japanese, Chinese, the Vim tutors' thirty
languages, emoji sequences) and *code* (Python's standard library), from ``../shared/corpora`` (generated text of
the same shape without them).  bpeproof is ``bpeproof.load(FILE).encode(doc, allowed_special=
tok.library_allowed_special)``, the file's own library's answer; each peer encodes as its library does by default
(``tokenizers`` and ``fastokens`` ``encode(doc, add_special_tokens=False)``, tiktoken ``encode_ordinary``,
sentencepiece ``encode``).  First every system encodes every text once and its ids are compared with bpeproof's:
a peer that differs is reported (the first document that differs) and not timed.  Then, ``--runs`` rounds, each
system in a fresh process of its own:

* *cold*: the first pass over the documents, a fresh tokenizer (made outside the time);
* *warm*: the second pass over the same documents, in the same process;
* *batch*: every document at once to the batch call on 1 and on 2 workers, each a fresh process, cold (bpeproof
  ``encode_batch(num_workers=N)``; ``tokenizers``/``fastokens`` ``encode_batch`` with ``RAYON_NUM_THREADS=N``;
  tiktoken ``encode_ordinary_batch(num_threads=N)``; sentencepiece ``encode(docs, num_threads=N)``).

The one-document passes are CPU seconds of the process (``time.process_time``); a batch is wall seconds (what
two workers save), with the CPU seconds of the process and its children kept beside in the JSON.  ``impl x PEER``
is the peer's time ÷ bpeproof's within a round, the median over the rounds with the lowest and highest beside it.
Peak resident memory is each process's (the tokenizer and the documents included).
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
import sys
import tempfile
import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_encode import TEXTS, generated, load_average, run_child  # noqa: E402
from format_files import SHARED, Case, added_tokens, cases  # noqa: E402
from format_tables import markdown, mismatches  # noqa: E402

DOC_BYTES = 4_000
#: One added token is put before every this many lines of the ``added`` text.
ADDED_EVERY = 8

Encode = Callable[[list[str]], list[list[int]]]


# ---------------------------------------------------------------------------
# The documents
# ---------------------------------------------------------------------------


def documents(kind: str, megabytes: float) -> tuple[list[str], str]:
    """The documents of a text (about ``DOC_BYTES`` each, cut at line ends), and where the text comes from."""
    size = int(megabytes * 1_000_000)
    paths = [SHARED / "corpora" / f"{name}.txt.gz" for name in TEXTS[kind]]
    if all(path.exists() for path in paths):
        parts = []
        for path in paths:
            data = gzip.decompress(path.read_bytes())[: size // len(paths)]
            parts.append(data[: data.rfind(b"\n") + 1].decode("utf-8"))
        text, origin = "".join(parts), "corpora " + ", ".join(TEXTS[kind])
    else:
        text = generated(kind, size, random.Random(f"{kind} {megabytes}"))
        origin = "generated (../shared/corpora is not present)"
    docs: list[str] = []
    current: list[str] = []
    taken = 0
    for line in text.splitlines(keepends=True):
        current.append(line)
        taken += len(line.encode("utf-8"))
        if taken >= DOC_BYTES:
            docs.append("".join(current))
            current, taken = [], 0
    if current:
        docs.append("".join(current))
    return docs, origin


def with_added_tokens(docs: list[str], tokens: list[str]) -> list[str]:
    """``docs`` with one of ``tokens`` (in turn) before every ``ADDED_EVERY`` lines: a chat's markup."""
    out: list[str] = []
    count = 0
    for doc in docs:
        lines = doc.splitlines(keepends=True)
        for index in range(0, len(lines), ADDED_EVERY):
            lines[index] = tokens[count % len(tokens)] + lines[index]
            count += 1
        out.append("".join(lines))
    return out


# ---------------------------------------------------------------------------
# One system in one process
# ---------------------------------------------------------------------------


def _peak_mb() -> float:
    # The kernel's high-water mark of this process's memory: getrusage's ru_maxrss can keep the parent's peak
    # across the fork that started this process, and the parent read every file of the benchmark.
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1e3
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1e6 if sys.platform == "darwin" else peak / 1e3


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def encoder(system: str, case: Case, workers: int) -> Encode:
    """A function from documents to their ids, for one system on one case (made here, outside the times)."""
    if system == "impl":
        import bpeproof

        tokenizer = bpeproof.load(case.impl_file)
        allowed = tokenizer.library_allowed_special
        if workers:
            return lambda docs: tokenizer.encode_batch(docs, num_workers=workers, allowed_special=allowed)
        return lambda docs: [tokenizer.encode(doc, allowed_special=allowed) for doc in docs]
    path = case.peers[system]
    if system in ("tokenizers", "fastokens"):
        module = __import__(system)
        rust = module.Tokenizer.from_file(path) if path.endswith(".json") else \
            module.Tokenizer.from_str(gzip.decompress(Path(path).read_bytes()).decode("utf-8")) \
            if system == "tokenizers" else \
            module.Tokenizer.from_json_str(gzip.decompress(Path(path).read_bytes()).decode("utf-8"))
        if workers:  # their threads: RAYON_NUM_THREADS, set by the parent
            return lambda docs: [item.ids for item in rust.encode_batch(docs, add_special_tokens=False)]
        return lambda docs: [rust.encode(doc, add_special_tokens=False).ids for doc in docs]
    if system == "tiktoken":
        import tiktoken

        from bpeproof.impl.formats.tiktoken_file import load_tiktoken_ranks
        from bpeproof.impl.pre_tokenizers.patterns import PATTERNS

        encoding = tiktoken.Encoding(name=case.name, pat_str=PATTERNS[case.name],
                                     mergeable_ranks=load_tiktoken_ranks(path), special_tokens={})
        if workers:
            return lambda docs: encoding.encode_ordinary_batch(docs, num_threads=workers)
        return lambda docs: [encoding.encode_ordinary(doc) for doc in docs]
    if system == "sentencepiece":
        import sentencepiece

        processor = sentencepiece.SentencePieceProcessor(model_file=path)
        if workers:
            return lambda docs: list(processor.encode(docs, num_threads=workers))
        return lambda docs: [processor.encode(doc) for doc in docs]
    if system == "llama.cpp":
        import llama_cpp  # type: ignore[import-not-found]

        model = Path(tempfile.mkdtemp()) / "vocab.gguf"
        model.write_bytes(gzip.decompress(Path(path).read_bytes()))
        llama = llama_cpp.Llama(model_path=str(model), vocab_only=True, verbose=False)
        return lambda docs: [llama.tokenize(doc.encode("utf-8"), add_bos=False, special=True) for doc in docs]
    if system == "CLIP":
        import open_clip  # type: ignore[import-not-found]

        clip = open_clip.tokenizer.SimpleTokenizer(path)
        return lambda docs: [clip.encode(doc) for doc in docs]
    raise SystemExit(f"unknown system {system!r}")


def _digests(ids: list[list[int]]) -> list[str]:
    return [hashlib.sha256(array("I", doc_ids).tobytes()).hexdigest()[:12] for doc_ids in ids]


def child(system: str, case: Case, docs_path: str, workers: int, verify: bool) -> dict[str, Any]:
    docs = json.loads(Path(docs_path).read_text(encoding="utf-8"))
    begin = time.perf_counter()
    encode = encoder(system, case, workers)
    setup = time.perf_counter() - begin
    encode([""])  # what a first call imports or starts (a module, a thread pool) is not part of the times
    if verify:
        return {"digests": _digests(encode(docs))}
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(1 if workers else 2):
        cpu_begin, wall_begin = _cpu(), time.perf_counter()
        ids = encode(docs)
        cpu.append(_cpu() - cpu_begin)
        wall.append(time.perf_counter() - wall_begin)
    digest = hashlib.sha256("".join(_digests(ids)).encode()).hexdigest()[:16]
    return {"setup_s": setup, "cpu_s": cpu, "wall_s": wall, "digest": digest, "peak_mb": _peak_mb()}


# ---------------------------------------------------------------------------
# The parent
# ---------------------------------------------------------------------------


def _measure(system: str, case: Case, docs_path: Path, workers: int, verify: bool = False) -> dict[str, Any]:
    env = dict(os.environ, PYTHONHASHSEED="0", RAYON_NUM_THREADS=str(max(workers, 1)),
               TOKENIZERS_PARALLELISM="true" if workers else "false")
    command = [sys.executable, __file__, "--child", system, "--case", json.dumps(case.__dict__),
               "--docs", str(docs_path), "--workers", str(workers), *(["--verify"] if verify else [])]
    return run_child(command, env)


def _verify(chosen: list[Case], kinds: list[str], paths: dict[tuple[str, str], Path]) -> dict[str, str]:
    """Each (case, text, peer) whose ids differ from bpeproof's or that fails, and how (first document that
    differs): these are not timed."""
    bad: dict[str, str] = {}
    for case in chosen:
        for kind in kinds:
            mine = _measure("impl", case, paths[case.name, kind], 0, verify=True)
            if "error" in mine:
                raise SystemExit(f"bpeproof on {case.name} {kind}: {mine['error']}")
            for peer in case.peers:
                theirs = _measure(peer, case, paths[case.name, kind], 0, verify=True)
                key = f"{case.name} {kind} {peer}"
                if "error" in theirs:
                    bad[key] = f"fails: {theirs['error']}"
                elif theirs["digests"] != mine["digests"]:
                    pairs = zip(mine["digests"], theirs["digests"], strict=True)
                    differ = [index for index, (a, b) in enumerate(pairs) if a != b]
                    bad[key] = f"ids differ on {len(differ)} of {len(mine['digests'])} documents " \
                               f"(first: #{differ[0]})"
                if key in bad:
                    print(f"  not timed: {key}: {bad[key]}", flush=True)
    return bad


def run(args: argparse.Namespace) -> dict[str, Any]:
    kinds = args.texts.split(",")
    measurements: list[dict[str, Any]] = []
    texts: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        every = cases(work, args.formats.split(",") if args.formats else ())
        wanted = args.formats.split(",") if args.formats else [case.name for case in every]
        chosen = [case for case in every if case.name in wanted]
        unknown = sorted(set(wanted) - {case.name for case in every})
        if unknown:
            raise SystemExit(f"no such format (or its file is absent): {', '.join(unknown)}; "
                             f"known: {', '.join(case.name for case in every)}")
        paths: dict[tuple[str, str], Path] = {}
        for kind in kinds:
            docs, origin = documents(kind, args.mb)
            texts[kind] = {"origin": origin, "documents": len(docs), "bytes": sum(len(d.encode()) for d in docs)}
            print(f"{kind}: {texts[kind]['bytes'] / 1e6:.2f} MB in {len(docs)} documents, {origin}", flush=True)
            for case in chosen:
                case_docs = with_added_tokens(docs, added_tokens(case)) if case.text == "added" else docs
                paths[case.name, kind] = work / f"{case.name}-{kind}.json"
                paths[case.name, kind].write_text(json.dumps(case_docs), encoding="utf-8")
        started = time.perf_counter()
        bad = _verify(chosen, kinds, paths)
        results: dict[str, Any] = {
            "benchmark": "formats",
            "command": "python bench/bench_formats.py " + " ".join(sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d"),
            "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "load_after": load_average()},
            "runs": 0,
            "minutes": 0.0,
            "cases": [{"name": case.name, "shape": case.shape, "peers": sorted(case.peers), "skipped": case.skipped}
                      for case in chosen],
            "not_timed": bad,
            "texts": texts,
            "measurements": measurements,
        }
        plan = [(case, kind, system, workers) for case in chosen for kind in kinds
                for system in ("impl", *case.peers) for workers in (0, 1, 2)
                if f"{case.name} {kind} {system}" not in bad]
        for round_number in range(args.runs):
            print(f"round {round_number + 1} of {args.runs} (load {load_average():.2f})", flush=True)
            for case, kind, system, workers in plan:
                result = _measure(system, case, paths[case.name, kind], workers)
                result.update(round=round_number, case=case.name, text=kind, system=system, workers=workers)
                measurements.append(result)
                if "error" in result:
                    print(f"  {system} {case.name} {kind} workers={workers}: {result['error']}", flush=True)
            # The rounds done so far, saved after each: a run cut short still leaves whole rounds to read.
            results.update(runs=round_number + 1, minutes=round((time.perf_counter() - started) / 60, 1),
                           machine={**results["machine"], "load_after": load_average()})
            if args.json is not None:
                args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=1.5, help="megabytes of each text (default 1.5)")
    parser.add_argument("--formats", default="", help="the cases to run, by name (default: every one present)")
    parser.add_argument("--texts", default="multilingual,code")
    parser.add_argument("--runs", type=int, default=3, help="rounds of every measurement (default 3)")
    parser.add_argument("--quick", action="store_true", help="0.3 MB a text, one round")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every measurement as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the manual's tables")
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE", help="results of an earlier --json run")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--docs", help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--verify", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, Case(**json.loads(args.case)), args.docs, args.workers, args.verify)))
        return 0
    if args.quick:
        args.mb, args.runs = 0.3, 1
    if args.source is not None:
        results = json.loads(args.source.read_text(encoding="utf-8"))
    else:
        results = run(args)
        if args.json is not None:
            args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(markdown(results))
    return 1 if mismatches(results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
