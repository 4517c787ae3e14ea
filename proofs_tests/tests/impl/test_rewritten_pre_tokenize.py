"""``Tokenizer.rewritten_pre_tokenize``: the pre-tokenization with every regular expression read otherwise, in any
stage (a pattern, split steps, a tokenizer.json's ``Split`` and ``ByteLevel`` steps), as a port that reads them so.

On a tokenizer.json the rewritten pipeline must cut as the ``tokenizers`` library itself does on the file with the
same rewrite made to its Oniguruma expressions (the engine rewrites the ``regex`` module's translation of them),
and give text pieces that the model merges into the library's ids; the tokenizer it comes from is left as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer, SplitStep
from bpeproof.impl.pre_tokenizers.pattern_variants import with_js_whitespace, without_inline_case
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.tokenizer import Tokenizer, load_tokenizer
from bpeproof.proofs_tests.planted import hf_ports

tokenizers = pytest.importorskip("tokenizers")

TEXTS = ["a\x85 b", "x \ufeffy", "\ufeff's", "  \x85", "DON'T I'Ma it'Sx", "a\u2000 b\u3000\u3000c", "\x1c a",
         "Hello world's 12345!\n\n  x", "\u0cdc's", "a\u0cdcb 1", ""]
@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A byte-level tokenizer.json of the trained vocabulary with GPT-2's ``ByteLevel`` regex, and the same with
    cl100k's as a ``Split`` step."""
    return hf_ports.write_files(tmp_path_factory.mktemp("rewritten"))


def _rewritten_library(path: Path, change: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("BPEPROOF_CHECK_VOCAB", str(path))
    hf_ports.library_with.cache_clear()
    return hf_ports.library_with(change)


@pytest.mark.parametrize("kind", ["byte-level", "split"])
@pytest.mark.parametrize(("change", "transform", "pinned"), [
    ("js", with_js_whitespace, True), ("case", without_inline_case, True), ("unicode", lambda p: p, False)])
def test_a_rewritten_pipeline_cuts_as_the_library_rewritten(files: dict[str, Path], kind: str, change: str,
                                                            transform: Any, pinned: bool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The rewritten pipeline's pieces are text (not GPT-2's characters), and merged by the model they give the ids
    of the library whose Oniguruma expressions were rewritten alike (``hf_ports``)."""
    reference = load_tokenizer(str(files[kind]))
    before = [reference.pre_tokenize(text) for text in TEXTS]
    cut = reference.rewritten_pre_tokenize(transform, pinned)
    assert cut is not None
    library = _rewritten_library(files[kind], change, monkeypatch)
    differ = 0
    for text in TEXTS:
        pieces = cut(text)
        assert "".join(pieces) == text
        ids = [token for piece in pieces for token in reference.model.encode_word(piece.encode("utf-8"))]
        assert ids == library.encode(text, add_special_tokens=False).ids, (text, pieces)
        differ += pieces != reference.pre_tokenize(text)
    # The texts tell each rewrite from the file's own reading, but for GPT-2's regex, which has no (?i:…).
    assert (differ > 0) == ((kind, change) != ("byte-level", "case"))
    assert [reference.pre_tokenize(text) for text in TEXTS] == before  # the tokenizer itself is untouched


def test_split_steps_and_patterns_are_rewritten_too() -> None:
    """A tokenizer cut by split steps, and one cut by a bare pattern, rewrite as the pipeline does."""
    steps = Tokenizer([], pretokenizer=[SplitStep(r"\p{N}{1,3}"), SplitStep(PATTERNS["cl100k"])])
    bare = Tokenizer([], pattern="cl100k")
    for tokenizer in (steps, bare):
        js = tokenizer.rewritten_pre_tokenize(with_js_whitespace)
        newer = tokenizer.rewritten_pre_tokenize(lambda source: source, pinned=False)
        same = tokenizer.rewritten_pre_tokenize(lambda source: source)
        assert js is not None and newer is not None and same is not None
        assert tokenizer.pre_tokenize("a \x85b") == ["a", " ", "\x85b"] and js("a \x85b") == ["a", " \x85", "b"]
        assert tokenizer.pre_tokenize("\u0cdc's") == ["\u0cdc'", "s"] and newer("\u0cdc's") == ["\u0cdc", "'s"]
        assert all(same(text) == tokenizer.pre_tokenize(text) for text in TEXTS)
    assert steps.pretokenizer is not None and steps.pretokenizer.steps == (
        SplitStep(r"\p{N}{1,3}"), SplitStep(PATTERNS["cl100k"]))


def test_what_cannot_be_rewritten_is_none(files: dict[str, Path], tmp_path: Path) -> None:
    """No expression to rewrite (no steps, a Metaspace file), or one the transform cannot write: None."""
    assert Tokenizer([], pretokenizer=PreTokenizer([])).rewritten_pre_tokenize(lambda source: source) is None
    assert load_tokenizer(str(files["split"])).rewritten_pre_tokenize(lambda source: None) is None
    assert Tokenizer([], pattern="cl100k").rewritten_pre_tokenize(lambda source: "(") is None
    assert SplitStep(r"[^\S\n]").rewritten(with_js_whitespace) is None  # \S inside a class: not written
    document = json.loads(files["split"].read_text(encoding="utf-8"))
    document["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
                                 "split": True}
    metaspace = tmp_path / "metaspace.json"
    metaspace.write_text(json.dumps(document), encoding="utf-8")
    assert load_tokenizer(str(metaspace)).rewritten_pre_tokenize(lambda source: source) is None


def test_a_rewritten_step_is_another_step() -> None:
    step = SplitStep(r"\s+|\S+")
    rewritten = step.rewritten(with_js_whitespace)
    assert rewritten is not None and rewritten != step and rewritten.pattern == step.pattern
    assert rewritten == step.rewritten(with_js_whitespace) and rewritten != step.rewritten(with_js_whitespace, False)
    assert "rewritten to" in repr(rewritten) and step.split("a\ufeffb") == ["a\ufeffb"]
    assert rewritten.split("a\ufeffb") == ["a", "\ufeff", "b"]
    with pytest.raises(ValueError, match="not saved"):
        PreTokenizer([rewritten]).to_json_value()
