"""``bpeproof trace``: the ex-training-trace table of def-bpe for a small corpus, computed by the specification;
with ``--vocab``, the table of a vocabulary file's merges replayed on the corpus under the file's own semantics
(``bpeproof.impl.replay_trace``)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from bpeproof import spec
from bpeproof.commands import EXIT_OK, UsageError
from bpeproof.commands._vocab import load_tokenizer
from bpeproof.impl.explain import ARTICLE
from bpeproof.impl.io.corpus import read_text
from bpeproof.impl.io.wording import count
from bpeproof.impl.replay_trace import ReplayTrace, replay_corpus

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
    _bounded(sum(len(word) for word in corpus), "the trace runs the specification, which")
    return corpus


def _bounded(symbols: int, runner: str) -> None:
    if symbols > MAX_TRACE_SYMBOLS:
        raise UsageError(f"the corpus has {symbols} bytes; {runner} is for corpora of at most {MAX_TRACE_SYMBOLS}"
                         " bytes (use 'bpeproof train' for real corpora)")


def read_texts(paths: Sequence[str], words: Sequence[str]) -> list[str]:
    """The texts of a replay: each --word, each file whole; the article's corpus when neither is given."""
    texts = [*words, *(read_text(name) for name in paths)]
    if not paths and not words:
        texts = [word.decode("utf-8") for word in ARTICLE_CORPUS]
    if not any(texts):
        raise UsageError("the corpus is empty: give at least one word")
    _bounded(sum(len(text.encode("utf-8")) for text in texts), "the replay runs the merge models in Python, which")
    return texts


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
    if args.vocab is not None:
        return run_replay(args)
    if args.pattern is not None:
        raise UsageError("--pattern: only with --vocab (the trace of def-bpe cuts its corpus into words itself)")
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


def replay_rows(replay: ReplayTrace, limit: int | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = [{"step": 0, "total_tokens": replay.units, "compression": replay.bytes / max(
        1, replay.units)}]
    for j, row in enumerate(replay.rows[:limit], start=1):
        rows.append({"step": j, "merge": row.label, "rank": row.rank, "pair": list(row.pair), "count": row.count,
                     "new_token": row.token, "total_tokens": row.total_tokens,
                     "compression": replay.bytes / max(1, row.total_tokens)})
    return rows


def run_replay(args: argparse.Namespace) -> int:
    """``trace --vocab FILE``: the file's merges replayed on the corpus (``bpeproof.impl.replay_trace``)."""
    if args.merges is not None and args.merges < 0:
        raise UsageError(f"--merges must not be negative, not {args.merges}")
    tokenizer = load_tokenizer(args.vocab, args.pattern)
    replay = replay_corpus(tokenizer, read_texts(args.files, args.word))
    rows = replay_rows(replay, args.merges)
    differ = [{"piece": piece, "ids": ids, "article_ids": article} for piece, ids, article in replay.differ]
    if args.json:
        print(json.dumps({"vocab": args.vocab, "semantics": replay.semantics, "words": replay.words,
                          "distinct": replay.distinct, "units": replay.units, "bytes": replay.bytes,
                          "ids": replay.ids, "whole": replay.whole, "steps": rows, "article": {"differ": differ,
                                                                        "unapplied": replay.unapplied}},
                         ensure_ascii=False, indent=2))
        return EXIT_OK
    print(f"corpus: {count(replay.words, 'pre-token')} ({replay.distinct} distinct), {count(replay.bytes, 'byte')},"
          f" {count(replay.units, 'starting unit')}; {args.vocab} runs {replay.semantics}")
    print(f"{'step':>4}  {'merge':<14} {'pair':<20} {'count':>5}  {'new token':<14} {'tokens':>6}  bytes/token")
    for row in rows:
        compression = row["compression"]
        assert isinstance(compression, float)
        if row["step"] == 0:
            print(f"{0:>4}  {'':<14} {'':<20} {'':>5}  {'':<14} {row['total_tokens']:>6}  {compression:.2f}")
            continue
        pair = row["pair"]
        assert isinstance(pair, list)
        pair_text = f"({pair[0]}, {pair[1]})" if row["merge"] != "whole piece" else "-"
        print(f"{row['step']:>4}  {row['merge']!s:<14} {pair_text:<20} {row['count']:>5}  {row['new_token']!s:<14}"
              f" {row['total_tokens']:>6}  {compression:.2f}")
    shown = f" ({count(len(rows) - 1, 'row')} shown)" if len(rows) - 1 < len(replay.rows) else ""
    whole = f", the whole-piece look-up on {count(replay.whole, 'pre-token')}" if replay.whole else ""
    print(f"{count(len(replay.merges), 'merge')} of the file fire on the corpus{whole}{shown};"
          f" {count(replay.ids, 'id')}")
    if replay.semantics != "sequential":
        verdict = (f"other tokens for {len(replay.differ)} of {count(replay.distinct, 'distinct piece')}, e.g."
                   f" {replay.differ[0][0]!r}: {replay.differ[0][1]} vs {replay.differ[0][2]}" if replay.differ
                   else "the same tokens where it applies" if replay.unapplied else "the same tokens for every piece")
        unapplied = f"; it does not apply to {count(replay.unapplied, 'piece')}" if replay.unapplied else ""
        print(f"{ARTICLE}: {verdict}{unapplied}")
    return EXIT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "trace",
        help="print the training table (pairs, counts, ties, totals) of def-bpe for a small corpus",
        description="Train with the specification and print every step as the article's ex-training-trace table:"
        " the chosen pair, its count, the pairs tied with it, the new token, the total token count, the vocabulary"
        " size and the compression. With no FILE and no --word, the article's corpus (slow×4, slower×2, lowest×3,"
        " newest×3). With --vocab FILE, no training: the file's merges replayed on the corpus under the file's own"
        " semantics (the merges that fire, in the file's order, how often, the tokens left), and the pieces where the"
        " article's def-bpe on the file's recovered merge list gives other tokens.",
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="UTF-8 text files, cut into words")
    parser.add_argument("--word", action="append", default=[], metavar="WORD",
                        help="a word of the corpus (repeat the option; repeat a word to weigh it)")
    parser.add_argument("--merges", type=int, default=None, metavar="N", help="at most N merges (default: no bound)")
    parser.add_argument("--vocab", default=None, metavar="FILE",
                        help="replay this vocabulary file's merges on the corpus instead of training (any format"
                        " 'encode --vocab' reads)")
    parser.add_argument("--pattern", default=None, metavar="NAME|REGEX",
                        help="with --vocab: pre-tokenization, if the file does not say")
    parser.add_argument("--json", action="store_true", help="print the table as JSON")
    parser.set_defaults(handler=run)
