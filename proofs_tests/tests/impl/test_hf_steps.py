"""A ``tokenizer.json``'s pre-tokenizer steps on plain strings are the same steps on pieces of text.

* each step's faster words (one compiled expression's ``findall`` for the character classes, a piece from each
  replacement character for ``Metaspace``) are its spans sliced, on generated text;
* each step on a plain string is the step on a ``Piece`` (its change of the text too, and ``Metaspace``'s
  ``prepend_scheme: first`` read from where the piece starts);
* a pipeline cut by the chained plain words (``plain_words``) gives the pieces its steps give, with any added tokens
  and a text-only normalizer, and ``plain_words`` refuses the pipelines where the text alone cannot tell where a
  piece starts.

The library itself is compared with in ``test_hf_pipelines.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bpeproof.impl.formats.vocab import AddedToken, PreTokenizerStep
from bpeproof.impl.normalizers.hf import Normalizer, Piece
from bpeproof.impl.pipelines.hf_steps import (
    ByteLevelCut,
    CharClassCut,
    MetaspaceCut,
    PreTokenizerCut,
    SplitCut,
    WhitespaceCut,
    cuts_from_file,
    needs_alignment,
    plain_words,
    steps_from_file,
)
from bpeproof.impl.pipelines.tokenizer_json import HFPipeline
from bpeproof.impl.pre_tokenizers.hf_splits import BEHAVIORS, SplitStep

#: Characters the steps treat specially (white space, digits, punctuation, replacement characters, characters the
#: normalizers expand), mixed with any character.
SPECIAL_CHARS = list(" ▁_\t\n\u3000\u00a0\u200b0123\u0663½²①,.!¿—“-'aZéİﬁ\u0301日😀")
texts = st.text(st.one_of(st.sampled_from(SPECIAL_CHARS), st.characters(exclude_categories=["Cs"])), max_size=24)

CUTS: dict[str, PreTokenizerCut] = {
    **{f"{name}-{behavior}": CharClassCut(name, behavior)
       for name in ("numeric", "punctuation", "whitespace") for behavior in BEHAVIORS},
    "whitespace-runs": WhitespaceCut(),
    **{f"metaspace-{replacement}-{scheme}-{'split' if split else 'whole'}": MetaspaceCut(replacement, scheme, split)
       for replacement in ("▁", "_") for scheme in ("always", "first", "never") for split in (True, False)},
    "split-spaces-removed-inverted": SplitCut(SplitStep(r"\s+", "removed", True)),
    "split-o-merged-with-next": SplitCut(SplitStep("o", "merged_with_next")),
    "split-empty-matches": SplitCut(SplitStep("a*", "contiguous")),
    "byte-level-prefix-gpt2": ByteLevelCut(True, True, False, None),
    "byte-level-whole": ByteLevelCut(False, False, False, None),
}


@pytest.mark.parametrize("name", sorted(CUTS))
@given(text=texts)
@settings(max_examples=150)
def test_the_words_are_the_spans_sliced(name: str, text: str) -> None:
    cut = CUTS[name]
    assert cut.words(text) == [text[start:end] for start, end in cut.spans(text) if end > start]


@pytest.mark.parametrize("name", sorted(CUTS))
@given(text=texts.filter(bool), shift=st.sampled_from([0, 1, 5]))
@settings(max_examples=100)
def test_a_step_on_a_string_is_the_step_on_a_piece(name: str, text: str, shift: int) -> None:
    cut = CUTS[name]
    assert cut.text_words(shift == 0)(text) == [piece.text for piece in cut(Piece.original(text, shift))]


def _step(value: dict[str, Any]) -> PreTokenizerStep:
    raw = json.dumps(value, sort_keys=True, ensure_ascii=False)
    if value["type"] == "Split":
        return PreTokenizerStep("Split", raw, value["pattern"], value["behavior"], value["invert"])
    return PreTokenizerStep(value["type"], raw)


BEHAVIOR_NAMES = ["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
step_values = st.one_of(
    st.builds(lambda scheme, split, replacement: {"type": "Metaspace", "replacement": replacement,
                                                  "prepend_scheme": scheme, "split": split},
              st.sampled_from(["always", "first", "never"]), st.booleans(), st.sampled_from(["▁", "_"])),
    st.builds(lambda individual: {"type": "Digits", "individual_digits": individual}, st.booleans()),
    st.sampled_from([{"type": "Whitespace"}, {"type": "WhitespaceSplit"}]),
    st.builds(lambda behavior: {"type": "Punctuation", "behavior": behavior}, st.sampled_from(BEHAVIOR_NAMES)),
    st.builds(lambda pattern, behavior, invert: {"type": "Split", "pattern": pattern, "behavior": behavior,
                                                 "invert": invert},
              st.sampled_from([r"\s+", r"\p{L}+", "o", "a*", "▁"]), st.sampled_from(BEHAVIOR_NAMES), st.booleans()),
)
normalizer_values = st.sampled_from([
    None, {"type": "NFC"}, {"type": "NFKD"}, {"type": "Lowercase"},
    {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}]}])
added_tokens = st.lists(
    st.builds(lambda content, special, normalized, lstrip: AddedToken(content, 0, special, normalized, False, lstrip),
              st.sampled_from(["<m>", "i", "e", "ab", " 1", "▁"]), st.booleans(), st.booleans(), st.booleans()),
    max_size=3, unique_by=lambda token: token.content,
).map(lambda tokens: [AddedToken(token.content, 1000 + index, token.special, token.normalized, False, token.lstrip)
                      for index, token in enumerate(tokens)])


FIRST = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True}


@given(steps=st.lists(step_values, min_size=1, max_size=3), normalizer=normalizer_values, tokens=added_tokens,
       text_list=st.lists(texts, min_size=1, max_size=4))
@settings(max_examples=300)
# Where the first piece of the stretch that starts the text is not the one piece that starts there (plain_words
# refuses these): a removed first character, a prepended one cut off, a character the normalizer expands cut or
# with a normalized token read in it.
@example(steps=[{"type": "WhitespaceSplit"}, FIRST], normalizer=None, tokens=[], text_list=[" ab"])
@example(steps=[{"type": "Metaspace", "replacement": "_", "prepend_scheme": "always", "split": False},
                {"type": "Punctuation", "behavior": "Isolated"}, FIRST], normalizer=None, tokens=[], text_list=["ab"])
@example(steps=[{"type": "Digits", "individual_digits": True}, FIRST], normalizer={"type": "NFKD"}, tokens=[],
         text_list=["½"])
@example(steps=[FIRST], normalizer={"type": "Lowercase"}, tokens=[AddedToken("i", 1000, False, True)],
         text_list=["İx"])
def test_plain_words_are_the_pieces(steps: list[dict[str, Any]], normalizer: dict[str, Any] | None,
                                    tokens: list[AddedToken], text_list: list[str]) -> None:
    """A pipeline cut as plain strings gives the words and ids the steps give on pieces, where ``plain_words``
    takes it; the special tokens read and left as text."""
    files = [_step(value) for value in steps]
    normalizing = Normalizer.from_json(normalizer)
    try:
        pieces = HFPipeline(normalizing, tokens, steps_from_file(files), track=needs_alignment(files))
        plain = HFPipeline(normalizing, tokens, steps_from_file(files), track=needs_alignment(files))
    except ValueError:  # two added tokens that normalize alike
        return
    found = plain_words(cuts_from_file(files), normalizes=bool(normalizing),
                        normalized_tokens=any(token.normalized for token in tokens))
    if found is None:
        assert any(value.get("prepend_scheme") == "first" for value in steps)
        return
    plain.cut_by(found[0], first=found[1])
    for text in text_list:
        for allowed in (None, {token.content for token in tokens}):
            assert plain.pieces(text, allowed) == pieces.pieces(text, allowed)


METASPACE_FIRST = MetaspaceCut("▁", "first", True)


@pytest.mark.parametrize(("cuts", "normalizes", "normalized_tokens", "plain"), [
    ([METASPACE_FIRST, CharClassCut("numeric", "isolated")], True, False, True),
    ([METASPACE_FIRST], True, True, False),  # a normalized token read in the first character's expansion
    ([CharClassCut("numeric", "isolated"), METASPACE_FIRST], False, True, True),
    ([CharClassCut("numeric", "isolated"), METASPACE_FIRST], True, False, False),  # a cut in an expansion
    ([MetaspaceCut("_", "always", False), METASPACE_FIRST], False, False, False),  # the inserted text's start
    ([CharClassCut("whitespace", "removed"), METASPACE_FIRST], False, False, False),  # its first piece dropped
    ([MetaspaceCut("▁", "never", True), METASPACE_FIRST], True, False, False),
    ([ByteLevelCut(False, True, True, None)], False, False, False),  # it maps bytes
    ([ByteLevelCut(True, True, False, None)], True, True, True),
], ids=["first-then-digits-normalized", "normalized-token", "digits-then-first", "digits-then-first-normalized",
        "after-a-prepend", "after-a-removal", "after-a-cut-normalized", "byte-mapping", "byte-level-unmapped"])
def test_plain_words_take_only_what_the_text_tells(cuts: list[PreTokenizerCut], normalizes: bool,
                                                   normalized_tokens: bool, plain: bool) -> None:
    found = plain_words(cuts, normalizes=normalizes, normalized_tokens=normalized_tokens)
    assert (found is not None) == plain
    if found is not None:
        assert (found[1] is not None) == any(cut.reads_start for cut in cuts)
