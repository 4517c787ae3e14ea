r"""Encoding throughput: impl's Tokenizer against tiktoken and Hugging Face tokenizers (def-bpe, def-utf8).

Usage::

    python bench/bench_encode.py [--mb 10] [--vocab cl100k] [--systems impl,impl-python,tiktoken,hf]

All systems get the same vocabulary (a tiktoken rank file, by default
cl100k_base from ``../shared/vocabs``), the same pre-tokenization pattern and
the same text, and each runs in a process of its own, single-threaded, so that
peak memory is its own.  The ids of every system are compared with tiktoken's.

The text: ``--mb`` megabytes (UTF-8) cut from the real corpora in
``../shared/corpora`` when they are present — English, Japanese, Chinese,
Python source, the multilingual Vim tutors and the emoji test file, each
contributing an equal share (a corpus shorter than its share contributes all
of it, and English fills the rest) — or else a generated text of words drawn
with Zipf-like frequencies from a mixed-script word list.

Reported per system: set-up time (loading the vocabulary, building the
tokenizer), encoding time, throughput in MB/s, peak RSS and RSS before
encoding; then for each run of impl its speed ÷ each peer's (``impl x``: how
many times faster bpeproof is, above 1 faster), the convention of every script
in ``bench/``.  impl is measured twice in one process: the first
pass starts with an empty word cache (every distinct word is a miss); the
second pass re-encodes the same text with the cache filled, which is what a
long-running process that keeps its tokenizer sees for recurring words.
``impl`` uses the C loops of ``impl/_c/_fastenc.c`` when they are built (the
word loop, and for cl100k the hand-written pre-tokenizer); ``impl-python`` is
the same Tokenizer with ``bpeproof.impl.encoder.USE_C_LOOP = False``: the regex module
and the pure-Python merge loops.  The table says which engine ran.

Hugging Face ``tokenizers``: the vocabulary becomes a byte-level ``BPE`` model
(token strings in GPT-2's byte-to-unicode alphabet) whose merges are the rule
list impl recovers from the rank file; pre-tokenization is ``Split`` with the
same expression followed by ``ByteLevel`` without its own regex (cl100k's ``\p{N}{1,3}+`` is written
``\p{N}{1,3}`` for Oniguruma, which reads the ``+`` as a further repetition).  HF merges by
rule, as impl does, so equal ids also cross-check the recovered merges.
"""

from __future__ import annotations

import argparse
import array
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPORA = [
    "en_shakespeare",
    "ja_manpages",
    "zh_CN_manpages",
    "code_python311_stdlib",
    "multi_vim_tutors",
    "unicode_emoji-test",
]

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


# ---------------------------------------------------------------------------
# The text
# ---------------------------------------------------------------------------


_GENERATED_WORDS = """
the of and to in is that for it as with was on be by this are from at or an
tokenizer merge rule byte pair encoding vocabulary corpus frequency decode
語彙 符号化 復号 文字列 トークン 規則 頻度 学習 バイト 分割
def return import class self None True False print range len
"""


def _cut_utf8(data: bytes, limit: int) -> bytes:
    """The longest prefix of at most ``limit`` bytes that ends on a character boundary (def-utf8)."""
    end = min(limit, len(data))
    while 0 < end < len(data) and data[end] & 0xC0 == 0x80:
        end -= 1
    return data[:end]


def build_text(megabytes: float) -> tuple[str, str]:
    """The benchmark text and a description of where it comes from."""
    total = int(megabytes * 1_000_000)
    present = [SHARED / "corpora" / f"{name}.txt.gz" for name in CORPORA]
    if all(path.exists() for path in present):
        texts = [gzip.decompress(path.read_bytes()) for path in present]
        share = total // len(texts)
        parts = [_cut_utf8(data, share) for data in texts]
        rest = total - sum(len(part) for part in parts)
        if rest > 0:
            parts[0] = _cut_utf8(texts[0], len(parts[0]) + rest)
        data = b"".join(parts)
        sizes = ", ".join(f"{name} {len(part) / 1e6:.2f} MB" for name, part in zip(CORPORA, parts, strict=True))
        return data.decode("utf-8"), f"real corpora ({sizes})"
    rng = random.Random(20240601)
    vocabulary = [*_GENERATED_WORDS.split(), "😀", "é", "naïve", "Straße", "数字", "123", "4567", "\n", "\n\n", "    "]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    pieces: list[str] = []
    size = 0
    while size < total:
        words = rng.choices(vocabulary, weights, k=1000)
        chunk = " ".join(words) + f" {rng.randrange(10**6)}.\n"
        pieces.append(chunk)
        size += len(chunk.encode("utf-8"))
    data = _cut_utf8("".join(pieces).encode("utf-8"), total)
    return data.decode("utf-8"), "generated text (the shared corpora are not present)"


