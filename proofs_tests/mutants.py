"""Mutants as canaries: small source patches that break the spec or the engine, and the gates that must kill them.

Each mutant is one or more exact text replacements.  ``python -m proofs_tests.mutants [--all] [NAME ...]`` copies
the working tree to a scratch directory, applies one mutant there (the real files are never touched), runs each
gate on the copy and reports, per gate, whether it failed ("killed") and how long it took.  Without ``--all`` it
runs only the fast gates (Hypothesis suites); ``--all`` adds the CrossHair gates.  A patch whose text is no
longer in its file is an error, never a silent skip: the catalogue must follow the code.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Wall-clock limit of one gate on one mutant: a mutant that makes the code loop forever is killed by it.
GATE_TIMEOUT = 900


@dataclass(frozen=True)
class Patch:
    """Replace ``old`` (which must occur exactly once) by ``new`` in the file ``path``."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Mutant:
    """A broken variant.  ``choices`` are alternative patch sets; the first that applies is used."""

    name: str
    what: str
    kind: str  # "spec" or "impl": which gates apply
    choices: tuple[tuple[Patch, ...], ...]


class PatchError(Exception):
    """A mutant's patch no longer matches the source it targets."""


MUTANTS: tuple[Mutant, ...] = (
    Mutant("spec-ties-largest", "select_pair breaks ties to the largest pair", "spec", ((
        Patch("spec/bpe.py", "return maxima[0], best, tuple(maxima[1:])",
              "return maxima[-1], best, tuple(maxima[:-1])"),),)),
    Mutant("spec-stop-at-count-1", "training stops when the best count is 1", "spec", ((
        Patch("spec/bpe.py", "        (a, b), count, tied = select_pair(table, cost)\n",
              "        (a, b), count, tied = select_pair(table, cost)\n"
              "        if count == 1:\n            break\n"),),)),
    Mutant("spec-merge-right-to-left", "M_r scans from the right end", "spec", ((
        Patch("spec/merge.py",
              "    t1, t2, u = tokens[0], tokens[1], tokens[2:]\n    if (t1, t2) == (rule.a, rule.b):\n"
              "        return [rule.c] + merge(rule, u, steps)\n    return [t1] + merge(rule, [t2] + u, steps)\n",
              "    u, t1, t2 = tokens[:-2], tokens[-2], tokens[-1]\n    if (t1, t2) == (rule.a, rule.b):\n"
              "        return merge(rule, u, steps) + [rule.c]\n    return merge(rule, u + [t1], steps) + [t2]\n"),),)),
    Mutant("spec-count-across-words", "pairs are counted across word boundaries", "spec", ((
        Patch("spec/bpe.py",
              "    pairs = sorted((word[i], word[i + 1]) for word in words for i in range(len(word) - 1))\n",
              "    flat = [t for word in words for t in word]\n"
              "    pairs = sorted((flat[i], flat[i + 1]) for i in range(len(flat) - 1))\n"),),)),
    Mutant("spec-new-ids", "new ids start at 257", "spec", ((
        Patch("spec/bpe.py", "rule = Rule(a, b, ALPHABET_SIZE + j)", "rule = Rule(a, b, ALPHABET_SIZE + j + 1)"),),)),
    Mutant("spec-max-not-counted", "step 4 takes the first pair of the table, not the largest count", "spec", ((
        Patch("spec/bpe.py", "        if count == best:\n            maxima.append(pair)\n",
              "        maxima.append(pair)\n"),),)),
    Mutant("impl-short-rightmost", "the flat-list loop merges the rightmost of equal ranks", "impl", (
        (Patch("impl/engine.py", "i = found.index(best)", "i = len(found) - 1 - found[::-1].index(best)"),),
        (Patch("impl/encoder.py", "i = found.index(best)", "i = len(found) - 1 - found[::-1].index(best)"),),
    )),
    Mutant("impl-shortcut-no-cross-check", "the whole-token shortcut without its cross-merge check", "impl", ((
        Patch("impl/encoder.py", "                and self._no_cross_merge(a, b, rank)\n", ""),),)),
    Mutant("impl-strings-no-stale-check", "the strings trainer trusts stale heap counts", "impl", ((
        Patch("impl/trainer.py", "        n = counts_get(pair, 0)\n        if n != -negative:",
              "        n = -negative\n        if n != -negative:"),),)),
    Mutant("impl-strings-ids", "the strings trainer numbers new ids from 257", "impl", ((
        Patch("impl/trainer.py", "    new_id = ALPHABET_SIZE\n    stop = ALPHABET_SIZE + merges\n",
              "    new_id = ALPHABET_SIZE + 1\n    stop = ALPHABET_SIZE + 1 + merges\n"),),)),
    Mutant("impl-apply-rule-skip", "the trainer's M_r steps over one token after a merge, not two", "impl", ((
        Patch("impl/trainer.py", "            out.append(c)\n            i += 2\n",
              "            out.append(c)\n            i += 1\n"),),)),
)

