r"""Where ``bpeproof.load(FILE).encode`` spends its time on a ``tokenizer.json`` and on a sentencepiece model.

Usage::

    python bench/profile_encode.py [--mb 1] [--files deepseek,mistral-sp] [--top 15] > profile.md

For each file, on ``--mb`` megabytes of documents of about 4 KB (half multilingual, half Python code, as
``bench_formats.py`` cuts them), cold (a fresh tokenizer, its first pass) and warm (the second pass):

* the CPU seconds of the whole pass, without a profiler;
* for a ``tokenizer.json``: each stage of its pipeline timed by itself on the same documents (the added tokens'
  matchers, the normalizer, each pre-tokenizer step), each ``Split`` step's time cut into its parts (the
  character stand-ins, the expression's search alone, the spans, the ``Piece`` objects), the C word loop
  (``encode_pieces``: the word cache's look-ups and, on a miss, the merges in C) and the word cache's hits;
* ``cProfile``'s functions of most own time (its own overhead inflates the Python functions' share: the phase
  times above are the ones to trust), as the share of the profiled pass.

Also the first load of DeepSeek's ``tokenizer.json`` (no cache) against tiktoken's making of the same ranks.
It reads the engine's private attributes: a measuring tool, to be kept in step with ``impl/``.
"""

from __future__ import annotations

import argparse
import base64
import cProfile
import gzip
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_formats import documents  # noqa: E402
from format_files import VOCABS  # noqa: E402

FILES = {"deepseek": VOCABS / "deepseek_tokenizer.json.gz", "mistral-sp": VOCABS / "mistral_tokenizer.model.v1"}


def _cpu(function: Callable[[], object]) -> float:
    begin = time.process_time()
    function()
    return time.process_time() - begin


class _Timed:
    """A callable that adds its CPU seconds and calls to a total (one stage of a pipeline)."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.seconds = 0.0
        self.calls = 0
        self.inputs: list[Any] = []

    def __call__(self, *args: Any) -> Any:
        begin = time.process_time()
        out = self.function(*args)
        self.seconds += time.process_time() - begin
        self.calls += 1
        self.inputs.append(args[0])
        return out


def _profile(function: Callable[[], object], top: int) -> list[str]:
    profile = cProfile.Profile()
    profile.enable()
    function()
    profile.disable()
    stats = pstats.Stats(profile)
    total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])  # type: ignore[attr-defined]
    lines = [f"cProfile, {total:.2f} s profiled: | function | calls | own s | own % | with callees s |",
             "|---|---|---|---|---|"]
    for (path, line, name), (_, calls, own, cumulative, _) in rows[:top]:
        where = f"{Path(path).parent.name}/{Path(path).name}:{line}" if path != "~" else "built-in"
        lines.append(f"| `{name}` ({where}) | {calls} | {own:.2f} | {100 * own / total:.0f} | {cumulative:.2f} |")
    return lines


def _split_parts(steps: list[_Timed]) -> list[str]:
    """Each ``Split`` step's time cut into its parts, replayed on the pieces it was given."""
    from bpeproof.impl.pre_tokenizers.hf_splits import SplitStep

    lines = ["| step | pieces in | step s | stand-ins s | search alone s | `matches` s | spans s | Piece objects s |",
             "|---|---|---|---|---|---|---|---|"]
    for index, timed in enumerate(steps):
        cells = [cell.cell_contents for cell in (timed.function.__closure__ or ())]
        split = next((cell for cell in cells if isinstance(cell, SplitStep)), None)
        if split is None:
            continue
        lines.append(f"| {index} (Split {split.pattern[:24]!r}…) | {len(timed.inputs)} | {timed.seconds:.2f} | "
                     + " | ".join(f"{value:.2f}" for value in _split_step_parts(split, timed.inputs)) + " |")
    return lines


