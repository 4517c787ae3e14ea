"""Mutants as canaries: small source patches that break the spec or the engine, and the gates that must kill them.

Each mutant is one or more exact text replacements.  ``python -m bpeproof.proofs_tests.planted.mutants [--all] [NAME
...]``
copies the working tree to a scratch directory, applies one mutant there (the real files are never touched), rebuilds
the C extensions there when the mutant patches one, runs each gate on the copy and reports, per gate, whether it failed
("killed"), which test failed first and how long it took.  Without ``--all`` it runs only the fast gates (the
Hypothesis suites and the small-scope check); ``--all`` adds the CrossHair gates.  Before the mutants, the same gates
run on the unmutated copy and must pass: a gate that fails anyway kills nothing.  ``--markdown`` prints the matrix as
a Markdown table.

A patch whose text is no longer in its file is an error, never a silent skip: the catalogue must follow the code
(``proofs_tests/tests/proofs/test_mutants.py`` checks every patch against the current sources).

Kinds of mutant, and their gates:

* ``spec``: the Hypothesis properties and the article's examples; CrossHair's bounded contracts of ``spec.contracts``,
  each of which must be "Confirmed over all paths" (``proofs_tests/tests/proofs/test_crosshair_gate.py``);
* ``impl`` (a Python path of the engine): the differential Hypothesis suites of the encoder and the trainer; CrossHair
  on the production paths against the spec (``proofs_tests/tests/proofs/test_crosshair_impl.py``);
* ``c`` (a loop of the ``_fastenc`` extension, ``impl/_c/_fastenc*``, or of ``impl/_c/_fastbpe*``): the differential
  Hypothesis suites, and the exhaustive small-scope check of the C loops
  (``proofs_tests/tests/impl/test_c_small_scope.py``; not for the mutants ``NOT_GATED`` names), since CrossHair
  cannot see C.

No hang is a pass: every test of a gate has a time limit (pytest-timeout; the CrossHair runs their own), so a mutant
that makes a loop run forever fails its gate by a timeout.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Time limit of one test of a Hypothesis gate (each takes a few seconds): a hang fails by this timeout.  The
#: limit is enforced from a thread, so that it also ends a C loop that runs without the GIL (the trainer's).
TEST_TIMEOUT = 120

#: Wall-clock limit of one whole gate, far above what any takes (a CrossHair run stops itself after 900 s); past it
#: the gate's processes are killed and the gate counts as failed.  It ends a hang that holds the GIL.
GATE_TIMEOUT = 2400


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
    kind: str  # "spec", "impl" (a Python path of the engine) or "c" (a C loop): which gates apply
    choices: tuple[tuple[Patch, ...], ...]


class PatchError(Exception):
    """A mutant's patch no longer matches the source it targets."""


class BuildError(Exception):
    """A mutated C extension does not compile: the mutant is broken, not killed."""


def _one(path: str, old: str, new: str) -> tuple[tuple[Patch, ...], ...]:
    return ((Patch(path, old, new),),)


