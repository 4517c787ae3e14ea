"""``bpeproof encode``, ``decode`` and ``explain``: a vocabulary file at work on text."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bpeproof.commands import EXIT_OK, UsageError
from bpeproof.commands._engine import add_engine_options, engine_phrase, open_engine
from bpeproof.commands._vocab import load_tokenizer, parse_ids
from bpeproof.commands.count import workers_option
from bpeproof.impl.io.wording import count

if TYPE_CHECKING:
    from bpeproof.impl.explain import Explanation

# The explanations, the worker pool and the readers of files are imported by the commands that use them: a short
# ``bpeproof encode TEXT`` spends its time on imports, and needs none of them.

#: What ``encode`` says when it is about to read a terminal.
STDIN_HINT = "bpeproof encode: reading text from standard input; end with Ctrl-D (Ctrl-Z Enter on Windows)"


def _read_stdin() -> str:
    if sys.stdin.isatty():
        print(STDIN_HINT, file=sys.stderr)
    return sys.stdin.read()


def _input_texts(args: argparse.Namespace) -> list[str]:
    """The texts to encode: TEXT, each --file (one text per file), or standard input."""
    if args.text is not None and args.file is not None:
        raise UsageError("give TEXT or --file, not both")
    if args.file is not None:
        from bpeproof.impl.io.corpus import read_text

        return [_read_stdin() if name == "-" else read_text(name) for name in args.file]
    if args.text is not None:
        return [str(args.text)]
    return [_read_stdin()]


def shard_option(text: str) -> int:
    """``--shard-tokens N``: ids per shard, at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of ids >= 1")
    return int(text)


def run_encode(args: argparse.Namespace) -> int:
    if args.output is not None:
        return _encode_to_array(args)
    if args.workers is not None:
        raise UsageError("--workers: only with -o FILE.npy (the ids of large files, written as an array)")
    if args.shard_tokens is not None:
        raise UsageError("--shard-tokens: only with -o DIRECTORY (the ids of large files, written as shards)")
    if args.engine != "processes" or args.scheduler is not None:
        raise UsageError("--engine dask: only with -o FILE.npy (the ids of large files, written as an array)")
    tokenizer = load_tokenizer(args.vocab, args.pattern)
    texts = _input_texts(args)
    allowed = "all" if args.specials else None
    encoded = [tokenizer.encode(text, allowed_special=allowed) for text in texts]
    ids = [token for part in encoded for token in part]
    if args.json:
        document: dict[str, object] = {"ids": ids, "tokens": len(ids),
                                       "bytes": sum(len(text.encode("utf-8")) for text in texts),
                                       "semantics": tokenizer.semantics}
        if len(texts) > 1:
            document["files"] = [{"file": name, "tokens": len(part)} for name, part in zip(args.file, encoded,
                                                                                          strict=True)]
        print(json.dumps(document))
    else:
        for part in encoded:
            print(" ".join(map(str, part)))
    return EXIT_OK


