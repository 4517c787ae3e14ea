"""Counting and encoding on several cores: ``--workers 1`` against ``--workers 2``, and against the peers' threads.

Usage::

    python bench/bench_parallel.py [--mb 100] [--merges 8000] [--runs 5] [--text real|zipf] [--pattern r50k]
                                   [--corpus FILE | --save-corpus PATH] [--vocab PATH] [--skip-hf] [--skip-dask]
                                   [--skip-tiktoken] [--skip-train] [--skip-encode] [--json FILE]
    python bench/bench_parallel.py --from FILE --markdown       # the manual's training table from a --json run

The corpus (deterministic, ``--mb`` megabytes in one file):

* ``--text real`` (the default): the real corpora of ``shared/corpora`` (English, Japanese and Chinese manual
  pages, Python code, vim tutors in some thirty languages, emoji; 18 MB), then copies of them in which one word in
  eleven (a run of two or more letters or digits) has one character changed, the change a function of the word,
  the copy and the word's place, so that every copy brings new words as more real text would (typos, names,
  numbers): the distinct words grow with the size (about size^0.5; 181,273 at 18 MB, 294,409 at 50 MB, 448,211
  at 100 MB with r50k) instead of stopping at those of the 18 MB;
* ``--text zipf``: lines of 6 to 18 words drawn from 100,000 made-up lowercase words with Zipf frequencies (the
  word of rank r has weight 1 / r^1.07), a capital now and then, punctuation and a number here and there.

Training (the text in the file, the rules out), each run a process of its own:

* ``impl w=1`` / ``impl w=2``: the command ``bpeproof train CORPUS --merges M --pattern P --workers 1|2`` (its
  ``main`` in the child, which imports nothing else first), ``--runs`` times each, one after the other, so that
  the ratio of each pair of runs (w=1 ÷ w=2) is measured under the same conditions.  The wall-clock time is the
  child process's, interpreter start included; it is split into start (interpreter, imports, planning), counting
  (``count_tables``: the workers' count and their packed tables), the merge loop (``train_tables``: the tables
  added and the merges, on 1 or 2 threads) and saving.  The rules of every run must be the same (compared by
  digest).  Beside each time: the CPU seconds of all its processes, the peak memory of the parent process and of
  the largest worker, and the CPU seconds other processes of the machine used during the run (from /proc/stat: a
  run another job shared the cores with is slower for that reason alone);
* ``dask w=2``: the same counting as tasks of a ``distributed.LocalCluster`` of 2 worker processes (what
  ``--engine dask --workers 2`` does), then ``train_counts`` on 2 threads here; its time counts starting and
  closing the cluster;
* ``hf``: Hugging Face ``tokenizers``' ``BpeTrainer`` with its default threads, reading the same file, with
  ``ByteLevel(add_prefix_space=False)`` pre-tokenization, GPT-2's expression: nearly the same words as r50k;
  vocabulary 256 + merges.

Encoding to token ids (cl100k_base from ``shared/vocabs`` or ``--vocab``):

* ``impl w=1`` / ``impl w=2``: ``bpeproof.impl.parallel.encode_files`` writing a uint32 ``.npy`` (the vocabulary is
  loaded before the clock starts; starting the workers and sending them the tokenizer is counted);
* ``dask w=2``: ``encode_files`` with the Dask engine on a 2-worker local cluster (started and closed in the
  time, split as for training);
* ``tiktoken t=1`` / ``tiktoken t=2``: ``Encoding.encode_ordinary_batch`` with 1 and 2 threads on the text cut into
  pieces of about 1 MB at the same line cuts (read into memory before the clock starts; the ids stay Python
  lists, no file is written).  Equal ids to impl's are checked.

Ratios: "w=2 speed-up" is the w=1 time ÷ the w=2 time; "impl w=2 vs row" is the row's time ÷ impl w=2's (above 1:
impl w=2 is faster).  Wall-clock times on a shared machine move with its load; the load average is printed before
and after.  ``--json FILE`` writes every run's numbers; ``--from FILE --markdown`` prints the training table of the
manual (``docs/parallel.md``) from them.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import io
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: The shared data beside the checkout (a worktree's is one level further up).
SHARED = next((path for path in (ROOT.parent / "shared", ROOT.parents[1] / "shared") if path.is_dir()),
              ROOT.parent / "shared")
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

_LETTERS = "etaoinshrdlcumwfgypbvkjxqz"
_LETTER_WEIGHTS = [12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8, 2.4, 2.4, 2.2, 2.0, 2.0, 1.9,
                   1.5, 1.0, 0.8, 0.2, 0.2, 0.1, 0.1]


def generate_corpus(path: Path, megabytes: float, seed: int = 20240615) -> None:
    """``megabytes`` MB of Zipf-distributed made-up words, one sentence per line (see the module docstring)."""
    rng = random.Random(seed)
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < 100_000:
        word = "".join(rng.choices(_LETTERS, _LETTER_WEIGHTS, k=min(1 + int(rng.expovariate(1 / 5)), 16)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    weights = [1 / (rank + 1) ** 1.07 for rank in range(len(words))]
    total = int(megabytes * 1_000_000)
    written = 0
    with path.open("w", encoding="utf-8") as out:
        while written < total:
            drawn = rng.choices(words, weights, k=12_000)
            lines = []
            index = 0
            while index < len(drawn):
                length = rng.randint(6, 18)
                sentence = drawn[index : index + length]
                index += length
                sentence[0] = sentence[0].capitalize()
                if rng.random() < 0.3:
                    sentence.insert(rng.randrange(len(sentence)), str(rng.randrange(10_000)))
                if rng.random() < 0.3:
                    sentence[rng.randrange(len(sentence))] += rng.choice([",", ";", ":", "'s"])
                lines.append(" ".join(sentence) + rng.choice([".", ".", ".", "?", "!"]) + "\n")
            chunk = "".join(lines)
            out.write(chunk)
            written += len(chunk)


#: A word the real corpus's copies may change: a run of two or more letters or digits.
_WORD = re.compile(r"\w{2,}")

#: One word in this many is changed in each copy.
_CHANGE_ONE_IN = 11


def _changed(word: str, copy: int, place: int) -> str:
    """``word`` with one character changed, as a function of the word, the copy and its place (one of eight
    variants per word and copy): a letter for a letter of the same case, a digit for a digit, another character
    of the same script for the rest."""
    variant = zlib.crc32(word.encode("utf-8"), copy * 8 + place % 8)
    index = variant % len(word)
    old = ord(word[index])
    shift = variant >> 8
    if 0x61 <= old <= 0x7A:
        new = 0x61 + (old - 0x61 + 1 + shift % 25) % 26
    elif 0x41 <= old <= 0x5A:
        new = 0x41 + (old - 0x41 + 1 + shift % 25) % 26
    elif 0x30 <= old <= 0x39:
        new = 0x30 + (old - 0x30 + 1 + shift % 9) % 10
    else:
        new = old + 1 + shift % 3
        if not chr(new).isalpha():
            return word
    return word[:index] + chr(new) + word[index + 1 :]


def real_corpus(path: Path, megabytes: float) -> None:
    """``megabytes`` MB of the shared corpora, then of copies of them with one word in eleven changed (see the
    module docstring)."""
    sources = sorted((SHARED / "corpora").glob("*.txt.gz"))
    if not sources:
        raise SystemExit(f"{SHARED / 'corpora'}: no corpora (*.txt.gz); use --text zipf or --corpus FILE")
    texts = []
    for source in sources:
        with gzip.open(source, "rt", encoding="utf-8") as handle:
            texts.append(handle.read().rstrip("\n") + "\n")
    base = "".join(texts)
    left = int(megabytes * 1_000_000)
    with path.open("wb") as out:
        copy = 0
        while left > 0:
            if copy == 0:
                text = base
            else:
                places = iter(range(1 << 62))

                def change(match: re.Match[str], copy: int = copy, places: Iterator[int] = places) -> str:
                    place = next(places)
                    if zlib.crc32(f"{copy}:{place}".encode()) % _CHANGE_ONE_IN:
                        return match[0]
                    return _changed(match[0], copy, place)

                text = _WORD.sub(change, base)
            data = text.encode("utf-8")
            if len(data) > left:  # end at a line's end
                data = data[: data.rfind(b"\n", 0, left) + 1] or data[:left]
            out.write(data)
            left -= len(data)
            copy += 1


def _peaks() -> tuple[float, float]:
    """Peak resident MB of this process and of its largest child process.  This process's is its ``VmHWM``:
    ``ru_maxrss`` would do, except that Linux carries the high-water mark of the process that forked over an exec
    (the parent of this measurement, which made the corpus in memory); ``ru_maxrss`` where there is no /proc."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmHWM:"):
                own = int(line.split()[1]) / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return own, children


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _npy_digest(path: Path) -> str:
    """The SHA-256 of the ids of a .npy array written by ``encode_files`` (read in blocks: the peak memory stays
    that of the encoding)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        handle.seek(128)
        while block := handle.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()[:16]


def child(task: str, system: str, corpus: str, extra: str) -> dict[str, Any]:
    """One measurement, in a process of its own."""
    result: dict[str, Any] = {"task": task, "system": system}
    if task == "train" and system.startswith("impl"):
        # The command itself, as ``bpeproof train`` runs it; its two phases timed from outside.
        import bpeproof.impl.parallel as parallel
        from bpeproof.cli import main as command
        from bpeproof.impl import trainer as fast_trainer

        processes = system.split("=")[1]
        merges, pattern = extra.split(":", 1)
        marks: dict[str, list[float]] = {}

        def timed(module: Any, name: str) -> None:
            original = getattr(module, name)

            def wrapper(*args: Any, **kwargs: Any) -> Any:
                marks[name] = [time.time()]
                try:
                    return original(*args, **kwargs)
                finally:
                    marks[name].append(time.time())

            setattr(module, name, wrapper)

        timed(parallel, "count_tables")
        timed(fast_trainer, "train_tables")
        output = Path(corpus).with_suffix(f".w{processes}.json")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = command(["train", corpus, "--merges", merges, "--pattern", pattern, "--workers", processes,
                            "-o", str(output), "--json"])
        if code != 0:
            raise SystemExit(f"bpeproof train exited with {code}")
        summary = json.loads(printed.getvalue())
        saved = [tuple(rule) for rule in json.loads(output.read_text(encoding="utf-8"))["rules"]]
        output.unlink()
        result.update(count=marks["count_tables"], merge=marks["train_tables"], ended=time.time(),
                      distinct=summary["distinct_words"], words=summary["words"], merges=summary["merges"],
                      digest=hashlib.sha256(repr(saved).encode()).hexdigest()[:16])
    elif task == "train" and system.startswith("dask"):
        from bpeproof.impl.parallel import count_files
        from bpeproof.impl.parallel.dask_cluster import dask_engine
        from bpeproof.impl.trainer import train_counts

        cpu, start = _cpu(), time.perf_counter()
        with dask_engine(workers=int(system.split("=")[1])) as engine:
            up = time.perf_counter()
            counts = count_files([corpus], "r50k", engine=engine, progress=False)
            counted = time.perf_counter()
        closed = time.perf_counter()
        rules = train_counts(counts, int(extra.split(":")[0]), progress=False, threads=2)
        end = time.perf_counter()
        result.update(seconds=end - start, start_s=up - start, run_s=counted - up, close_s=closed - counted,
                      count_s=closed - start, merge_s=end - closed, cpu=_cpu() - cpu, distinct=len(counts),
                      words=sum(counts.values()), merges=len(rules),
                      digest=hashlib.sha256(repr([tuple(rule) for rule in rules]).encode()).hexdigest()[:16])
    elif task == "train" and system == "hf":
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        trainer = trainers.BpeTrainer(vocab_size=256 + int(extra.split(":")[0]), min_frequency=0, show_progress=False,
                                      special_tokens=[], initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        cpu, start = _cpu(), time.perf_counter()
        tokenizer.train([corpus], trainer=trainer)
        result.update(seconds=time.perf_counter() - start, cpu=_cpu() - cpu,
                      merges=tokenizer.get_vocab_size() - 256, threads=os.environ.get("RAYON_NUM_THREADS", "default"))
    elif task == "encode" and system.startswith("impl"):
        from bpeproof.impl.parallel import encode_files
        from bpeproof.impl.tokenizer import load_tokenizer

        workers = int(system.split("=")[1])
        vocabulary = load_tokenizer(extra, "cl100k")
        output = Path(corpus).with_suffix(f".w{workers}.npy")
        cpu, start = _cpu(), time.perf_counter()
        files = encode_files(vocabulary, [corpus], output, source=("file", extra, "cl100k"), workers=workers,
                             progress=False)
        result.update(seconds=time.perf_counter() - start, cpu=_cpu() - cpu, tokens=files[0].tokens,
                      digest=_npy_digest(output))
        output.unlink()
    elif task == "encode" and system.startswith("dask"):
        from bpeproof.impl.parallel import encode_files
        from bpeproof.impl.parallel.dask_cluster import dask_engine
        from bpeproof.impl.tokenizer import load_tokenizer

        vocabulary = load_tokenizer(extra, "cl100k")
        output = Path(corpus).with_suffix(".dask.npy")
        cpu, start = _cpu(), time.perf_counter()
        with dask_engine(workers=int(system.split("=")[1])) as engine:
            up = time.perf_counter()
            files = encode_files(vocabulary, [corpus], output, source=("file", extra, "cl100k"), engine=engine,
                                 progress=False)
            done = time.perf_counter()
        end = time.perf_counter()
        result.update(seconds=end - start, start_s=up - start, run_s=done - up, close_s=end - done,
                      cpu=_cpu() - cpu, tokens=files[0].tokens,
                      digest=_npy_digest(output))
        output.unlink()
    elif task == "encode" and system.startswith("tiktoken"):
        from array import array

        import tiktoken

        from bpeproof.impl.formats.tiktoken_file import load_tiktoken_ranks
        from bpeproof.impl.parallel import line_cut_positions
        from bpeproof.impl.pre_tokenizers.patterns import PATTERNS

        threads = int(system.split("=")[1])
        encoding = tiktoken.Encoding(name="cl100k", pat_str=PATTERNS["cl100k"], mergeable_ranks=load_tiktoken_ranks(
            extra), special_tokens={})
        data = Path(corpus).read_bytes()
        cuts = line_cut_positions(data)
        pieces, last, step = [], 0, 1 << 20
        for cut in cuts:
            if cut - last >= step:
                pieces.append(data[last:cut].decode("utf-8"))
                last = cut
        pieces.append(data[last:].decode("utf-8"))
        del data, cuts
        cpu, start = _cpu(), time.perf_counter()
        batches = encoding.encode_ordinary_batch(pieces, num_threads=threads)
        result.update(seconds=time.perf_counter() - start, cpu=_cpu() - cpu, tokens=sum(map(len, batches)))
        ids = array("I")
        for batch in batches:
            ids.extend(batch)
        result["digest"] = hashlib.sha256(ids.tobytes()).hexdigest()[:16]
    else:
        raise SystemExit(f"unknown measurement {task} {system}")
    result["peak_mb"], result["child_peak_mb"] = _peaks()
    return result


def _busy_seconds() -> float:
    """CPU seconds every process of the machine has used since it started (/proc/stat; 0 where there is none)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(field) for field in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(task: str, system: str, corpus: Path, extra: str) -> dict[str, Any] | None:
    """One measurement in a child process, with its wall-clock seconds (interpreter start included), the CPU seconds
    of its processes and those other processes used meanwhile."""
    command = [sys.executable, __file__, "--child", task, system, str(corpus), extra]
    busy, cpu, launched = _busy_seconds(), _children_cpu(), time.time()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    ended = time.time()
    own = _children_cpu() - cpu
    if done.returncode != 0:
        print(f"  {task} {system}: failed: {done.stderr.strip().splitlines()[-1:]}", flush=True)
        return None
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result.update(launched=launched, wall=ended - launched, tree_cpu=own,
                  other_cpu=max(0.0, _busy_seconds() - busy - own), load=_load())
    if "count" in result:  # a run of the command: its phases
        result["seconds"] = result["wall"]
        result.update(start_s=result["count"][0] - launched, count_s=result["count"][1] - result["count"][0],
                      merge_s=result["merge"][1] - result["merge"][0], save_s=ended - result["merge"][1],
                      cpu=own)
    return result