MUTANTS: tuple[Mutant, ...] = (
    # --- the specification ------------------------------------------------------------------------------------
    Mutant("spec-ties-largest", "select_pair breaks ties to the largest pair", "spec", _one(
        "spec/bpe.py", "return maxima[0], best, tuple(maxima[1:])", "return maxima[-1], best, tuple(maxima[:-1])")),
    Mutant("spec-stop-at-count-1", "training stops when the best count is 1", "spec", _one(
        "spec/bpe.py", "        (a, b), count, tied = select_pair(table, cost)\n",
        "        (a, b), count, tied = select_pair(table, cost)\n        if count == 1:\n            break\n")),
    Mutant("spec-merge-right-to-left", "M_r scans from the right end", "spec", (
        (Patch("spec/merge.py",
               "    t1, t2, u = tokens[0], tokens[1], tokens[2:]\n    if (t1, t2) == (rule.a, rule.b):\n"
               "        return [rule.c] + m_r(rule, u, steps)\n    return [t1] + m_r(rule, [t2] + u, steps)\n",
               "    u, t1, t2 = tokens[:-2], tokens[-2], tokens[-1]\n    if (t1, t2) == (rule.a, rule.b):\n"
               "        return m_r(rule, u, steps) + [rule.c]\n    return m_r(rule, u + [t1], steps) + [t2]\n"),),
        (Patch("spec/merge.py",
               "    t1, t2, u = tokens[0], tokens[1], tokens[2:]\n    if (t1, t2) == (rule.a, rule.b):\n"
               "        return [rule.c] + merge(rule, u, steps)\n    return [t1] + merge(rule, [t2] + u, steps)\n",
               "    u, t1, t2 = tokens[:-2], tokens[-2], tokens[-1]\n    if (t1, t2) == (rule.a, rule.b):\n"
               "        return merge(rule, u, steps) + [rule.c]\n    return merge(rule, u + [t1], steps) + [t2]\n"),),
    )),
    Mutant("spec-merge-first-token-only", "M_r tests only the first token of the pair", "spec", _one(
        "spec/merge.py", "    if (t1, t2) == (rule.a, rule.b):\n        return [rule.c] + m_r(rule, u, steps)\n",
        "    if t1 == rule.a:\n        return [rule.c] + m_r(rule, u, steps)\n")),
    Mutant("spec-merge-long-drops-token", "M_r drops t2 on a list of 6 tokens (no input of |x| <= 4 reaches it)",
           "spec", _one(
               "spec/merge.py", "    if (t1, t2) == (rule.a, rule.b):\n        return [rule.c] + m_r(rule, u, steps)\n",
               "    if len(tokens) == 6 and (t1, t2) != (rule.a, rule.b):\n        return [t1] + m_r(rule, u, steps)\n"
               "    if (t1, t2) == (rule.a, rule.b):\n        return [rule.c] + m_r(rule, u, steps)\n")),
    Mutant("spec-rep-overlapping", "rep_r goes on at t2 after a replacement (it counts overlapping occurrences)",
           "spec", _one("spec/merge.py", "        return 1 + rep_r(rule, u)\n",
                        "        return 1 + rep_r(rule, [t2] + u)\n")),
    Mutant("spec-count-across-words", "pairs are counted across word boundaries", "spec", _one(
        "spec/bpe.py",
        "    pairs = sorted((word[i], word[i + 1]) for word in words for i in range(len(word) - 1))\n",
        "    flat = [t for word in words for t in word]\n"
        "    pairs = sorted((flat[i], flat[i + 1]) for i in range(len(flat) - 1))\n")),
    Mutant("spec-new-ids", "new ids start at 257", "spec", _one(
        "spec/bpe.py", "rule = Rule(a, b, ALPHABET_SIZE + j)", "rule = Rule(a, b, ALPHABET_SIZE + j + 1)")),
    # Changes beyond every size the bounded contracts reach (two rules, two words of at most 3 bytes), which only a
    # proof for every size refutes: "later rules keep earlier spellings" and the round trip broken from the fifth
    # rule on, |V_m| = 256 + m from the sixth (``proofs_tests.proofs.rule_lists``); def-bpe step 2 broken in words
    # of more than 5 tokens, training that never ends on corpora of more than 5 words (``training``).
    Mutant("spec-symbols-stride", "⟨⟨t⟩⟩ over more than 4 rules scans every other rule", "spec", _one(
        "spec/merge.py", "    for index in range(end - 1, -1, -1):\n",
        "    for index in range(end - 1, -1, -1 if end <= 4 else -2):\n")),
    Mutant("spec-vocabulary-first-5", "V_m lists the new ids of the first 5 rules only", "spec", _one(
        "spec/merge.py", "[rule.c for rule in rules]", "[rule.c for rule in rules[:5]]")),
    Mutant("spec-count-pairs-first-5", "step 2 does not count the pairs past the fifth token of a word", "spec", _one(
        "spec/bpe.py", "for i in range(len(word) - 1))", "for i in range(min(len(word) - 1, 4)))")),
    Mutant("spec-train-first-5-words", "step 5 applies the new rule to the first 5 words only", "spec", _one(
        "spec/bpe.py", "        xs = [merge(rule, x, cost) for x in xs]\n",
        "        xs = [merge(rule, x, cost) for x in xs[:5]] + xs[5:]\n")),
    # Three more past every bounded size (|x| <= 4 for M_r, a^ℓ with ℓ <= 7, two words of at most 3 bytes): M_r from
    # the right on lists of more than 8 tokens (``proofs_tests.proofs.merge_direction``), step 2 counting one
    # occurrence too many once its table has more than 5 entries (``pair_counts``), and ties to the largest pair
    # once a word has more than 5 tokens (``selection``).
    Mutant("spec-merge-right-past-8", "M_r merges a last pair (a, b) first on lists of more than 8 tokens", "spec",
           _one("spec/merge.py",
                "    t1, t2, u = tokens[0], tokens[1], tokens[2:]\n    if (t1, t2) == (rule.a, rule.b):\n"
                "        return [rule.c] + m_r(rule, u, steps)\n",
                "    if len(tokens) > 8 and (tokens[-2], tokens[-1]) == (rule.a, rule.b):\n"
                "        return m_r(rule, tokens[:-2], steps) + [rule.c]\n"
                "    t1, t2, u = tokens[0], tokens[1], tokens[2:]\n    if (t1, t2) == (rule.a, rule.b):\n"
                "        return [rule.c] + m_r(rule, u, steps)\n")),
    Mutant("spec-count-pairs-past-5-entries", "step 2 counts a pair once more when its table has more than 5 entries",
           "spec", _one("spec/bpe.py", "            table[-1] = (pair, table[-1][1] + 1)\n",
                        "            table[-1] = (pair, table[-1][1] + (2 if len(table) > 5 else 1))\n")),
    Mutant("spec-ties-largest-long-words", "step 4 breaks ties to the largest pair once a word has more than 5 tokens",
           "spec", _one("spec/bpe.py", "        (a, b), count, tied = select_pair(table, cost)\n",
                        "        (a, b), count, tied = select_pair(table, cost)\n"
                        "        if tied and any(len(x) > 5 for x in xs):\n            (a, b) = max(tied)\n")),
    Mutant("spec-max-not-counted", "step 4 takes the first pair of the table, not one of the largest count", "spec",
           _one("spec/bpe.py", "        if count == best:\n            maxima.append(pair)\n",
                "        maxima.append(pair)\n")),
    # Variant (ii) of the encoder past every size its bounded contract reaches (|s| <= 4): refuted by the scan step
    # of its proof for every size (``proofs_tests.proofs.rule_rank``), on a list of 7 tokens.
    Mutant("spec-rule-rank-rightmost-past-6", "variant (ii) merges the rightmost pair of the earliest rule in lists of"
           " more than 6 tokens", "spec", _one(
               "spec/variants.py", "        if index is not None and (best is None or index < best[0]):\n",
               "        if index is not None and (best is None or index < best[0] or (len(tokens) > 6 and index =="
               " best[0])):\n")),
    # --- the engine's Python paths ----------------------------------------------------------------------------
    Mutant("impl-short-rightmost", "the flat-list loop merges the rightmost of equal ranks", "impl", (
        (Patch("impl/merge_loop.py", "i = found.index(best)", "i = len(found) - 1 - found[::-1].index(best)"),),
        (Patch("impl/encoder.py", "i = found.index(best)", "i = len(found) - 1 - found[::-1].index(best)"),),
    )),
    Mutant("impl-long-rightmost", "the heap loop pops the rightmost of equal ranks", "impl", ((
        Patch("impl/merge_loop.py", "heap = [(c, i) for i, (x, y)", "heap = [(c, -i) for i, (x, y)"),
        Patch("impl/merge_loop.py", "        best, i = pop(heap)\n", "        best, i = pop(heap)\n        i = -i\n"),
        Patch("impl/merge_loop.py", "push(heap, (after, i))", "push(heap, (after, -i))"),
        Patch("impl/merge_loop.py", "push(heap, (before, p))", "push(heap, (before, -p))"),
    ),)),
    Mutant("impl-long-no-stale-check", "the heap loop merges a popped pair whose rank changed since it was pushed",
           "impl", _one("impl/merge_loop.py", "if j >= n or code(units[i], units[j]) != best:",
                        "if j >= n or code(units[i], units[j]) is None:")),
    Mutant("impl-ranks-reversed", "the encoder ranks the rules last first (the rank scan runs backwards)", "impl", _one(
        "impl/encoder.py", "merges.setdefault(a * stride + b, index * stride + c)",
        "merges.setdefault(a * stride + b, (len(checked) - index) * stride + c)")),
    Mutant("impl-shortcut-no-cross-check", "the whole-token shortcut without its cross-merge check", "impl", _one(
        "impl/encoder.py", "                and self._no_cross_merge(a, b, rank)\n", "")),
    Mutant("impl-strings-no-stale-check", "the strings trainer trusts stale heap counts", "impl", _one(
        "impl/trainer_loops.py", "        n = counts_get(pair, 0)\n        if n != -negative:",
        "        n = -negative\n        if n != -negative:")),
    Mutant("impl-strings-ids", "the strings trainer numbers new ids from 257", "impl", _one(
        "impl/trainer_loops.py", "    new_id = ALPHABET_SIZE\n    stop = ALPHABET_SIZE + merges\n",
        "    new_id = ALPHABET_SIZE + 1\n    stop = ALPHABET_SIZE + 1 + merges\n")),
    Mutant("impl-strings-rescan-hangs", "the strings trainer rescans the merge it just made: training never ends",
           "impl", _one("impl/trainer_loops.py", "j = merged.find(c, j + 1)", "j = merged.find(c, j)")),
    Mutant("impl-apply-rule-skip", "the trainer's M_r steps over one token after a merge, not two", "impl", _one(
        "impl/trainer_loops.py", "            out.append(c)\n            i += 2\n",
        "            out.append(c)\n            i += 1\n")),
    # --- the C loops ------------------------------------------------------------------------------------------
    Mutant("c-enc-short-rightmost", "the C flat-array loop merges the rightmost of equal ranks", "c", _one(
        "impl/_c/_fastenc_merge.h", "if ((rk[i] >> 32) < (best >> 32)) {",
        "if ((rk[i] >> 32) <= (best >> 32) && rk[i] != NO_VALUE) {")),
    Mutant("c-enc-long-no-stale-check", "the C heap loop merges a popped pair whose rank changed", "c", _one(
        "impl/_c/_fastenc_merge.h", "if (v == NO_VALUE || RANK_OF(v) != r)", "if (v == NO_VALUE)")),
    Mutant("c-enc-heap-no-first-neighbour", "the C heap loop never pairs a merged token with the word's first unit",
           "c", _one("impl/_c/_fastenc_merge.h", "        if (p >= 0) {\n", "        if (p > 0) {\n")),
    Mutant("c-train-ties-largest", "the C trainer breaks ties to the largest pair", "c", _one(
        "impl/_c/_fastbpe_heap.h", "        return p->a < q->a;\n    return p->b < q->b;\n",
        "        return p->a > q->a;\n    return p->b > q->b;\n")),
    Mutant("c-train-no-stale-check", "the C trainer trusts stale heap counts", "c", _one(
        "impl/_c/_fastbpe_run.h", "if (current != top.count) {", "if (current != top.count && current < 0) {")),
    Mutant("c-train-ids", "the C trainer numbers new ids from 257", "c", _one(
        "impl/_c/_fastbpe_run.h", "c = 256 + (int32_t)j,", "c = 257 + (int32_t)j,")),
    Mutant("c-train-stale-spins", "the C trainer never refreshes a stale heap entry: training never ends", "c", _one(
        "impl/_c/_fastbpe_run.h", "                g.heap[0].count = current;\n", "")),
    Mutant("c-train-left-count-by-one", "a C trainer's merge takes one occurrence, not the word's frequency, from the"
           " pair on its left", "c", _one("impl/_c/_fastbpe_part.h", "            count[pos[l].pid] -= f;\n",
                                           "            count[pos[l].pid] -= 1;\n")),
    Mutant("c-train-partitions-first-count", "the C trainer counts a pair in its first partition only", "c", _one(
        "impl/_c/_fastbpe_heap.h", "    for (int t = 0; t < g->parts; t++)\n        if (lid[t] >= 0",
        "    for (int t = 0; t < 1; t++)\n        if (lid[t] >= 0")),
    Mutant("c-train-partitions-apart", "the C trainer keeps a pair made in two partitions as two pairs", "c", _one(
        "impl/_c/_fastbpe_run.h", "if (side_step[side] != step) {", "if (side_step[side] != step || t > 0) {")),
    Mutant("c-count-new-word-zero", "the C word counter starts a new word at 0", "c", _one(
        "impl/_c/_fastenc_count.h", "    c->entries[e].count = 1;\n", "    c->entries[e].count = 0;\n")),
    Mutant("c-count-kind-blind", "the C word counter compares a word's code units, not its code points", "c", _one(
        "impl/_c/_fastenc_count.h",
        "        if (entry->hash == hash && piece_equal(entry->key, sc->kind, sc->data, start, end)) {",
        "        if (entry->hash == hash && PyUnicode_KIND(entry->key) == sc->kind &&\n"
        "            piece_equal(entry->key, sc->kind, sc->data, start, end)) {")),
    # Changes past every size the bounded contracts of the engine's loops reach (lists of at most 7 units), which
    # only the proofs for every length refute (``proofs_tests.proofs.engine_merge_loop``, ``engine_merge_step``).
    Mutant("impl-short-rightmost-past-8", "the flat-list loop merges the rightmost of equal ranks in lists of more than"
           " 8 units", "impl", _one(
               "impl/merge_loop.py", "i = found.index(best)",
               "i = found.index(best) if len(units) <= 8 else len(found) - 1 - found[::-1].index(best)")),
    Mutant("impl-merge-list-past-8", "the trainer's M_r joins no pair at a position past 8", "impl", _one(
        "impl/trainer_loops.py", "        if i + 1 < n and tokens[i] == a and tokens[i + 1] == b:\n",
        "        if i + 1 < n and i < 8 and tokens[i] == a and tokens[i + 1] == b:\n")),
    # With one rule the rank of the pair left of a join never changes (it is none before and after: c is in no pair
    # of the rule), so only the proof with a whole rule list (``engine_rule_rank``) refutes a loop that stops
    # refreshing it, past the 7 units its bounded contracts reach.
    Mutant("impl-short-left-stale-past-8", "the flat-list loop leaves the rank of the pair left of a join as it was in"
           " lists of more than 8 units", "impl", _one(
               "impl/merge_loop.py", "        if i > 0:\n            found[i - 1] = rank(units[i - 1], units[i])\n",
               "        if i > 0 and len(units) <= 8:\n            found[i - 1] = rank(units[i - 1], units[i])\n")),
    # The heap loop's counterpart, past the 7 units its bounded contracts reach: refuted by the join step of its proof
    # for every length (``engine_heap_loop``), where the pair left of a join is ranked and its entry never pushed.
    Mutant("impl-long-left-push-past-8", "the heap loop pushes no entry for the pair left of a join in lists of more"
           " than 8 units", "impl", _one(
               "impl/merge_loop.py", "        p = prv[i]\n        if p >= 0:\n",
               "        p = prv[i]\n        if p >= 0 and n <= 8:\n")),
)

