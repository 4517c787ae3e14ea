"""``bpeproof trace``: the ex-training-trace table of def-bpe for a small corpus, computed by the specification."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from bpeproof import spec
from bpeproof.commands import EXIT_OK, UsageError
from bpeproof.impl.io.corpus import read_text
from bpeproof.impl.io.wording import count

#: The specification is recursive and slow: the trace is for small corpora.
MAX_TRACE_SYMBOLS = 20_000

ARTICLE_CORPUS = [b"slow"] * 4 + [b"slower"] * 2 + [b"lowest"] * 3 + [b"newest"] * 3


def show(data: bytes) -> str:
    """A token's bytes as readable text: UTF-8 where valid, \\x escapes elsewhere."""
    return data.decode("utf-8", errors="backslashreplace").replace("\n", "\\n").replace(" ", "␣")


def read_corpus(paths: Sequence[str], words: Sequence[str]) -> list[bytes]:
    corpus: list[bytes] = [word.encode("utf-8") for word in words]
    for name in paths:
        corpus += spec.corpus_from_text(read_text(name))  # plain or gzip (bpeproof.impl.io.corpus)
    if not corpus and not paths and not words:
        return list(ARTICLE_CORPUS)
    if not corpus:
        raise UsageError("the corpus is empty: def-bpe needs at least one word")
    symbols = sum(len(word) for word in corpus)
    if symbols > MAX_TRACE_SYMBOLS:
        raise UsageError(
            f"the corpus has {symbols} bytes; the trace runs the specification, which is for corpora of at most"
            f" {MAX_TRACE_SYMBOLS} bytes (use 'bpeproof train' for real corpora)"
        )
    return corpus


def trace_rows(trace: spec.Trace) -> list[dict[str, object]]:
    rules = trace.rules
    rows: list[dict[str, object]] = [
        {"step": 0, "total_tokens": trace.corpus_symbols, "vocab_size": spec.ALPHABET_SIZE, "compression": 1.0}
    ]
    for j, step in enumerate(trace.steps, start=1):
        rows.append(
            {
                "step": j,
                "pair": [show(spec.symbols(rules, step.rule.a)), show(spec.symbols(rules, step.rule.b))],
                "pair_ids": [step.rule.a, step.rule.b],
                "count": step.count,
                "tied": [[show(spec.symbols(rules, a)), show(spec.symbols(rules, b))] for a, b in step.tied],
                "new_id": step.rule.c,
                "new_token": show(spec.symbols(rules, step.rule.c)),
                "total_tokens": step.total_tokens,
                "vocab_size": spec.ALPHABET_SIZE + j,
                "compression": trace.corpus_symbols / step.total_tokens,
            }
        )
    return rows


def run(args: argparse.Namespace) -> int:
    corpus = read_corpus(args.files, args.word)
    trace = spec.train_trace(corpus, args.merges)
    rows = trace_rows(trace)
    if args.json:
        print(json.dumps({"words": trace.corpus_words, "symbols": trace.corpus_symbols,
                          "bound": trace.corpus_symbols - trace.corpus_words, "cost": trace.cost,
                          "steps": rows}, ensure_ascii=False, indent=2))
        return EXIT_OK
    print(f"corpus: K = {count(trace.corpus_words, 'word')}, N = {count(trace.corpus_symbols, 'byte')};"
          f" bound N − K = {count(trace.corpus_symbols - trace.corpus_words, 'merge')}")
    header = f"{'step':>4}  {'pair':<20} {'count':>5}  {'tied with':<30} {'new token':<14} {'tokens':>6} {'vocab':>6}"
    print(header + "  bytes/token")
    for row in rows:
        if row["step"] == 0:
            print(f"{0:>4}  {'':<20} {'':>5}  {'':<30} {'':<14} {row['total_tokens']:>6} {row['vocab_size']:>6}"
                  f"  {1.0:.2f}")
            continue
        pair = row["pair"]
        tied = row["tied"]
        assert isinstance(pair, list) and isinstance(tied, list)
        pair_text = f"({pair[0]}, {pair[1]})"
        tied_text = ", ".join(f"({a}, {b})" for a, b in tied) or "-"
        compression = row["compression"]
        assert isinstance(compression, float)
        print(f"{row['step']:>4}  {pair_text:<20} {row['count']:>5}  {tied_text:<30} {row['new_token']!s:<14}"
              f" {row['total_tokens']:>6} {row['vocab_size']:>6}  {compression:.2f}")
    print(f"{count(len(trace.steps), 'merge')}; steps counted as in prop-bpe-training-cost: {trace.cost}")
    return EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "trace",
        help="print the training table (pairs, counts, ties, totals) of def-bpe for a small corpus",
        description="Train with the specification and print every step as the article's ex-training-trace table:"
        " the chosen pair, its count, the pairs tied with it, the new token, the total token count, the vocabulary"
        " size and the compression. With no FILE and no --word, the article's corpus (slow×4, slower×2, lowest×3,"
        " newest×3).",
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="UTF-8 text files, cut into words")
    parser.add_argument("--word", action="append", default=[], metavar="WORD",
                        help="a word of the corpus (repeat the option; repeat a word to weigh it)")
    parser.add_argument("--merges", type=int, default=None, metavar="N", help="at most N merges (default: no bound)")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    parser.set_defaults(handler=run)
