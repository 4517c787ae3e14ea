"""``bpeproof audit``: the findings on small planted vocabularies, the fast variants against ``bpeproof.spec.variants``,
the command line, and the real files when ``../shared`` is present.

Each planted vocabulary is written with ``bpeproof.impl.formats``' writers (a tiktoken rank file, a tokenizer.json) or,
where no writer can hold the flaw (two tokens with the same bytes), as JSON by hand, and each flaw is checked
to be reported: a missing byte token, an improper merge, a pair merged twice, tokens standing for the same bytes
(ex-same-string), unreachable tokens, tokens that are not UTF-8 alone (prop-utf8-boundary).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

import bpeproof.audit.report
import bpeproof.audit.sampling
import bpeproof.proofs_tests.libraries
from bpeproof import spec
from bpeproof.audit.file_view import FileView
from bpeproof.audit.findings import findings
from bpeproof.audit.greedy_gap_section import shortest_length
from bpeproof.audit.html import bar_chart, render
from bpeproof.audit.report import audit
from bpeproof.cli import main
from bpeproof.commands.audit import summary
from bpeproof.impl.formats import Vocab, convert, load, write_hf_json, write_tiktoken
from bpeproof.impl.models.variants import MergeTable, fast_variants
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.impl.trainer import train
from bpeproof.proofs_tests.checker.strategies import rules_and_data
from bpeproof.spec.types import Rule
from bpeproof.spec.variants import VARIANTS

SHARED = Path(__file__).resolve().parents[4] / "shared"
VOCABS = SHARED / "vocabs"
CORPORA = SHARED / "corpora"

A, B, C = b"abc"
X, Y, Z = b"xyz"

# ---------------------------------------------------------------------------
# The fast variants are the specification's
# ---------------------------------------------------------------------------


@settings(max_examples=300)
@given(rules_and_data(max_size=24))
def test_fast_variants_equal_spec_variants(rules_data: tuple[list[Rule], bytes]) -> None:
    """Every fast variant gives what ``bpeproof.spec.variants`` gives, on hand-written rule lists (repeated pairs,
    a = b, fresh ids that are not 256, 257, … included)."""
    rules, data = rules_data
    fast = fast_variants(rules)
    assert set(fast) == set(VARIANTS)
    for name, slow in VARIANTS.items():
        assert fast[name](data) == slow(rules, data), name


def test_fast_variants_differ_where_the_spec_says() -> None:
    """The smallest divergence of ``bpeproof.spec.variants``: (iii) reaches abc, (i) does not."""
    rules = [Rule(B, C, 256), Rule(A, B, 257), Rule(257, C, 258)]
    fast = fast_variants(rules)
    assert fast["sequential"](b"abc") == fast["rule-rank"](b"abc") == [A, 256]
    assert fast["bytes-rank"](b"abc") == fast["whole-word+rule-rank"](b"abc") == [258]


@settings(max_examples=200)
@given(rules_and_data(max_size=24))
def test_file_variants_equal_spec_variants(rules_data: tuple[list[Rule], bytes]) -> None:
    """The variants the audit runs on a file (file ids, the file's merge order) are the specification's, for a
    Hugging Face model whose merges are the rule list (same-bytes tokens and repeated pairs included)."""
    rules, data = rules_data
    tokens = dict(MergeTable.from_rules(rules).token_bytes)
    vocab = Vocab(tokens=tokens, merges=[(rule.a, rule.b, rule.c) for rule in rules], kind="hf-bpe")
    view = FileView(vocab, convert(vocab))
    assert view.conversion.rules == rules
    on_file = view.variants()
    for name, slow in VARIANTS.items():
        assert on_file[name](data) == view.file_ids(slow(rules, data)) == slow(rules, data), name


@settings(max_examples=200)
@given(rules_and_data(max_size=24))
def test_shortest_length_is_the_spec_dynamic_programme(rules_data: tuple[list[Rule], bytes]) -> None:
    """prop-bpe-greedy-not-optimal: the audit's DP finds segmentations as short as ``bpeproof.spec.shortest``'s."""
    rules, data = rules_data
    table = MergeTable.from_rules(rules)
    strings = {token: 0 for token in table.token_bytes.values()}
    longest = max(len(token) for token in strings)
    length, pieces = shortest_length(strings, longest, data)
    assert length == len(bpeproof.spec.shortest(rules, data))
    assert b"".join(pieces) == data and len(pieces) == length
    assert length <= len(spec.enc(rules, data))


# ---------------------------------------------------------------------------
# Planted vocabularies
# ---------------------------------------------------------------------------


def _byte_tokens(skip: frozenset[int] = frozenset()) -> dict[int, bytes]:
    return {byte: bytes([byte]) for byte in range(256) if byte not in skip}


def _tiktoken_file(tmp_path: Path) -> Path:
    """A rank file missing the byte 0xFF, with a token of no split (xyz) and a token that is not UTF-8."""
    tokens = _byte_tokens(frozenset({0xFF}))
    tokens.update({256: b"ab", 257: b"xyz", 258: b"\xe3\x81", 259: b"abc"})
    path = tmp_path / "planted.tiktoken"
    write_tiktoken(Vocab(tokens=tokens, merges=[]), path)
    return path


def _hf_file(tmp_path: Path) -> Path:
    """tokenizer.json: abc unreachable under (i) and rule-rank, an improper merge (xy + z before x + y),
    the pair a b merged twice, and a token \\xe3\\x81 that is not UTF-8 alone."""
    tokens = _byte_tokens()
    tokens.update({256: b"bc", 257: b"ab", 258: b"abc", 259: b"xyz", 260: b"xy", 261: b"\xe3\x81"})
    merges = [(B, C, 256), (A, B, 257), (257, C, 258), (260, Z, 259), (X, Y, 260), (0xE3, 0x81, 261), (A, B, 257)]
    path = tmp_path / "planted.json"
    write_hf_json(Vocab(tokens=tokens, merges=merges, kind="hf-bpe"), path)
    return path


def _same_bytes_file(tmp_path: Path) -> Path:
    """A non-byte-level tokenizer.json with byte fallback: <0x61> and "a" stand for the same byte (ex-same-string).

    No writer of ``bpeproof.impl.formats`` can hold two tokens with the same bytes, so the JSON is written here.
    """
    vocab = {f"<0x{byte:02X}>": byte for byte in range(256)}
    vocab.update({"a": 256, "b": 257, "ab": 258})
    document: dict[str, Any] = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "WhitespaceSplit"}, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": ["a b"]},
    }
    path = tmp_path / "same.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _texts(entries: list[dict[str, Any]]) -> set[str]:
    return {entry["text"] for entry in entries}


def test_planted_rank_file_findings(tmp_path: Path) -> None:
    pytest.importorskip("tiktoken")
    report = audit(str(_tiktoken_file(tmp_path)), pattern="words", samples=200)
    vocabulary = report["vocabulary"]
    assert vocabulary["missing_bytes"] == [0xFF]
    assert vocabulary["size"] == 259 and vocabulary["expected_size"] == 256 + report["file"]["merges"]
    unreachable = vocabulary["unreachable"]
    assert _texts(unreachable["both"]["examples"]) == {"xyz"}
    assert _texts(unreachable["sequential"]["examples"]) == {"xyz"}
    assert unreachable["library"]["count"] == 0  # tiktoken looks the whole piece up first
    assert vocabulary["not_utf8"]["count"] == 127 + 1  # the bytes 0x80..0xFE and \xe3\x81 (0xFF is missing)
    assert vocabulary["not_utf8"]["single_bytes"] == 127
    assert vocabulary["not_utf8"]["examples"][0]["hex"] == "e381"
    assert report["library"]["name"] == "tiktoken"
    variants = report["variants"]
    assert variants["words"] > 50
    # tiktoken looks a whole pre-token up first: xyz, which no merge reaches, comes out as one token
    assert variants["verdict"] == ["whole-word+rule-rank", "whole-word+bytes-rank"]
    assert variants["follows_declared"] is True
    assert any(item["word"] == "xyz" and item["library"] == [257] for item in
               variants["results"]["bytes-rank"]["disagreements"])
    assert variants["spec_checked"] > 0 and variants["spec_mismatches"] == []
    # the project runs tiktoken's semantics on the file as it is: the same ids, xyz and its own tokens included
    assert report["project"]["compared"] is True and report["project"]["semantics"] == "tiktoken"
    assert report["project"]["agree"] is True and report["project"]["token_texts"] > 0


def test_planted_tokenizer_json_findings(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    report = audit(str(_hf_file(tmp_path)), samples=200)
    vocabulary = report["vocabulary"]
    assert vocabulary["missing_bytes"] == []
    assert vocabulary["proper"] is False
    kinds = {entry["kind"]: entry["index"] for entry in vocabulary["improper_merges"]["examples"]}
    assert kinds == {"part-not-built": 3, "duplicate-result": 6}
    assert vocabulary["duplicate_merges"]["count"] == 1
    assert vocabulary["duplicate_merges"]["examples"][0]["merges"] == [1, 6]
    unreachable = vocabulary["unreachable"]
    assert unreachable["declared_variant"] == "rule-rank"
    assert "abc" in _texts(unreachable["both"]["examples"])
    assert _texts(unreachable["library"]["examples"]) == {"abc"}  # tokenizers reaches xyz by the improper merge
    assert vocabulary["not_utf8"]["examples"][0]["hex"] == "e381"
    assert vocabulary["not_utf8"]["count"] == 128 + 1 and vocabulary["not_utf8"]["single_bytes"] == 128
    variants = report["variants"]
    # tokenizers merges by rule rank over the file's own list: (xy, z) counts although it is improper, so
    # sequential (which drops it) differs on xyz, and bytes-rank differs on abc
    assert variants["verdict"] == ["rule-rank"]
    results = variants["results"]
    assert any(item["word"] == "abc" for item in results["bytes-rank"]["disagreements"])
    assert any(item["word"] == "xyz" for item in results["sequential"]["disagreements"])
    assert variants["follows_declared"] is True
    assert variants["spec_mismatches"] == []


@pytest.mark.parametrize("ignore_merges", [False, True])
def test_ignore_merges_means_whole_word_first(tmp_path: Path, ignore_merges: bool) -> None:
    """A proper rule list with abc unreachable: tokenizers gives (a, bc) for abc, or (abc) with ignore_merges."""
    pytest.importorskip("tokenizers")
    tokens = _byte_tokens()
    tokens.update({256: b"bc", 257: b"ab", 258: b"abc"})
    merges = [(B, C, 256), (A, B, 257), (257, C, 258)]
    path = tmp_path / "tokenizer.json"
    write_hf_json(Vocab(tokens=tokens, merges=merges, kind="hf-bpe", ignore_merges=ignore_merges), path)
    report = audit(str(path), samples=100)
    assert report["vocabulary"]["proper"] is True
    variants = report["variants"]
    if ignore_merges:
        assert variants["declared"] == ["whole-word+rule-rank"]
        assert "whole-word+rule-rank" in variants["verdict"] and "rule-rank" not in variants["verdict"]
    else:
        assert variants["verdict"] == ["sequential", "rule-rank"]
    assert variants["follows_declared"] is True
    assert variants["spec_checked"] > 0 and variants["spec_mismatches"] == []


def test_same_bytes_tokens_are_reported(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    report = audit(str(_same_bytes_file(tmp_path)), samples=100)
    same = report["vocabulary"]["same_bytes"]
    assert same["count"] == 2
    assert {tuple(entry["ids"]) for entry in same["examples"]} == {(0x61, 256), (0x62, 257)}
    assert report["vocabulary"]["size_matches"] is False  # 259 tokens, 256 + 1 merge
    assert "rule-rank" in report["variants"]["verdict"]


def test_without_the_library_the_audit_still_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No reference library: no verdict, and compression by the project's encoder on the same pre-tokens."""

    def missing(*args: object) -> None:
        raise ImportError("No module named 'tiktoken'")

    monkeypatch.setattr(bpeproof.audit.report, "open_library", missing)
    report = audit(str(_tiktoken_file(tmp_path)), pattern="words", samples=50)
    assert report["library"]["available"] is False and "tiktoken" in report["library"]["error"]
    assert report["variants"]["words"] == 0 and report["variants"]["verdict"] == []
    assert report["variants"]["follows_declared"] is None
    assert report["project"]["compared"] is False and set(report["project"]) == SECTION_KEYS["project"]
    row = report["corpora"][0]
    assert row["encoded_by"] == "project" and row["tokens"] == len(spec.encode_text(
        [Rule(A, B, 256), Rule(256, C, 259), Rule(0xE3, 0x81, 258)], bpeproof.audit.sampling.BUILTIN_TEXT))
    assert any("did not run" in line and "tiktoken" in line for line in report["findings"])
    assert "The library is not available" in render(report)


def test_line_chunks_join_back_and_cut_at_line_starts() -> None:
    text = "one\n two\nthree\n\n\nfour five\nsix" * 7
    chunks = bpeproof.proofs_tests.libraries.line_chunks(text, 10)
    assert "".join(chunks) == text and len(chunks) > 5
    for chunk in chunks[:-1]:
        assert chunk.endswith("\n")
    assert all(not chunk[0].isspace() for chunk in chunks[1:])
    assert bpeproof.proofs_tests.libraries.line_chunks("no newline " * 9, 10) == ["no newline " * 9]


@pytest.mark.parametrize("pre_tokenizer", [True, False])
def test_tokenizers_counts_in_chunks_as_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              pre_tokenizer: bool) -> None:
    """Counting in pieces gives the count of one whole encode, with or without a pre-tokenizer to cut at."""
    pytest.importorskip("tokenizers")
    path = _hf_file(tmp_path)
    if not pre_tokenizer:
        document = json.loads(path.read_text(encoding="utf-8"))
        document["pre_tokenizer"] = None
        path.write_text(json.dumps(document), encoding="utf-8")
    library = bpeproof.proofs_tests.libraries.TokenizersLibrary.from_vocab(load(path))
    monkeypatch.setattr(bpeproof.proofs_tests.libraries, "CHUNK_CHARS", 40)
    text = "abc xyz\n  abcabc\nbc\n\nxyzab c\n" * 40
    assert library.count_tokens(text) == len(library.encode_text(text))


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------