def _dask_line(rows: dict[str, dict[str, Any]], what: str) -> None:
    """The Dask path's overhead against impl w=2, and whether its results are those of w=1."""
    if "dask w=2" not in rows or "impl w=2" not in rows:
        return
    dask, two = rows["dask w=2"], rows["impl w=2"]
    same = dask["digest"] == rows.get("impl w=1", two)["digest"]
    print(f"dask w=2: {dask['seconds']:.2f} s = cluster start {dask['start_s']:.2f} s + work {dask['run_s']:.2f} s"
          f" + close {dask['close_s']:.2f} s; overhead against impl w=2 ({two['seconds']:.2f} s):"
          f" {dask['seconds'] - two['seconds']:+.2f} s in all, {dask['run_s'] - two['seconds']:+.2f} s on a running"
          f" cluster; {what} {'identical' if same else 'DIFFERENT'} to w=1's", flush=True)


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def _encoding(args: argparse.Namespace, corpus: Path, size: float, status: int, dask: tuple[str, ...]) -> int:
    """The encoding rows (impl, dask, tiktoken) on ``corpus``; ``status`` with 1 added when ids differ."""
    if not args.vocab.exists():
        print(f"\nencoding skipped: {args.vocab} is not present")
        return status
    print("\nencoding        seconds   MB/s   cpu s  w=2 speed-up  impl w=2 vs row  peak MB  worker peak MB  ids")
    encode: dict[str, dict[str, Any]] = {}
    systems = ("impl w=1", "impl w=2", *dask,
               *(() if args.skip_tiktoken else ("tiktoken t=1", "tiktoken t=2")))
    for system in systems:
        result = measure("encode", system.replace(" ", ""), corpus, str(args.vocab))
        if result is not None:
            encode[system] = result
    reference = encode.get("impl w=1", {}).get("digest")
    for system, result in encode.items():
        speedup = (f"{encode['impl w=1']['seconds'] / result['seconds']:.2f}x"
                   if system == "impl w=2" and "impl w=1" in encode else "")
        versus = (f"{result['seconds'] / encode['impl w=2']['seconds']:.2f}x" if "impl w=2" in encode else "")
        same = "same" if result["digest"] == reference else "DIFFERENT"
        status |= 0 if same == "same" else 1
        print(f"{system:<14} {result['seconds']:>8.2f} {size / result['seconds']:>6.1f} {result['cpu']:>7.2f}"
              f" {speedup:>13} {versus:>16} {result['peak_mb']:>8.0f} {result['child_peak_mb']:>15.0f}  {same}")
    _dask_line(encode, "ids")
    return status


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _training(args: argparse.Namespace, corpus: Path) -> tuple[dict[str, Any], int]:
    """The training rows: ``--runs`` pairs of impl runs, then Dask and HF once; the results and 1 if the rules of
    two runs differ."""
    extra = f"{args.merges}:{args.pattern}"
    runs: list[dict[str, Any]] = []
    print(f"\ntraining, {args.runs} runs of each, one after the other (pattern {args.pattern})")
    print("run  system       seconds  start  count  merge  save   cpu s  other cpu s  peak MB  worker peak MB  load")
    for run in range(args.runs):
        order = ("impl w=1", "impl w=2") if run % 2 == 0 else ("impl w=2", "impl w=1")
        for system in order:
            result = measure("train", system.replace(" ", ""), corpus, extra)
            if result is None:
                continue
            result.update(run=run, system=system)
            runs.append(result)
            print(f"{run:>3}  {system:<10} {result['seconds']:>8.2f} {result['start_s']:>6.2f}"
                  f" {result['count_s']:>6.2f} {result['merge_s']:>6.2f} {result['save_s']:>5.2f} {result['cpu']:>7.2f}"
                  f" {result['other_cpu']:>12.2f} {result['peak_mb']:>8.0f} {result['child_peak_mb']:>15.0f}"
                  f"  {result['load']}", flush=True)
    peers: dict[str, dict[str, Any]] = {}
    for system in (*(() if args.skip_dask else ("dask w=2",)), *(() if args.skip_hf else ("hf",))):
        result = measure("train", system.replace(" ", ""), corpus, extra)
        if result is not None:
            result["system"] = system
            peers[system] = result
            print(f"     {system:<10} {result['wall']:>8.2f}{'':>29} {result['tree_cpu']:>7.2f}"
                  f" {result['other_cpu']:>12.2f} {result['peak_mb']:>8.0f} {result['child_peak_mb']:>15.0f}"
                  f"  {result['load']}", flush=True)
    digests = {result["digest"] for result in runs}
    if "dask w=2" in peers:
        digests.add(peers["dask w=2"]["digest"])
    document = {"runs": runs, "peers": peers, "same_rules": len(digests) == 1}
    ratios = _ratios(runs)
    if ratios:
        spread = _spread(ratios)
        print(f"w=1 ÷ w=2: median {spread['median']:.2f} [{spread['min']:.2f}–{spread['max']:.2f}] over {len(ratios)}"
              f" pairs of runs; rules {'identical' if len(digests) == 1 else 'DIFFERENT'} in every run", flush=True)
    return document, 0 if len(digests) <= 1 else 1