def _split_step_parts(split: Any, pieces: list[Any]) -> list[float]:
    """CPU seconds of a ``Split`` step's parts on its pieces: the stand-ins, the search alone, ``matches``, the
    spans, the ``Piece`` objects."""
    from bpeproof.impl.pipelines import hf_steps
    from bpeproof.impl.pre_tokenizers.hf_splits import split_spans
    from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins

    texts = [piece.text for piece in pieces]
    compiled = split._compiled
    swapped = [stand_ins(text) for text in texts]
    found = [split.matches(text) for text in texts]
    spans = [split_spans(len(text), matched, split.behavior, split.invert)
             for text, matched in zip(texts, found, strict=True)]
    return [
        _cpu(lambda: [stand_ins(text) for text in texts]),
        _cpu(lambda: [[match.span() for match in compiled.finditer(text)] for text in swapped]),
        _cpu(lambda: [split.matches(text) for text in texts]),
        _cpu(lambda: [split_spans(len(text), matched, split.behavior, split.invert)
                      for text, matched in zip(texts, found, strict=True)]),
        _cpu(lambda: [hf_steps.cut_pieces(piece, kept) for piece, kept in zip(pieces, spans, strict=True)]),
    ]


def tokenizer_json_report(path: Path, docs: list[str], top: int) -> list[str]:
    import bpeproof

    size = sum(len(doc.encode()) for doc in docs) / 1e6
    lines = [f"## {path.name}: {size:.2f} MB in {len(docs)} documents", ""]
    tokenizer: Any = bpeproof.load(str(path))
    allowed = tokenizer.library_allowed_special
    cold = _cpu(lambda: [tokenizer.encode(doc, allowed_special=allowed) for doc in docs])
    warm = _cpu(lambda: [tokenizer.encode(doc, allowed_special=allowed) for doc in docs])
    lines += [f"Whole pass, CPU s: cold {cold:.2f} ({size / cold:.2f} MB/s), warm {warm:.2f} ({size / warm:.2f} MB/s).",
              ""]
    # The stages, each timed apart on a copy of the pipeline, on a fresh tokenizer.
    fresh: Any = bpeproof.load(str(path))
    pipeline = fresh._pipeline
    names = fresh._allowed_names(allowed)
    copy = object.__new__(type(pipeline))
    copy.__dict__.update(pipeline.__dict__)
    raw, normalized = _Timed(pipeline._raw.find), _Timed(pipeline._normalized.find)
    normalize = _Timed(pipeline._normalizer.normalize)
    steps = [_Timed(step) for step in pipeline._steps]
    copy._raw = type("Matcher", (), {"find": staticmethod(raw)})()
    copy._normalized = type("Matcher", (), {"find": staticmethod(normalized)})()
    copy._normalizer = type("Normalizer", (), {"normalize": staticmethod(normalize)})()
    copy._steps = tuple(steps)
    outputs: list[list[str | int]] = []
    pieces_s = _cpu(lambda: outputs.extend(copy.pieces(doc, names) for doc in docs))
    plain_s = _cpu(lambda: [pipeline.pieces(doc, names) for doc in docs])
    words = [[item for item in out if isinstance(item, str)] for out in outputs]
    count = sum(map(len, words))
    distinct = len({word for doc_words in words for word in doc_words})
    fast, cache = fresh._fast, fresh._cache
    loop_cold = _cpu(lambda: [fast.encode_pieces(w, cache, fresh._cache_size) for w in words])
    misses = len(cache)
    loop_warm = _cpu(lambda: [fast.encode_pieces(w, cache, fresh._cache_size) for w in words])
    stage_total = raw.seconds + normalized.seconds + normalize.seconds + sum(step.seconds for step in steps)
    lines += [f"Pipeline (`HFPipeline.pieces`, the same cold and warm: it keeps nothing): {plain_s:.2f} s, "
              f"{100 * plain_s / cold:.0f}% of the cold pass and {100 * plain_s / warm:.0f}% of the warm one; "
              f"timed stage by stage {pieces_s:.2f} s:", "",
              "| stage | calls | CPU s | share of the stages |", "|---|---|---|---|"]
    for name, timed in [("added tokens, raw", raw), ("added tokens, normalized", normalized),
                        ("normalizer", normalize), *((f"step {i}", s) for i, s in enumerate(steps))]:
        lines.append(f"| {name} | {timed.calls} | {timed.seconds:.3f} | {100 * timed.seconds / stage_total:.0f}% |")
    lines.append(f"| what `pieces` does between them (its loops, lists) | — | {max(0.0, pieces_s - stage_total):.2f} "
                 "| — |")
    lines += ["", *_split_parts(steps), "",
              f"Words: {count} ({count / len(docs):.0f} a document), {distinct} distinct. C word loop "
              f"(`encode_pieces`: look-ups, and merges in C on a miss): cold {loop_cold:.3f} s ({misses} misses, "
              f"hit rate {100 * (1 - misses / count):.1f}%), warm {loop_warm:.3f} s (every word a hit; "
              f"{1e9 * loop_warm / count:.0f} ns a word). What is left of the pass (`encode`, `_encode_pipeline`'s "
              f"loop over the pieces): cold {max(0.0, cold - plain_s - loop_cold):.2f} s, warm "
              f"{max(0.0, warm - plain_s - loop_warm):.2f} s.", ""]
    profiled = bpeproof.load(str(path))
    for label in ("cold", "warm"):
        table = _profile(lambda: [profiled.encode(doc, allowed_special=allowed) for doc in docs], top)
        lines += [f"{label}, " + table[0], *table[1:], ""]
    return lines