TOP_KEYS = {"format", "version", "file", "vocabulary", "library", "variants", "project", "corpora", "greedy_gap",
            "timings", "findings"}
#: The keys ``bpeproof.audit.report``'s docstring documents, section by section.
SECTION_KEYS = {
    "file": {"path", "kind", "tokens", "merges", "specials", "specials_in_tokens", "pattern", "pattern_name",
             "pattern_source", "ignore_merges", "byte_fallback"},
    "vocabulary": {"size", "expected_size", "size_matches", "missing_bytes", "proper", "improper_merges",
                   "duplicate_merges", "same_bytes", "unreachable", "not_utf8", "specials", "token_lengths",
                   "max_token_bytes", "bits_per_token"},
    "library": {"name", "version", "available", "error"},
    "variants": {"declared", "words", "skipped_long", "sources", "results", "verdict", "follows_declared",
                 "spec_checked", "spec_mismatches"},
    "project": {"compared", "reason", "semantics", "bytes", "library_tokens", "project_tokens", "token_texts",
                "token_texts_differing", "lines_left_out", "agree", "first_difference"},
    "greedy_gap": {"words", "occurrences", "bpe_tokens", "shortest_tokens", "saved_percent", "words_shorter",
                   "worst"},
}
CORPUS_KEYS = {"name", "bytes", "tokens", "bytes_per_token", "raw_bits_per_token", "bits_per_token", "encoded_by"}


