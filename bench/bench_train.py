"""Benchmark BPE training end to end (text in, rules out): impl.trainer against HF tokenizers and sentencepiece.

Usage: ``python bench/bench_train.py [--sizes 1 10 30] [--merges N] [--quick] [--systems ...]``

What is compared (def-bpe computed as rem-faster-training describes):

* every system gets the same text: the corpora of ``../shared/corpora/*.txt.gz``
  (relative to the repository root), or generated text when they are absent,
  interleaved in 64 KiB blocks and repeated until the size is reached, with
  the white space of every line normalised to single spaces, so that every
  splitter below cuts it into the same words: maximal runs of non-space
  characters;
* ``impl``: ``bpeproof.impl.trainer.train_iter(lines, m, pretokenize=str.split)``, with the
  C merge loop when ``impl/_c/_fastbpe.c`` is built; ``impl-py``: the same counting with
  the pure-Python merge loop;
* ``hf``: tokenizers' ``BpeTrainer`` on one thread (``RAYON_NUM_THREADS=1``,
  ``TOKENIZERS_PARALLELISM=false``) with the pre-tokenizer
  ``Sequence([WhitespaceSplit(), ByteLevel(add_prefix_space=False, use_regex=False)])``:
  the same words, as byte-level characters, 256 initial symbols, vocabulary
  256 + m, so it learns m merges of the same kind; the column "same" counts
  its first merges that equal impl's (they part at the first tie, which HF
  breaks differently);
* ``sp``: sentencepiece ``model_type=bpe``, ``num_threads=1``, identity
  normalisation, splitting at white space only (no script or number splits),
  pieces up to 64 characters, vocabulary = its required characters + 3 meta
  pieces + m.  It works on Unicode characters, not bytes, and prefixes each
  word with ▁: its words are the same, its alphabet is not;
* every system runs in its own process; time is measured around training only
  (the lines are in memory before the clock starts), as wall-clock seconds and
  as CPU seconds (user + system, all threads), which a busy machine disturbs
  less; each is the best of ``--repeat`` runs; "peak MB" is the child's
  peak resident memory (``VmHWM``, or ``ru_maxrss`` where there is no /proc) and
  "+MB" how much training raised it over the peak before training (loading the
  lines and importing the library happen before the clock starts).
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
SYSTEMS = ["impl", "impl-py", "hf", "sp"]
BLOCK = 1 << 16
COMPARED_MERGES = 200

#: How one system trains: the timed call, and how to read its merges afterwards (as ``a|b`` bytes).
Plan = tuple[Callable[[], object], Callable[[object], list[bytes]]]


# ---------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------


def _normalised_lines(text: str) -> list[str]:
    lines = (" ".join(line.split()) for line in text.splitlines())
    return [line for line in lines if line]


def _generated_text(size: int, seed: int = 7) -> str:
    """Zipf-distributed words over a syllable alphabet, one word in twenty never seen before.

    Used where the shared corpora are absent, and with ``--generated`` to measure growth on a
    text that does not repeat itself (its distinct words grow with its size, as in real text).
    """
    rng = random.Random(seed)
    syllables = ["ka", "to", "re", "mi", "su", "an", "el", "qu", "ø", "é", "ñ", "ch", "th", "x", "語", "の"]
    vocabulary = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 5))) for _ in range(50_000)]
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(vocabulary))))
    parts: list[str] = []
    total = 0
    while total < size:
        line = rng.choices(vocabulary, cum_weights=cumulative, k=12)
        for index in range(len(line)):
            if rng.random() < 0.05:
                line[index] = "".join(rng.choice(syllables) for _ in range(rng.randint(3, 8)))
        text = " ".join(line)
        parts.append(text)
        total += len(text.encode("utf-8")) + 1
    return "\n".join(parts)


def build_corpus(size_mb: float, generated: bool = False) -> list[str]:
    """About ``size_mb`` MB of normalised lines, the same for every system."""
    size = int(size_mb * 1_000_000)
    sources = sorted(CORPORA.glob("*.txt.gz")) if CORPORA.is_dir() and not generated else []
    texts = []
    for path in sources:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            texts.append("\n".join(_normalised_lines(handle.read())))
    if not texts:
        texts = ["\n".join(_normalised_lines(_generated_text(size)))]
    # Blocks of whole lines from every source in turn, so that every size mixes all of them.
    blocks: list[list[str]] = [[] for _ in texts]
    for index, text in enumerate(texts):
        block: list[str] = []
        length = 0
        for line in text.split("\n"):
            block.append(line)
            length += len(line) + 1
            if length >= BLOCK:
                blocks[index].append("\n".join(block))
                block, length = [], 0
        if block:
            blocks[index].append("\n".join(block))
    order = [chunk for group in _round_robin(blocks) for chunk in group]
    lines: list[str] = []
    total = 0
    while total < size:
        for chunk in order:
            lines.extend(chunk.split("\n"))
            total += len(chunk.encode("utf-8")) + 1
            if total >= size:
                break
    return lines


def _round_robin(blocks: list[list[str]]) -> list[list[str]]:
    rounds: list[list[str]] = []
    for index in range(max(map(len, blocks))):
        rounds.append([group[index] for group in blocks if index < len(group)])
    return rounds


# ---------------------------------------------------------------------------
# One system, in a child process
# ---------------------------------------------------------------------------


def _peak_mb() -> float:
    """The high-water mark of this process's resident memory.

    ``ru_maxrss`` would do, except that Linux carries the parent's high-water mark
    over an exec (``subprocess`` forks a copy of the parent, which holds the
    corpora); ``VmHWM`` belongs to the address space the exec made.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_seconds() -> float:
    """User and system time of this process, all threads: steadier than the clock on a busy machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _bytes_of_char() -> dict[str, int]:
    """The inverse of the byte-to-character table of GPT-2's byte-level pre-tokenizer."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars = {byte: chr(byte) for byte in printable}
    extra = 0
    for byte in range(256):
        if byte not in chars:
            chars[byte] = chr(256 + extra)
            extra += 1
    return {char: byte for byte, char in chars.items()}


