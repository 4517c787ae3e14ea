"""Checking ports of ``tokenizer.json`` files: the ``tokenizers`` library itself passes, on its own conventions.

The library reads every added token in any text (special or not, with its ``single_word``, ``lstrip``,
``rstrip`` and ``normalized`` flags) and decodes what its normalizer made of the text, not the text: a reference
that expected special tokens' names as ordinary text, or ``decode(encode(t)) == t`` under NFC, flagged the library
it follows.  The files are made here from the trained vocabulary (no ``../shared``); DeepSeek's is checked too
when it is there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bpeproof.proofs_tests.checker.tokenizer_check import TargetError, check_tokenizer
from bpeproof.proofs_tests.fixtures.vocab import write_rank_file

pytest.importorskip("tokenizers")

PORTS = "bpeproof.proofs_tests.planted.ports"
#: The bound on a run's wall time: never reached on a working machine (the runs count texts).
BOUND_SECONDS = 120.0
DEEPSEEK = Path(__file__).resolve().parents[4] / "shared" / "vocabs" / "deepseek_tokenizer.json.gz"

#: Added tokens of every kind the library reads: special and not, each flag, one normalized.
ADDED = [
    {"content": "<|endoftext|>", "special": True},
    {"content": "<|fim|>", "special": True, "lstrip": True},
    {"content": "[SEP]", "special": True, "rstrip": True},
    {"content": "word", "special": False, "single_word": True},
    {"content": "Ｈｉ", "special": False, "normalized": True},
]


def _tokenizer_json(tmp: Path, normalizer: dict[str, object] | None) -> str:
    """The trained vocabulary written as a byte-level ``tokenizer.json`` with ``ADDED`` and ``normalizer``."""
    from bpeproof.impl.formats import load
    from bpeproof.impl.formats.hf_json_writer import hf_json_bytes

    document = json.loads(hf_json_bytes(load(write_rank_file(tmp / "trained.tiktoken"))))
    first = 1 + max(document["model"]["vocab"].values())
    document["added_tokens"] = [
        {"id": first + index, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
         **token} for index, token in enumerate(ADDED)
    ]
    document["normalizer"] = normalizer
    path = tmp / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def nfc_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _tokenizer_json(tmp_path_factory.mktemp("hf"), {"type": "NFC"})


def test_the_library_itself_passes(nfc_file: str) -> None:
    """tokenizers on its own file, encode and decode: no false alarm on added tokens nor on NFC's decode."""
    result = check_tokenizer(f"{PORTS}:encode_hf", decode=f"{PORTS}:decode_hf", vocab=nfc_file,
                             seconds=BOUND_SECONDS, examples=3000, seed=2)
    assert result.ran and not result.found, result.report()
    assert result.per_source.get("special", 0) > 0, result.per_source  # names came, read as the library reads them
    assert result.library is not None and result.library.startswith("tokenizers")
    assert result.special_tokens is not None and "read as special tokens in every text" in result.special_tokens
    assert result.lone_surrogates is not None and "refused them, as the library does" in result.lone_surrogates


def test_a_port_that_leaves_special_names_as_text_is_caught(nfc_file: str) -> None:
    """A port with tiktoken's convention (names as text) on a tokenizer.json differs from its library."""
    result = check_tokenizer(f"{PORTS}:encode_hf_names_as_text", vocab=nfc_file, seconds=BOUND_SECONDS,
                             examples=3000, seed=2, shrink_seconds=2)
    assert result.found and [group.key for group in result.groups] == ["special:not-read"], result.report()


def test_the_convention_can_be_stated(nfc_file: str) -> None:
    """``special_names="allowed"``: the names are ordinary text unless allowed, which the library does with its
    ``encode_special_tokens`` switch; the library itself then differs on every name."""
    right = check_tokenizer(f"{PORTS}:encode_hf_names_as_text", vocab=nfc_file, seconds=BOUND_SECONDS,
                            examples=1500, seed=2, special_names="text")
    assert right.ran and not right.found, right.report()
    assert right.special_tokens is not None and "--special-names text" in right.special_tokens
    wrong = check_tokenizer(f"{PORTS}:encode_hf", vocab=nfc_file, seconds=BOUND_SECONDS, examples=3000, seed=2,
                            special_names="text", shrink_seconds=2)
    assert wrong.found and [group.key for group in wrong.groups] == ["special:not-allowed"], wrong.report()
    with pytest.raises(TargetError, match="special_names must be one of"):
        check_tokenizer(f"{PORTS}:encode_hf", vocab=nfc_file, seconds=5, special_names="sometimes")


