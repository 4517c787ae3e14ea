"""The manual's tables of the format benchmark (``bench_formats.py``), from its saved results."""

from __future__ import annotations

from typing import Any

from bench_encode import spread


def _times(results: dict[str, Any], case: str, kind: str, system: str, workers: int, which: str) -> dict[int, float]:
    """Seconds per round of one measurement: ``which`` is cold or warm (CPU seconds), or batch (wall seconds)."""
    out: dict[int, float] = {}
    for item in results["measurements"]:
        if (item["case"], item["text"], item["system"], item["workers"]) != (case, kind, system, workers):
            continue
        if "error" in item:
            continue
        out[item["round"]] = {"cold": item["cpu_s"][0], "warm": item["cpu_s"][-1], "batch": item["wall_s"][0]}[which]
    return out


def _ratios(mine: dict[int, float], theirs: dict[int, float]) -> list[float]:
    return [theirs[number] / mine[number] for number in sorted(mine) if number in theirs and mine[number] > 0]


def _peak(results: dict[str, Any], case: str, kind: str, system: str, workers: int) -> str:
    values = [item["peak_mb"] for item in results["measurements"]
              if (item["case"], item["text"], item["system"], item["workers"]) == (case, kind, system, workers)
              and "peak_mb" in item]
    return f"{max(values):.0f}" if values else "—"


def mismatches(results: dict[str, Any]) -> list[str]:
    """Every timed process whose ids differ from bpeproof's on the same case and text (none when the check before
    the times did its work)."""
    mine = {(m["case"], m["text"]): m["digest"] for m in results["measurements"]
            if m["system"] == "impl" and m["workers"] == 0 and "digest" in m}
    return sorted({f"{m['system']} (workers {m['workers']}) on {m['case']} {m['text']}"
                   for m in results["measurements"]
                   if "digest" in m and (m["case"], m["text"]) in mine and m["digest"] != mine[m["case"], m["text"]]})


def _systems(results: dict[str, Any], case: str) -> list[str]:
    return list(dict.fromkeys(m["system"] for m in results["measurements"] if m["case"] == case))


def markdown(results: dict[str, Any]) -> str:
    """One table of the one-document passes, one of the batch calls, the files and what was not run."""
    kinds = list(results["texts"])
    lines = ["| file | text | system | cold MB/s | warm MB/s | impl x it, cold | impl x it, warm | peak MB |",
             "|---|---|---|---|---|---|---|---|"]
    for info in results["cases"]:
        case = info["name"]
        for kind in kinds:
            size = results["texts"][kind]["bytes"] / 1e6
            cold, warm = (_times(results, case, kind, "impl", 0, which) for which in ("cold", "warm"))
            for system in _systems(results, case):
                theirs = [_times(results, case, kind, system, 0, which) for which in ("cold", "warm")]
                if not theirs[0]:
                    continue
                speeds = [spread([size / s for s in times.values() if s > 0]) for times in theirs]
                ratios = ["—", "—"] if system == "impl" else \
                    [spread(_ratios(cold, theirs[0])), spread(_ratios(warm, theirs[1]))]
                lines.append(f"| {case} | {kind} | {system} | {speeds[0]} | {speeds[1]} | {ratios[0]} | {ratios[1]} "
                             f"| {_peak(results, case, kind, system, 0)} |")
    lines += ["", "| file | text | system | batch, 1 worker MB/s | 2 workers MB/s | 2 ÷ 1 worker "
              "| impl x it, 2 workers | peak MB, 2 workers |", "|---|---|---|---|---|---|---|---|"]
    for info in results["cases"]:
        case = info["name"]
        for kind in kinds:
            size = results["texts"][kind]["bytes"] / 1e6
            mine = _times(results, case, kind, "impl", 2, "batch")
            for system in _systems(results, case):
                one, two = (_times(results, case, kind, system, workers, "batch") for workers in (1, 2))
                if not one:
                    continue
                ratio = "—" if system == "impl" else spread(_ratios(mine, two))
                lines.append(f"| {case} | {kind} | {system} | {spread([size / s for s in one.values()])} | "
                             f"{spread([size / s for s in two.values()])} | {spread(_ratios(two, one))} | {ratio} "
                             f"| {_peak(results, case, kind, system, 2)} |")
    lines += ["", "| file | shape | peers timed | not timed |", "|---|---|---|---|"]
    for info in results["cases"]:
        case = info["name"]
        untimed = [f"{peer}: {why}" for peer, why in info["skipped"].items()]
        # "CASE TEXT PEER" → why; one entry for a peer that fails alike on every text.
        texts_of: dict[tuple[str, str], list[str]] = {}
        for key, why in results["not_timed"].items():
            name, kind, peer = key.split(" ", 2)
            if name == case:
                texts_of.setdefault((peer, why), []).append(kind)
        untimed += [f"{peer} ({', '.join(kinds)}): {why}" for (peer, why), kinds in texts_of.items()]
        timed = [system for system in _systems(results, case) if system != "impl"]
        lines.append(f"| {case} | {info['shape']} | {', '.join(timed) or '—'} | {'; '.join(untimed) or '—'} |")
    texts = "; ".join(f"{kind}: {info['bytes'] / 1e6:.1f} MB in {info['documents']} documents"
                      for kind, info in results["texts"].items())
    differ = mismatches(results)
    lines += ["", f"Median of {results['runs']} rounds (lowest–highest), {texts}; {results['machine']['cores']} cores, "
              f"Python {results['machine']['python']}, {results['date']}; the run took {results['minutes']} minutes. "
              "Every timed peer gave bpeproof's ids" + (" except " + ", ".join(differ) if differ else "") + "."]
    return "\n".join(lines)