#: The gates, by kind: name → pytest arguments.
GATES: dict[str, dict[str, tuple[str, ...]]] = {
    "spec": {
        "hypothesis": ("proofs_tests/test_spec_properties.py", "proofs_tests/test_article_examples.py"),
        "crosshair": ("proofs_tests/test_crosshair_gate.py",),
    },
    "impl": {
        "hypothesis": ("proofs_tests/test_impl_encoder.py", "proofs_tests/test_impl_trainer.py"),
        "crosshair": ("proofs_tests/test_crosshair_impl.py",),
    },
}

#: The gates without CrossHair, run by default and in CI.
FAST_GATES = ("hypothesis",)


def apply(mutant: Mutant, tree: Path) -> None:
    """Apply the first choice of ``mutant`` whose every patch matches exactly once in ``tree``."""
    for choice in mutant.choices:
        texts: dict[str, str] = {}
        for patch in choice:
            file = tree / patch.path
            text = texts.get(patch.path) or (file.read_text(encoding="utf-8") if file.exists() else "")
            if text.count(patch.old) != 1:
                break
            texts[patch.path] = text.replace(patch.old, patch.new)
        else:
            for path, text in texts.items():
                (tree / path).write_text(text, encoding="utf-8")
            return
    raise PatchError(f"mutant {mutant.name}: no patch set matches the source any more")


def scratch_copy(destination: Path) -> Path:
    """A copy of the project's sources (not its virtual environment or caches) under ``destination``."""
    tree = destination / "tree"
    ignore = shutil.ignore_patterns(".venv", ".git", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache",
                                    ".hypothesis", "*.egg-info", "build")
    shutil.copytree(ROOT, tree, ignore=ignore)
    return tree


@dataclass(frozen=True)
class Verdict:
    gate: str
    killed: bool
    seconds: float
    detail: str


def run_in(tree: Path, command: tuple[str, ...], timeout: int) -> tuple[bool, float, str]:
    """Run ``command`` in the mutated ``tree``: True when it fails (or times out), the wall time, its last line."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        return True, time.monotonic() - started, "timed out"
    lines = (done.stdout + done.stderr).strip().splitlines()
    return done.returncode != 0, time.monotonic() - started, lines[-1] if lines else ""


def run_gate(tree: Path, args: tuple[str, ...], timeout: int = GATE_TIMEOUT) -> tuple[bool, float, str]:
    """Run pytest on the mutated ``tree`` with a per-test limit; True when the gate fails."""
    command = (sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", f"--timeout={timeout}", *args)
    return run_in(tree, command, timeout + 60)


def check(mutant: Mutant, gates: tuple[str, ...], timeout: int = GATE_TIMEOUT) -> list[Verdict]:
    """Apply ``mutant`` to a scratch copy and run each of ``gates`` on it."""
    with tempfile.TemporaryDirectory(prefix="bpeproof-mutant-") as scratch:
        tree = scratch_copy(Path(scratch))
        apply(mutant, tree)
        verdicts = []
        for gate in gates:
            killed, seconds, detail = run_gate(tree, GATES[mutant.kind][gate], timeout)
            verdicts.append(Verdict(gate, killed, seconds, detail))
        return verdicts


def main(argv: list[str] | None = None) -> int:
    """Print the matrix: one row per mutant, one column per gate; exit 1 if a mutant survives a gate."""
    args = sys.argv[1:] if argv is None else argv
    gates = ("hypothesis", "crosshair") if "--all" in args else FAST_GATES
    names = [a for a in args if not a.startswith("--")]
    chosen = [m for m in MUTANTS if not names or m.name in names]
    survivors = 0
    print("| mutant | " + " | ".join(gates) + " |")
    print("|---|" + "---|" * len(gates))
    for mutant in chosen:
        cells = []
        for verdict in check(mutant, gates):
            cells.append(f"{'killed' if verdict.killed else 'SURVIVED'} ({verdict.seconds:.0f} s)")
            survivors += not verdict.killed
        print(f"| `{mutant.name}`: {mutant.what} | " + " | ".join(cells) + " |", flush=True)
    return 1 if survivors else 0


if __name__ == "__main__":
    raise SystemExit(main())