def test_a_real_decode_difference_stays_visible(nfc_file: str) -> None:
    """Compared with the library's decode of the same ids, a decode that cleans up spaces is still caught."""
    result = check_tokenizer(f"{PORTS}:encode_hf", decode=f"{PORTS}:decode_hf_clean_up", vocab=nfc_file,
                             seconds=BOUND_SECONDS, examples=3000, seed=2, shrink_seconds=2)
    assert result.found and [group.key for group in result.groups] == ["decode"], result.report()


@pytest.mark.skipif(not DEEPSEEK.exists(), reason="needs ../shared/vocabs/deepseek_tokenizer.json.gz")
def test_the_library_itself_passes_on_deepseek() -> None:
    result = check_tokenizer(f"{PORTS}:encode_hf", decode=f"{PORTS}:decode_hf", vocab=str(DEEPSEEK),
                             seconds=BOUND_SECONDS, examples=3000, seed=4)
    assert result.ran and not result.found, result.report()


def test_vectors_are_the_librarys_answers(nfc_file: str) -> None:
    """Every known answer of ``bpeproof vectors`` on a tokenizer.json is the library's: its ids for the text (added
    tokens read, as the library reads them), and its decode of the ids."""
    tokenizers = pytest.importorskip("tokenizers")
    from bpeproof.proofs_tests.checker import vectors
    from bpeproof.proofs_tests.checker.library import Library, load_reference

    reference = load_reference(nfc_file, None)
    chosen = vectors.choose(reference, 800, drawn=1500, decode=Library(nfc_file, reference).decode)
    library = tokenizers.Tokenizer.from_file(nfc_file)
    wrong = [vector for vector in chosen
             if library.encode(vector.text, add_special_tokens=False).ids != list(vector.ids)
             or (not vector.allowed_special and library.decode(list(vector.ids)) != vector.back)]
    assert not wrong, wrong[:5]
    assert sum(vector.allowed_special for vector in chosen) >= len(ADDED) - 1  # each added token read once at least
    assert any(vector.decoded is not None for vector in chosen)  # NFC changed a text, and the vector says so


def test_a_pass_on_few_texts_says_so(nfc_file: str) -> None:
    result = check_tokenizer(f"{PORTS}:encode_hf", vocab=nfc_file, seconds=BOUND_SECONDS, examples=100, seed=2)
    assert result.ran and not result.found, result.report()
    assert result.note is not None and "100 texts checked, too few to trust this pass" in result.note
    assert "too few to trust" in result.report()


ADAPTER = Path(__file__).resolve().parents[3] / "examples" / "adapters" / "transformers_js_adapter.mjs"


def test_the_transformers_js_adapter(nfc_file: str) -> None:
    """transformers.js (installed beside the adapter: 475 MB, so never by the suite) speaks the protocol with the
    tokenizers library's convention, and what the check finds in it is among its known causes
    (docs/findings.md)."""
    import shutil

    if shutil.which("node") is None or not (ADAPTER.parent / "node_modules" / "@huggingface" / "transformers").is_dir():
        pytest.skip("needs node and npm install --prefix examples/adapters --ignore-scripts"
                    " @huggingface/transformers@4.3.2")
    result = check_tokenizer(cmd=f"node {ADAPTER}", vocab=nfc_file, seconds=BOUND_SECONDS, examples=3000, seed=2,
                             shrink_seconds=2)
    assert result.ran, result.report()
    assert result.special_tokens is not None and 'hello says "special": "always"' in result.special_tokens
    known = {"decode", "split:js-whitespace", "split:unicode-version", "surrogate:other-ids"}
    assert {group.key for group in result.groups} <= known, result.report()
