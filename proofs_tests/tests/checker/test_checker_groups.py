"""``bpeproof check --tokenizer/--cmd`` finds every group of differences in one run, names each by its cause, sets
known groups aside (``--ignore``) and exercises special tokens with rank files (``--special``, known encodings).

The planted ports are ``bpeproof.proofs_tests.planted.ports``; the vocabulary is trained here
(``bpeproof.proofs_tests.fixtures.vocab``).  Budgets are counts of texts with a fixed seed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bpeproof.proofs_tests.checker import library
from bpeproof.proofs_tests.checker.diagnosis import analyse
from bpeproof.proofs_tests.checker.groups import ignored_by, read_ignore_file
from bpeproof.proofs_tests.checker.library import KnownEncoding, known_encoding, load_reference, rank_digest
from bpeproof.proofs_tests.checker.reruns import token_table
from bpeproof.proofs_tests.checker.tokenizer_check import TargetError, check_tokenizer
from bpeproof.proofs_tests.fixtures.vocab import write_rank_file
from bpeproof.proofs_tests.planted import ports

ROOT = Path(__file__).resolve().parents[3]
PORTS = "bpeproof.proofs_tests.planted.ports"
BOUND_SECONDS = 120.0
#: The three causes of ``encode_js_port`` with ``decode_drop_bom``.
JS_PORT_GROUPS = {"split:js-whitespace", "merge:missing:\\ufeff", "decode"}


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_rank_file(tmp_path_factory.mktemp("vocab") / "trained.tiktoken"))


def _cli(*args: str, timeout: float = BOUND_SECONDS + 30) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "bpeproof.cli", "check", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


# ---------------------------------------------------------------------------
# Every group in one run
# ---------------------------------------------------------------------------


def test_every_cause_is_found_in_one_run(vocab: str) -> None:
    """A port to JavaScript with three bugs (JavaScript's \\s, no token for EF BB BF, a decode that drops a leading
    U+FEFF): one run reports the three groups, each named, counted and shrunk."""
    result = check_tokenizer(f"{PORTS}:encode_js_port", decode=f"{PORTS}:decode_drop_bom", vocab=vocab,
                             pattern="cl100k", seconds=BOUND_SECONDS, examples=3000, seed=3, shrink_seconds=10)
    assert {group.key for group in result.groups} == JS_PORT_GROUPS, result.report()
    first = result.groups[0]  # the top-level fields are those of the group found first
    assert result.found and (result.kind, result.layer, result.text) == (first.kind, first.layer, first.text)
    by_key = {group.key: group for group in result.groups}
    assert all(group.count >= 1 and group.settled and group.text for group in result.groups)
    assert by_key["decode"].text is not None and by_key["decode"].text.startswith("\ufeff")
    assert by_key["decode"].actual == by_key["decode"].text[1:]
    assert by_key["merge:missing:\\ufeff"].text == "\ufeff" and by_key["merge:missing:\\ufeff"].layer == "merge"
    assert "JavaScript" in (by_key["split:js-whitespace"].detail or "")
    report = result.report()
    assert "differences of 3 causes" in report and report.count("\ngroup ") == 3
    document = json.loads(result.to_json())
    assert [group["key"] for group in document["groups"]] == [group.key for group in result.groups]
    assert document["layer"] == first.layer and document["groups"][0]["text"] == document["text"]


@pytest.mark.parametrize("seed", [1, 2, 4, 6, 7])
def test_javascript_whitespace_is_named_every_time(vocab: str, seed: int) -> None:
    """A port whose \\s is JavaScript's is named as such, whatever text the search finds first."""
    result = check_tokenizer(f"{PORTS}:encode_js_whitespace", vocab=vocab, pattern="cl100k",
                             seconds=BOUND_SECONDS, examples=1500, seed=seed, shrink_seconds=5)
    assert result.found, result.report()
    assert [group.key for group in result.groups] == ["split:js-whitespace"], result.report()
    assert result.layer == "split" and "JavaScript" in (result.detail or ""), result.report()


