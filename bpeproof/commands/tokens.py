"""``bpeproof encode``, ``decode`` and ``explain``: a vocabulary file at work on text."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bpeproof.commands import EXIT_OK, UsageError
from bpeproof.commands._vocab import load_tokenizer, parse_ids
from bpeproof.impl.atomic import atomic_write_text
from bpeproof.impl.explain import Explanation, explain, render_svg, render_text


def _input_text(args: argparse.Namespace) -> str:
    if args.text is not None and args.file is not None:
        raise UsageError("give TEXT or --file, not both")
    if args.file is not None:
        if args.file == "-":
            return sys.stdin.read()
        try:
            return Path(args.file).read_bytes().decode("utf-8")
        except UnicodeDecodeError as error:
            raise UsageError(f"{args.file}: not valid UTF-8 at byte {error.start}") from None
    if args.text is not None:
        return str(args.text)
    return sys.stdin.read()


def run_encode(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.vocab, args.pattern)
    text = _input_text(args)
    ids = tokenizer.encode(text, allowed_special="all" if args.specials else None)
    if args.json:
        print(json.dumps({"ids": ids, "tokens": len(ids), "bytes": len(text.encode("utf-8")),
                          "semantics": tokenizer.semantics}))
    else:
        print(" ".join(map(str, ids)))
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
                        help="a tokenizer saved by 'bpeproof train', a tiktoken rank file, a byte-level"
                        " tokenizer.json, GPT-2's encoder.json (with vocab.bpe beside it), a sentencepiece BPE"
                        " .model, or Mistral's tekken JSON (each may be gzip-compressed)")
    parser.add_argument("--pattern", default=None, metavar="NAME|REGEX",
                        help="pre-tokenization, if the file does not say (rank files: guessed from the name)")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    encode = commands.add_parser("encode", help="text to token ids",
                                 description="Encode text (TEXT, --file, or standard input) to token ids.")
    encode.add_argument("text", nargs="?", metavar="TEXT", help="the text (default: standard input)")
    encode.add_argument("--file", metavar="FILE", help="read the text from a UTF-8 file (- for standard input)")
    _vocab_options(encode)
    encode.add_argument("--specials", action="store_true", help="encode special token names as their ids")
    encode.add_argument("--json", action="store_true", help="print {ids, tokens, bytes} as JSON")
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
        description="Show, for each pre-token, the merges in the order the rules apply them (def-bpe) and the"
        " final tokens; --svg draws the merge trees like the article's figure.")
    explain_parser.add_argument("text", metavar="TEXT")
    _vocab_options(explain_parser)
    explain_parser.add_argument("--svg", type=Path, metavar="OUT", help="write the merge trees as an SVG picture")
    explain_parser.add_argument("--json", action="store_true", help="print the steps as JSON")
    explain_parser.set_defaults(handler=run_explain)
