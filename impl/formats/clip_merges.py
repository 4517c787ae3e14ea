"""CLIP's merges file (``bpe_simple_vocab_16e6.txt.gz``), read as CLIP's ``SimpleTokenizer`` reads it.

The file is UTF-8 text, one merge per line (``left right``), after a first line naming the file's version.  CLIP
takes lines 1 to 48 894 (``merges[1:49152-256-2+1]``) and builds its vocabulary in this order: the 256 characters
of GPT-2's byte table (in the table's own order: the printable bytes first, then the others), the same 256 with
``</w>`` (the end-of-word suffix) after them, one token per merge (its two parts joined), and the special tokens
``<|startoftext|>`` and ``<|endoftext|>``; an id is the position in that list (a string listed twice keeps its
last).  ``parse_clip`` returns it as a ``Vocab`` of kind ``clip``, its ``text_model`` holding the strings and the
suffix (``bpeproof.impl.pipelines.clip`` runs CLIP's text cleaning and pattern on it).
"""

from __future__ import annotations

import os

from bpeproof.impl.formats.vocab import AddedToken, TextModel, Vocab, token_string_to_bytes
from bpeproof.impl.io.errors import FormatError

__all__ = ["CLIP_MERGES", "CLIP_PATTERN", "CLIP_SPECIALS", "CLIP_SUFFIX", "clip_byte_chars", "parse_clip"]

#: How many merge lines CLIP uses: ``49152 - 256 - 2`` (lines 1 to 48 894 of the file).
CLIP_MERGES = 49152 - 256 - 2
#: CLIP's end-of-word suffix.
CLIP_SUFFIX = "</w>"
#: CLIP's special tokens, at the end of its vocabulary.
CLIP_SPECIALS = ("<|startoftext|>", "<|endoftext|>")
#: CLIP's pre-tokenization pattern (for the ``regex`` module, with ``IGNORECASE``).
CLIP_PATTERN = r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""


def clip_byte_chars() -> list[tuple[int, str]]:
    """GPT-2's byte table in CLIP's order: (byte, character) for the printable bytes, then for the others."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = [(byte, chr(byte)) for byte in printable]
    others = [byte for byte in range(256) if byte not in set(printable)]
    table += [(byte, chr(256 + index)) for index, byte in enumerate(others)]
    return table


def parse_clip(path: str | os.PathLike[str], data: bytes) -> Vocab:
    """The ``Vocab`` of CLIP's merges file content ``data`` (already decompressed)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FormatError(path, f"byte {error.start}", "not UTF-8 text") from None
    lines = text.split("\n")
    if len(lines) < CLIP_MERGES + 1:
        raise FormatError(path, None, f"CLIP uses lines 1 to {CLIP_MERGES} as merges; the file has {len(lines)}"
                          " lines")
    pairs: list[tuple[str, str]] = []
    for number, line in enumerate(lines[1 : CLIP_MERGES + 1], start=1):
        parts = line.split()
        if len(parts) != 2:
            raise FormatError(path, f"line {number + 1}", f"expected a merge 'left right', found {line[:60]!r}")
        pairs.append((parts[0], parts[1]))
    base = [char for _, char in clip_byte_chars()]
    strings = [*base, *(char + CLIP_SUFFIX for char in base), *(left + right for left, right in pairs),
               *CLIP_SPECIALS]
    ids = {string: index for index, string in enumerate(strings)}  # a string listed twice keeps its last id
    known = {index: string for string, index in ids.items()}
    merges: list[tuple[int, int, int]] = []
    for number, (left, right) in enumerate(pairs, start=1):
        for part in (left, right):
            if part not in ids:
                raise FormatError(path, f"line {number + 1}", f"the part {part!r} is not in CLIP's vocabulary")
        merges.append((ids[left], ids[right], ids[left + right]))
    tokens: dict[int, bytes] = {}
    for index, string in sorted(known.items()):
        data_bytes = string.encode("utf-8") if string in CLIP_SPECIALS else token_string_to_bytes(string)
        if data_bytes is None:
            raise FormatError(path, f"token {index}", f"{string[:40]!r} has a character outside GPT-2's byte table")
        tokens[index] = data_bytes
    specials = {name: ids[name] for name in CLIP_SPECIALS}
    return Vocab(
        tokens=tokens,
        merges=merges,
        specials=specials,
        pattern=CLIP_PATTERN,
        kind="clip",
        source=os.fspath(path),
        text_model=TextModel(
            strings=known,
            byte_level=True,
            suffix=CLIP_SUFFIX,
            added_tokens=tuple(AddedToken(name, ids[name], special=True) for name in CLIP_SPECIALS),
            vocabulary_size=len(known),
        ),
    )
