"""One cause, one group, named by the cause, on a ``tokenizer.json`` reference: the pattern variants reach every
stage of its pipeline (a ``Split`` step's regex, GPT-2's of a ``ByteLevel`` step).

The ports are the ``tokenizers`` library itself with one thing changed (``proofs_tests/planted/hf_ports``):
JavaScript's ``\\s`` (transformers.js hard-codes GPT-2's regex so), contractions matched case-sensitively, and the
``regex`` module's newer Unicode tables.  The files are made here from the trained vocabulary: GPT-2's
``ByteLevel`` regex, and cl100k's as a ``Split`` step before a ``ByteLevel`` step without one (as Llama 3's and
DeepSeek's files have it), each with an added token, which the library reads in every text: every text is then
checked with special tokens allowed.  Before the variants reached a pipeline and such texts were cut into words,
the first port was four groups (``merge``, ``split:space``, ``merge:rule-rank``, ``split:letter``), the second
``merge`` and ``merge:rule-rank`` (the reference's own merging), the third ``merge:rule-rank``.  Each run counts
its texts (``examples``, a fixed seed): the same texts on any machine.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from bpeproof.proofs_tests.checker.tokenizer_check import check_tokenizer
from bpeproof.proofs_tests.fixtures.vocab import write_rank_file
from bpeproof.proofs_tests.planted import hf_ports

pytest.importorskip("tokenizers")

PORTS = "bpeproof.proofs_tests.planted.hf_ports"
#: The bound on a run's wall time: never reached on a working machine (the runs count texts).
BOUND_SECONDS = 120.0
EXAMPLES = 3000
@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The trained vocabulary as a byte-level tokenizer.json: with GPT-2's ``ByteLevel`` regex, and with cl100k's
    regex in a ``Split`` step; with an added token, as real files have: the library reads it in every text, so
    every text is checked with special tokens allowed, and a text without one must still be diagnosed word by
    word."""
    paths = hf_ports.write_files(tmp_path_factory.mktemp("pipeline-causes"), added_token=True)
    return {kind: str(path) for kind, path in paths.items()}


@pytest.fixture(scope="module")
def newer_letters(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A corpus of short texts around code points whose class the ``regex`` module's tables give otherwise than
    the pinned Unicode version (letters assigned since, among them), in the places a pattern cares about."""
    from bpeproof.impl.pre_tokenizers.unicode_classes import changed_code_points

    changed = changed_code_points()
    if not changed:
        pytest.skip("the regex module's Unicode tables are the pinned version's: no code point classified otherwise")
    rng = random.Random(0)
    lines = [template.format(c=chr(code)) for code in rng.sample(changed, min(200, len(changed)))
             for template in ("{c}", "a{c}", "{c}'s", " {c}", "{c}1", "x {c}{c}y", "{c} ", "'{c}")]
    path = tmp_path_factory.mktemp("newer-letters") / "newer.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _groups(port: str, vocab: str, corpus: str | None = None) -> list[str]:
    result = check_tokenizer(f"{PORTS}:{port}", vocab=vocab, seconds=BOUND_SECONDS, examples=EXAMPLES, seed=2,
                             shrink_seconds=2, corpus=None if corpus is None else [corpus],
                             weights=None if corpus is None else {"corpus": 20.0})
    assert result.ran and result.examples == EXAMPLES, result.report()
    return [str(group.key) for group in result.groups]


@pytest.mark.parametrize("kind", ["byte-level", "split"])
def test_the_library_itself_stays_clean(files: dict[str, str], kind: str, newer_letters: str) -> None:
    assert _groups("encode", files[kind]) == []
    assert _groups("encode", files[kind], newer_letters) == []


@pytest.mark.parametrize("kind", ["byte-level", "split"])
def test_javascripts_whitespace_is_one_group(files: dict[str, str], kind: str) -> None:
    """GPT-2's regex in a ``ByteLevel`` step (transformers.js's case) or cl100k's in a ``Split`` step, with
    JavaScript's ``\\s``: one group, ``split:js-whitespace``."""
    assert _groups("encode_js_whitespace", files[kind]) == ["split:js-whitespace"]


def test_case_sensitive_contractions_are_one_group(files: dict[str, str]) -> None:
    assert _groups("encode_case_sensitive", files["split"]) == ["split:case-sensitive"]


@pytest.mark.parametrize("kind", ["byte-level", "split"])
def test_newer_unicode_tables_are_one_group(files: dict[str, str], kind: str, newer_letters: str) -> None:
    assert _groups("encode_unicode_tables", files[kind], newer_letters) == ["split:unicode-version"]


# ---------------------------------------------------------------------------
# Rank files: one cause, one group too
# ---------------------------------------------------------------------------

RANK_PORTS = "bpeproof.proofs_tests.planted.ports"