def sentencepiece_report(path: Path, docs: list[str], top: int) -> list[str]:
    import bpeproof

    size = sum(len(doc.encode()) for doc in docs) / 1e6
    lines = [f"## {path.name}: {size:.2f} MB in {len(docs)} documents", ""]
    tokenizer: Any = bpeproof.load(str(path))
    cold = _cpu(lambda: [tokenizer.encode(doc) for doc in docs])
    warm = _cpu(lambda: [tokenizer.encode(doc) for doc in docs])
    model: Any = tokenizer._model
    lines += [f"Whole pass, CPU s: cold {cold:.2f} ({size / cold:.2f} MB/s), warm {warm:.2f} ({size / warm:.2f} MB/s). "
              f"The tokenizer's word cache keeps {len(tokenizer._cache)} of the {len(docs)} documents (each "
              f"document is one word: no pre-tokenizer); the model's cache of segments holds {len(model._cache)}.",
              ""]
    normalized = [model.normalizer.normalize(doc.encode()) for doc in docs]
    chunks = [chunk for text in normalized for chunk, symbol in model._chunks(text) if not symbol]
    segments = [segment for chunk in chunks for segment in model._segments(chunk)]
    fresh: Any = bpeproof.load(str(path))._model
    parts: list[Any] = []
    stages = [
        ("normalizer (`normalize`)", _cpu(lambda: [model.normalizer.normalize(doc.encode()) for doc in docs])),
        ("user symbols (`_chunks`)", _cpu(lambda: [list(model._chunks(text)) for text in normalized])),
        ("cut at pairs no piece holds (`_segments`, a loop per character)",
         _cpu(lambda: [list(model._segments(chunk)) for chunk in chunks])),
        ("merge each segment, cold (`_merge_segment`, Python merge loop)",
         _cpu(lambda: parts.extend(fresh._merge_segment(segment) for segment in set(segments)))),
        ("segment cache look-ups, warm", _cpu(lambda: [model._cache.get(segment) for segment in segments])),
        ("ids of the parts (`_ids_of`, a loop per part)",
         _cpu(lambda: [model._ids_of(model._parts(text)) for text in normalized]) -
         _cpu(lambda: [model._parts(text) for text in normalized])),
    ]
    lines += [f"Segments: {len(segments)} ({len(set(segments))} distinct, segment cache hit rate cold "
              f"{100 * (1 - len(set(segments)) / len(segments)):.1f}%); characters {sum(map(len, chunks))}.", "",
              "| stage | CPU s | share of the cold pass | share of the warm pass |", "|---|---|---|---|"]
    for name, seconds in stages:
        lines.append(f"| {name} | {seconds:.2f} | {100 * seconds / cold:.0f}% | {100 * seconds / warm:.0f}% |")
    profiled = bpeproof.load(str(path))
    for label in ("cold", "warm"):
        table = _profile(lambda: [profiled.encode(doc) for doc in docs], top)
        lines += ["", f"{label}, " + table[0], *table[1:]]
    return lines + [""]