def _rule_pieces(rules: list[tuple[int, int, int]]) -> list[bytes]:
    """Each rule (a, b ↦ c) as the bytes of a and b, joined by ``|``."""
    pieces: dict[int, bytes] = {byte: bytes([byte]) for byte in range(256)}
    learned = []
    for a, b, c in rules:
        pieces[c] = pieces[a] + pieces[b]
        learned.append(pieces[a] + b"|" + pieces[b])
    return learned


def _hf_pieces(tokenizer: object) -> list[bytes]:
    """HF's merges, mapped back from byte-level characters to bytes."""
    model = json.loads(tokenizer.to_str())["model"]["merges"]  # type: ignore[attr-defined]
    table = _bytes_of_char()
    learned = []
    for merge in model:
        left, right = merge.split(" ") if isinstance(merge, str) else merge
        learned.append(bytes(table[c] for c in left) + b"|" + bytes(table[c] for c in right))
    return learned


def _impl(lines: list[str], merges: int, backend: str | None) -> Plan:
    sys.path.insert(0, str(ROOT))
    from bpeproof.impl import trainer

    def run() -> object:
        if backend is None:
            return trainer.train_iter(lines, merges, pretokenize=str.split)
        counts = trainer.count_words(lines, pretokenize=str.split)
        return trainer.train_distinct(counts, merges, False, backend)

    return run, lambda rules: _rule_pieces(rules)


def _hf(lines: list[str], merges: int) -> Plan:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    def run() -> object:
        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
        )
        trainer = trainers.BpeTrainer(
            vocab_size=256 + merges,
            min_frequency=0,
            show_progress=False,
            special_tokens=[],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        tokenizer.train_from_iterator(lines, trainer=trainer)
        return tokenizer

    return run, _hf_pieces


def _sp(lines: list[str], merges: int) -> Plan:
    import io

    import sentencepiece

    # Its base vocabulary: every character of the text, with ▁ for the space.
    required = len(set("".join(lines)) - {" "}) + 1

    def run() -> object:
        model = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=model,
            model_type="bpe",
            vocab_size=required + 3 + merges,
            num_threads=1,
            character_coverage=1.0,
            normalization_rule_name="identity",
            remove_extra_whitespaces=False,
            split_by_unicode_script=False,
            split_by_number=False,
            split_digits=False,
            max_sentencepiece_length=64,
            max_sentence_length=1 << 20,
            hard_vocab_limit=False,
            minloglevel=2,
        )
        return model

    return run, lambda model: []


