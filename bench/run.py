"""Every benchmark in one command: training, then encoding, each system in its own process.

    python bench/run.py            # training at 1, 10, 30 MB; encoding 4 MB of documents with cl100k and o200k;
                                   # encoding 1.5 MB a text with every format (bench_formats.py)
    python bench/run.py --quick    # training at 1 MB with 1,000 merges; encoding 1 MB, one round; formats 0.3 MB
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a first look")
    args = parser.parse_args()
    runs = [
        [sys.executable, str(HERE / "bench_train.py"), *(["--quick"] if args.quick else [])],
        [sys.executable, str(HERE / "bench_encode.py"), *(["--mb", "1", "--runs", "1"] if args.quick else [])],
        [sys.executable, str(HERE / "bench_formats.py"), *(["--quick"] if args.quick else [])],
    ]
    status = 0
    for command in runs:
        print(f"$ {' '.join(Path(part).name if part.endswith('.py') else part for part in command[1:])}", flush=True)
        status = max(status, subprocess.run(command, check=False).returncode)
    return status


if __name__ == "__main__":
    sys.exit(main())