def _ratios(runs: list[dict[str, Any]]) -> list[float]:
    """w=1 ÷ w=2 for each run that has both."""
    by_run: dict[int, dict[str, float]] = {}
    for result in runs:
        by_run.setdefault(result["run"], {})[result["system"]] = result["seconds"]
    return [pair["impl w=1"] / pair["impl w=2"] for pair in by_run.values() if len(pair) == 2]


def markdown(document: dict[str, Any]) -> str:
    """The manual's training table: each impl row's median [min–max] seconds over its runs and the medians of its
    phases, CPU and peak memory; each peer's one run; impl x = the row's time ÷ ``--workers 2``'s."""
    train = document["train"]
    runs, peers = train["runs"], train["peers"]
    ratios = _ratios(runs)
    two = statistics.median(result["seconds"] for result in runs if result["system"] == "impl w=2")
    lines = [f"| training, {document['merges']:,} merges | seconds: median [min–max] | start + counting + merge loop +"
             " saving (medians) | CPU s | peak MB (largest worker) | other jobs' CPU s | impl x (row ÷ `--workers 2`)"
             " |", "|---|---|---|---|---|---|---|"]
    for system, label in (("impl w=1", "`--workers 1`"), ("impl w=2", "`--workers 2`")):
        rows = [result for result in runs if result["system"] == system]
        if not rows:
            continue
        seconds = _spread([result["seconds"] for result in rows])
        phases = " + ".join(f"{statistics.median(result[key] for result in rows):.2f}"
                            for key in ("start_s", "count_s", "merge_s", "save_s"))
        x = "—"
        if system == "impl w=1" and ratios:
            spread = _spread(ratios)
            x = f"{spread['median']:.2f} [{spread['min']:.2f}–{spread['max']:.2f}]"
        lines.append(f"| {label} | {seconds['median']:.2f} [{seconds['min']:.2f}–{seconds['max']:.2f}] | {phases} |"
                     f" {statistics.median(result['cpu'] for result in rows):.1f} |"
                     f" {max(result['peak_mb'] for result in rows):.0f}"
                     f" ({max(result['child_peak_mb'] for result in rows):.0f}) |"
                     f" {statistics.median(result['other_cpu'] for result in rows):.2f} | {x} |")
    names = {"dask w=2": "`--engine dask`, 2-worker local cluster", "hf": "Hugging Face `BpeTrainer`, default threads"}
    for system, result in peers.items():
        lines.append(f"| {names.get(system, system)} | {result['wall']:.2f} | — | {result['tree_cpu']:.1f} |"
                     f" {result['peak_mb']:.0f} ({result['child_peak_mb']:.0f}) | {result['other_cpu']:.2f} |"
                     f" {result['wall'] / two:.2f} |")
    first: dict[str, Any] = next(iter(runs), {})
    corpus = document["corpus"]
    lines.append("")
    lines.append(f"{len(ratios)} runs of each, one after the other, on {corpus['mb']:.0f} MB of {corpus['kind']}"
                 f" ({first.get('words', 0):,} words, {first.get('distinct', 0):,} distinct; pattern"
                 f" {document['pattern']}); {document['cores']} cores, load average {document['load_before']} before"
                 f" and {document['load_after']} after; the rules of every run"
                 f" {'identical' if train['same_rules'] else 'DIFFERENT'}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=100.0, help="corpus size in MB (default 100)")
    parser.add_argument("--merges", type=int, default=8000, help="merges to learn (default 8000)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each impl training row (default 5)")
    parser.add_argument("--text", choices=("real", "zipf"), default="real", help="the corpus to make (default real)")
    parser.add_argument("--pattern", default="r50k", help="the training's pattern (default r50k)")
    parser.add_argument("--vocab", type=Path, default=SHARED / "vocabs" / "cl100k_base.tiktoken.gz",
                        help="the cl100k rank file for encoding")
    parser.add_argument("--skip-hf", action="store_true")
    parser.add_argument("--skip-tiktoken", action="store_true")
    parser.add_argument("--skip-dask", action="store_true", help="leave out the Dask rows (dask not installed)")
    parser.add_argument("--skip-train", action="store_true", help="measure encoding only")
    parser.add_argument("--skip-encode", action="store_true", help="measure training only")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="measure on this text file instead of making one (--mb and --text are then not used)")
    parser.add_argument("--save-corpus", type=Path, default=None, metavar="PATH",
                        help="also keep the corpus made at PATH, for --corpus in a later run")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every run's numbers as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the manual's training table as well")
    parser.add_argument("--from", dest="source", type=Path, metavar="FILE", help="results of an earlier --json run")
    args = parser.parse_args(argv)
    if args.source is not None:
        print(markdown(json.loads(args.source.read_text(encoding="utf-8"))))
        return 0
    status = 0
    document: dict[str, Any] = {"argv": sys.argv[1:] if argv is None else argv, "cores": os.cpu_count(),
                                "load_before": _load(), "merges": args.merges, "pattern": args.pattern}
    print(f"cores: {os.cpu_count()}; load average before: {document['load_before']}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        if args.corpus is not None:
            corpus = args.corpus
            kind = str(corpus.name)
        else:
            corpus = Path(folder) / f"{args.text}.txt"
            if args.text == "real":
                real_corpus(corpus, args.mb)
                kind = "real text and code (the shared corpora, then copies with changed words)"
            else:
                generate_corpus(corpus, args.mb)
                kind = "generated Zipf text"
            if args.save_corpus is not None:
                shutil.copyfile(corpus, args.save_corpus)
        size = corpus.stat().st_size / 1e6
        document["corpus"] = {"mb": size, "kind": kind}
        print(f"corpus: {size:.1f} MB of {kind}; training: {args.merges} merges", flush=True)
        dask = () if args.skip_dask else ("dask w=2",)
        if not args.skip_train:
            document["train"], status = _training(args, corpus)
        if not args.skip_encode:
            status = _encoding(args, corpus, size, status, dask)
    document["load_after"] = _load()
    print(f"\nload average after: {document['load_after']}")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    if args.markdown and "train" in document:
        print(markdown(document))
    return status


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        print(json.dumps(child(*sys.argv[2:6])))
    else:
        sys.exit(main())