# ---------------------------------------------------------------------------
# One system per process
# ---------------------------------------------------------------------------


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError):
        return float("nan")


def _peak_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1e6 if sys.platform == "darwin" else peak / 1e3


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's printable alphabet for byte-level token strings, as Hugging Face's ByteLevel uses it."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    mapping = {byte: chr(byte) for byte in printable}
    extra = 0
    for byte in range(256):
        if byte not in mapping:
            mapping[byte] = chr(256 + extra)
            extra += 1
    return mapping


def _base(vocab: str) -> str:
    """The rank file a ``--vocab`` choice is made from: ``improper`` is cl100k with swapped ranks."""
    return "cl100k" if vocab == "improper" else vocab


def improper_ranks(ranks: dict[bytes, int]) -> dict[bytes, int]:
    """cl100k made improper: every 20th token of 3+ bytes swaps its rank with its longest proper prefix that is a
    token, so that thousands of tokens rank below one of their parts (tiktoken encodes such files happily)."""
    out = dict(ranks)
    for token, _ in sorted(ranks.items(), key=lambda item: item[1])[256::20]:
        if len(token) < 3:
            continue
        part = next((token[:cut] for cut in range(len(token) - 1, 1, -1) if token[:cut] in out), None)
        if part is not None and out[part] < out[token]:
            out[part], out[token] = out[token], out[part]
    return out