#: The gates, by kind of mutant: name → pytest arguments (run in the mutated copy).
GATES: dict[str, dict[str, tuple[str, ...]]] = {
    "spec": {
        "hypothesis": ("proofs_tests/tests/spec/test_spec_properties.py",
                       "proofs_tests/tests/spec/test_article_examples.py"),
        "crosshair": ("proofs_tests/tests/proofs/test_crosshair_gate.py",
                      "proofs_tests/tests/proofs/test_crosshair_induction.py"),
    },
    "impl": {
        "hypothesis": ("proofs_tests/tests/impl/test_impl_encoder.py", "proofs_tests/tests/impl/test_impl_trainer.py"),
        "crosshair": ("proofs_tests/tests/proofs/test_crosshair_impl.py",
                      "proofs_tests/tests/proofs/test_crosshair_engine_induction.py"),
    },
    "c": {
        "hypothesis": ("proofs_tests/tests/impl/test_impl_encoder.py", "proofs_tests/tests/impl/test_impl_trainer.py"),
        "small scope": ("proofs_tests/tests/impl/test_c_small_scope.py",),
    },
}

#: Mutants that a gate of their kind is not asked to kill.  The small-scope check does not run the word counter
#: (``_fastenc_count.h``), and runs the trainer on two threads only on corpora so small that keeping a pair made in
#: two partitions as two pairs still gives def-bpe's rules on each (its docstring says why no larger ones).
NOT_GATED: dict[str, tuple[str, ...]] = {
    "small scope": ("c-count-new-word-zero", "c-count-kind-blind", "c-train-partitions-apart"),
}