def test_javascript_whitespace_text_is_named(vocab: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """'  \\x85' under JavaScript's \\s is ' ' and ' \\x85' (U+0085 is no space there): the reference run again with
    that pattern gives the port's ids, so the split is named, not a merge that agrees with no variant."""
    from bpeproof.commands._vocab import load_tokenizer

    monkeypatch.setenv("BPEPROOF_CHECK_VOCAB", vocab)
    monkeypatch.delenv("BPEPROOF_CHECK_PATTERN", raising=False)
    reference = load_tokenizer(vocab, "cl100k")
    for text in ["  \x85", " \x85a", "\u3000\x85"]:
        expected, actual = list(reference.encode(text)), ports.encode_js_whitespace(text)
        assert actual != expected, text
        analysis = analyse(reference, text, expected, actual, False, ports.encode_js_whitespace)
        assert (analysis.layer, analysis.key) == ("split", "split:js-whitespace"), (text, analysis)


def test_missing_token_is_named(vocab: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from bpeproof.commands._vocab import load_tokenizer

    monkeypatch.setenv("BPEPROOF_CHECK_VOCAB", vocab)
    reference = load_tokenizer(vocab, "cl100k")
    text = "a\ufeff"
    expected, actual = list(reference.encode(text)), ports.encode_missing_bom_token(text)
    analysis = analyse(reference, text, expected, actual, False, ports.encode_missing_bom_token)
    assert analysis.key == "merge:missing:\\ufeff", analysis
    # Without asking the implementation, a token is never called missing.
    assert analyse(reference, text, expected, actual, False, None).key == "merge"


def test_the_search_goes_on_after_a_crash_and_a_hang(vocab: str, tmp_path: Path) -> None:
    """A port that ends on one kind of text and hangs on another: each is a group of its own, a fresh process
    takes over, and the search goes on to its last text and finds the port's other bug."""
    port = tmp_path / "fragile_port.py"
    port.write_text(
        "import os, time\n"
        "from bpeproof.proofs_tests.planted import ports\n"
        "def encode(text):\n"
        "    if '\u03a9' in text:\n"
        "        os._exit(3)\n"
        "    if '\u0642' in text and '\u0628' in text:\n"
        "        time.sleep(30)\n"
        "    return ports.encode_js_whitespace(text)\n",
        encoding="utf-8",
    )
    corpus = tmp_path / "lines.txt"  # real-text lines that reach both faults, whatever corpora this machine has
    plain = "".join(f"plain words, line {number}\n" for number in range(400))  # rare faults: the search goes on
    corpus.write_text(f"the \u03a9 line\nmixed \u0642\u0628 text\n{plain}", encoding="utf-8")
    # Each try of a crashing text starts a fresh process: on a busy machine 3 s of shrinking ended at 'Ωζ'.
    result = check_tokenizer(f"{port}:encode", vocab=vocab, pattern="cl100k", seconds=BOUND_SECONDS, examples=3000,
                             seed=5, call_timeout=1, shrink_seconds=6, corpus=[str(corpus)])
    by_key = {group.key: group for group in result.groups}
    assert set(by_key) == {"split:js-whitespace", "crashed", "timeout"}, result.report()
    assert by_key["crashed"].text == "\u03a9" and by_key["crashed"].count > 1, result.report()
    timeout_text = by_key["timeout"].text
    assert timeout_text is not None and "\u0642" in timeout_text and "\u0628" in timeout_text
    assert result.examples == 3000 and result.note is None, result.report()


def test_a_correct_port_has_no_group(vocab: str) -> None:
    result = check_tokenizer(f"{PORTS}:encode", decode=f"{PORTS}:decode", vocab=vocab, pattern="cl100k",
                             seconds=BOUND_SECONDS, examples=1000, seed=2)
    assert not result.found and result.groups == [] and result.ran, result.report()
    assert "no difference found" in result.report()


# ---------------------------------------------------------------------------
# Setting groups aside
# ---------------------------------------------------------------------------


def test_ignore_matches_keys_and_prefixes(tmp_path: Path) -> None:
    assert ignored_by("split:js-whitespace", ["split:js-whitespace"]) == "split:js-whitespace"
    assert ignored_by("split:js-whitespace", ["merge", "split"]) == "split"
    assert ignored_by("split:js-whitespace", ["split:js"]) is None
    assert ignored_by("merge:missing:\\ufeff", ["merge:missing"]) == "merge:missing"
    known = tmp_path / "known.txt"
    known.write_text("# known divergences of our port\nsplit:js-whitespace  # JavaScript's \\s\n\ndecode\n",
                     encoding="utf-8")
    assert read_ignore_file(str(known)) == ["split:js-whitespace", "decode"]
    with pytest.raises(ValueError, match="no_such"):
        read_ignore_file(str(tmp_path / "no_such.txt"))


def test_ignore_in_python(vocab: str) -> None:
    run: dict[str, Any] = {"vocab": vocab, "pattern": "cl100k", "seconds": BOUND_SECONDS, "examples": 3000,
                           "seed": 3, "shrink_seconds": 5, "decode": f"{PORTS}:decode_drop_bom"}
    some = check_tokenizer(f"{PORTS}:encode_js_port", ignore=["split:js-whitespace", "decode"], **run)
    assert some.found and some.layer == "merge" and some.text == "\ufeff", some.report()
    assert [group.key for group in some.set_aside] == ["split:js-whitespace", "decode"]
    assert some.groups[-1].ignored_by == "decode"
    every = check_tokenizer(f"{PORTS}:encode_js_port", ignore=["split", "merge", "decode"], **run)
    assert not every.found and every.kind is None and len(every.set_aside) == 3, every.report()
    assert "no difference found outside the 3 groups set aside" in every.report()
    assert "set aside by --ignore split" in every.report()


def test_ignore_on_the_command_line(vocab: str, tmp_path: Path) -> None:
    """Exit 1 while a group is not set aside, 0 once every group found is (--ignore, --ignore-file)."""
    args = ["--tokenizer", f"{PORTS}:encode_js_port", "--decode", f"{PORTS}:decode_drop_bom", "--vocab", vocab,
            "--pattern", "cl100k", "--examples", "3000", "--seed", "3", "--seconds", str(BOUND_SECONDS)]
    partly = _cli(*args, "--ignore", "split:js-whitespace", "--json")
    assert partly.returncode == 1, partly.stdout + partly.stderr
    document = json.loads(partly.stdout)
    assert document["found"] is True and document["ignore"] == ["split:js-whitespace"]
    assert {group["key"]: group["set_aside"] for group in document["groups"]} == {
        "merge:missing:\\ufeff": False, "decode": False, "split:js-whitespace": True}
    known = tmp_path / "known.txt"
    known.write_text("# our port's known divergences\nmerge:missing:\\ufeff\ndecode\n", encoding="utf-8")
    aside = _cli(*args, "--ignore", "split:js-whitespace", "--ignore-file", str(known))
    assert aside.returncode == 0, aside.stdout + aside.stderr
    assert "no difference found outside the 3 groups set aside" in aside.stdout
    assert aside.stdout.count("set aside by --ignore") == 3
    missing = _cli(*args, "--ignore-file", str(tmp_path / "absent.txt"))
    assert missing.returncode == 2 and "absent.txt" in missing.stderr, missing.stderr
    wrong_kind = _cli("--enc", "bpeproof.impl.encoder:enc", "--ignore", "merge", "--seconds", "3")
    assert wrong_kind.returncode == 2 and "--ignore" in wrong_kind.stderr, wrong_kind.stderr


def test_plugin_sets_groups_aside(vocab: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "pytest", "-n", "0", "-p", "bpeproof.proofs_tests.plugin", "--pyargs",
               "bpeproof.proofs_tests.tests.checker.test_checker_tokenizer", "--bpe-vocab", vocab,
               "--bpe-pattern", "cl100k", "--bpe-seconds", str(BOUND_SECONDS), "--bpe-examples", "1000",
               "--bpe-seed", "1", "-q", "-p", "no:cacheprovider", "--bpe-tokenizer", f"{PORTS}:encode_js_whitespace"]
    failing = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert failing.returncode == 1 and "split:js-whitespace" in failing.stdout, failing.stdout
    passing = subprocess.run([*command, "--bpe-ignore", "split:js-whitespace"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=180, check=False)
    assert passing.returncode == 0 and "1 passed" in passing.stdout, passing.stdout


# ---------------------------------------------------------------------------
# Special tokens with rank files
# ---------------------------------------------------------------------------


def _specials(vocab: str) -> dict[str, int]:
    top = max(token_table(load_reference(vocab, "cl100k")))
    return {"<|endoftext|>": top + 1, "<|fim_prefix|>": top + 2}


def test_special_tokens_given_are_tested(vocab: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tiktoken")
    specials = _specials(vocab)
    monkeypatch.setenv(ports.ENV_SPECIALS, json.dumps(specials))
    run: dict[str, Any] = {"vocab": vocab, "pattern": "cl100k", "seconds": BOUND_SECONDS, "seed": 1,
                           "special": specials}
    good = check_tokenizer(f"{PORTS}:encode_tiktoken_special", examples=2000, **run)
    assert not good.found, good.report()
    assert good.per_source.get("special", 0) > 0 and good.per_source.get("special_as_text", 0) > 0, good.per_source
    assert good.special_tokens is not None and "given with --special" in good.special_tokens
    assert "tested with allowed_special and as ordinary text" in good.special_tokens
    raises = check_tokenizer(f"{PORTS}:encode_tiktoken_special_raises", examples=3000, shrink_seconds=3, **run)
    assert raises.found and [group.key for group in raises.groups] == ["special:raised"], raises.report()
    assert raises.text is not None and any(name in raises.text for name in specials)
    always = check_tokenizer(f"{PORTS}:encode_tiktoken_special_always", examples=3000, shrink_seconds=3, **run)
    assert always.found and always.groups[0].key == "special:not-allowed", always.report()


def test_special_tokens_not_tested_are_said_so(vocab: str) -> None:
    none = check_tokenizer(f"{PORTS}:encode", vocab=vocab, pattern="cl100k", seconds=BOUND_SECONDS, examples=200,
                           seed=1)
    assert none.special_tokens is not None and none.special_tokens.startswith("not tested: the vocabulary has none")
    assert "special tokens: not tested" in none.report()
    text_only = check_tokenizer(f"{PORTS}:encode_tiktoken", vocab=vocab, pattern="cl100k", seconds=BOUND_SECONDS,
                                examples=2000, seed=1, special=_specials(vocab))
    assert not text_only.found and text_only.per_source.get("special", 0) == 0, text_only.report()
    assert text_only.per_source.get("special_as_text", 0) > 0
    assert text_only.special_tokens is not None and "does not say it takes allowed_special" in text_only.special_tokens


def test_special_tokens_given_wrong(vocab: str) -> None:
    with pytest.raises(TargetError, match="is the vocabulary's token"):
        check_tokenizer(f"{PORTS}:encode", vocab=vocab, pattern="cl100k", seconds=5, special={"<|x|>": 300})
    with pytest.raises(TargetError, match="share the id"):
        check_tokenizer(f"{PORTS}:encode", vocab=vocab, pattern="cl100k", seconds=5,
                        special={"<|x|>": 5000, "<|y|>": 5000})
    bad = _cli("--tokenizer", f"{PORTS}:encode", "--vocab", vocab, "--pattern", "cl100k", "--special", "oops",
               "--seconds", "3")
    assert bad.returncode == 2 and "NAME=ID" in bad.stderr, bad.stderr


def test_known_encodings_get_their_special_tokens(vocab: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rank file that is a known encoding (by its size, then the digest of its ranks) gets its special tokens; one
    of the same size with other ranks does not."""
    reference = load_reference(vocab, "cl100k")
    table = token_table(reference)
    assert known_encoding(reference) == (None, None)
    same = KnownEncoding("trained_base", len(table), rank_digest(table), {"<|endoftext|>": max(table) + 1})
    other = KnownEncoding("other_base", len(table), "0" * 64, {"<|endoftext|>": max(table) + 1})
    monkeypatch.setattr(library, "KNOWN_ENCODINGS", (same,))
    given, origin = library.with_special_tokens(reference, None)
    assert given.special_tokens == {"<|endoftext|>": max(table) + 1} and "trained_base's" in origin
    monkeypatch.setattr(library, "KNOWN_ENCODINGS", (other,))
    plain, why = library.with_special_tokens(reference, None)
    assert plain.special_tokens == {} and "other_base's number of tokens but other ranks" in why


@pytest.mark.parametrize(("name", "specials"), [
    ("r50k_base", {"<|endoftext|>": 50256}),
    ("cl100k_base", {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                     "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}),
    ("o200k_base", {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
])
def test_published_rank_files_are_recognised(name: str, specials: dict[str, int]) -> None:
    path = ROOT.parent / "shared" / "vocabs" / f"{name}.tiktoken.gz"
    if not path.exists():
        pytest.skip(f"{path} is not present (the shared vocabularies are not part of the project)")
    known, _ = known_encoding(load_reference(str(path), None))
    assert known is not None and known.name == name and known.special_tokens == specials
