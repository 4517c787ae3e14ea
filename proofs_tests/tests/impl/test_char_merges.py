"""The merges of ``tokenizers``' BPE over strings in C (``impl/models/char_merges.py``) against its Python loop and
the library: characters put together from their bytes first, then the merge lines in order, a character without a
token as its bytes' tokens; and the C loop stored by the cache and sent to worker processes."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpeproof.impl import encoder as encoder_module
from bpeproof.impl.models.hugging_face import HuggingFaceTextModel
from bpeproof.impl.tokenizer import load_tokenizer

tokenizers = pytest.importorskip("tokenizers")

#: The characters of the vocabularies and texts: ASCII, two- and three-byte characters sharing a first byte with
#: others (so that a character no token holds is put together in part), and one of four bytes.
CHARS = "ab\u00e9\u00e8\u65e5\u65e6\U0001f600"


@st.composite
def fallback_vocabularies(draw: st.DrawFn) -> dict[str, Any]:
    """A vocabulary of some characters, every byte's token and merges among its strings, in any order."""
    chars = draw(st.lists(st.sampled_from(CHARS), min_size=1, unique=True))
    strings = list(chars)
    merges: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(0, 12))):
        left, right = draw(st.sampled_from(strings)), draw(st.sampled_from(strings))
        if (left, right) in merges:
            continue
        merges.append((left, right))
        if left + right not in strings:
            strings.append(left + right)
    vocab = {text: index for index, text in enumerate(draw(st.permutations(strings)))}
    for byte in range(256):
        vocab[f"<0x{byte:02X}>"] = len(vocab)
    return {"vocab": vocab, "merges": merges, "ignore_merges": draw(st.booleans())}


def _library(table: dict[str, Any]) -> Any:
    document = json.loads(tokenizers.Tokenizer(tokenizers.models.BPE()).to_str())
    document["model"].update({"vocab": table["vocab"], "merges": [list(pair) for pair in table["merges"]],
                              "byte_fallback": True, "ignore_merges": table["ignore_merges"]})
    return tokenizers.Tokenizer.from_str(json.dumps(document))


def _model(table: dict[str, Any], c_loop: bool) -> HuggingFaceTextModel:
    from bpeproof.impl.formats.hf_json import resolve_merges

    vocab = table["vocab"]
    merges = resolve_merges("<table>", [(a, b, "merge") for a, b in table["merges"]], vocab, prefix=None)
    return HuggingFaceTextModel({token: text for text, token in vocab.items()}, merges,
                                {token: text.encode() for text, token in vocab.items()}, byte_fallback=True,
                                ignore_merges=table["ignore_merges"], c_loop=c_loop)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fallback_vocabularies(), st.lists(st.text(st.sampled_from(CHARS + "x"), max_size=60), min_size=1,
                                         max_size=6))
def test_the_c_merges_are_the_python_merges_and_the_library(table: dict[str, Any], words: list[str]) -> None:
    """Every word's ids from the C loop (one call for all, as a tokenizer makes it, and again from its cache) are
    the Python loop's and the library's; the loop pickles and its copy merges alike."""
    if not encoder_module.HAVE_C_LOOP:
        pytest.skip("the C extension bpeproof.impl._c._fastenc is not built")
    c_model, python_model = _model(table, True), _model(table, False)
    fast = c_model.c_merger()
    assert fast is not None and python_model.c_merger() is None
    expected = [list(python_model.encode_word(word.encode())) for word in words]
    library = _library(table)
    assert [library.encode(word, add_special_tokens=False).ids for word in words] == expected
    cache: dict[str, tuple[int, ...]] = {}
    flat = [token for ids in expected for token in ids]
    assert fast.encode_pieces(words, cache, 1000) == flat
    assert fast.encode_pieces(words, cache, 1000) == flat
    copy = pickle.loads(pickle.dumps(c_model))
    assert copy.c_merger().encode_pieces(words, {}, 0) == flat


def test_a_tokenizer_json_of_text_merges_runs_them_in_c_from_its_cache(tmp_path: Path) -> None:
    """A character BPE with byte fallback (Llama 2's and Mistral's shape) merges in C, also when loaded from the
    cache, with the library's ids on a character without a token."""
    if not encoder_module.HAVE_C_LOOP:
        pytest.skip("the C extension bpeproof.impl._c._fastenc is not built")
    vocab = {"a": 0, "b": 1, "\u00e9": 2, "ab": 3, "ab\u00e9": 4}
    for byte in range(256):
        vocab[f"<0x{byte:02X}>"] = len(vocab)
    table = {"vocab": vocab, "merges": [("a", "b"), ("ab", "\u00e9")], "ignore_merges": False}
    path = tmp_path / "tokenizer.json"
    path.write_text(_library(table).to_str(), encoding="utf-8")
    text = "ab\u00e9 \u00e8ab \U0001f600"
    expected = _library(table).encode(text, add_special_tokens=False).ids
    for _ in range(2):  # read, then from the cache entry the first load wrote
        tokenizer = load_tokenizer(str(path))
        assert tokenizer.model.c_merger() is not None
        assert tokenizer.encode(text) == expected