@pytest.fixture(scope="module")
def nfc_file(files: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> str:
    """The byte-level file with an NFC normalizer, as Qwen2's files have."""
    document = json.loads(Path(files["byte-level"]).read_text(encoding="utf-8"))
    path = tmp_path_factory.mktemp("nfc") / "nfc.json"
    path.write_text(json.dumps({**document, "normalizer": {"type": "NFC"}}), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def later_marks(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Lines of real-text shape with marks that Python's Unicode tables give a combining class below U+036E's and
    the library's normalizer none (it has no data for them): NFC by the newer tables reorders them."""
    import unicodedata

    from bpeproof.impl.pre_tokenizers.hf_chars import is_normalization_gap

    marks = [chr(code) for code in range(0x300, 0x30000) if is_normalization_gap(chr(code))
             and 0 < unicodedata.combining(chr(code)) < unicodedata.combining("\u036e")][:8]
    assert marks, "no mark the library's normalizer lacks"
    path = tmp_path_factory.mktemp("marks") / "marks.txt"
    path.write_text("".join(f"a\u036e{mark} word {index}\n" for index, mark in enumerate(marks * 3)), encoding="utf-8")
    return str(path)


def test_the_library_itself_stays_clean_under_nfc(nfc_file: str, later_marks: str) -> None:
    assert _groups("encode", nfc_file, later_marks) == []


def test_nfc_by_other_unicode_tables_is_one_group(nfc_file: str, later_marks: str) -> None:
    """A port that normalizes by newer tables than the library's (transformers.js on Node's Unicode 17 does):
    one group, ``normalizer:unicode-version``, where it was ``bytes:changed-text``."""
    assert _groups("encode_nfc_python_tables", nfc_file, later_marks) == ["normalizer:unicode-version"]


@pytest.fixture(scope="module")
def ranks(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_rank_file(tmp_path_factory.mktemp("ranks") / "trained.tiktoken"))


def _rank_groups(port: str, vocab: str, seed: int = 2, **options: Any) -> list[str]:
    result = check_tokenizer(f"{RANK_PORTS}:{port}", vocab=vocab, pattern="cl100k", seconds=BOUND_SECONDS,
                             examples=EXAMPLES, seed=seed, shrink_seconds=2, **options)
    assert result.ran and result.examples == EXAMPLES, result.report()
    return [str(group.key) for group in result.groups]


def test_special_names_cut_out_where_not_allowed_are_one_group(ranks: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken with the text cut at every special token's name, allowed or not: the names not allowed are then
    ordinary text cut apart from their neighbours (was ``split:alt7:space`` and ``split:alt4:letter``)."""
    from bpeproof.proofs_tests.checker.library import load_reference
    from bpeproof.proofs_tests.checker.reruns import token_table
    from bpeproof.proofs_tests.planted import ports

    pytest.importorskip("tiktoken")
    top = max(token_table(load_reference(ranks, "cl100k")))
    specials = {"<|endoftext|>": top + 1, "<|fim_prefix|>": top + 2}
    monkeypatch.setenv(ports.ENV_SPECIALS, json.dumps(specials))
    assert _rank_groups("encode_tiktoken_special", ranks, special=specials) == []
    assert _rank_groups("encode_tiktoken_special_cut", ranks, special=specials) == ["split:special-names"]


def test_a_dropped_lookahead_is_one_group(ranks: str) -> None:
    """``\\s+(?!\\S)`` written ``\\s+`` (an engine without lookaround): one group (was five ``split:altN:…``)."""
    assert _rank_groups("encode_ws_no_lookahead", ranks) == ["split:no-lookahead"]


def test_u180e_read_as_white_space_is_one_group(ranks: str, tmp_path: Path) -> None:
    """``\\s`` with U+180E (white space before Unicode 6.3): one group, on texts around U+180E (was
    ``split:alt7:space``, and more on more texts)."""
    contexts = ["", "a", "A", "1", " ", "  ", "'", "!", "\t", "é", "的", "\u0300"]
    lines = [f"{x}{before}\u180e{after}{y}" for before in contexts for after in contexts for x, y in (("", ""),
                                                                                                     ("x", "y"))]
    corpus = tmp_path / "u180e.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    options: dict[str, Any] = {"corpus": [str(corpus)], "weights": {"corpus": 3.0}}
    assert _rank_groups("encode", ranks, **options) == []
    assert _rank_groups("encode_u180e_space", ranks, **options) == ["split:u180e-space"]


def test_white_space_cut_apart_is_a_split_not_a_missing_token(ranks: str) -> None:
    """White space cut one character at a time: each text's ids are the reference's merges of the pieces the port
    cut, so no group says ``merge`` or a token is missing (there were 31 such groups of 34, one per pair of spaces
    the vocabulary has a token for); a group for each alternative of the pattern the port rewrote."""
    keys = _rank_groups("encode_ws_one_by_one", ranks)
    assert keys and all(key.startswith("split:alt") and key.endswith(":space") for key in keys), keys
    assert len(keys) <= 4, keys


def test_a_greedy_merge_on_white_space_is_still_a_merge(ranks: str) -> None:
    """The longest token at each position gives, inside a run of white space, what a cut there gives: those texts
    join the port's merge group, named (was ``merge`` and two ``split:alt4`` groups)."""
    assert _rank_groups("encode_greedy_longest", ranks) == ["merge:longest-first"]


def test_a_merge_bug_whose_first_text_is_white_space_stays_one_group(ranks: str) -> None:
    """Ranks of pairs instead of joined bytes: its first wrong text (at this seed) is white space that a cut
    explains as well, and made a split group of its own; every text of that group fits the merge group too, so it
    is counted there."""
    assert _rank_groups("encode_pair_ranks", ranks, seed=0) == ["merge"]
