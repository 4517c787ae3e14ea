"""``bpeproof vectors``: the known-answer suite alone catches every planted port that ``check`` catches.

The suite is written for the planted vocabularies (``bpeproof.proofs_tests.fixtures.vocab``), and every planted
port (``ports.PORTS``, the JavaScript ones, the special-token ones, the BOM-dropping decode) runs against it in a
process of its own (the ports read their vocabulary from the environment once): each buggy one fails a vector,
each correct one passes all.  The Python runner of docs/check-a-port.md runs too, and the Node one where Node is.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bpeproof.proofs_tests.checker import vectors
from bpeproof.proofs_tests.checker.library import Library, load_reference, with_special_tokens
from bpeproof.proofs_tests.fixtures.vocab import SPECIALS, write_project_file, write_rank_file
from bpeproof.proofs_tests.planted import ports

ROOT = Path(__file__).resolve().parents[3]
P = "bpeproof.proofs_tests.planted.ports:"
#: Ports caught on the trained rank file (with ``SPECIALS`` as its special tokens), on the one with tokens only
#: the whole-piece lookup reaches, and on the project's file with special tokens; (encode, decode or None).
BUGGY: dict[str, list[tuple[str, str | None]]] = {
    "rank": [(t, None) for t, _ in ports.PORTS if not t.endswith("no_whole_piece")]
    + [(P + "encode_missing_bom_token", None), (P + "encode_js_port", None),
       (P + "encode_tiktoken_special_raises", None), (P + "encode_tiktoken_special_always", None),
       (P + "encode", P + "decode_drop_bom"), (P + "encode_newer_unicode", None),
       (P + "encode_tiktoken_surrogates_dropped", None)],
    "unreachable": [(P + "encode_no_whole_piece", None)],
    "project": [(P + "encode_special_ignored", None), (P + "encode_special_always", None)],
}
CORRECT: dict[str, list[tuple[str, str | None]]] = {
    "rank": [(t, None) for t in ports.CORRECT_PORTS] + [(P + "encode", P + "decode"),
                                                        (P + "encode_tiktoken_special", None),
                                                        (P + "encode_tiktoken_special_refusing", None)],
    "unreachable": [(t, None) for t in ports.CORRECT_PORTS],
    "project": [(P + "encode_reference_special", None)],
}

#: Runs ports (JSON: [[encode, decode or null], ...]) on a suite in one process; prints their failures as JSON.
RUNNER = """
import importlib, json, sys
from bpeproof.proofs_tests.checker import vectors

def load(target):
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)

suite = vectors.read(sys.argv[1])
plain = [vector for vector in suite if not vector.allowed_special]
out = {}
for encode, decode in json.loads(sys.argv[2]):
    function = load(encode)
    if "special" in encode:  # the ports that take allowed_special run every vector
        here, encoded = suite, function
    else:
        here, encoded = plain, lambda text, allowed_special=None, function=function: function(text)
    # The first failure is a verdict: a slow port stops there (the pure-Python ones merge 10,000 bytes slowly).
    out[encode + " " + str(decode)] = vectors.failures(here, encoded, load(decode) if decode else None, limit=1)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """Each planted vocabulary and the folder of its suite (written by the command line for the rank file)."""
    folder = tmp_path_factory.mktemp("vectors")
    files = {"rank": write_rank_file(folder / "trained.tiktoken"),
             "unreachable": write_rank_file(folder / "unreachable.tiktoken", unreachable=True),
             "project": write_project_file(folder / "project.json")}
    out: dict[str, tuple[Path, str]] = {}
    for name, path in files.items():
        pattern = None if name == "project" else "cl100k"
        given = SPECIALS if name == "rank" else None
        reference, _ = with_special_tokens(load_reference(str(path), pattern), given)
        target = folder / name
        # As the command line does: lone surrogates where the file's library replaces them (a rank file's).
        vectors.write(vectors.choose(reference, surrogates=Library(str(path), reference).surrogates), target)
        out[name] = (target, str(path))
    return out


def _run_ports(suite: Path, vocab: str, targets: list[tuple[str, str | None]], pattern: bool) -> dict[str, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BPEPROOF_CHECK_VOCAB": vocab,
           ports.ENV_SPECIALS: json.dumps(SPECIALS)}
    if pattern:
        env["BPEPROOF_CHECK_PATTERN"] = "cl100k"
    else:
        env.pop("BPEPROOF_CHECK_PATTERN", None)
    done = subprocess.run([sys.executable, "-c", RUNNER, str(suite / vectors.JSONL), json.dumps(targets)],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, list[str]] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("kind", ["rank", "unreachable", "project"])