#: Every gate, in column order; the ones without CrossHair run by default.
ALL_GATES = ("hypothesis", "small scope", "crosshair")
FAST_GATES = ("hypothesis", "small scope")

#: The C sources and the extension each one builds (its path in the tree, without the platform suffix).
#: The headers of ``_fastenc`` (its tables, merge loop, word cache, pre-tokenizers, word counter, encoding methods and
#: Merger type) are included by ``impl/_c/_fastenc.c``: the same extension.
C_SOURCES = {
    **{f"impl/_c/_fastenc{part}": "impl/_c/_fastenc"
       for part in (".c", "_table.h", "_merge.h", "_cache.h", "_scan.h", "_count.h", "_encode.h", "_merger.h")},
    **{f"impl/_c/_fastbpe{part}": "impl/_c/_fastbpe"
       for part in (".c", "_tables.h", "_part.h", "_heap.h", "_threads.h", "_run.h")},
}


def mutant(name: str) -> Mutant:
    """The mutant called ``name``."""
    for candidate in MUTANTS:
        if candidate.name == name:
            return candidate
    raise KeyError(name)


def gate_applies(gate: str, mutant: Mutant | None) -> bool:
    """Whether ``gate`` (a gate of the mutant's kind) must kill ``mutant``; the control runs take every gate."""
    return mutant is None or mutant.name not in NOT_GATED.get(gate, ())