def test_cli_takes_several_corpora_after_one_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tokenizers")
    path = _hf_file(tmp_path)
    first, second = tmp_path / "a.txt", tmp_path / "b.txt.gz"
    first.write_text("abc xyz\n" * 5, encoding="utf-8")
    second.write_bytes(gzip.compress(b"ab bc\n" * 5))
    out_json = tmp_path / "r.json"
    assert main(["audit", str(path), "--corpus", str(first), str(second), "--json", str(out_json), "--quiet",
                 "--samples", "20"]) == 0
    assert [row["name"] for row in json.loads(out_json.read_text(encoding="utf-8"))["corpora"]] == ["a.txt",
                                                                                                   "b.txt.gz"]
    assert capsys.readouterr().out == ""


def test_cli_json_html_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tokenizers")
    path = _hf_file(tmp_path)
    corpus = tmp_path / "corpus.txt.gz"
    corpus.write_bytes(gzip.compress("abc xyz ab bc abcabc あい\n".encode() * 20))
    out_json, out_html = tmp_path / "report.json", tmp_path / "report.html"
    code = main(["audit", str(path), "--corpus", str(corpus), "--json", str(out_json), "--html", str(out_html),
                 "--samples", "50", "--seed", "3"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "verdict" in printed and "rule-rank" in printed
    assert f"JSON report written to {out_json}" in printed and f"HTML report written to {out_html}" in printed
    report = json.loads(out_json.read_text(encoding="utf-8"))
    assert set(report) == TOP_KEYS
    assert report["format"] == "bpeproof-audit" and report["version"] == 1
    for section, keys in SECTION_KEYS.items():
        assert set(report[section]) == keys, section
    assert set(report["vocabulary"]["unreachable"]) == {"declared_variant", "sequential", "declared", "both",
                                                        "library"}
    assert set(report["variants"]["results"]) == set(VARIANTS)
    for entry in report["variants"]["results"].values():
        assert set(entry) == {"compared", "agree", "disagreements"}
        assert all(set(item) == {"word", "hex", "library", "variant"} for item in entry["disagreements"])
    assert [set(row) for row in report["corpora"]] == [CORPUS_KEYS]
    assert report["corpora"][0]["name"] == "corpus.txt.gz" and report["corpora"][0]["tokens"] > 0
    # the file's improper merge (xy + z): the project runs the Hugging Face semantics, so it gives xyz as well
    assert report["project"]["compared"] is True and report["project"]["agree"] is True
    assert report["project"]["semantics"] == "hf-bpe" and report["project"]["token_texts_differing"] == 0
    page = out_html.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "</html>" in page
    assert not list(tmp_path.glob(".*.tmp"))  # the atomic writes left no temporary file
    assert main(["audit", str(path), "--strict", "--quiet", "--samples", "20"]) == 1  # improper merges


def test_cli_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(tmp_path / "absent.tiktoken")]) == 2
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("not a rank file\n", encoding="utf-8")
    assert main(["audit", str(bad)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and all(line.startswith("bpeproof: error: ") for line in errors)
    assert "bad.tiktoken" in errors[1]
    good = _tiktoken_file(tmp_path)
    assert main(["audit", str(good), "--samples", "0"]) == 2
    assert main(["audit", str(good), "--pattern", "(unclosed"]) == 2
    not_text = tmp_path / "corpus.bin"
    not_text.write_bytes(b"\xff\xfe")
    assert main(["audit", str(good), "--corpus", str(not_text)]) == 2


def test_strict_passes_on_a_proper_file(tmp_path: Path) -> None:
    pytest.importorskip("tiktoken")
    tokens = _byte_tokens()
    tokens.update({256: b"ab", 257: b"abc", 258: b" a"})
    path = tmp_path / "proper.tiktoken"
    write_tiktoken(Vocab(tokens=tokens, merges=[]), path)
    assert main(["audit", str(path), "--strict", "--quiet", "--pattern", "r50k", "--samples", "50"]) == 0


def test_trained_project_file_audits_as_sequential(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file made by training and ``Tokenizer.save`` audits end to end with the project's own Tokenizer as its
    library, which follows its declared variant, sequential."""
    corpus = "low lower lowest newest newer slow slower slowest widest wide wider " * 30
    words = [match.encode("utf-8") for match in corpus.split(" ") if match]
    rules = train(words, 30)
    path = tmp_path / "trained.json"
    Tokenizer(rules, "words", {"<|end|>": 5000}).save(path)
    out = tmp_path / "report.json"
    code = main(["audit", str(path), "--json", str(out), "--samples", "200"])
    assert code == 0
    assert "library: bpeproof" in capsys.readouterr().out
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["file"]["kind"] == "bpeproof" and report["file"]["pattern_name"] == "words"
    assert report["file"]["pattern_source"] == "file" and report["file"]["merges"] == len(rules)
    assert report["library"]["name"] == "bpeproof" and report["library"]["available"] is True
    assert report["variants"]["declared"] == ["sequential"]
    assert "sequential" in report["variants"]["verdict"] and report["variants"]["follows_declared"] is True
    assert report["vocabulary"]["proper"] is True and report["vocabulary"]["specials"]["count"] == 1
    assert report["project"]["agree"] is True and report["variants"]["spec_mismatches"] == []
    assert main(["audit", str(path), "--strict", "--quiet", "--samples", "50"]) == 0


def test_project_file_where_the_variants_differ(tmp_path: Path) -> None:
    """The smallest divergence of ``bpeproof.spec.variants`` saved as a project file (gzip, bytes under other ids): the
    project's Tokenizer follows sequential and rule-rank, not bytes-rank, which reaches abc."""
    byte_ids = list(range(256))
    byte_ids[A], byte_ids[X] = X, A
    tokenizer = Tokenizer([Rule(B, C, 256), Rule(A, B, 257), Rule(257, C, 258)], "words", byte_ids=byte_ids)
    path = tmp_path / "planted.bpeproof.json.gz"
    path.write_bytes(gzip.compress(tokenizer.to_json().encode("utf-8")))
    report = audit(str(path), samples=100)
    verdict = report["variants"]["verdict"]
    assert "sequential" in verdict and "rule-rank" in verdict
    assert "bytes-rank" not in verdict and report["variants"]["follows_declared"] is True
    disagreement = report["variants"]["results"]["bytes-rank"]["disagreements"]
    assert disagreement and all(item["library"] != item["variant"] for item in disagreement)
    assert report["vocabulary"]["unreachable"]["sequential"]["count"] == 1  # abc: (i) gives a, bc


def _special_in_vocab_file(tmp_path: Path) -> Path:
    """The planted tokenizer.json with an added token that is also an entry of the model's vocabulary, as
    DeepSeek's ``<｜begin▁of▁sentence｜>`` is (the audit's |V| leaves it out, the token table holds it)."""
    path = _hf_file(tmp_path)
    document = json.loads(path.read_text(encoding="utf-8"))
    vocab = document["model"]["vocab"]
    special = max(vocab.values()) + 1
    vocab["<|start|>"] = special
    document["added_tokens"] = [{"id": special, "content": "<|start|>", "single_word": False, "lstrip": False,
                                 "rstrip": False, "normalized": False, "special": True}]
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_audit_and_convert_count_the_tokens_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both commands print the size of the token table and, when special tokens are among its entries, how many
    of them are ordinary: one count, explained, for the same file."""
    pytest.importorskip("tokenizers")
    path = _special_in_vocab_file(tmp_path)
    total = len(load(path).tokens)
    explained = f"{total} tokens ({total - 1} ordinary + 1 special)"
    assert main(["audit", str(path), "--samples", "20", "--json", str(tmp_path / "r.json")]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert f": hf-bpe, {explained}, " in header and ", 1 special token;" in header
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["file"]["specials_in_tokens"] == 1 and report["vocabulary"]["size"] == total - 1
    assert main(["convert", str(path), str(tmp_path / "out.json")]) == 0
    assert f": {explained}, " in capsys.readouterr().out


def test_header_says_once_how_text_is_cut(tmp_path: Path) -> None:
    """The header names the pattern and where it came from, or the library's own pre-tokenizer, each once."""
    pytest.importorskip("tokenizers")
    pytest.importorskip("tiktoken")
    header = summary(audit(str(_same_bytes_file(tmp_path)), samples=20)).splitlines()[0]
    assert header.endswith("; the library's own pre-tokenizer") and "(library)" not in header
    header = summary(audit(str(_tiktoken_file(tmp_path)), pattern="words", samples=20)).splitlines()[0]
    assert header.endswith("; pattern words (--pattern)")
    assert summary(audit(str(_tiktoken_file(tmp_path)), samples=20)).splitlines()[0].endswith("(guessed)")


def test_time_line_phases_add_up_to_the_total(tmp_path: Path) -> None:
    """A phase timed inside another is printed inside its brackets, so the phases outside add up to the total."""
    pytest.importorskip("tiktoken")
    report = audit(str(_tiktoken_file(tmp_path)), pattern="words", samples=20)
    line = summary(report).splitlines()[-1]
    outside = re.sub(r"\([^)]*\)", "", line.removeprefix("time: "))
    seconds = {name: float(value) for name, value in re.findall(r"(\w+) (\d+\.\d+)s", outside)}
    assert "unreachable" not in seconds and "unreachable" in line
    total = seconds.pop("total")
    assert abs(sum(seconds.values()) - total) <= 0.006 * (len(seconds) + 1), line
    report["timings"] = {"load": 1.25, "unreachable": 0.5, "vocabulary": 0.75, "library": 0.25, "total": 2.25}
    assert summary(report).splitlines()[-1] == ("time: load 1.25s, vocabulary 0.75s (0.50s of it unreachable),"
                                                " library 0.25s, total 2.25s")


def test_counts_agree_with_their_number(tmp_path: Path) -> None:
    """One of a thing is never written in the plural, in the findings or in the summary."""
    pytest.importorskip("tiktoken")
    report = audit(str(_tiktoken_file(tmp_path)), pattern="words", samples=20)
    assert "1 byte value has no token" in report["findings"]  # the planted file lacks only 0xFF
    report["vocabulary"]["not_utf8"]["count"] = 1
    report["variants"]["words"] = 1
    report["greedy_gap"].update(words=1, words_shorter=1, shortest_tokens=1)
    report["findings"] = findings(report)
    text = summary(report)
    assert "1 token is not valid UTF-8 alone (prop-utf8-boundary)" in text
    assert "on the 1 word compared" in text and "verdict on 1 word:" in text
    assert "greedy vs shortest on 1 word:" in text and "fewer possible, 1 word)" in text
    nouns = "word|token|byte|merge|special token|improper merge|byte value|ordinary token"
    assert not re.findall(rf"(?<![\d.,])1 (?:{nouns})s\b", text), text


def test_load_phase_shows_progress_on_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With progress on (``audit`` on a terminal), the load phase writes a status line, erased at the end;
    without, nothing is written to stderr."""
    pytest.importorskip("tiktoken")
    path = _tiktoken_file(tmp_path)
    audit(str(path), pattern="words", samples=20)
    assert capsys.readouterr().err == ""
    audit(str(path), pattern="words", samples=20, progress=True)
    err = capsys.readouterr().err
    assert f"\r\x1b[Kaudit: reading {path.name} … " in err
    assert "\r\x1b[Kaudit: building the merge tables … " in err
    assert err.endswith("\r\x1b[K")


def test_chart_labels_are_plain_numbers(tmp_path: Path) -> None:
    """Bar labels in plain digits with thousands separators, never in scientific notation (1.194e+04)."""
    svg = bar_chart("tokens", [("BPE", 11940.0), ("shortest", 11873.0), ("rate", 2.208), ("small", 0.000123)],
                    reference=("log2 |V|", 15.62))
    labels = re.findall(r">([^<>]*)</text>", svg)
    assert {"11,940", "11,873", "2.21", "0.000123", "log2 |V| = 15.62"} <= set(labels), labels
    pytest.importorskip("tiktoken")
    report = audit(str(_tiktoken_file(tmp_path)), pattern="words", samples=20)
    report["greedy_gap"].update(bpe_tokens=11940, shortest_tokens=118730)
    page = render(report)
    assert ">11,940</text>" in page and ">118,730</text>" in page
    assert not [label for label in re.findall(r">([^<>]*)</text>", page) if re.search(r"\de[+-]\d", label)]


# ---------------------------------------------------------------------------
# The real files (skipped when ../shared is absent)
# ---------------------------------------------------------------------------


def _real(name: str) -> Path:
    path = VOCABS / name
    if not path.is_file():
        pytest.skip(f"{path} is not present (the shared vocabularies are not part of the project)")
    return path


def _small_corpus(tmp_path: Path) -> Path:
    """About 60 KB of English and Japanese from the shared corpora."""
    parts = []
    for name in ("en_shakespeare.txt.gz", "ja_manpages.txt.gz"):
        path = CORPORA / name
        if not path.is_file():
            pytest.skip(f"{path} is not present (the shared corpora are not part of the project)")
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            parts.append(handle.read(30_000))
    out = tmp_path / "sample.txt"
    out.write_text("\n".join(parts), encoding="utf-8")
    return out


def test_r50k_tiktoken_follows_bytes_rank(tmp_path: Path) -> None:
    pytest.importorskip("tiktoken")
    report = audit(str(_real("r50k_base.tiktoken.gz")), corpora=[str(_small_corpus(tmp_path))], samples=1500)
    assert report["file"]["pattern_name"] == "r50k"
    assert report["vocabulary"]["size"] == 50256 and report["vocabulary"]["size_matches"]
    assert report["vocabulary"]["missing_bytes"] == [] and report["vocabulary"]["proper"]
    variants = report["variants"]
    assert variants["words"] >= 1500
    assert "bytes-rank" in variants["verdict"] and variants["follows_declared"] is True
    project = report["project"]
    assert project["compared"] and project["agree"], project
    corpus = report["corpora"][0]
    assert 2.0 < corpus["bytes_per_token"] < 6.0


def test_mistral_model_audits_through_sentencepiece() -> None:
    """sentencepiece merges characters by piece score: bytes-rank over its units; its <0xNN> byte pieces stand
    for the same bytes as one-character pieces (ex-same-string)."""
    pytest.importorskip("sentencepiece")
    report = audit(str(_real("mistral_tokenizer.model.v1")), samples=300)
    assert report["library"]["name"] == "sentencepiece"
    assert "bytes-rank" in report["variants"]["verdict"] and report["variants"]["follows_declared"] is True
    assert report["vocabulary"]["same_bytes"]["count"] > 0
    assert report["vocabulary"]["specials"]["examples"][:3] == [
        {"text": "<unk>", "id": 0}, {"text": "<s>", "id": 1}, {"text": "</s>", "id": 2}]


def test_gpt2_files_audit_through_tokenizers(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    _real("gpt2_vocab.bpe.gz")
    report = audit(str(_real("gpt2_encoder.json.gz")), corpora=[str(_small_corpus(tmp_path))], samples=800)
    assert report["library"]["name"] == "tokenizers"
    assert report["vocabulary"]["specials"]["examples"] == [{"text": "<|endoftext|>", "id": 50256}]
    assert "rule-rank" in report["variants"]["verdict"]
    assert report["project"]["compared"] and report["project"]["agree"], report["project"]


def test_rank_file_without_a_byte_of_the_corpus_is_compared_on_the_rest(tmp_path: Path) -> None:
    """tiktoken panics on a byte its rank file has no token for; the audit leaves such lines out of the project's
    comparison (and counts them) instead of failing."""
    import base64

    kept = [byte for byte in range(256) if byte != ord("z")]
    rank_file = tmp_path / "holey.tiktoken"
    rank_file.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {i}\n" for i, b in enumerate(kept)))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("abc zed\nplain line\n" * 50, encoding="utf-8")
    report = audit(str(rank_file), pattern="r50k", corpora=[str(corpus)], samples=200)
    project = report["project"]
    assert report["vocabulary"]["missing_bytes"] == [ord("z")]
    assert project["compared"] and project["agree"], project
    assert project["lines_left_out"] > 0 and project["bytes"] > 0
