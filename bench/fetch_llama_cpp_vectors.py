"""Fetch llama.cpp's tokenizer test vectors (vocabulary-only GGUF files with their inputs and expected ids).

    python bench/fetch_llama_cpp_vectors.py DEST [--version 0.3.36] [--sdist TAR.GZ] [--gzip] [--only NAME ...]
                                                 [--reduce] [--unicode-table FILE]

llama.cpp keeps, in its ``models/`` folder, one ``ggml-vocab-NAME.gguf`` per tokenizer it supports, most of
them with ``ggml-vocab-NAME.gguf.inp`` (texts separated by a line ``__ggml_vocab_test__``) and
``ggml-vocab-NAME.gguf.out`` (one line of ids per text, made by the model's own ``transformers`` tokenizer and
checked by llama.cpp's ``tests/test-tokenizer-0.cpp``).  The source distribution of ``llama-cpp-python`` on
PyPI carries llama.cpp (MIT licence) under ``vendor/llama.cpp``; this script downloads it with pip (no build,
no dependencies) and copies that folder's ``ggml-vocab-*`` files into DEST (``--gzip``: the GGUF files
gzip-compressed, as ``proofs_tests/fixtures/llama_cpp`` keeps them).  Point the tests at DEST with
``BPEPROOF_LLAMA_CPP_MODELS=DEST`` to check every vocabulary there.

``--reduce`` writes each GGUF file of a vocabulary spelt as text (SPM, ``gemma4``) that has vectors reduced to
what its vectors need, with the ``gguf`` package: the same ids, the tokens their texts can reach (every token
that is a substring of an input with spaces written U+2581, or one more U+2581 before it), every token that is
not of the normal type or that llama.cpp recognises by its text, and the merges those texts can apply; every
other token becomes an empty string of the unused type (llama.cpp names it ``[EMPTY_<id>]``) with the score 0.
Only the tokenizer's keys and ``general.name`` are kept.  Such a file gives llama.cpp's ids on its vectors as
the whole one does: a token that is no substring of the text merged never takes part in merging it.

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


_SEPARATOR = "\n__ggml_vocab_test__\n"


def reduce_vocabulary(source: Path, target: Path, compress: bool) -> None:
    """Write ``source`` (a ``ggml-vocab-*.gguf`` with its ``.inp`` beside it) reduced to what its vectors need
    (see the module docstring) to ``target``, gzip-compressed when ``compress``."""
    import gguf

    from bpeproof.impl.formats.gguf_tokenizer import NORMAL, read_gguf_tokenizer
    from bpeproof.impl.formats.gguf_vocab import merge_sides

    tokenizer = read_gguf_tokenizer(source)
    if tokenizer.model != "llama" and not tokenizer.escape_whitespaces:
        raise SystemExit(f"{source.name}: only vocabularies spelt as text (SPM, gemma4) are reduced")
    inputs = source.with_name(source.name + ".inp").read_text(encoding="utf-8").split(_SEPARATOR)
    reached = "\0".join(text.replace(" ", "\u2581") for text in inputs)
    reader = gguf.GGUFReader(str(source))
    fields = {name: field for name, field in reader.fields.items() if not name.startswith("GGUF.")}
    texts = fields["tokenizer.ggml.tokens"].contents()
    types = fields["tokenizer.ggml.token_type"].contents()
    keep = [kind != 1 or attr != NORMAL or text in reached or (text[:1] == "\u2581" and text[1:] in reached)
            for text, kind, attr in zip(texts, types, tokenizer.attrs, strict=True)]
    replaced: dict[str, list[object]] = {
        "tokenizer.ggml.tokens": [text if kept else "" for text, kept in zip(texts, keep, strict=True)],
        "tokenizer.ggml.token_type": [kind if kept else 5 for kind, kept in zip(types, keep, strict=True)],
    }
    if "tokenizer.ggml.scores" in fields:
        scores = fields["tokenizer.ggml.scores"].contents()
        replaced["tokenizer.ggml.scores"] = [score if kept else 0 for score, kept in zip(scores, keep, strict=True)]
    if "tokenizer.ggml.merges" in fields:
        lines = fields["tokenizer.ggml.merges"].contents()
        sides = merge_sides(lines)
        replaced["tokenizer.ggml.merges"] = [line for line, left, right in zip(lines, sides[0::2], sides[1::2],
                                                                              strict=True)
                                             if left and right and left + right in reached]
    scratch = target.with_name(target.name + ".tmp")
    writer = gguf.GGUFWriter(str(scratch), fields["general.architecture"].contents())
    for name, field in fields.items():
        if name == "general.architecture" or name == "tokenizer.chat_template" or not (
                name.startswith("tokenizer.") or name == "general.name"):
            continue
        value = replaced.get(name, field.contents())
        writer.add_key_value(name, value, field.types[0], field.types[1] if len(field.types) > 1 else None)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    if compress:
        with scratch.open("rb") as plain, gzip.GzipFile(target, "wb", compresslevel=9, mtime=0) as packed:
            shutil.copyfileobj(plain, packed)
        scratch.unlink()
    else:
        scratch.replace(target)
    print(f"{target}: {sum(keep)} of {len(keep)} tokens kept")


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
    parser.add_argument("--reduce", action="store_true",
                        help="write the GGUF files of SPM and gemma4 vocabularies reduced to what their vectors need")
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
            if source.suffix == ".gguf" and args.reduce:
                reduce_vocabulary(source, args.dest / (source.name + (".gz" if args.gzip else "")), args.gzip)
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