def patched(mutant: Mutant, tree: Path) -> dict[str, str]:
    """The new text of every file the first applicable choice of ``mutant`` changes in ``tree`` (nothing written).

    A choice applies when each of its patches finds its text exactly once (after the patches before it).
    """
    for choice in mutant.choices:
        texts: dict[str, str] = {}
        for patch in choice:
            if patch.path not in texts:
                file = tree / patch.path
                texts[patch.path] = file.read_text(encoding="utf-8") if file.exists() else ""
            text = texts[patch.path]
            if text.count(patch.old) != 1:
                break
            texts[patch.path] = text.replace(patch.old, patch.new)
        else:
            return texts
    raise PatchError(f"mutant {mutant.name}: no patch set matches the source any more")


def apply(mutant: Mutant, tree: Path) -> list[str]:
    """Apply ``mutant`` to ``tree``; the changed paths.  A C extension it patches is rebuilt there."""
    texts = patched(mutant, tree)
    for path, text in texts.items():
        (tree / path).write_text(text, encoding="utf-8")
    if any(path in C_SOURCES for path in texts):
        build_extensions(tree, [C_SOURCES[path] for path in texts if path in C_SOURCES])
    return sorted(texts)


def build_extensions(tree: Path, modules: list[str]) -> None:
    """Compile the C extensions of ``tree`` in place, and check that each of ``modules`` was built anew."""
    for module in modules:
        for old in (tree / module).parent.glob(Path(module).name + ".*.so"):
            old.unlink()
    command = (sys.executable, "setup.py", "-q", "build_ext", "--inplace", "--force")
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False, timeout=600)
    for module in modules:
        if not list((tree / module).parent.glob(Path(module).name + ".*.so")):
            raise BuildError(f"{module} did not compile:\n{done.stdout}{done.stderr}")


