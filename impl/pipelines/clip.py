"""CLIP's tokenizer (OpenAI's ``clip/simple_tokenizer.py``) on its merges file, as CLIP runs it.

``SimpleTokenizer.encode`` cleans the text, cuts it with its pattern and encodes each piece by BPE:

1. ``ftfy.fix_text``, then ``html.unescape`` twice, then ``strip()``; runs of ``\\s`` (the ``regex`` module's)
   become one space, ``strip()`` again, and ``lower()``;
2. the pieces are the matches of ``impl.formats.clip_merges.CLIP_PATTERN`` (``regex``, ``IGNORECASE``); a piece that is
   ``<|startoftext|>`` or ``<|endoftext|>`` is that special token;
3. every other piece becomes GPT-2's characters for its UTF-8 bytes, the last with ``</w>``, merged by the
   lowest-ranked pair, all its occurrences left to right, until none is left.

Step 3 is the one merge loop of ``impl.models.hugging_face.HuggingFaceTextModel`` with ``</w>`` as the end-of-word
suffix: on a merge list where every merge's parts are made by earlier merges (or are characters) and no two merges
make the same token — as in the file CLIP ships, which the loader checks — merging every occurrence of the best
pair at once and merging the leftmost best pair one at a time give the same tokens, since a token made by a merge
is only ever a part of later merges.

``ftfy.fix_text`` is ``ftfy``'s, when that package is installed, as CLIP calls it.  Without it the engine cannot
know what it would change (mojibake repair, quotes, widths, ligatures, control characters, HTML entities), so a
text is refused (``InvalidTextError``) unless it holds only printable ASCII without ``&``, tabs and line breaks,
which ``fix_text`` leaves as they are.  Special tokens are recognized only when ``allowed`` names them: otherwise
the pattern has no alternative for them and they are cut as text.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Collection, Mapping
from functools import cache
from typing import Any

import regex

from bpeproof.impl.formats.clip_merges import CLIP_PATTERN, CLIP_SPECIALS, clip_byte_chars
from bpeproof.impl.formats.vocab import TextModel, Vocab
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.models.hugging_face import HuggingFaceTextModel
from bpeproof.impl.pipelines.special_tokens import AllowedSpecial
from bpeproof.impl.pipelines.text_pipeline import TextPipeline, TokenizerParts
from bpeproof.impl.pre_tokenizers.patterns import resolve_pattern
from bpeproof.spec.types import InvalidTextError

__all__ = ["ClipPipeline", "clean_text", "clip_parts"]

#: What ``ftfy.fix_text`` provably leaves alone: printable ASCII but ``&`` (HTML entities), tab and line breaks.
_UNCHANGED_BY_FTFY = regex.compile(r"[\t\n\r\x20-\x25\x27-\x7e]*")
_SPACES = regex.compile(r"\s+")


@cache
def _fix_text() -> Callable[[str], str] | None:
    try:
        import ftfy
    except ImportError:
        return None
    fix: Callable[[str], str] = ftfy.fix_text
    return fix


def clean_text(text: str) -> str:
    """CLIP's ``whitespace_clean(basic_clean(text)).lower()``; ``InvalidTextError`` when ``ftfy`` is missing and
    ``fix_text`` might change the text."""
    fix = _fix_text()
    if fix is not None:
        text = fix(text)
    elif not _UNCHANGED_BY_FTFY.fullmatch(text):
        position = next(index for index, char in enumerate(text) if not _UNCHANGED_BY_FTFY.fullmatch(char))
        raise InvalidTextError(
            f"CLIP's tokenizer first runs ftfy.fix_text, and without the ftfy package the engine cannot tell what it"
            f" makes of {text[position]!r} (character {position}); install ftfy to encode such text"
        )
    text = html.unescape(html.unescape(text)).strip()
    spaced: str = _SPACES.sub(" ", text)
    return spaced.strip().lower()


@cache
def _pattern(names: frozenset[str]) -> Any:
    """CLIP's pattern, with the alternatives of the special tokens not in ``names`` left out."""
    alternatives = CLIP_PATTERN.split("|")
    specials = {regex.escape(name): name for name in CLIP_SPECIALS}
    kept = [part for part in alternatives if part not in specials or specials[part] in names]
    return regex.compile("|".join(kept), regex.IGNORECASE)


class ClipPipeline(TextPipeline):
    """CLIP's cleaning and pattern: the pieces as GPT-2's characters for their bytes, and the special tokens."""

    description = "CLIP's text cleaning and pattern"
    # CLIP's tokenizer reads its special tokens only where it is told to.
    library_allowed_special: AllowedSpecial = None

    def __init__(self, specials: Mapping[str, int], pattern: str | None = None) -> None:
        self._specials = dict(specials)
        self._chars = dict(clip_byte_chars())
        self._override = None if pattern is None else regex.compile(pattern)
        self.pattern = resolve_pattern(pattern or "words")
        if pattern is not None:
            self.description = f"CLIP's text cleaning; pattern {pattern!r}"

    def pieces(self, text: str, allowed: Collection[str] | None = None) -> list[str | int]:
        names = frozenset(allowed or ()) & frozenset(self._specials)
        finder = self._override if self._override is not None else _pattern(names)
        chars = self._chars
        out: list[str | int] = []
        for match in finder.finditer(clean_text(text)):
            piece = match.group()
            if not piece:
                continue
            if piece in names:
                out.append(self._specials[piece])
            else:
                out.append("".join(chars[byte] for byte in piece.encode("utf-8")))
        return out


def _check_merge_order(path: str, vocab: Vocab, text_model: TextModel) -> None:
    """Refuse a merge list on which merging every occurrence at once (CLIP) and one at a time could differ."""
    made: set[int] = set()
    base = set(range(512))
    for line, (a, b, c) in enumerate(vocab.merges, start=2):
        if (a not in base and a not in made) or (b not in base and b not in made):
            raise FormatError(path, f"line {line}", "a part of this merge is made by no earlier merge: CLIP's merge"
                              " loop would need to be run as it is, which the engine does not do")
        if c in made or c in base:
            raise FormatError(path, f"line {line}", f"the token {text_model.strings[c]!r} is made twice: CLIP's merge"
                              " loop would need to be run as it is, which the engine does not do")
        made.add(c)


def clip_parts(path: str, vocab: Vocab, text_model: TextModel, pattern: str | None) -> TokenizerParts:
    """CLIP's tokenizer on its merges file: ``ClipPipeline`` and the text model with the ``</w>`` suffix."""
    _check_merge_order(path, vocab, text_model)
    specials = {token.content: token.id for token in text_model.added_tokens}
    tokens = {token: data for token, data in vocab.tokens.items() if token not in set(specials.values())}
    decoded = {token: (data[: -len(b"</w>")] + b" " if data.endswith(b"</w>") and len(data) > 4 else data)
               for token, data in tokens.items()}
    model = HuggingFaceTextModel(text_model.strings, vocab.merges, decoded, suffix=text_model.suffix)
    return TokenizerParts(ClipPipeline(specials, pattern), model, specials)