def child(system: str, corpus_path: str, merges: int) -> None:
    """Train one system on the corpus file and print a JSON line with the measurements.

    The library is imported and the lines are read before the clock starts.
    """
    if system == "hf":
        os.environ["RAYON_NUM_THREADS"] = "1"
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
    with open(corpus_path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    if system == "impl":
        run, pieces = _impl(lines, merges, None)
    elif system == "impl-py":
        run, pieces = _impl(lines, merges, "strings")
    elif system == "hf":
        run, pieces = _hf(lines, merges)
    else:
        run, pieces = _sp(lines, merges)
    base = _peak_mb()
    cpu_started = _cpu_seconds()
    started = time.perf_counter()
    output = run()
    seconds = time.perf_counter() - started
    cpu = _cpu_seconds() - cpu_started
    peak = _peak_mb()
    learned = pieces(output)
    first = [piece.hex() for piece in learned[:COMPARED_MERGES]]
    measured = {"seconds": seconds, "cpu": cpu, "peak": peak, "base": base, "merges": len(learned), "first": first}
    print(json.dumps(measured))


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------


@dataclass
class Result:
    """The best of several runs of one system on one corpus."""

    seconds: float
    cpu: float
    peak: float
    grown: float
    merges: int
    first: list[str]


def measure(system: str, corpus_path: Path, merges: int, repeat: int, timeout: float) -> Result | None:
    """Train ``system`` ``repeat`` times, each in a fresh process: the least time, the largest memory."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", system, str(corpus_path), str(merges)]
    best: Result | None = None
    for _ in range(repeat):
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
        except subprocess.TimeoutExpired:
            print(f"  {system}: timed out after {timeout:.0f} s", file=sys.stderr)
            return best
        if done.returncode != 0:
            print(f"  {system} failed:\n{done.stderr[-2000:]}", file=sys.stderr)
            return best
        data = json.loads(done.stdout.strip().splitlines()[-1])
        run = Result(
            data["seconds"], data["cpu"], data["peak"], data["peak"] - data["base"], data["merges"], data["first"]
        )
        if best is None:
            best = run
        else:
            best.seconds = min(best.seconds, run.seconds)
            best.cpu = min(best.cpu, run.cpu)
            best.peak = max(best.peak, run.peak)
            best.grown = max(best.grown, run.grown)
    return best


def _common_prefix(left: list[str], right: list[str]) -> int:
    count = 0
    for a, b in zip(left, right, strict=False):
        if a != b:
            break
        count += 1
    return count


def main(argv: list[str] | None = None) -> None:
    """Build each corpus, run every system on it and print one table row per system."""
    parser = argparse.ArgumentParser(
        description="Benchmark BPE training: bpeproof.impl.trainer, HF tokenizers, sentencepiece."
    )
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 10, 30], help="corpus sizes in MB")
    parser.add_argument("--merges", type=int, default=5000, help="number of merges m")
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=SYSTEMS)
    parser.add_argument("--repeat", type=int, default=2, help="runs per system and size; the fastest counts")
    parser.add_argument("--quick", action="store_true", help="1 MB and 1,000 merges only")
    parser.add_argument("--generated", action="store_true", help="generated text that never repeats, not the corpora")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.merges = [1.0], 1000
    shared = CORPORA.is_dir() and any(CORPORA.glob("*.txt.gz")) and not args.generated
    source = "shared corpora (repeated beyond their 17 MB)" if shared else "generated text"
    print(f"corpus: {source}; merges: {args.merges}; best of {args.repeat}, one process per run;"
          " time = training with the text in memory")
    print("impl x: impl's speed ÷ the row's (the row's time ÷ impl's), how many times faster bpeproof is;"
          " on wall-clock seconds, then on CPU seconds")
    print(f"{'MB':>5} {'system':<8} {'seconds':>8} {'impl x':>8} {'cpu s':>7} {'impl x':>8} {'s/MB':>6}"
          f" {'peak MB':>8} {'+MB':>6} {'merges':>7}  first merges equal to impl's")
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            lines = build_corpus(size, args.generated)
            path = Path(folder) / f"corpus_{size}.txt"
            path.write_text("\n".join(lines), encoding="utf-8")
            del lines
            reference: Result | None = None
            for system in args.systems:
                result = measure(system, path, args.merges, args.repeat, args.timeout)
                if system == "impl":
                    reference = result
                if result is None:
                    print(f"{size:>5g} {system:<8} {'-':>8}", flush=True)
                    continue
                # impl's speed ÷ this system's = this system's time ÷ impl's (impl's own row: 1.00x)
                ratio = result.seconds / reference.seconds if reference else float("nan")
                cpu_ratio = result.cpu / reference.cpu if reference and reference.cpu > 0 else float("nan")
                same = ""
                if reference is not None and system in ("impl-py", "hf"):
                    compared = min(len(result.first), COMPARED_MERGES)
                    same = f"  {_common_prefix(result.first, reference.first)}/{compared}"
                merges = str(result.merges) if system != "sp" else "n/a"
                print(
                    f"{size:>5g} {system:<8} {result.seconds:>8.2f} {ratio:>7.2f}x"
                    f" {result.cpu:>7.2f} {cpu_ratio:>7.2f}x {result.seconds / size:>6.2f}"
                    f" {result.peak:>8.0f} {result.grown:>6.0f} {merges:>7}{same}",
                    flush=True,
                )


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main()
