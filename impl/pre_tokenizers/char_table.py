"""The C pre-tokenizer's inputs: which patterns ``impl/_c/_fastenc_scan.h`` writes out by hand, and its table of
code point classes.

For tiktoken's patterns (cl100k, o200k, r50k), Llama 3's and Qwen2's, the pre-tokenizer is written out by hand in C
(``split_pattern`` in ``impl/_c/_fastenc_scan.h``, part of the extension ``impl/_c/_fastenc.c``), reading each
code point's classes of Unicode 16.0 from a table (``char_table``, built with
``bpeproof.impl.pre_tokenizers.unicode_classes``); the tests check it against ``regex.findall`` on the same
classes.  The table is computed with the ``regex`` module over every code point, once per process, and kept on
disk between runs (``bpeproof.impl.io.table_cache``).
"""

from __future__ import annotations

import sys

from bpeproof.impl.io.table_cache import store_table, stored_table
from bpeproof.impl.pre_tokenizers.hf_splits import GPT2_SPLIT, to_oniguruma, translate_oniguruma
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, SPLIT_SEQUENCES
from bpeproof.impl.pre_tokenizers.unicode_classes import UNICODE_VERSION, pin_pattern

__all__ = ["HAND_WRITTEN", "HAND_WRITTEN_STEPS", "SCANNERS", "STEP_SCANNERS", "char_table", "spelt_out"]

_CHAR_TABLE: bytes | None = None
#: What the table depends on besides the regex module (``bpeproof.impl.io.table_cache``).
_DEPENDS = f"unicode-{UNICODE_VERSION}-psm"  # the classes of the second plane: a table without P, S, M is not read

#: The named patterns that ``impl/_c/_fastenc_scan.h`` (part of ``impl/_c/_fastenc.c``) writes out by hand, by
#: their number there.
SCANNERS = {"cl100k": 0, "o200k": 1, "r50k": 2, "llama3": 3, "qwen2": 4}
#: The named sequences of split steps (``patterns.SPLIT_SEQUENCES``) it writes out by hand, by their number.
STEP_SCANNERS = {"deepseek3": 5}

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def spelt_out(source: str) -> str:
    """``source`` with each line break and tab written as its escape: a file may hold either (JSON's ``"\\n"`` is
    the character itself in the expression), and the ``regex`` module reads both alike, except in verbose mode
    (left as it is) and after a backslash (an escaped character, left as it is)."""
    if not any(char in source for char in _ESCAPES) or "(?x" in source:
        return source
    out: list[str] = []
    escaped = False
    for char in source:
        out.append(char if escaped else _ESCAPES.get(char, char))
        escaped = not escaped and char == "\\"
    return "".join(out)


def _spellings() -> dict[str, int]:
    """Every expression a scanner runs, as the ``regex`` module reads it, and the scanner's number: the named
    pattern; the same as a ``tokenizer.json`` written by the project carries it, read back (Oniguruma has no
    ``$`` of the ``regex`` module's meaning, so the anchors are spelt otherwise); and the expression of
    ``ByteLevel`` steps, r50k without its possessive forms and ``\\s++$``.  Each spelling finds the same words
    as its scanner: ``test_hand_written_patterns_are_the_regex`` checks every one against the ``regex`` module."""
    found: dict[str, int] = {}
    for name, which in SCANNERS.items():
        found[spelt_out(PATTERNS[name])] = which
        found[spelt_out(translate_oniguruma(to_oniguruma(PATTERNS[name])))] = which
    found[spelt_out(translate_oniguruma(GPT2_SPLIT))] = SCANNERS["r50k"]
    return found


#: Each expression (in the ``regex`` module's syntax, ``spelt_out``) that a hand-written scanner cuts exactly as,
#: and its number.
HAND_WRITTEN = _spellings()
#: Each sequence of isolated split steps' expressions (``spelt_out``) that a hand-written scanner cuts as, and its
#: number.
HAND_WRITTEN_STEPS = {tuple(map(spelt_out, SPLIT_SEQUENCES[name])): which for name, which in STEP_SCANNERS.items()}


def char_table() -> bytes:
    """For every code point, its classes in Unicode 16.0, as ``split_pattern`` in ``_c/_fastenc_scan.h`` reads them.

    Two planes of 0x110000 bytes.  First plane: bit 0 ``\\p{L}``, bit 1 ``\\p{N}``, bit 2 ``\\s``,
    bits 3–6 which letter of "sdmtlver" (1–8) the code point matches under ``(?i:…)``, 0 for none.
    Second plane: bit 0 ``[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]``, bit 1 ``[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]``
    (o200k's classes), bit 2 ``\\p{P}``, bit 3 ``\\p{S}``, bit 4 ``\\p{M}`` (DeepSeek-V3's).  Computed with the
    regex module on the classes written out as code point ranges of
    ``UNICODE_VERSION`` (``bpeproof.impl.pre_tokenizers.unicode_classes.pin_pattern``), so that the hand-written
    pre-tokenizers classify exactly as the patterns do under ``stand_ins``.  Built once per process, kept on disk.
    """
    global _CHAR_TABLE
    if _CHAR_TABLE is None:
        stored = stored_table("chars", _DEPENDS)
        _CHAR_TABLE = stored if stored is not None and len(stored) == 2 * 0x110000 else None
    if _CHAR_TABLE is None:
        import array

        import regex

        size = 0x110000
        points = array.array("I", range(size))
        if points.itemsize == 4 and sys.byteorder == "little":  # chr of every code point, quickly
            everything = points.tobytes().decode("utf-32-le", "surrogatepass")
        else:  # pragma: no cover - platforms with another int size or byte order
            everything = "".join(map(chr, range(size)))
        planes: list[bytearray] = []
        for classes in (
            ((1, r"\p{L}+"), (2, r"\p{N}+"), (4, r"(?:(?!\p{Cn})\s)+")),
            ((1, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"), (2, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"), (4, r"\p{P}+"),
             (8, r"\p{S}+"), (16, r"\p{M}+")),
        ):
            combined = 0
            for flag, expression in classes:
                layer = bytearray(size)
                # The classes as UNICODE_VERSION has them (explicit ranges), not the regex module's own tables.
                for match in regex.finditer(pin_pattern(expression), everything):
                    layer[match.start() : match.end()] = bytes([flag]) * (match.end() - match.start())
                combined |= int.from_bytes(layer, "little")  # the flags are distinct bits: OR the layers at once
            planes.append(bytearray(combined.to_bytes(size, "little")))
        for index, letter in enumerate("sdmtlver", start=1):
            for match in regex.finditer(f"(?i:{letter})", everything):
                planes[0][match.start()] |= index << 3
        _CHAR_TABLE = bytes(planes[0] + planes[1])
        store_table("chars", _DEPENDS, _CHAR_TABLE)
    return _CHAR_TABLE
