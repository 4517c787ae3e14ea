"""``bpeproof check --tokenizer/--cmd``: text → ids tokenizers checked against a vocabulary file's reference.

The planted ports (``bpeproof.proofs_tests.planted.ports``) must each be caught, in the layer listed
there; the correct ports (the pure-Python port, tiktoken wrapped, the project's Tokenizer)
and the example adapters must pass.  Budgets here are counts of texts with a fixed seed, so a
loaded machine tries the same texts as an idle one (the seconds only bound a run); the 30 s / 60 s
proofs run with ``python bench/bench_check.py --proofs``.  The vocabulary is trained here
(``bpeproof.proofs_tests.fixtures.vocab``): no download, no ``../shared``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bpeproof.proofs_tests.checker.diagnosis import matched_alternative, top_level_alternatives
from bpeproof.proofs_tests.checker.groups import read_ignore_file
from bpeproof.proofs_tests.checker.tokenizer_check import TargetError, check_tokenizer
from bpeproof.proofs_tests.checker.tokenizer_result import TokenizerCheckResult
from bpeproof.proofs_tests.fixtures.vocab import write_rank_file
from bpeproof.proofs_tests.planted import ports
from bpeproof.proofs_tests.planted.ports import CORRECT_PORTS, PORTS

ROOT = Path(__file__).resolve().parents[3]
#: Texts each planted port gets (at seed 3 each is caught within 192; seeds 1, 5, 11 within 768).
CATCH_EXAMPLES = 3000
#: The bound on a run's wall time: never reached on a working machine.
BOUND_SECONDS = 120.0


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_rank_file(tmp_path_factory.mktemp("vocab") / "trained.tiktoken"))


@pytest.fixture(scope="module")
def unreachable_vocab(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_rank_file(tmp_path_factory.mktemp("vocab") / "unreachable.tiktoken", unreachable=True))


def _reference_semantics(path: str) -> str | None:
    from bpeproof.commands._vocab import load_tokenizer

    return getattr(load_tokenizer(path, "cl100k"), "semantics", None)


@pytest.fixture(scope="module")
def caught(vocab: str, unreachable_vocab: str) -> dict[str, TokenizerCheckResult]:
    """Every planted port checked once, two at a time (each check is a worker process and the checker)."""

    def run(target: str) -> TokenizerCheckResult:
        path = unreachable_vocab if target.endswith("no_whole_piece") else vocab
        # Shrinking stops where no smaller text fails, the time only bounds it; a bug that needs an earlier text
        # (the cache) takes a fresh process per try and would use all of it, so it gets 4 s (its length is not
        # checked).
        shrink = 4.0 if target.endswith("cache_by_length") else 20.0
        return check_tokenizer(target, vocab=path, pattern="cl100k", seconds=BOUND_SECONDS, seed=3,
                               examples=CATCH_EXAMPLES, shrink_seconds=shrink)

    targets = [t for t, _ in PORTS if not t.endswith("no_whole_piece") or
               _reference_semantics(unreachable_vocab) == "tiktoken"]
    with ThreadPoolExecutor(2) as pool:
        return dict(zip(targets, pool.map(run, targets), strict=True))


@pytest.mark.parametrize(("target", "layers"), PORTS, ids=[t.split(":")[1] for t, _ in PORTS])
def test_planted_port_is_caught(caught: dict[str, TokenizerCheckResult], target: str, layers: str) -> None:
    if target not in caught:
        pytest.skip("the reference does not run rank files with tiktoken's semantics (whole-piece lookup) here")
    result = caught[target]
    assert result.found, result.report()
    assert result.layer in layers.split("|"), result.report()
    assert result.seconds_to_find is not None and result.examples <= CATCH_EXAMPLES
    assert result.text is not None
    if target.endswith("long_pieces"):  # its bug needs a piece past LONG_SWITCH bytes: shrunk to just past it
        assert ports.LONG_SWITCH < len(result.text.encode()) <= ports.LONG_SWITCH + 4, result.report()
    elif not result.earlier:  # a wrong answer that needs an earlier text shrinks slowly (a fresh process per try)
        assert len(result.text) <= 12, result.report()
    report = result.report()
    assert "code pts" in report and "reference:" in report and "impl" in report


@pytest.mark.parametrize("target", CORRECT_PORTS, ids=[t.split(":")[1] for t in CORRECT_PORTS])
def test_correct_port_passes(vocab: str, target: str) -> None:
    result = check_tokenizer(target, vocab=vocab, pattern="cl100k", seconds=BOUND_SECONDS, seed=5,
                             examples=2000, decode="bpeproof.proofs_tests.planted.ports:decode")
    assert not result.found, result.report()
    assert result.examples == 2000, result.report()


def test_report_names_the_alternative_and_the_variant(caught: dict[str, TokenizerCheckResult]) -> None:
    split = caught["bpeproof.proofs_tests.planted.ports:encode_ws_no_lookahead"]
    assert split.alternative is not None and r"\s+(?!\S)" in split.alternative, split.report()
    greedy = caught["bpeproof.proofs_tests.planted.ports:encode_greedy_longest"]
    assert greedy.piece is not None and greedy.aligned, greedy.report()
    document = json.loads(greedy.to_json())
    assert {"found", "ran", "layer", "claim", "text", "codepoints", "expected", "actual", "aligned", "piece",
            "variants", "library_answer"} <= set(document)


def test_library_answer_is_shown(caught: dict[str, TokenizerCheckResult]) -> None:
    pytest.importorskip("tiktoken")
    result = caught["bpeproof.proofs_tests.planted.ports:encode_digits_1_4"]
    assert result.library is not None and result.library.startswith("tiktoken")
    assert result.library_answer == result.expected, result.report()


def test_pattern_alternatives() -> None:
    assert top_level_alternatives(r"a|[|(]|(b|c)|\|") == ["a", "[|(]", "(b|c)", r"\|"]
    from bpeproof.impl.pre_tokenizers.patterns import PATTERNS

    assert matched_alternative(PATTERNS["cl100k"], "  a", 0) == (7, r"\s+(?!\S)", " ")


def test_javascript_whitespace_is_named_as_a_split(vocab: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """'  \\x85' under JavaScript's \\s is ' ' and ' \\x85' (U+0085 is no space there): the cut falls between two
    spaces, where no kind of character changes, and was once reported as a merge difference."""
    from bpeproof.commands._vocab import load_tokenizer
    from bpeproof.impl.pre_tokenizers.pattern_variants import with_js_whitespace
    from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
    from bpeproof.proofs_tests.checker.diagnosis import analyse

    monkeypatch.setenv("BPEPROOF_CHECK_VOCAB", vocab)
    monkeypatch.delenv("BPEPROOF_CHECK_PATTERN", raising=False)
    assert with_js_whitespace(PATTERNS["cl100k"]) == ports.PATTERN_BUGS["js_whitespace"]
    assert with_js_whitespace(r"[^\S\n]") is None and with_js_whitespace(r"\\s") == r"\\s"
    reference = load_tokenizer(vocab, "cl100k")
    for text in ["  \x85", "\x85 ", "a \x85b"]:
        expected, actual = list(reference.encode(text)), ports.encode_js_whitespace(text)
        if actual == expected:
            continue
        analysis = analyse(reference, text, expected, actual, False, None)
        assert analysis.layer == "split", (text, analysis)
    actual = ports.encode_js_whitespace("  \x85")
    assert actual != list(reference.encode("  \x85"))
    assert "JavaScript" in (analyse(reference, "  \x85", list(reference.encode("  \x85")), actual, False, None).detail
                            or "")


def test_variants_agree_with_the_spec(vocab: str) -> None:
    """The table-driven variants used in reports give the spec's own answers (spec.variants) on a small file."""
    from bpeproof.commands._vocab import load_tokenizer
    from bpeproof.proofs_tests.checker.reruns import reference_table
    from bpeproof.spec.variants import enc_bytes_rank, enc_whole_word_first

    reference = load_tokenizer(vocab, "cl100k")
    variants = reference_table(reference)
    for word in [b" the", b"aaaa", b"12345", b" hello", "日本".encode(), b"  "]:
        ids = variants.encode("bytes-rank", word)
        assert ids is not None
        if getattr(reference, "semantics", "sequential") == "tiktoken":
            assert "whole-word+bytes-rank" in variants.agreeing(word, list(reference.encode(word.decode()))) or \
                len(reference.pre_tokenize(word.decode())) > 1
    assert callable(enc_bytes_rank) and callable(enc_whole_word_first)


