"""Speed of ``bpeproof check``, and the time to catch each planted text → ids port.

    python bench/bench_check.py                 # throughput: enc checks and --tokenizer checks, 10 s each
    python bench/bench_check.py --proofs        # every planted port caught within 30 s, correct ports 60 s clean
    python bench/bench_check.py --seconds 5     # shorter runs
    python bench/bench_check.py --startup FILE  # seconds from the start of `bpeproof check` to its first text
    python bench/bench_check.py --vocab FILE    # throughput of tiktoken (wrapped, and the example adapter) on FILE

Throughput counts examples (one call of the code under test, judged against the specification or the reference)
per second of wall time on this machine (2 cores).  The vocabulary is trained on the spot
(``bpeproof.proofs_tests.fixtures.vocab``); with ``../shared/vocabs/cl100k_base.tiktoken.gz`` present the tokenizer
checks also run on cl100k (or on ``--vocab FILE``).

``--startup FILE`` runs ``bpeproof check --examples 64`` on FILE with the example Python adapter
(``--cmd``) and with tiktoken wrapped (``--tokenizer``), five times each, and prints the median time from the
start of the command to its first request to the implementation.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bpeproof.proofs_tests.checker.functions import check  # noqa: E402
from bpeproof.proofs_tests.checker.tokenizer_check import check_tokenizer  # noqa: E402
from bpeproof.proofs_tests.fixtures.vocab import write_rank_file  # noqa: E402
from bpeproof.proofs_tests.planted.ports import CORRECT_PORTS, PORTS  # noqa: E402

CL100K = ROOT.parent / "shared" / "vocabs" / "cl100k_base.tiktoken.gz"
ADAPTER = f"{sys.executable} {ROOT / 'examples' / 'adapters' / 'tiktoken_adapter.py'}"
#: Runs ``bpeproof check`` with its arguments and prints the monotonic time of its first request, then ends it.
FIRST_REQUEST = """
import os, sys, time
from bpeproof.proofs_tests.checker import protocol
def first(self, *args, **kwargs):
    print(f"FIRST {time.monotonic()!r}", flush=True)
    os._exit(0)  # the reaper of the implementation ends with the checker
protocol.Implementation.send_encode = first
from bpeproof.cli import main
sys.exit(main(sys.argv[1:]))
"""


def first_request(arguments: list[str]) -> float:
    """Seconds from starting ``bpeproof check ARGUMENTS`` to its first request."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", FIRST_REQUEST, "check", *arguments], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("FIRST "):
            return float(line.split()[1]) - start
    raise RuntimeError(f"no request was sent: {done.stderr.strip()[-300:]}")


def startup(vocab: str, runs: int = 5) -> None:
    print(f"start-up on {Path(vocab).name}: seconds to the first text (median of {runs})")
    for label, target in (("--cmd (the Python adapter)", ["--cmd", ADAPTER]),
                          ("--tokenizer (tiktoken wrapped)",
                           ["--tokenizer", "bpeproof.proofs_tests.planted.ports:encode_tiktoken"])):
        times = [first_request([*target, "--vocab", vocab, "--examples", "64", "--seed", "1"]) for _ in range(runs)]
        print(f"  {label:<32} {statistics.median(times):6.2f} s  ({', '.join(f'{t:.2f}' for t in times)})",
              flush=True)


def throughput(seconds: float, vocab: str, extra: str | None = None) -> None:
    print(f"throughput, {seconds:g} s each (examples per second)")
    for target in ("bpeproof.impl.encoder:enc", "bpeproof.proofs_tests.planted.correct:enc_rank_order"):
        result = check({"enc": target}, seconds=seconds, seed=1)
        print(f"  enc   {target:<48} {result.examples_per_second:8.0f}/s  {result.per_property}", flush=True)
    runs: list[tuple[str | None, str, str | None]] = [(target, vocab, "cl100k") for target in CORRECT_PORTS]
    big = extra if extra is not None else str(CL100K) if CL100K.exists() else None
    if big is not None:
        runs += [("bpeproof.proofs_tests.planted.ports:encode_tiktoken", big, None), (None, big, None)]
    for port, path, pattern in runs:
        text_result = check_tokenizer(port, vocab=path, pattern=pattern, seconds=seconds, seed=1,
                                      cmd=ADAPTER if port is None else None)
        name = f"{port.split(':')[1] if port else 'the Python adapter'} on {Path(path).name}"
        status = "FLAGGED" if text_result.found else "ok"
        print(f"  text  {name:<48} {text_result.examples_per_second:8.0f}/s  {status} {text_result.per_source}",
              flush=True)


def proofs(vocab: str, unreachable: str, catch: float, clean: float) -> int:
    failures = 0
    print(f"planted ports, {catch:g} s budget each")
    for target, layers in PORTS:
        path = unreachable if target.endswith("no_whole_piece") else vocab
        result = check_tokenizer(target, vocab=path, pattern="cl100k", seconds=catch, seed=1)
        ok = result.found and result.layer in layers.split("|")
        failures += not ok
        found = f"{result.seconds_to_find:.2f} s" if result.seconds_to_find is not None else "-"
        print(f"  {target.split(':')[1]:<30} {'caught' if ok else 'MISSED'} in {found:>8}  layer {result.layer}"
              f"  text {result.text!r}", flush=True)
    print(f"correct ports, {clean:g} s each")
    for target in CORRECT_PORTS:
        for path in (vocab, unreachable):
            result = check_tokenizer(target, vocab=path, pattern="cl100k", seconds=clean, seed=2,
                                     decode="bpeproof.proofs_tests.planted.ports:decode")
            ok = not result.found and result.ran
            failures += not ok
            print(f"  {target.split(':')[1]:<30} {Path(path).name:<22} {'clean' if ok else 'FLAGGED'}"
                  f"  {result.examples} examples ({result.examples_per_second:.0f}/s)", flush=True)
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0, help="budget of each throughput run")
    parser.add_argument("--proofs", action="store_true", help="the 30 s catch / 60 s clean runs")
    parser.add_argument("--startup", metavar="FILE", help="time to the first text of a check on this vocabulary")
    parser.add_argument("--vocab", metavar="FILE", help="a rank file for the tiktoken runs (default: cl100k's)")
    args = parser.parse_args()
    if args.startup:
        startup(args.startup)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        vocab = str(write_rank_file(Path(tmp) / "trained.tiktoken"))
        unreachable = str(write_rank_file(Path(tmp) / "unreachable.tiktoken", unreachable=True))
        start = time.monotonic()
        if args.proofs:
            failures = proofs(vocab, unreachable, 30.0, 60.0)
            print(f"{failures} failures in {time.monotonic() - start:.0f} s")
            return 1 if failures else 0
        throughput(args.seconds, vocab, args.vocab)
    return 0


if __name__ == "__main__":
    sys.exit(main())