def _write_ranks(source: Path, out: Path) -> None:
    """DeepSeek's model vocabulary as a rank file (each token's bytes, its id as rank; the added tokens left out):
    what tiktoken would load.
    (``bpeproof convert`` refuses: the file's normalizer, an empty Sequence, has no place in a rank file.)"""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    shifted = [byte for byte in range(256) if byte not in printable]
    decoder = {chr(byte): byte for byte in printable} | {chr(256 + n): byte for n, byte in enumerate(shifted)}
    vocab = json.loads(gzip.decompress(source.read_bytes()))["model"]["vocab"]
    out.write_text("".join(f"{base64.b64encode(bytes(map(decoder.__getitem__, token))).decode()} {rank}\n"
                           for token, rank in sorted(vocab.items(), key=lambda item: item[1])
                           if all(char in decoder for char in token)), encoding="ascii")


def load_report() -> list[str]:
    """First load of DeepSeek's file (no cache, a fresh process) against tiktoken making an Encoding of its ranks."""
    with tempfile.TemporaryDirectory() as folder:
        ranks = Path(folder) / "deepseek.tiktoken"
        _write_ranks(FILES["deepseek"], ranks)
        load = f"import bpeproof; bpeproof.load({str(FILES['deepseek'])!r})"
        scripts = {
            "bpeproof.load, first load (file read, cache entry written)": (load, "first"),
            "bpeproof.load, no cache": (load, "off"),
            "bpeproof.load, from the cache": (load, "kept"),
            "tokenizers.Tokenizer.from_str": ("import gzip, tokenizers; tokenizers.Tokenizer.from_str(gzip.open("
                                              f"{str(FILES['deepseek'])!r}, 'rt').read())", "off"),
            "tiktoken.Encoding, the same ranks": (
                "import base64, tiktoken; r = {base64.b64decode(t): int(n) for t, n in "
                f"(l.split() for l in open({str(ranks)!r}))}}; tiktoken.Encoding("
                "name='x', pat_str=r'\\w+', mergeable_ranks=r, special_tokens={})", "off"),
        }
        lines = ["| load of DeepSeek's ranks | CPU s in a fresh process, interpreter included (median of 5) |",
                 "|---|---|"]
        for name, (script, cache) in scripts.items():
            times = []
            for run in range(5):
                directory = f"{folder}/cache-{run}" if cache == "first" else f"{folder}/cache"
                env = dict(os.environ, BPEPROOF_CACHE_DIR=directory, BPEPROOF_NO_CACHE="1" if cache == "off" else "")
                if cache == "kept":
                    subprocess.run([sys.executable, "-c", script], check=True, env=env)
                before = os.times()
                subprocess.run([sys.executable, "-c", script], check=True, env=env)
                after = os.times()
                times.append(after.children_user + after.children_system - before.children_user
                             - before.children_system)
            lines.append(f"| {name} | {sorted(times)[2]:.3f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=1.0, help="megabytes of documents (default 1)")
    parser.add_argument("--files", default="deepseek,mistral-sp")
    parser.add_argument("--top", type=int, default=15, help="cProfile's functions shown")
    args = parser.parse_args(argv)
    docs = documents("multilingual", args.mb / 2)[0] + documents("code", args.mb / 2)[0]
    lines: list[str] = []
    for name in args.files.split(","):
        path = FILES[name]
        if not path.exists():
            print(f"{path} is not present", file=sys.stderr)
            return 2
        report = tokenizer_json_report if name == "deepseek" else sentencepiece_report
        lines += report(path, docs, args.top)
    lines += load_report()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
