"""Counting and encoding on several cores: ``--workers 1`` against ``--workers 2``, and against the peers' threads.

Usage::

    python bench/bench_parallel.py [--mb 50] [--merges 5000] [--vocab PATH] [--skip-hf] [--skip-tiktoken]
                                   [--skip-dask] [--skip-train] [--corpus FILE | --save-corpus PATH]

The corpus is generated (deterministic, ``--mb`` megabytes in one file): lines of 6 to 18 words drawn from
100,000 made-up lowercase words with Zipf frequencies (the word of rank r has weight 1 / r^1.07, as in
English text), a capital now and then, punctuation and a number here and there, and a full stop at the end of
each line.  Every run reads that file, each in a process of its own (so that peak memory is its own).

Training (the text in the file, the rules out):

* ``impl w=1`` / ``impl w=2``: ``bpeproof.impl.parallel.count_files`` with the r50k pattern (GPT-2's) in 1 and 2
  worker processes, then ``train_counts`` (the C merge loop); counting and merging are timed apart.  The rules of
  the two runs must be equal (they are compared by digest);
* ``dask w=2``: the same counting as tasks of a ``distributed.LocalCluster`` of 2 worker processes
  (``bpeproof.impl.parallel.dask_cluster``, what ``--engine dask --workers 2`` does), then the same ``train_counts``
  here.
  Its time counts starting and closing the cluster (as the command does); the line after the table splits it
  into the start, the work alone (what a cluster that is already up costs) and the close.  The rules must be
  those of w=1;
* ``hf``: Hugging Face ``tokenizers``' ``BpeTrainer`` with its default threads, reading the same file
  (``Tokenizer.train``), with ``ByteLevel(add_prefix_space=False)`` pre-tokenization, GPT-2's expression: nearly
  the same words as r50k; vocabulary 256 + merges.

Encoding to token ids (cl100k_base from ``../shared/vocabs`` or ``--vocab``):

* ``impl w=1`` / ``impl w=2``: ``bpeproof.impl.parallel.encode_files`` writing a uint32 ``.npy`` (the vocabulary is
  loaded before the clock starts; starting the workers and sending them the tokenizer is counted);
* ``dask w=2``: ``encode_files`` with the Dask engine on a 2-worker local cluster (started and closed in the
  time, split as for training);
* ``tiktoken t=1`` / ``tiktoken t=2``: ``Encoding.encode_ordinary_batch`` with 1 and 2 threads on the text cut into
  pieces of about 1 MB at the same line cuts (read into memory before the clock starts; the ids stay Python
  lists, no file is written).  Equal ids to impl's are checked.

Ratios: "w=2 speed-up" is the w=1 time ÷ the w=2 time; "impl w=2 vs row" is the row's time ÷ impl w=2's (above 1:
impl w=2 is faster; for the dask row it is the overhead of the Dask path as a factor).  Wall-clock times on a
shared machine move with its load; the load average is printed before and after, and CPU seconds (all processes
and threads) are given beside the wall-clock seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
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


def _peaks() -> tuple[float, float]:
    """Peak resident MB of this process and of its largest child process (ru_maxrss, in kB on Linux)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
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
        from bpeproof.impl.parallel import count_files
        from bpeproof.impl.trainer import train_counts

        workers = int(system.split("=")[1])
        cpu, start = _cpu(), time.perf_counter()
        counts = count_files([corpus], "r50k", workers=workers, progress=False)
        counted = time.perf_counter()
        rules = train_counts(counts, int(extra), progress=False)
        end = time.perf_counter()
        result.update(seconds=end - start, count_s=counted - start, merge_s=end - counted, cpu=_cpu() - cpu,
                      distinct=len(counts), words=sum(counts.values()), merges=len(rules),
                      digest=hashlib.sha256(repr([tuple(rule) for rule in rules]).encode()).hexdigest()[:16])
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
        rules = train_counts(counts, int(extra), progress=False)
        end = time.perf_counter()
        result.update(seconds=end - start, start_s=up - start, run_s=counted - up, close_s=closed - counted,
                      count_s=closed - start, merge_s=end - closed, cpu=_cpu() - cpu, distinct=len(counts),
                      words=sum(counts.values()), merges=len(rules),
                      digest=hashlib.sha256(repr([tuple(rule) for rule in rules]).encode()).hexdigest()[:16])
    elif task == "train" and system == "hf":
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        trainer = trainers.BpeTrainer(vocab_size=256 + int(extra), min_frequency=0, show_progress=False,
                                      special_tokens=[], initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        cpu, start = _cpu(), time.perf_counter()
        tokenizer.train([corpus], trainer=trainer)
        result.update(seconds=time.perf_counter() - start, cpu=_cpu() - cpu,
                      merges=tokenizer.get_vocab_size() - 256, threads=os.environ.get("RAYON_NUM_THREADS", "default"))
    elif task == "encode" and system.startswith("impl"):
        from bpeproof.impl.parallel import encode_files
        from bpeproof.impl.pipelines.registry import load_tokenizer

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
        from bpeproof.impl.pipelines.registry import load_tokenizer

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


def measure(task: str, system: str, corpus: Path, extra: str) -> dict[str, Any] | None:
    command = [sys.executable, __file__, "--child", task, system, str(corpus), extra]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"  {task} {system}: failed: {done.stderr.strip().splitlines()[-1:]}", flush=True)
        return None
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=50.0, help="corpus size in MB (default 50)")
    parser.add_argument("--merges", type=int, default=5000, help="merges to learn (default 5000)")
    parser.add_argument("--vocab", type=Path, default=SHARED / "vocabs" / "cl100k_base.tiktoken.gz",
                        help="the cl100k rank file for encoding")
    parser.add_argument("--skip-hf", action="store_true")
    parser.add_argument("--skip-tiktoken", action="store_true")
    parser.add_argument("--skip-dask", action="store_true", help="leave out the Dask rows (dask not installed)")
    parser.add_argument("--skip-train", action="store_true", help="measure encoding only")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="measure on this text file instead of generating one (--mb is then not used)")
    parser.add_argument("--save-corpus", type=Path, default=None, metavar="PATH",
                        help="also keep the generated corpus at PATH, for --corpus in a later run")
    args = parser.parse_args(argv)
    status = 0
    print(f"cores: {os.cpu_count()}; load average before: {_load()}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        if args.corpus is not None:
            corpus = args.corpus
            kind = f"of {corpus}"
        else:
            corpus = Path(folder) / "zipf.txt"
            generate_corpus(corpus, args.mb)
            kind = "of generated Zipf text"
            if args.save_corpus is not None:
                shutil.copyfile(corpus, args.save_corpus)
        size = corpus.stat().st_size / 1e6
        print(f"corpus: {size:.1f} MB {kind}; training: {args.merges} merges", flush=True)

        dask = () if args.skip_dask else ("dask w=2",)
        if args.skip_train:
            status = _encoding(args, corpus, size, status, dask)
            print(f"\nload average after: {_load()}")
            return status
        print("\ntraining        seconds  count s  merge s   cpu s  w=2 speed-up  impl w=2 vs row  peak MB"
              "  worker peak MB")
        train: dict[str, dict[str, Any]] = {}
        for system in ("impl w=1", "impl w=2", *dask, *(() if args.skip_hf else ("hf",))):
            result = measure("train", system.replace(" ", ""), corpus, str(args.merges))
            if result is not None:
                train[system] = result
        for system, result in train.items():
            speedup = (f"{train['impl w=1']['seconds'] / result['seconds']:.2f}x"
                       if system == "impl w=2" and "impl w=1" in train else "")
            versus = (f"{result['seconds'] / train['impl w=2']['seconds']:.2f}x" if "impl w=2" in train else "")
            print(f"{system:<14} {result['seconds']:>8.2f} {result.get('count_s', float('nan')):>8.2f}"
                  f" {result.get('merge_s', float('nan')):>8.2f} {result['cpu']:>7.2f} {speedup:>13}"
                  f" {versus:>16} {result['peak_mb']:>8.0f} {result['child_peak_mb']:>15.0f}")
        if "impl w=1" in train and "impl w=2" in train:
            one, two = train["impl w=1"], train["impl w=2"]
            same = one["digest"] == two["digest"]
            status |= 0 if same else 1
            print(f"counting alone: w=2 speed-up {one['count_s'] / two['count_s']:.2f}x; rules of w=1 and w=2:"
                  f" {'identical' if same else 'DIFFERENT'} ({one['merges']} merges); {one['words']} words,"
                  f" {one['distinct']} distinct ({one['distinct'] / size:.0f} distinct per MB)")
        _dask_line(train, "rules")
        if "hf" in train:
            print(f"hf learned {train['hf']['merges']} merges with its default threads"
                  f" (RAYON_NUM_THREADS={train['hf']['threads']})")

        status = _encoding(args, corpus, size, status, dask)
    print(f"\nload average after: {_load()}")
    return status


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        print(json.dumps(child(*sys.argv[2:6])))
    else:
        sys.exit(main())