def _child(system: str, text_path: str, vocab: str, ids_path: str) -> dict[str, Any]:
    from bpeproof.impl.formats.tiktoken_file import load_tiktoken_ranks
    from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
    from bpeproof.impl.tokenizer import Tokenizer

    text = Path(text_path).read_text(encoding="utf-8")
    size = len(text.encode("utf-8"))
    start = time.perf_counter()
    ranks = load_tiktoken_ranks(SHARED / "vocabs" / f"{_base(vocab)}_base.tiktoken.gz")
    if vocab == "improper":
        ranks = improper_ranks(ranks)
    pattern = PATTERNS[_base(vocab)]
    result: dict[str, Any] = {"system": system, "bytes": size}
    passes: list[float] = []
    if system in ("impl", "impl-python"):
        from bpeproof.impl import encoder as impl_encoder

        impl_encoder.USE_C_LOOP = system == "impl"
        tokenizer = Tokenizer.from_tiktoken_ranks(ranks, _base(vocab))
        result["engine"] = (
            ("C merge, C split" if tokenizer._split_table is not None else "C merge, regex split")
            if tokenizer._fast is not None
            else "Python merge, regex split"
        )
        result["setup_s"] = time.perf_counter() - start
        result["rss_before_mb"] = _rss_mb()
        for _ in range(2):
            begin = time.perf_counter()
            ids = tokenizer.encode(text)
            passes.append(time.perf_counter() - begin)
    elif system == "tiktoken":
        import tiktoken

        encoding = tiktoken.Encoding(name=vocab, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
        result["setup_s"] = time.perf_counter() - start
        result["rss_before_mb"] = _rss_mb()
        begin = time.perf_counter()
        ids = encoding.encode_ordinary(text)
        passes.append(time.perf_counter() - begin)
    elif system == "hf":
        from tokenizers import Regex, decoders, models, pre_tokenizers
        from tokenizers import Tokenizer as HFTokenizer

        from bpeproof.impl.formats.tiktoken_file import tiktoken_rules

        rules, byte_ids = tiktoken_rules(ranks)
        alphabet = _bytes_to_unicode()
        spelled = {token: "".join(alphabet[byte] for byte in data) for data, token in ranks.items()}
        internal_to_rank = {byte: byte_ids[byte] for byte in range(256)}

        def name(internal: int) -> str:
            return spelled[internal_to_rank.get(internal, internal)]

        model = models.BPE(
            vocab={token_string: token for token, token_string in spelled.items()},
            merges=[(name(a), name(b)) for a, b, _ in rules],
            fuse_unk=False,
        )
        hf = HFTokenizer(model)
        # Oniguruma reads "{1,3}+" as a repeated interval, not a possessive one; with nothing after it in its
        # alternative, the plain "{1,3}" matches what the possessive form matches in tiktoken and the regex module.
        hf_pattern = pattern.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")
        hf.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(hf_pattern), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        hf.decoder = decoders.ByteLevel()
        result["setup_s"] = time.perf_counter() - start
        result["rss_before_mb"] = _rss_mb()
        begin = time.perf_counter()
        ids = hf.encode(text, add_special_tokens=False).ids
        passes.append(time.perf_counter() - begin)
    else:
        raise SystemExit(f"unknown system {system!r}")
    result["passes_s"] = passes
    result["tokens"] = len(ids)
    result["peak_rss_mb"] = _peak_mb()
    Path(ids_path).write_bytes(array.array("q", ids).tobytes())
    return result


#: The systems bpeproof is compared with, and how every speed ratio of the benchmarks reads.
PEERS = ("tiktoken", "hf")
RATIO_LEGEND = "impl x: impl's speed ÷ the peer's (the peer's time ÷ impl's), how many times faster bpeproof is"


def long_runs() -> None:
    """enc_R on one long run a^n (no pre-tokenization) with doubling rules: the worst case for naive merging."""
    from bpeproof.impl.encoder import enc
    from bpeproof.spec.types import Rule

    rules = [Rule(97, 97, 256)] + [Rule(256 + level, 256 + level, 257 + level) for level in range(24)]
    print("\nimpl.encoder.enc on a run of one byte, rules (a,a), (c1,c1), (c2,c2), ...:")
    for n in (10**5, 10**6):
        begin = time.perf_counter()
        ids = enc(rules, b"a" * n)
        seconds = time.perf_counter() - begin
        print(f"  n = {n:>9,}: {seconds:6.2f} s, {seconds / (n / 1e5):.3f} s per 100 KB, {len(ids)} tokens")


# ---------------------------------------------------------------------------
# The parent: run every system, compare, report
# ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mb", type=float, default=10.0, help="megabytes of text (default 10)")
    parser.add_argument("--vocab", choices=["r50k", "cl100k", "o200k", "improper"], default="cl100k",
                        help="the rank file; improper: cl100k with ranks swapped so that tokens rank below their parts"
                        " (no hf: its merges come from a proper rank file)")
    parser.add_argument("--systems", default="impl,impl-python,tiktoken,hf")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--text", help=argparse.SUPPRESS)
    parser.add_argument("--ids", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child, args.text, args.vocab, args.ids)))
        return 0
    rank_file = SHARED / "vocabs" / f"{_base(args.vocab)}_base.tiktoken.gz"
    if not rank_file.exists():
        print(f"{rank_file} is not present: the benchmark needs a tiktoken rank file", file=sys.stderr)
        return 2
    text, origin = build_text(args.mb)
    size = len(text.encode("utf-8"))
    print(f"text: {size / 1e6:.2f} MB, {origin}")
    print(f"vocabulary: {args.vocab} ({rank_file.name}); pattern: {_base(args.vocab)}; single thread\n")
    if args.vocab == "improper":
        args.systems = ",".join(system for system in args.systems.split(",") if system != "hf")
    env = dict(os.environ, RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", PYTHONHASHSEED="0")
    results: dict[str, dict[str, Any]] = {}
    id_files: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as workdir:
        text_path = Path(workdir) / "text.txt"
        text_path.write_text(text, encoding="utf-8")
        for system in args.systems.split(","):
            ids_path = Path(workdir) / f"{system}.ids"
            command = [sys.executable, __file__, "--child", system, "--text", str(text_path),
                       "--ids", str(ids_path), "--vocab", args.vocab]
            done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
            if done.returncode != 0:
                print(f"{system}: failed\n{done.stderr.strip()[-2000:]}\n")
                continue
            results[system] = json.loads(done.stdout.strip().splitlines()[-1])
            id_files[system] = ids_path.read_bytes()
    header = f"{'system':<34}{'setup s':>9}{'encode s':>10}{'MB/s':>8}"
    header += f"{'peak RSS MB':>13}{'RSS before':>12}{'tokens':>10}  ids"
    print(header)
    print("-" * len(header))
    speeds: dict[str, float] = {}  # label -> MB/s
    for system, result in results.items():
        same = "same" if "tiktoken" in id_files and id_files[system] == id_files["tiktoken"] else "DIFFERENT"
        if system == "tiktoken":
            same = "(reference)"
        for index, seconds in enumerate(result["passes_s"]):
            label = system if len(result["passes_s"]) == 1 else f"{system} ({'cold' if index == 0 else 'warm'} cache)"
            speed = speeds[label] = size / 1e6 / seconds
            print(
                f"{label:<34}{result['setup_s']:>9.2f}{seconds:>10.2f}{speed:>8.2f}"
                f"{result['peak_rss_mb']:>13.0f}{result['rss_before_mb']:>12.0f}{result['tokens']:>10}  {same}"
            )
    print("\n'warm cache': the same text encoded again by the same Tokenizer (its word cache already filled).")
    peers = [system for system in PEERS if system in speeds]
    if peers:
        print(f"\n{RATIO_LEGEND}:")
        for label, speed in speeds.items():
            if label.startswith("impl"):
                print(f"  {label:<32}" + "".join(f"  {speed / speeds[peer]:7.2f}x {peer}" for peer in peers))
    for system, result in results.items():
        if "engine" in result:
            print(f"{system}: {result['engine']}")
    long_runs()
    return 0 if all(id_files[s] == id_files.get("tiktoken", id_files[s]) for s in id_files) else 1


if __name__ == "__main__":
    raise SystemExit(main())
