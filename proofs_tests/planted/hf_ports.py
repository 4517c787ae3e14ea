"""Planted ports of a ``tokenizer.json`` file, for ``bpeproof check --tokenizer``: the ``tokenizers`` library itself
with one thing of its pre-tokenizer changed, as ports to other languages change it.

Each is the library on the file named by ``BPEPROOF_CHECK_VOCAB`` (the checker sets it for the process under test)
with every regular expression of its pre-tokenizer (each ``Split`` step's, and GPT-2's of a ``ByteLevel`` step
with ``use_regex``, written out as a ``Split`` step before a ``ByteLevel`` step without it) read otherwise:

=================================  =====================================================================
port (``hf_ports:<name>``)          the one difference
=================================  =====================================================================
encode_js_whitespace               ``\\s`` and ``\\S`` as JavaScript reads them (U+FEFF white space,
                                   U+0085 and U+001C–U+001F not): transformers.js hard-codes GPT-2's
                                   regex so
encode_case_sensitive              ``(?i:…)`` dropped: the contractions matched case-sensitively, as in
                                   an engine without inline modifiers
encode_unicode_tables              the regex run by the ``regex`` module with its own (newer) Unicode
                                   tables instead of Oniguruma's, as a port on newer Unicode data does
=================================  =====================================================================

``encode`` is the library as it is (correct, never reported).
"""

from __future__ import annotations

import gzip
import json
import os
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import regex

from bpeproof.impl.pre_tokenizers.hf_splits import to_oniguruma
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS

#: GPT-2's regex as the library's ``ByteLevel`` step runs it when ``use_regex`` is true (its Rust source's).
GPT2_REGEX = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
#: ECMAScript's ``\s`` inside an Oniguruma class: WhiteSpace and LineTerminator.
JS_SPACE = r"\t\n\x0B\x0C\r \u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000\uFEFF"


def js_whitespace(pattern: str) -> str:
    """``pattern`` with ``\\s`` and ``\\S`` as JavaScript's (``[^\\s…]`` as the class without JavaScript's)."""
    return (pattern.replace("[^\\s", "[^" + JS_SPACE).replace("\\S", f"[^{JS_SPACE}]")
            .replace("\\s", f"[{JS_SPACE}]"))


def case_sensitive(pattern: str) -> str:
    return pattern.replace("(?i:", "(?:")


def _document() -> dict[str, Any]:
    path = os.environ.get("BPEPROOF_CHECK_VOCAB", "")
    raw = Path(path).read_bytes()
    if path.endswith(".gz"):
        raw = gzip.decompress(raw)
    document: dict[str, Any] = json.loads(raw)
    return document


def _rewritten(step: dict[str, Any], rewrite: Callable[[str], str]) -> dict[str, Any]:
    """A pre-tokenizer (step) with every regex rewritten; GPT-2's regex of a ``ByteLevel`` step written out."""
    kind = step.get("type")
    if kind == "Sequence":
        return {**step, "pretokenizers": [_rewritten(inner, rewrite) for inner in step["pretokenizers"]]}
    if kind == "Split" and "Regex" in step["pattern"]:
        return {**step, "pattern": {"Regex": rewrite(step["pattern"]["Regex"])}}
    if kind == "ByteLevel" and step.get("use_regex", True):
        if step.get("add_prefix_space"):
            raise ValueError("the port splits before the prefix space the library adds: not written")
        split = {"type": "Split", "pattern": {"Regex": rewrite(GPT2_REGEX)}, "behavior": "Isolated", "invert": False}
        return {"type": "Sequence", "pretokenizers": [split, {**step, "use_regex": False}]}
    return step


@lru_cache(maxsize=8)
def library_with(change: str) -> Any:
    """The tokenizers library on the vocabulary file with one change to its regexes (``change``)."""
    import tokenizers

    document = _document()
    if change == "js":
        document["pre_tokenizer"] = _rewritten(document["pre_tokenizer"], js_whitespace)
    elif change == "case":
        document["pre_tokenizer"] = _rewritten(document["pre_tokenizer"], case_sensitive)
    tokenizer = tokenizers.Tokenizer.from_str(json.dumps(document))
    if change == "unicode":
        tokenizer.pre_tokenizer = _with_regex_module(document["pre_tokenizer"])
    return tokenizer