def test_every_planted_port_fails_a_vector_and_every_correct_one_passes(
        suites: dict[str, tuple[Path, str]], kind: str) -> None:
    suite, vocab = suites[kind]
    found = _run_ports(suite, vocab, BUGGY[kind] + CORRECT[kind], pattern=kind != "project")
    passing = [f"{encode} / {decode}" for encode, decode in BUGGY[kind] if not found[f"{encode} {decode}"]]
    assert passing == [], f"planted ports that pass every vector: {passing}"
    for encode, decode in CORRECT[kind]:
        assert found[f"{encode} {decode}"] == [], found[f"{encode} {decode}"][:3]


def test_suite_is_compact_deterministic_and_in_both_formats(suites: dict[str, tuple[Path, str]],
                                                             tmp_path: Path) -> None:
    suite, vocab = suites["rank"]
    written = vectors.read(suite / vectors.JSONL)
    assert 100 < len(written) <= vectors.MAXIMUM
    assert any(vector.allowed_special for vector in written)
    assert {name for name in SPECIALS if any(name in v.text and not v.allowed_special for v in written)} == \
        set(SPECIALS)
    assert any(vector.text.startswith("\ufeff") for vector in written)
    # Every shape once: each long one past each length (ids in full), each kind of Unicode change in each
    # position, each lone surrogate (a rank file's library, tiktoken, replaces them).
    texts = {vector.text for vector in written}
    long = vectors.long_texts()
    assert {text for _, text in vectors.shapes("replace")} <= texts
    assert len(long) == len(vectors.LONG_SHAPES) * len(vectors.LONG_LENGTHS) + len(vectors.LONGEST_SHAPES)
    assert max(len(text.encode()) for _, text in long) > vectors.LONGEST
    assert len({behaviour.split(":")[1] for behaviour, _ in vectors.unicode_texts()}) > 20  # kinds of change
    # The others are short, and the whole suite is compact.
    short = [vector.text for vector in written if vector.text not in {text for _, text in long}]
    assert sum(len(text) for text in short) / len(short) < 20
    assert sum((suite / name).stat().st_size for name in (vectors.JSONL, vectors.INP, vectors.OUT)) <= \
        vectors.MAX_BYTES
    lines = (suite / vectors.JSONL).read_text(encoding="ascii").splitlines()
    surrogates = [line for line in lines if line.startswith('{"lone_surrogate": true, ')]
    assert len(surrogates) == len(vectors.surrogate_texts()) == sum(vector.lone_surrogate for vector in written)
    # llama.cpp's pair: the texts without special tokens, each followed by the separator line, one ids line each;
    # no lone surrogate, which UTF-8 cannot carry.
    plain = [vector for vector in written if not vector.allowed_special and not vector.lone_surrogate]
    inputs = (suite / vectors.INP).read_bytes().decode("utf-8").split(vectors.SEPARATOR)
    assert inputs[-1] == "" and inputs[:-1] == [vector.text for vector in plain]
    lines = (suite / vectors.OUT).read_text(encoding="ascii").split("\n")
    assert [[int(t) for t in line.split()] for line in lines[:-1]] == [list(vector.ids) for vector in plain]
    # The command line writes the same suite (the same file gives the same vectors).
    specials = [f"--special={name}={token}" for name, token in SPECIALS.items()]
    done = subprocess.run([sys.executable, "-m", "bpeproof.cli", "vectors", "--vocab", vocab, "--pattern", "cl100k",
                           "-o", str(tmp_path / "again"), *specials], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert f"{len(written)} vectors" in done.stdout and "left out" not in done.stdout  # every shape is in
    for name in (vectors.JSONL, vectors.INP, vectors.OUT):
        assert (tmp_path / "again" / name).read_bytes() == (suite / name).read_bytes()


def test_max_and_max_bytes_bound_the_suite(suites: dict[str, tuple[Path, str]],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the generator's texts (``drawn=0``, quicker): 40 vectors at most; 200 kB at most, which leaves out
    the longest shapes but keeps the shorter ones that fit."""
    reference = load_reference(suites["unreachable"][1], "cl100k")
    assert len(vectors.choose(reference, 40, drawn=0)) == 40
    monkeypatch.setattr(vectors, "MAX_BYTES", 200_000)
    chosen = vectors.choose(reference, drawn=0)
    assert 150_000 < sum(vector.size() for vector in chosen) <= 200_000
    lengths = {len(vector.text.encode()) for vector in chosen}
    assert max(lengths) > 1000 and not any(length > vectors.LONGEST for length in lengths)


@pytest.mark.parametrize("problem", ["missing", "not-vocabulary", "output-is-file", "bad-special"])
def test_bad_input_is_one_line_and_exit_2(suites: dict[str, tuple[Path, str]], tmp_path: Path,
                                         problem: str) -> None:
    vocab = suites["rank"][1]
    text = tmp_path / "notes.txt"
    text.write_text("hello\n", encoding="utf-8")
    args = {"missing": ["--vocab", str(tmp_path / "nope.tiktoken"), "-o", str(tmp_path / "out")],
            "not-vocabulary": ["--vocab", str(text), "-o", str(tmp_path / "out")],
            "output-is-file": ["--vocab", vocab, "--pattern", "cl100k", "-o", str(text)],
            "bad-special": ["--vocab", vocab, "--pattern", "cl100k", "-o", str(tmp_path / "out"), "--special", "x"]}
    done = subprocess.run([sys.executable, "-m", "bpeproof.cli", "vectors", *args[problem]], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=False)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "out").exists()


#: The port the documented Python runner imports: a planted encode, a planted decode that also spells the special
#: tokens (the planted decodes know only the rank file).
PORT_SHIM = """from bpeproof.proofs_tests.planted.ports import {encode} as encode, {decode} as plain_decode

def decode(ids):
    specials = {specials!r}
    out, run = [], []
    for token in [*ids, None]:
        if token is None or token in specials:
            out.append(plain_decode(run) if run else "")
            run = []
            out.append(specials.get(token, ""))
        else:
            run.append(token)
    return "".join(out)
"""


def _runner(language: str) -> str:
    page = (ROOT / "docs" / "check-a-port.md").read_text(encoding="utf-8")
    section = page[page.index("### A known-answer suite") :]
    found = re.search(rf"```{language}\n(.*?)```", section, re.DOTALL)
    assert found is not None
    return found.group(1)


@pytest.mark.parametrize(("encode", "decode", "code"), [("encode_tiktoken_special", "decode", 0),
                                                        ("encode_tiktoken_special_refusing", "decode", 0),
                                                        ("encode_tiktoken_special", "decode_drop_bom", 1),
                                                        ("encode_tiktoken_special_always", "decode", 1)])
def test_the_documented_python_runner(suites: dict[str, tuple[Path, str]], tmp_path: Path, encode: str,
                                      decode: str, code: int) -> None:
    suite, vocab = suites["rank"]
    source = _runner("python")
    line = "from my_port import decode, encode"
    assert line in source
    port = PORT_SHIM.format(encode=encode, decode=decode, specials={t: name for name, t in SPECIALS.items()})
    (tmp_path / "run_vectors.py").write_text(source.replace(line, port), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BPEPROOF_CHECK_VOCAB": vocab, "BPEPROOF_CHECK_PATTERN": "cl100k",
           ports.ENV_SPECIALS: json.dumps(SPECIALS)}
    done = subprocess.run([sys.executable, str(tmp_path / "run_vectors.py"), str(suite)], capture_output=True,
                          text=True, env=env, timeout=300, check=False)
    assert done.returncode == code, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.strip().endswith("failures")


@pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed")
def test_the_documented_node_runner(suites: dict[str, tuple[Path, str]], tmp_path: Path) -> None:
    """The Node runner on a port that answers from a table of the suite's own answers, then on one wrong answer."""
    suite = suites["rank"][0]
    (tmp_path / "run_vectors.js").write_text(_runner("js"), encoding="utf-8")
    written = vectors.read(suite / vectors.JSONL)
    # The port refuses a lone surrogate, as a port may (String.prototype.isWellFormed: Node 20).
    port = ("const table = require('./table.json');\n"
            "const ids = new Map(table.map(([text, allowed, ids]) => [(allowed ? '1' : '0') + text, ids]));\n"
            "const texts = new Map(table.map(([, , ids, back]) => [ids.join(' '), back]));\n"
            "exports.encode = (text, allowed) => {\n"
            "  if (text.isWellFormed && !text.isWellFormed()) throw new Error('not Unicode text');\n"
            "  return ids.get((allowed === 'all' ? '1' : '0') + text);\n"
            "};\n"
            "exports.decode = (found) => texts.get(found.join(' '));\n")
    (tmp_path / "my_port.js").write_text(port, encoding="utf-8")
    assert any(vector.lone_surrogate for vector in written)
    for wrong in (False, True):
        table = [[v.text, v.allowed_special, list(v.ids), v.back] for v in written]
        if wrong:  # the port encodes one text with one more id (its decode still knows the right ids)
            table.append([written[0].text, written[0].allowed_special, [*written[0].ids, 0], written[0].back])
        (tmp_path / "table.json").write_text(json.dumps(table), encoding="utf-8")
        done = subprocess.run(["node", str(tmp_path / "run_vectors.js"), str(suite)], capture_output=True, text=True,
                              cwd=tmp_path, timeout=120, check=False)
        assert done.returncode == (1 if wrong else 0), done.stdout[-2000:] + done.stderr[-2000:]
