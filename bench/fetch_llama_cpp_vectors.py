"""Fetch llama.cpp's tokenizer test vectors (vocabulary-only GGUF files with their inputs and expected ids).

    python bench/fetch_llama_cpp_vectors.py DEST [--version 0.3.36] [--sdist TAR.GZ] [--gzip] [--only NAME ...]
                                                 [--unicode-table FILE]

llama.cpp keeps, in its ``models/`` folder, one ``ggml-vocab-NAME.gguf`` per tokenizer it supports, most of
them with ``ggml-vocab-NAME.gguf.inp`` (texts separated by a line ``__ggml_vocab_test__``) and
``ggml-vocab-NAME.gguf.out`` (one line of ids per text, made by the model's own ``transformers`` tokenizer and
checked by llama.cpp's ``tests/test-tokenizer-0.cpp``).  The source distribution of ``llama-cpp-python`` on
PyPI carries llama.cpp (MIT licence) under ``vendor/llama.cpp``; this script downloads it with pip (no build,
no dependencies) and copies that folder's ``ggml-vocab-*`` files into DEST (``--gzip``: the GGUF files
gzip-compressed, as ``proofs_tests/fixtures/llama_cpp`` keeps them).  Point the tests at DEST with
``BPEPROOF_LLAMA_CPP_MODELS=DEST`` to check every vocabulary there.

``--unicode-table FILE`` also writes, from the same source's ``src/unicode-data.cpp``, the code point classes
that llama.cpp's pre-tokenizer uses (the module ``impl/pre_tokenizers/llama_cpp_unicode.py``).
"""

from __future__ import annotations

import argparse
import gzip
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from itertools import pairwise
from pathlib import Path

PACKAGE = "llama-cpp-python"
DEFAULT_VERSION = "0.3.36"

#: llama.cpp's category flags (``src/unicode.h``) → the class the project's table stores: the collapsed byte
#: llama.cpp puts in place of a code point above 127 (0xD1 number, 0xD2 letter, 0xD3 punctuation, 0xD4 accent
#: mark, 0xD5 symbol, 0xD0 anything else), "w" for White_Space (collapsed to 0x0B).
_CATEGORY_CLASS = {0x0002: "1", 0x0004: "2", 0x0020: "3", 0x0010: "4", 0x0040: "5"}


def download(version: str, into: Path) -> Path:
    """The source distribution of llama-cpp-python ``version``, downloaded with pip into ``into``."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                    f"{PACKAGE}=={version}", "-d", str(into)], check=True)
    found = sorted(into.glob("llama_cpp_python-*.tar.gz"))
    if not found:
        raise SystemExit(f"pip did not download a source distribution of {PACKAGE} {version}")
    return found[0]


def extract(archive: Path, into: Path) -> Path:
    """The ``vendor/llama.cpp`` folder of the archive, extracted under ``into``."""
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if "/vendor/llama.cpp/models/ggml-vocab-" in m.name
                   or m.name.endswith("/vendor/llama.cpp/src/unicode-data.cpp")
                   or m.name.endswith("/vendor/llama.cpp/LICENSE")]
        tar.extractall(into, members=members, filter="data")
    roots = sorted(into.glob("*/vendor/llama.cpp"))
    if not roots:
        raise SystemExit(f"{archive} holds no vendor/llama.cpp folder")
    return roots[0]


def unicode_table(source: str) -> list[tuple[int, str]]:
    """(first code point, class) ranges above 127 from llama.cpp's ``unicode-data.cpp``, adjacent equal merged."""
    start = source.index("unicode_ranges_flags")
    middle = source.index("unicode_set_whitespace")
    end = source.index("unicode_map_lowercase")
    ranges = [(int(a, 16), int(b, 16)) for a, b in re.findall(r"\{0x([0-9A-Fa-f]+), 0x([0-9A-Fa-f]+)\}",
                                                             source[start:middle])]
    whitespace = {int(a, 16) for a in re.findall(r"0x([0-9A-Fa-f]+)", source[middle:end])}
    table: list[tuple[int, str]] = []
    for (first, flags), (after, _) in pairwise(ranges):
        kind = _CATEGORY_CLASS.get(flags & 0xFF, "0")
        for code in range(max(first, 128), after):
            value = "w" if code in whitespace else kind
            if not table or table[-1][1] != value:
                table.append((code, value))
    return table


def write_unicode_module(table: list[tuple[int, str]], path: Path, version: str) -> None:
    entries = [f"{code:x}{value}" for code, value in table]
    lines: list[str] = []
    line = ""
    for entry in entries:
        if len(line) + len(entry) + 1 > 110:
            lines.append(line)
            line = ""
        line = f"{line} {entry}" if line else entry
    lines.append(line)
    body = "\n".join(lines)
    path.write_text(
        '"""llama.cpp\'s classes of the code points above 127, as its pre-tokenizer sees them (generated).\n\n'
        f"Made by ``bench/fetch_llama_cpp_vectors.py --unicode-table`` from ``src/unicode-data.cpp`` of llama.cpp\n"
        f"(MIT licence) as vendored by {PACKAGE} {version}.  ``RANGES`` lists ``<first code point in hex><class>``\n"
        "for every run of code points of one class, in order; a run lasts until the next entry (the last one\n"
        "until U+10FFFF).  Classes: ``w`` White_Space; ``1`` number, ``2`` letter, ``3`` punctuation, ``4`` mark,\n"
        "``5`` symbol (\\\\p{N}, \\\\p{L}, \\\\p{P}, \\\\p{M}, \\\\p{S}); ``0`` anything else (separators, controls,\n"
        "unassigned).\n"
        '"""\n\n'
        f'SOURCE = "llama.cpp src/unicode-data.cpp, {PACKAGE} {version}"\n\n'
        f'RANGES = """\n{body}\n"""\n',
        encoding="utf-8",
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path, help="folder to copy the ggml-vocab-* files into")
    parser.add_argument("--version", default=DEFAULT_VERSION, help=f"{PACKAGE} version (default {DEFAULT_VERSION})")
    parser.add_argument("--gzip", action="store_true", help="store the GGUF files gzip-compressed (*.gguf.gz)")
    parser.add_argument("--only", nargs="*", default=None, metavar="NAME",
                        help="copy only these vocabularies (ggml-vocab-NAME.gguf)")
    parser.add_argument("--sdist", type=Path, metavar="TAR.GZ",
                        help="use this llama-cpp-python source distribution instead of downloading one")
    parser.add_argument("--unicode-table", type=Path, metavar="FILE",
                        help="also write llama.cpp's code point classes as a Python module")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        root = extract(args.sdist if args.sdist is not None else download(args.version, work), work)
        args.dest.mkdir(parents=True, exist_ok=True)
        for source in sorted((root / "models").glob("ggml-vocab-*")):
            name = source.name.removeprefix("ggml-vocab-").split(".gguf")[0]
            if args.only is not None and name not in args.only:
                continue
            if source.suffix == ".gguf" and args.gzip:
                target = args.dest / (source.name + ".gz")
                with source.open("rb") as plain, gzip.GzipFile(target, "wb", compresslevel=9, mtime=0) as packed:
                    shutil.copyfileobj(plain, packed)
            else:
                target = args.dest / source.name
                shutil.copyfile(source, target)
            print(target)
        if args.unicode_table is not None:
            table = unicode_table((root / "src" / "unicode-data.cpp").read_text(encoding="utf-8"))
            write_unicode_module(table, args.unicode_table, args.version)
            print(args.unicode_table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