class _RegexModuleSplit:
    """An isolated ``Split`` step run by the ``regex`` module, whose Unicode tables are newer than Oniguruma's."""

    def __init__(self, pattern: str) -> None:
        from bpeproof.impl.pre_tokenizers.hf_splits import translate_oniguruma

        self.compiled = regex.compile(translate_oniguruma(pattern))  # (no stand_ins: the module's own classes)

    def split(self, _index: int, piece: Any) -> list[Any]:
        text = str(piece)
        out = []
        previous = 0
        for match in self.compiled.finditer(text):
            if match.start() > previous:
                out.append(piece[previous : match.start()])
            out.append(piece[match.start() : match.end()])
            previous = match.end()
        if previous < len(text):
            out.append(piece[previous:])
        return out

    def pre_tokenize(self, pretok: Any) -> None:
        pretok.split(self.split)


def _with_regex_module(step: dict[str, Any]) -> Any:
    """The file's pre-tokenizer with each regex step run by ``_RegexModuleSplit`` (only isolated splits), the
    other steps by the library."""
    import tokenizers
    from tokenizers import pre_tokenizers

    def flat(item: dict[str, Any]) -> list[dict[str, Any]]:
        return [s for inner in item["pretokenizers"] for s in flat(inner)] if item["type"] == "Sequence" else [item]

    steps = []
    for inner in flat(_rewritten(step, lambda pattern: pattern)):
        if inner["type"] == "Split" and "Regex" in inner["pattern"]:
            if inner["behavior"] != "Isolated" or inner["invert"]:
                raise ValueError("the port runs isolated, not inverted, splits only")
            steps.append(pre_tokenizers.PreTokenizer.custom(_RegexModuleSplit(inner["pattern"]["Regex"])))
        else:  # the library's own step, read from its JSON by the library
            steps.append(tokenizers.Tokenizer.from_str(json.dumps({**_document(), "pre_tokenizer": inner}))
                         .pre_tokenizer)
    return pre_tokenizers.Sequence(steps)


def _ids(change: str, text: str) -> list[int]:
    return list(library_with(change).encode(text, add_special_tokens=False).ids)


def encode(text: str) -> list[int]:
    """The library itself."""
    return _ids("", text)


def encode_js_whitespace(text: str) -> list[int]:
    """Planted: every regex with JavaScript's ``\\s``."""
    return _ids("js", text)


def encode_case_sensitive(text: str) -> list[int]:
    """Planted: every regex without ``(?i:…)``."""
    return _ids("case", text)


def encode_unicode_tables(text: str) -> list[int]:
    """Planted: every regex run with the ``regex`` module's own Unicode tables."""
    return _ids("unicode", text)


def encode_nfc_python_tables(text: str) -> list[int]:
    """Planted: the library on a text that Python's ``unicodedata`` normalized (NFC) first: marks that Python's
    tables know and the library's normalizer has no combining class for are reordered, as a port on newer Unicode
    normalization data does."""
    return _ids("", unicodedata.normalize("NFC", text))  # was: _ids("", text)


#: cl100k's pattern as a ``Split`` step before a ``ByteLevel`` step that cuts nothing: the other shape files have.
SPLIT_CL100K = {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": to_oniguruma(PATTERNS["cl100k"])}, "behavior": "Isolated",
     "invert": False},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}


def write_files(folder: Path, added_token: bool = False) -> dict[str, Path]:
    """The trained vocabulary as a byte-level tokenizer.json in ``folder``, with GPT-2's ``ByteLevel`` regex
    ("byte-level") and with cl100k's as a ``Split`` step ("split"); ``added_token``: with ``<|endoftext|>``, as
    real files have (the library reads it in every text)."""
    from bpeproof.impl.formats import load
    from bpeproof.impl.formats.hf_json_writer import hf_json_bytes
    from bpeproof.proofs_tests.fixtures.vocab import write_rank_file

    document = json.loads(hf_json_bytes(load(write_rank_file(folder / "trained.tiktoken"))))
    if added_token:
        document["added_tokens"] = [{"id": 1 + max(document["model"]["vocab"].values()), "content": "<|endoftext|>",
                                     "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
                                     "special": True}]
    paths = {"byte-level": folder / "byte_level.json", "split": folder / "split.json"}
    paths["byte-level"].write_text(json.dumps(document), encoding="utf-8")
    paths["split"].write_text(json.dumps({**document, "pre_tokenizer": SPLIT_CL100K}), encoding="utf-8")
    return paths
