"""llama.cpp's hand-written splitters on the C scanners: for a pre-tokenizer that is one of GPT-2's, Llama 3's or
Qwen2's expressions (``tokenizer.ggml.pre`` ``gpt2``, ``llama-bpe``, ``qwen2`` and the kinds that share them), the
scanner of ``impl/_c/_fastenc_scan.h`` for that expression cuts as llama.cpp's code does when it reads the classes
llama.cpp reads.

llama.cpp runs these expressions by hand-written code (``unicode_regex_split_custom``), which
``bpeproof.impl.pre_tokenizers.llama_cpp`` reproduces as the same expression over the *collapsed* text: ASCII as
it is, every other code point one byte for its class in llama.cpp's own table
(``bpeproof.impl.pre_tokenizers.llama_cpp_unicode``).  A scanner reads each code point's classes from a table
(``char_table``'s layout), so ``llama_cpp_table`` is that table with llama.cpp's classes instead of Unicode 16.0's:
below 128 the ASCII letters, digits and white space (tab to carriage return, space) and the letters of the
contractions in both cases; above, a letter, a number or White_Space as llama.cpp classes it, and nothing of the
contractions (llama.cpp matches them in ASCII only).  The tests check the scanners on this table against the
reproduction.
"""

from __future__ import annotations

from bpeproof.impl.pre_tokenizers import llama_cpp_unicode
from bpeproof.impl.pre_tokenizers.char_table import SCANNERS
from bpeproof.impl.pre_tokenizers.llama_cpp import (
    GPT2_EXPRESSION,
    LLAMA3_EXPRESSION,
    LLAMA_CPP_REGEXES,
    QWEN2_EXPRESSION,
)

__all__ = ["llama_cpp_scanner", "llama_cpp_table"]

_SIZE = 0x110000
#: The first plane's bits (``char_table``): a letter, a number, white space; bits 3–6 which letter of "sdmtlver".
_LETTER, _NUMBER, _SPACE = 1, 2, 4
#: The bits of each class of llama.cpp's table above 127.
_CLASS_BITS = {"w": _SPACE, "1": _NUMBER, "2": _LETTER}

#: The expressions a scanner runs as llama.cpp's hand-written code cuts, and its number.
_SCANNED = {GPT2_EXPRESSION: SCANNERS["r50k"], LLAMA3_EXPRESSION: SCANNERS["llama3"],
            QWEN2_EXPRESSION: SCANNERS["qwen2"]}

_TABLE: bytes | None = None


def llama_cpp_scanner(kind: str) -> int:
    """The number of the scanner that cuts as llama.cpp's pre-tokenizer ``kind`` does on ``llama_cpp_table``, or
    -1 (a kind of several expressions, or of one no scanner runs)."""
    expressions = LLAMA_CPP_REGEXES.get(kind, ())
    return _SCANNED.get(expressions[0], -1) if len(expressions) == 1 else -1


def llama_cpp_table() -> bytes:
    """``char_table``'s two planes with llama.cpp's classes (see the module docstring); the second plane, which
    these scanners do not read, empty.  Made once per process (about 0.1 s)."""
    global _TABLE
    if _TABLE is None:
        plane = bytearray(_SIZE)
        starts: list[int] = []
        bits: list[int] = []
        for entry in llama_cpp_unicode.RANGES.split():
            starts.append(int(entry[:-1], 16))
            bits.append(_CLASS_BITS.get(entry[-1], 0))
        starts.append(_SIZE)
        for start, end, value in zip(starts, starts[1:], bits, strict=False):
            if value:
                plane[start:end] = bytes([value]) * (end - start)
        for code in range(128):
            char = chr(code)
            plane[code] = ((_LETTER if char.isascii() and char.isalpha() else 0)
                           | (_NUMBER if char.isdigit() else 0) | (_SPACE if char in "\t\n\v\f\r " else 0))
        for index, letter in enumerate("sdmtlver", start=1):
            for char in (letter, letter.upper()):
                plane[ord(char)] |= index << 3
        _TABLE = bytes(plane) + bytes(_SIZE)
    return _TABLE