# ---------------------------------------------------------------------------
# Adapters (examples/adapters/) and the command line
# ---------------------------------------------------------------------------


def _cli(*args: str, cwd: Path = ROOT, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "bpeproof.cli", "check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_python_adapter_passes(vocab: str) -> None:
    pytest.importorskip("tiktoken")
    adapter = ROOT / "examples" / "adapters" / "tiktoken_adapter.py"
    result = _cli("--cmd", f"{sys.executable} {adapter}", "--vocab", vocab, "--pattern", "cl100k",
                  "--examples", "2000", "--seconds", str(BOUND_SECONDS), "--seed", "4", "--json",
                  timeout=BOUND_SECONDS + 30)
    assert result.returncode == 0, result.stdout + result.stderr
    document = json.loads(result.stdout)
    assert document["found"] is False and document["examples"] == 2000


def _npm_install(target: Path) -> str | None:
    """Install js-tiktoken into ``target``; the reason when it cannot be (no node/npm, no registry)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node or npm is not installed"
    try:
        view = subprocess.run(["npm", "view", "js-tiktoken", "version"], capture_output=True, text=True,
                              timeout=20, check=False)
    except subprocess.TimeoutExpired:
        return "npm cannot reach the registry (timed out)"
    if view.returncode != 0:
        return "npm cannot reach the registry"
    done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", "js-tiktoken@1"], cwd=target,
                          capture_output=True, text=True, timeout=120, check=False)
    return None if done.returncode == 0 else f"npm install failed: {done.stderr.strip()[:200]}"


def test_node_adapter_speaks_the_protocol(vocab: str, tmp_path: Path) -> None:
    """The adapter finds js-tiktoken next to itself (installed beside a copy of it), from another directory."""
    folder = tmp_path / "adapter"
    folder.mkdir()
    reason = _npm_install(folder)
    if reason is not None:
        pytest.skip(reason)
    adapter = folder / "js_tiktoken_adapter.mjs"
    shutil.copy(ROOT / "examples" / "adapters" / "js_tiktoken_adapter.mjs", adapter)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = _cli("--cmd", f"node {adapter}", "--vocab", vocab, "--pattern", "cl100k", "--examples", "1500",
                  "--seconds", str(BOUND_SECONDS), "--seed", "2", "--json", cwd=elsewhere,
                  timeout=BOUND_SECONDS + 30)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    document = json.loads(result.stdout)
    assert document["ran"] is True
    if document["found"]:  # js-tiktoken's \s is JavaScript's: it lacks U+0085, which Python's regex counts
        assert document["layer"] == "split", document


def test_cli_tokenizer_finds_a_planted_port(vocab: str) -> None:
    result = _cli("--tokenizer", "bpeproof.proofs_tests.planted.ports:encode_case_sensitive", "--vocab", vocab,
                  "--pattern", "cl100k", "--examples", str(CATCH_EXAMPLES), "--seconds", str(BOUND_SECONDS),
                  "--seed", "1", timeout=BOUND_SECONDS + 30)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FOUND a difference" in result.stdout and "layer    : split" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tokenizer", "no_such_module_xyz:encode"], "no_such_module_xyz"),
        (["--tokenizer", "bpeproof.proofs_tests.planted.ports:no_such"], "no attribute"),
        (["--cmd", "false"], "exit code"),
        (["--cmd", "echo garbage"], "hello"),
        (["--cmd", "/no/such/program"], "cannot start"),
        (["--tokenizer", "bpeproof.proofs_tests.planted.ports:encode", "--seconds", "nan"], "--seconds"),
        (["--tokenizer", "bpeproof.proofs_tests.planted.ports:encode", "--examples", "0"], "--examples"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(vocab: str, args: list[str], message: str) -> None:
    result = _cli(*args, "--vocab", vocab, "--pattern", "cl100k", *([] if "--seconds" in args else
                                                                    ["--seconds", "3"]))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


@pytest.mark.parametrize(("pattern", "message"), [
    ("(a", "--pattern (a: not a regular expression the reference runs: missing )"),
    ("\\p{Foo}+|x", "--pattern \\p{Foo}+|x: not a regular expression the reference runs: unknown property"),
    ("cl50k", "--pattern cl50k: the pre-tokenization pattern leaves the text at character 0 unmatched"),
])
def test_cli_a_refused_pattern_is_echoed_as_given(vocab: str, pattern: str, message: str) -> None:
    result = _cli("--tokenizer", "bpeproof.proofs_tests.planted.ports:encode", "--vocab", vocab, "--pattern",
                  pattern, "--seconds", "3")
    assert result.returncode == 2 and result.stdout == "", result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


def test_cli_examples_is_for_tokenizer_checks() -> None:
    result = _cli("--enc", "bpeproof.impl.encoder:enc", "--examples", "10", "--seconds", "3")
    assert result.returncode == 2 and result.stdout == "", result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "--examples" in result.stderr, result.stderr


def test_cli_not_a_vocabulary(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n", encoding="utf-8")
    result = _cli("--tokenizer", "bpeproof.proofs_tests.planted.ports:encode", "--vocab", str(bad), "--seconds", "2")
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_program_that_exits_mid_run_is_a_finding(vocab: str, tmp_path: Path) -> None:
    program = tmp_path / "dies.py"
    program.write_text(
        "import json, sys\n"
        "print(json.dumps({'protocol': 'bpeproof-check', 'version': 1}), flush=True)\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    if any('7' in t for t in request['encode']):\n"
        "        sys.exit(5)\n"
        "    print(json.dumps({'results': [list(t.encode()) for t in request['encode']]}), flush=True)\n",
        encoding="utf-8",
    )
    # 256 texts: the search goes on after each crash (a fresh process each time), and '7' is in many texts.
    result = check_tokenizer(cmd=f"{sys.executable} {program}", vocab=vocab, pattern="cl100k", seconds=BOUND_SECONDS,
                             examples=256, seed=1, shrink_seconds=1)
    assert result.found and result.kind in ("encode", "crashed"), result.report()


def test_examples_and_seed_fix_the_texts(vocab: str) -> None:
    """A count of texts with a seed tries the same texts however long each takes."""
    runs = [check_tokenizer("bpeproof.proofs_tests.planted.ports:encode", vocab=vocab, pattern="cl100k",
                            seconds=BOUND_SECONDS, examples=300, seed=9, batch=batch) for batch in (64, 7)]
    assert [run.examples for run in runs] == [300, 300]
    assert runs[0].per_source == runs[1].per_source, [run.per_source for run in runs]
    with pytest.raises(TargetError, match="examples"):
        check_tokenizer("bpeproof.proofs_tests.planted.ports:encode", vocab=vocab, pattern="cl100k", examples=0)


def test_python_api_rejects_bad_targets(vocab: str) -> None:
    with pytest.raises(TargetError, match="cannot import"):
        check_tokenizer("no_such_module_xyz:f", vocab=vocab, pattern="cl100k", seconds=1)
    with pytest.raises(TargetError, match="pass --pattern"):
        check_tokenizer("bpeproof.proofs_tests.planted.ports:encode", vocab=vocab, seconds=1)
    with pytest.raises(TargetError, match="seconds"):
        check_tokenizer("bpeproof.proofs_tests.planted.ports:encode", vocab=vocab, seconds=float("nan"))


# ---------------------------------------------------------------------------
# The pytest plugin: pytest --pyargs bpeproof.proofs_tests --bpe-tokenizer MOD:FUNC --bpe-vocab FILE
# ---------------------------------------------------------------------------


def test_bpe_tokenizer(pytestconfig: pytest.Config) -> None:
    """FUNC(text) equals the reference tokenizer of --bpe-vocab (bpeproof check --tokenizer)."""
    target = pytestconfig.getoption("--bpe-tokenizer", default=None)
    vocab_file = pytestconfig.getoption("--bpe-vocab", default=None)
    if not target:
        pytest.skip("no --bpe-tokenizer MOD:FUNC given (see proofs_tests/plugin.py)")
    if not vocab_file:
        pytest.fail("--bpe-tokenizer needs --bpe-vocab FILE")
    ignore = list(pytestconfig.getoption("--bpe-ignore", default=None) or [])
    if pytestconfig.getoption("--bpe-ignore-file", default=None):
        ignore += read_ignore_file(str(pytestconfig.getoption("--bpe-ignore-file")))
    special = {name: int(token) for name, _, token in (item.rpartition("=") for item in
                                                       pytestconfig.getoption("--bpe-special", default=None) or [])}
    result = check_tokenizer(str(target), vocab=str(vocab_file), pattern=pytestconfig.getoption("--bpe-pattern"),
                             decode=pytestconfig.getoption("--bpe-decode"),
                             seconds=float(pytestconfig.getoption("--bpe-seconds", default=10.0)),
                             seed=pytestconfig.getoption("--bpe-seed", default=None),
                             examples=pytestconfig.getoption("--bpe-examples", default=None), ignore=ignore,
                             special=special, corpus=pytestconfig.getoption("--bpe-corpus", default=None),
                             special_names=pytestconfig.getoption("--bpe-special-names", default=None))
    assert result.ran, result.note
    assert not result.found, "\n" + result.report()


def test_plugin_checks_a_tokenizer(vocab: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "pytest", "-n", "0", "-p", "bpeproof.proofs_tests.plugin", "--pyargs",
               "bpeproof.proofs_tests.tests.checker.test_checker_tokenizer", "--bpe-vocab", vocab,
               "--bpe-pattern", "cl100k",
               "--bpe-seconds", str(BOUND_SECONDS), "--bpe-examples", "1000", "--bpe-seed", "1", "-q", "-p",
               "no:cacheprovider"]
    bad = subprocess.run([*command, "--bpe-tokenizer", "bpeproof.proofs_tests.planted.ports:encode_digits_1_4"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 1 and "1 failed" in bad.stdout and "layer    : split" in bad.stdout, bad.stdout
    good = subprocess.run([*command, "--bpe-tokenizer", "bpeproof.proofs_tests.planted.ports:encode", "--bpe-decode",
                           "bpeproof.proofs_tests.planted.ports:decode"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert good.returncode == 0 and "1 passed" in good.stdout, good.stdout


def test_special_tokens_with_and_without_allowed_special(tmp_path: Path) -> None:
    from bpeproof.proofs_tests.fixtures.vocab import write_project_file

    path = str(write_project_file(tmp_path / "special.bpeproof.json"))
    good = check_tokenizer("bpeproof.proofs_tests.planted.ports:encode_reference_special", vocab=path,
                           seconds=BOUND_SECONDS, examples=1000, seed=1)
    assert not good.found and good.per_source.get("special", 0) > 0, good.report()
    bad = check_tokenizer("bpeproof.proofs_tests.planted.ports:encode_special_ignored", vocab=path,
                          seconds=BOUND_SECONDS, examples=CATCH_EXAMPLES, seed=1, shrink_seconds=1)
    assert bad.found and bad.allowed_special == "all" and bad.layer == "special", bad.report()
    assert bad.text is not None and "<|" in bad.text
    always = check_tokenizer("bpeproof.proofs_tests.planted.ports:encode_special_always", vocab=path,
                             seconds=BOUND_SECONDS, examples=CATCH_EXAMPLES, seed=1, shrink_seconds=1)
    assert always.found and always.allowed_special is None and always.layer == "special", always.report()


def test_sentencepiece_model_shows_the_librarys_answer(tmp_path: Path) -> None:
    """A sentencepiece port that changes the text first (NFD) is caught, and sentencepiece's own ids are shown."""
    sentencepiece = pytest.importorskip("sentencepiece")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"l\u00e9ger {word} caf\u00e9 na\u00efve r\u00e9sum\u00e9 {index}\n"
                              for index, word in enumerate(["a", "b", "c", "dd", "ee"] * 40)), encoding="utf-8")
    prefix = tmp_path / "m"
    sentencepiece.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(prefix), model_type="bpe",
                                             vocab_size=400, byte_fallback=True, character_coverage=1.0,
                                             normalization_rule_name="identity", minloglevel=2)
    port = tmp_path / "spm_port.py"
    port.write_text(
        "import unicodedata, sentencepiece\n"
        f"_sp = sentencepiece.SentencePieceProcessor(model_file={str(prefix) + '.model'!r})\n"
        "def encode(text):\n    return list(_sp.encode(unicodedata.normalize('NFD', text)))\n",
        encoding="utf-8",
    )
    result = check_tokenizer(f"{port}:encode", vocab=str(prefix) + ".model", seconds=BOUND_SECONDS,
                             examples=CATCH_EXAMPLES, seed=3)
    assert result.found, result.report()
    assert result.library is not None and result.library.startswith("sentencepiece")
    assert result.library_answer == result.expected != result.actual