def scratch_copy(destination: Path) -> Path:
    """A copy of the project's sources (not its virtual environment, caches or build files) under ``destination``."""
    tree = destination / "tree"
    ignore = shutil.ignore_patterns(".venv", ".git", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache",
                                    ".hypothesis", "*.egg-info", "build")
    # The links of bpeproof/ to the layers' folders stay links, so the tree imports its own (mutated) sources.
    shutil.copytree(ROOT, tree, ignore=ignore, symlinks=True)
    return tree


@dataclass(frozen=True)
class Outcome:
    """How a command ended in the scratch tree: its exit code (None: timed out), wall seconds and output."""

    returncode: int | None
    seconds: float
    output: str

    @property
    def failed(self) -> bool:
        return self.returncode != 0


def run_in(tree: Path, command: tuple[str, ...], timeout: float) -> Outcome:
    """Run ``command`` in ``tree`` with the tree first on the path, then kill whatever it left running.

    The command runs in its own process group, which is killed when it ends or times out: no CrossHair process
    outlives its gate.  The output goes to a file, so that a leftover process cannot hold a pipe open.
    """
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as log:
        process = subprocess.Popen(command, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        code: int | None
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.seek(0)
        output = log.read()
    return Outcome(code, time.monotonic() - started, output)


def pytest_command(*args: str, timeout: int = TEST_TIMEOUT) -> tuple[str, ...]:
    """pytest on ``args``, stopping at the first failure, each test limited to ``timeout`` s unless it sets its own."""
    return (sys.executable, "-m", "pytest", "-n", "0", "-x", "-v", "-rf", "-p", "no:cacheprovider",
            f"--timeout={timeout}", "--timeout-method=thread", *args)


_FAILED = re.compile(r"^FAILED (\S+)")
_STARTED = re.compile(r"^(\S+::\S+)")
_TIMEOUT = "+ Timeout +"


def first_failure(output: str) -> str:
    """The test pytest reported as failed first, or the one that timed out, or the output's last line."""
    lines = output.splitlines()
    for line in lines:
        match = _FAILED.match(line)
        if match:
            return match.group(1).split("/")[-1]
    for index, line in enumerate(lines):
        if _TIMEOUT in line:
            # pytest-timeout's thread method ends the process; -v printed the test's id before it started.
            started = [m.group(1) for m in map(_STARTED.match, lines[: index + 1]) if m]
            return (started[-1].split("/")[-1] if started else "a test") + " (timeout)"
    kept = output.strip().splitlines()
    return kept[-1] if kept else ""


@dataclass(frozen=True)
class Verdict:
    """One cell of the matrix."""

    gate: str
    killed: bool
    seconds: float
    detail: str  # the first failing test, or why the gate did not run


def run_gate(tree: Path, kind: str, gate: str) -> Verdict:
    """Run one gate on ``tree``: killed when pytest fails (a failing test, a timeout)."""
    outcome = run_in(tree, pytest_command(*GATES[kind][gate]), GATE_TIMEOUT)
    if outcome.returncode is None:
        return Verdict(gate, True, outcome.seconds, f"timed out after {GATE_TIMEOUT} s")
    if outcome.returncode not in (0, 1):
        # 2: interrupted or collection errors, 3: internal error, 4: usage error, 5: no tests.
        detail = f"pytest exit {outcome.returncode}: {first_failure(outcome.output)}"
        return Verdict(gate, True, outcome.seconds, detail)
    return Verdict(gate, outcome.failed, outcome.seconds, first_failure(outcome.output) if outcome.failed else "")


def check(mutant: Mutant | None, gates: tuple[str, ...], kind: str | None = None) -> list[Verdict]:
    """Apply ``mutant`` (None: none, the control run of ``kind``'s gates) to a scratch copy and run its gates."""
    kind = mutant.kind if mutant is not None else kind
    assert kind is not None
    with tempfile.TemporaryDirectory(prefix="bpeproof-mutant-") as scratch:
        tree = scratch_copy(Path(scratch))
        if mutant is not None:
            apply(mutant, tree)
        elif kind == "c":
            build_extensions(tree, list(dict.fromkeys(C_SOURCES.values())))
        return [run_gate(tree, kind, gate) for gate in gates if gate in GATES[kind] and gate_applies(gate, mutant)]


def _cell(verdict: Verdict | None, control: bool) -> str:
    if verdict is None:
        return "—"
    if control:
        return f"{'passed' if not verdict.killed else 'FAILED'} ({verdict.seconds:.0f} s)" + (
            f": {verdict.detail}" if verdict.killed else "")
    if not verdict.killed:
        return f"SURVIVED ({verdict.seconds:.0f} s)"
    return f"killed in {verdict.seconds:.0f} s by `{verdict.detail}`"


def main(argv: list[str] | None = None) -> int:
    """Run the matrix: exit 1 if a mutant survives a gate or a control run fails, 2 if a patch does not apply."""
    args = sys.argv[1:] if argv is None else argv
    if "-h" in args or "--help" in args:
        print(__doc__.split("\n\n")[1])
        return 0
    flags = {a for a in args if a.startswith("-")} - {"--all", "--markdown", "--list", "--no-control"}
    if flags:
        print(f"unknown options: {', '.join(sorted(flags))} (known: --all, --markdown, --list, --no-control)",
              file=sys.stderr)
        return 2
    # A termination unwinds like Ctrl-C, so that each gate's processes are killed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    gates = ALL_GATES if "--all" in args else FAST_GATES
    markdown = "--markdown" in args
    names = [a for a in args if not a.startswith("--")]
    unknown = sorted(set(names) - {m.name for m in MUTANTS})
    if unknown:
        print(f"unknown mutants: {', '.join(unknown)}", file=sys.stderr)
        return 2
    if "--list" in args:
        for m in MUTANTS:
            print(f"{m.name} ({m.kind}): {m.what}")
        return 0
    chosen = [m for m in MUTANTS if not names or m.name in names]
    try:
        for m in chosen:
            patched(m, ROOT)
    except PatchError as error:
        print(error, file=sys.stderr)
        return 2
    bad = 0
    rows: list[str] = []

    def report(label: str, verdicts: list[Verdict], control: bool) -> None:
        found = {verdict.gate: verdict for verdict in verdicts}
        cells = [_cell(found.get(gate), control) for gate in gates]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in [label, *cells]) + " |")
        if markdown:
            print(rows[-1], flush=True)
        else:
            for verdict in verdicts:
                print(f"{label}: {verdict.gate}: {_cell(verdict, control)}", flush=True)

    if markdown:
        print("| mutant | " + " | ".join(gates) + " |")
        print("|---|" + "---|" * len(gates), flush=True)
    if "--no-control" not in args:
        for kind in sorted({m.kind for m in chosen}):
            verdicts = check(None, gates, kind)
            bad += sum(v.killed for v in verdicts)
            report(f"(none: the {kind} gates on the unmutated tree)", verdicts, True)
    for m in chosen:
        try:
            verdicts = check(m, gates)
        except BuildError as error:
            print(f"{m.name}: {error}", file=sys.stderr)
            bad += 1
            continue
        bad += sum(not v.killed for v in verdicts)
        report(f"`{m.name}` ({m.kind}): {m.what}", verdicts, False)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
