"""The HTML page of an audit report: one self-contained file, tables and inline SVG bar charts.

The page shows the report of ``bpeproof.audit.report.audit`` (its keys: docs/audit.md): the findings, the
vocabulary checks (missing bytes, improper merges, ex-same-string groups, unreachable tokens, tokens that are
not UTF-8 alone by prop-utf8-boundary), the token length histogram, the variant agreement, compression per
corpus against the log2 |V| bound of prop-token-information, and the greedy-against-shortest gap of
prop-bpe-greedy-not-optimal.  No scripts, no external files.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from bpeproof.audit.progress import SUBPHASES

__all__ = ["bar_chart", "readable", "render"]

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0; } td, th { border: 1px solid #ddd; padding: .2em .5em;
 text-align: left; vertical-align: top; } th { background: #f4f4f4; }
code { background: #f6f6f6; padding: 0 .2em; }
figure { margin: 1em 0; } figcaption { font-size: .9em; color: #555; }
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def readable(value: float) -> str:
    """A chart label in plain digits, never in scientific notation: whole numbers with thousands separators
    (11,940), others rounded to a whole number from 100 on (1,234), to two decimals from 1 on (2.21, 17.7) and to
    three significant digits below 1 (0.45, 0.00312)."""
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if value == int(value):
        return f"{int(value):,}"
    size = abs(value)
    if size >= 100:
        return f"{value:,.0f}"
    decimals = 2 if size >= 1 else 2 - math.floor(math.log10(size))
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".")


def bar_chart(
    title: str,
    bars: Sequence[tuple[str, float]],
    *,
    unit: str = "",
    width: int = 640,
    reference: tuple[str, float] | None = None,
) -> str:
    """A horizontal bar chart as an inline ``<svg>``: one labelled bar per item, its value at the end.

    ``reference`` draws a dashed vertical line at a value (for instance log2 |V|).
    """
    label_width = 180
    bar_height = 18
    gap = 6
    top = 8
    plot = width - label_width - 90
    largest = max([value for _, value in bars] + [reference[1] if reference else 0.0, 1e-12])
    height = top * 2 + len(bars) * (bar_height + gap) + (16 if reference else 0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img"'
        f' aria-label="{_e(title)}" font-family="system-ui, sans-serif" font-size="12">',
        f"<title>{_e(title)}</title>",
    ]
    for index, (label, value) in enumerate(bars):
        y = top + index * (bar_height + gap)
        length = max(0.0, value) / largest * plot
        text = f"{readable(value)}{unit}"
        short = label if len(label) <= 28 else label[:27] + "…"
        parts.append(
            f'<text x="{label_width - 6}" y="{y + 13}" text-anchor="end">{_e(short)}</text>'
            f'<rect x="{label_width}" y="{y}" width="{length:.1f}" height="{bar_height}" fill="#4a7bb7">'
            f"<title>{_e(label)}: {_e(text)}</title></rect>"
            f'<text x="{label_width + length + 4:.1f}" y="{y + 13}">{_e(text)}</text>'
        )
    if reference is not None:
        x = label_width + reference[1] / largest * plot
        bottom = top + len(bars) * (bar_height + gap)
        parts.append(
            f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{bottom}" stroke="#b00020" stroke-dasharray="4 3"/>'
            f'<text x="{x:.1f}" y="{bottom + 12}" text-anchor="middle" fill="#b00020">'
            f"{_e(reference[0])} = {readable(reference[1])}{_e(unit)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>"


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _pairs(items: Mapping[str, object]) -> str:
    rows = "".join(f"<tr><th>{_e(key)}</th><td>{_e(value)}</td></tr>" for key, value in items.items())
    return f"<table>{rows}</table>"


def _token_rows(section: Mapping[str, Any]) -> str:
    examples = section.get("examples", [])
    if not examples:
        return ""
    return _table(["id", "text", "hex"], [(x["id"], x["text"], x["hex"]) for x in examples])


def _length_histogram(lengths: Mapping[str, int]) -> str:
    bars: list[tuple[str, float]] = []
    overflow = 0
    for key, count in lengths.items():
        if int(key) <= 24:
            bars.append((f"{key} byte{'s' if key != '1' else ''}", float(count)))
        else:
            overflow += count
    if overflow:
        bars.append(("more than 24 bytes", float(overflow)))
    return _figure(bar_chart("token length histogram", bars), "Tokens by the number of bytes they stand for.")


def _timing_bars(timings: Mapping[str, float]) -> list[tuple[str, float]]:
    """The phases in order, each phase timed inside another right after it, labelled as part of it."""
    bars: list[tuple[str, float]] = []
    for name, seconds in timings.items():
        if name in SUBPHASES:
            continue
        bars.append((name, float(seconds)))
        bars += [(f"{inner} (in {name})", float(timings[inner])) for inner, parent in SUBPHASES.items()
                 if parent == name and inner in timings]
    return bars


def render(report: Mapping[str, Any]) -> str:
    """The whole page for an audit report."""
    file = report["file"]
    vocabulary = report["vocabulary"]
    variants = report["variants"]
    library = report["library"]
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>BPE audit: {_e(file['path'])}</title><style>{_STYLE}</style></head><body>",
        f"<h1>BPE audit of <code>{_e(file['path'])}</code></h1>",
        "<h2>Findings</h2><ul>",
        *[f"<li>{_e(line)}</li>" for line in report["findings"]],
        "</ul>",
        "<h2>File</h2>",
        _pairs({key: value for key, value in file.items() if key != "pattern"}),
        f"<p>Pattern: <code>{_e(file['pattern'])}</code></p>" if file.get("pattern") else "",
        "<h2>Vocabulary</h2>",
        _pairs(
            {
                "ordinary tokens |V|": vocabulary["size"],
                "256 + merges": vocabulary["expected_size"],
                "size matches (prop-bpe-vocab-size)": vocabulary["size_matches"],
                "missing byte tokens": len(vocabulary["missing_bytes"]),
                "merge list proper (def-merge)": vocabulary["proper"],
                "improper merges": vocabulary["improper_merges"]["count"],
                "pairs merged more than once": vocabulary["duplicate_merges"]["count"],
                "same-bytes groups (ex-same-string)": vocabulary["same_bytes"]["count"],
                "unreachable under (i)": vocabulary["unreachable"]["sequential"]["count"],
                f"unreachable under {vocabulary['unreachable']['declared_variant']}":
                    vocabulary["unreachable"]["declared"]["count"],
                "unreachable under both": vocabulary["unreachable"]["both"]["count"],
                "unreachable by the library itself": (vocabulary["unreachable"].get("library") or {}).get(
                    "count", "not asked"),
                "not UTF-8 alone (prop-utf8-boundary)": vocabulary["not_utf8"]["count"],
                "special tokens": vocabulary["specials"]["count"],
                "longest token (bytes)": vocabulary["max_token_bytes"],
                "log2 |V| bits per token": f"{vocabulary['bits_per_token']:.3f}",
            }
        ),
    ]
    if vocabulary["missing_bytes"]:
        out.append(f"<p>Bytes without a token: {_e(', '.join(f'0x{b:02X}' for b in vocabulary['missing_bytes']))}</p>")
    improper = vocabulary["improper_merges"]["examples"]
    if improper:
        out += ["<h3>Improper merges</h3>", _table(["index", "kind", "detail"],
                                                   [(x["index"], x["kind"], x["detail"]) for x in improper])]
    same = vocabulary["same_bytes"]["examples"]
    if same:
        out += ["<h3>Tokens standing for the same bytes</h3>",
                _table(["text", "hex", "ids"], [(x["text"], x["hex"], x["ids"]) for x in same])]
    for key, title in (("both", "Unreachable tokens (under both)"), ("sequential", "Unreachable under (i)")):
        rows = _token_rows(vocabulary["unreachable"][key])
        if rows:
            out += [f"<h3>{_e(title)}</h3>", rows]
    rows = _token_rows(vocabulary["not_utf8"])
    if rows:
        out += ["<h3>Tokens that are not UTF-8 alone (first few)</h3>", rows]
    specials = vocabulary["specials"]["examples"]
    if specials:
        out += ["<h3>Special tokens (first few)</h3>", _table(["text", "id"], [(x["text"], x["id"]) for x in specials])]
    out.append(_length_histogram(vocabulary["token_lengths"]))

    out.append("<h2>Which BPE the library computes</h2>")
    if library["available"]:
        out.append(f"<p>{_e(library['name'])} {_e(library['version'])} encoded {variants['words']} words"
                   f" (corpus {variants['sources']['corpus']}, token strings {variants['sources']['tokens']},"
                   f" generated {variants['sources']['generated']}). Declared: {_e(', '.join(variants['declared']))}."
                   f" Verdict: <b>{_e(', '.join(variants['verdict']) or 'none')}</b>.</p>")
        bars = [(name, 100.0 * entry["agree"] / entry["compared"] if entry["compared"] else 0.0)
                for name, entry in variants["results"].items()]
        out.append(_figure(bar_chart("variant agreement", bars, unit="%"),
                           "Share of words on which each variant gives the library's ids."))
        rows_v = []
        for name, entry in variants["results"].items():
            for item in entry["disagreements"]:
                rows_v.append((name, item["word"], item["library"], item["variant"]))
        if rows_v:
            out += ["<h3>First disagreements</h3>", _table(["variant", "word", "library ids", "variant ids"], rows_v)]
    else:
        out.append(f"<p>The library is not available: {_e(library['error'])}</p>")
    project = report["project"]
    out += ["<h2>The project's encoder against the library</h2>", _pairs(dict(project))]

    corpora = report["corpora"]
    out.append("<h2>Compression (def-utf8) and information (prop-token-information)</h2>")
    out.append(_table(["corpus", "bytes", "tokens", "bytes/token", "8·bytes/token", "log2 |V|"],
                      [(c["name"], c["bytes"], c["tokens"], f"{c['bytes_per_token']:.3f}",
                        f"{c['raw_bits_per_token']:.2f}", f"{c['bits_per_token']:.2f}") for c in corpora]))
    out.append(_figure(bar_chart("bytes per token", [(c["name"], c["bytes_per_token"]) for c in corpora]),
                       "Compression rate per corpus: bytes per token."))
    out.append(_figure(
        bar_chart("raw bits per token", [(c["name"], c["raw_bits_per_token"]) for c in corpora], unit=" bits",
                  reference=("log2 |V|", vocabulary["bits_per_token"])),
        "8 · bytes/token: the raw bits each token stands for, against log2 |V|, the most a token can carry;"
        " bars past the line show the text is redundant."))

    gap = report["greedy_gap"]
    out.append("<h2>Greedy BPE against the shortest segmentation (prop-bpe-greedy-not-optimal)</h2>")
    out.append(_pairs({"words": gap["words"], "occurrences": gap["occurrences"], "BPE tokens": gap["bpe_tokens"],
                       "shortest tokens": gap["shortest_tokens"], "saved": f"{gap['saved_percent']:.2f}%",
                       "words where BPE is longer": gap["words_shorter"]}))
    out.append(_figure(bar_chart("tokens", [("BPE", float(gap["bpe_tokens"])),
                                            ("shortest", float(gap["shortest_tokens"]))]),
                       "Total tokens over the sampled words, weighted by their counts."))
    if gap["worst"]:
        out.append(_table(["word", "count", "BPE", "shortest"],
                          [(w["word"], w["count"], " | ".join(w["bpe_pieces"]), " | ".join(w["shortest_pieces"]))
                           for w in gap["worst"]]))
    out.append("<h2>Timings (seconds)</h2>")
    out.append(_figure(bar_chart("timings", _timing_bars(report["timings"]), unit=" s"),
                       "Wall-clock time of each phase; a phase timed inside another follows it, marked as part of"
                       " it, and is not added again to the total."))
    out.append("<h2>Report (JSON)</h2><details><summary>show</summary><pre>")
    out.append(_e(json.dumps(report, ensure_ascii=False, indent=1)))
    out.append("</pre></details></body></html>")
    return "\n".join(out) + "\n"