def _encode_to_array(args: argparse.Namespace) -> int:
    from bpeproof.impl.io.token_arrays import INDEX_NAME
    from bpeproof.impl.parallel import default_workers, encode_files

    if args.file is None:
        raise UsageError("-o FILE.npy encodes files: give them with --file FILE...")
    if "-" in args.file and args.file.count("-") > 1:
        raise UsageError("--file: standard input (-) can be read only once")
    if args.shard_tokens is None and args.output.is_dir():
        raise UsageError(f"{args.output}: is a directory: give --shard-tokens N to write shards into it, or name a"
                         " .npy file")
    tokenizer = load_tokenizer(args.vocab, args.pattern)
    if "-" in args.file and sys.stdin.isatty():
        print(STDIN_HINT, file=sys.stderr)
    started = time.perf_counter()
    with open_engine(args, args.file) as engine:
        files = encode_files(tokenizer, args.file, args.output, source=("file", args.vocab, args.pattern),
                             workers=args.workers, allowed_special="all" if args.specials else None, progress=None,
                             engine=engine, shard_tokens=args.shard_tokens)
        workers = engine.slots if engine is not None else args.workers or default_workers()
        phrase = engine_phrase(engine, workers)
    seconds = time.perf_counter() - started
    tokens = sum(entry.tokens for entry in files)
    size = sum(entry.bytes for entry in files)
    shards = -(-tokens // args.shard_tokens) if args.shard_tokens is not None else None
    if args.json:
        summary: dict[str, object] = {"output": str(args.output), "dtype": "uint32", "tokens": tokens, "bytes": size,
                                      "workers": workers, "engine": args.engine, "seconds": round(seconds, 3),
                                      "semantics": tokenizer.semantics}
        if shards is not None:
            summary.update(shards=shards, index=str(args.output / INDEX_NAME))
        summary["files"] = [{"file": entry.name, "start": entry.start, "tokens": entry.tokens, "bytes": entry.bytes}
                            for entry in files]
        print(json.dumps(summary, indent=2))
    else:
        kind = "uint32 .npy" if shards is None else f"{count(shards, 'shard')} of uint32 .npy and {INDEX_NAME}"
        print(f"encoded {size} bytes of {count(len(files), 'file')} to {tokens} ids in {seconds:.2f} s with"
              f" {phrase}; saved to {args.output} ({kind})")
    return EXIT_OK


def run_decode(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.vocab, args.pattern, decode_only=True)
    ids = parse_ids(args.ids, "the ids") if args.ids else parse_ids([sys.stdin.read()], "standard input")
    try:
        data = tokenizer.decode_bytes(ids)
    except (KeyError, ValueError) as error:
        raise UsageError(f"cannot decode: {error}") from None
    if args.bytes:
        sys.stdout.buffer.write(data)
        return EXIT_OK
    try:
        text = data.decode("utf-8", errors="replace" if args.replace else "strict")
    except UnicodeDecodeError as error:
        raise UsageError(f"the decoded bytes are not valid UTF-8 at byte {error.start} (prop-utf8-boundary);"
                         " use --replace or --bytes") from None
    sys.stdout.write(text if text.endswith("\n") or not sys.stdout.isatty() else text + "\n")
    return EXIT_OK


def run_explain(args: argparse.Namespace) -> int:
    from bpeproof.impl.explain import explain, render_svg, render_text
    from bpeproof.impl.io.atomic import atomic_write_text

    tokenizer = load_tokenizer(args.vocab, args.pattern)
    explanation: Explanation = explain(tokenizer, args.text)
    if args.json:
        print(json.dumps(explanation.to_json(), ensure_ascii=False, indent=2))
    else:
        print(render_text(explanation))
    if args.svg is not None:
        atomic_write_text(args.svg, render_svg(explanation))
        if not args.json:
            print(f"tree written to {args.svg}")
    return EXIT_OK


def _vocab_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--vocab", required=True, metavar="FILE",
                        help="a tokenizer saved by 'bpeproof train', a tiktoken rank file, a tokenizer.json, GPT-2's"
                        " encoder.json (with vocab.bpe beside it), CLIP's merges file, a sentencepiece BPE .model,"
                        " Mistral's tekken JSON or a GGUF file (each may be gzip-compressed)")
    parser.add_argument("--pattern", default=None, metavar="NAME|REGEX",
                        help="pre-tokenization, if the file does not say (rank files: guessed from the name)")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    encode = commands.add_parser(
        "encode", help="text to token ids",
        description="Encode text (TEXT, --file, or standard input) to token ids. Each --file is one text. With -o"
        " the ids of all files, one file after the other, are written as a .npy array of uint32 (through a"
        " temporary file, renamed at the end), encoded in worker processes: the same ids for any number. With"
        " --shard-tokens N, -o is a new or empty directory that gets shards of N ids (shard-00000.npy, ...) and"
        " index.json, which says where each shard and each file starts.")
    encode.add_argument("text", nargs="?", metavar="TEXT", help="the text (default: standard input)")
    encode.add_argument("--file", nargs="+", metavar="FILE",
                        help="read the text from UTF-8 files (.gz read as gzip; - for standard input)")
    _vocab_options(encode)
    encode.add_argument("--specials", action="store_true", help="encode special token names as their ids")
    encode.add_argument("-o", "--output", type=Path, metavar="OUT",
                        help="write the ids of the files as a uint32 .npy array (or, with --shard-tokens, a directory"
                        " of them) instead of printing them")
    encode.add_argument("--shard-tokens", type=shard_option, default=None, metavar="N",
                        help="with -o DIRECTORY: write shards of N ids each and index.json (e.g. 100000000)")
    encode.add_argument("--workers", type=workers_option, default=None, metavar="N",
                        help=f"with -o: encode in N processes (default: all cores, here {os.cpu_count() or 1})")
    add_engine_options(encode)
    encode.add_argument("--json", action="store_true", help="print {ids, tokens, bytes} (with -o: a summary) as JSON")
    encode.set_defaults(handler=run_encode)

    decode = commands.add_parser("decode", help="token ids to text",
                                 description="Decode token ids (arguments, or standard input; spaces, commas or a"
                                 " JSON list) to text. The bytes are joined first, then read as UTF-8"
                                 " (prop-utf8-boundary).")
    decode.add_argument("ids", nargs="*", metavar="ID", help="token ids (default: standard input)")
    _vocab_options(decode)
    decode.add_argument("--bytes", action="store_true", help="write the raw bytes")
    decode.add_argument("--replace", action="store_true", help="replace invalid UTF-8 with U+FFFD instead of failing")
    decode.set_defaults(handler=run_decode)

    explain_parser = commands.add_parser(
        "explain", help="show how each pre-token of a text is merged",
        description="Show, for each pre-token, the merges in the order the file's own semantics makes them and the"
        " final tokens: the rules in list order for the project's files (def-bpe), tiktoken's ranks with its"
        " whole-piece look-up, Hugging Face's merge lines with its flags, sentencepiece's scores, llama.cpp's merge"
        " lines. For any other file than the project's, each piece is also encoded by the article's def-bpe on the"
        " merge list recovered from the file, and a piece where that gives other tokens is marked. --svg draws the"
        " merge trees like the article's figure.")
    explain_parser.add_argument("text", metavar="TEXT")
    _vocab_options(explain_parser)
    explain_parser.add_argument("--svg", type=Path, metavar="OUT", help="write the merge trees as an SVG picture")
    explain_parser.add_argument("--json", action="store_true", help="print the steps as JSON")
    explain_parser.set_defaults(handler=run_explain)
