"""llama.cpp's byte-level BPE tokenizer, as ``llama_tokenize`` runs it on a GGUF file (``tokenizer.ggml.model``
= ``gpt2``): special-token partition, pre-tokenizer, merges.

Encoding a text, llama.cpp

1. cuts the special tokens out of it (``tokenizer_st_partition``): the tokens that are control, user-defined or
   unknown, longest text first; each one's occurrences, left to right, in every fragment not yet cut; a token
   flagged ``lstrip`` / ``rstrip`` also takes the spaces before / after it.  When special tokens are not parsed
   (``parse_special`` false, which ``encode`` without ``allowed_special`` follows) only the user-defined tokens
   are cut (those not also control);
2. pre-tokenizes every other fragment with the regular expressions of its ``tokenizer.ggml.pre``
   (``LLAMA_CPP_REGEXES``, copied from ``src/llama-vocab.cpp``), each one cutting the pieces of the one before
   into its matches and the text between them;
3. merges each piece's bytes (``LlamaCppModel``).

Step 2 is reproduced as llama.cpp computes it, which is not always what the expressions say:

- a few expressions are not run as regular expressions but by hand-written code (``unicode_regex_split_custom``:
  GPT-2's, Llama 3's, Qwen 2's and Qwen 3.5's patterns, digit grouping, newline runs); here each is an
  expression over the *collapsed* text that cuts exactly as that code does;
- the others run in ``std::regex`` (ECMAScript).  When one uses ``\\p{..}``, llama.cpp first replaces every
  code point above 127 by one byte for its class (letter, number, punctuation, mark, symbol, White_Space as
  0x0B, anything else 0xD0, from llama.cpp's own Unicode table, ``bpeproof.impl.pre_tokenizers.llama_cpp_unicode``) and
  each
  ``\\p{..}`` by a class of that byte and the ASCII characters of the category.  So ``\\p{Lu}`` and ``\\p{Ll}``
  both mean "any letter" above 127, and a letter is never upper- or lower-case there.  Without ``\\p{..}`` the
  expression runs on the code points, the White_Space ones above 127 replaced by 0x0B.  Either way ``\\s``,
  ``\\d`` and ``\\w`` are ASCII only, ``$`` is the end of the fragment, and an empty match is followed by a
  non-empty match at the same place or a search one character on, as ``std::regex_iterator`` does.

The pre-tokenizer names llama.cpp does not run with the GPT-2 byte table (Gemma 4's, Sarvam's, the whitespace
splitter) and Kimi-K2's (hand-written code not reproduced here) are refused.
"""

from __future__ import annotations

import bisect
import functools
import operator
from collections.abc import Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any

import regex

from bpeproof.impl.pre_tokenizers import llama_cpp_unicode as _llama_cpp_unicode

try:
    from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]
except ImportError:  # the C extension is optional: the Python loop gives the same ids
    _fastenc = None
from bpeproof.impl import encoder as _encoder_module
from bpeproof.impl.formats import gguf_file
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.merge_loop import merge
from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer
from bpeproof.impl.special_tokens import AllowedSpecial
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError, InvalidTextError

__all__ = [
    "LLAMA_CPP_REGEXES",
    "LlamaCppModel",
    "LlamaCppPreTokenizer",
    "LlamaCppTokenizer",
    "collapse",
    "load_gguf_tokenizer",
]

# ---------------------------------------------------------------------------------------------------------
# Code point classes
# ---------------------------------------------------------------------------------------------------------

#: The byte llama.cpp puts for each class of ``bpeproof.impl.pre_tokenizers.llama_cpp_unicode``
# (``unicode_regex_split``).
_CLASS_CHAR = {"w": "\x0b", "0": "\xd0", "1": "\xd1", "2": "\xd2", "3": "\xd3", "4": "\xd4", "5": "\xd5"}


@functools.cache
def _ranges() -> tuple[list[int], list[str]]:
    starts: list[int] = []
    classes: list[str] = []
    for entry in _llama_cpp_unicode.RANGES.split():
        starts.append(int(entry[:-1], 16))
        classes.append(entry[-1])
    return starts, classes


def code_point_class(code: int) -> str:
    """The class of a code point above 127 in llama.cpp's table (``pre_tokenizers.llama_cpp_unicode``)."""
    starts, classes = _ranges()
    return classes[bisect.bisect_right(starts, code) - 1]


class _Translation(dict[int, str]):
    """A ``str.translate`` table filled on demand: ASCII stays, other code points as ``convert`` says."""

    def __init__(self, convert: Any) -> None:
        super().__init__()
        self._convert = convert

    def __missing__(self, code: int) -> str:
        value: str = chr(code) if code < 128 else self._convert(code)
        self[code] = value
        return value


_COLLAPSE = _Translation(lambda code: _CLASS_CHAR[code_point_class(code)])
_WIDE = _Translation(lambda code: "\x0b" if code_point_class(code) == "w" else chr(code))


def collapse(text: str) -> str:
    """llama.cpp's collapsed text: ASCII kept, every other code point replaced by its class byte."""
    return text if text.isascii() else text.translate(_COLLAPSE)


def _widen(text: str) -> str:
    """The code points ``std::wregex`` sees: White_Space above 127 replaced by 0x0B."""
    return text if text.isascii() else text.translate(_WIDE)


# ---------------------------------------------------------------------------------------------------------
# llama.cpp's expressions (src/llama-vocab.cpp, llm_tokenizer_bpe), by pre-tokenizer kind
# ---------------------------------------------------------------------------------------------------------

_CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
_GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
_LLAMA3_ORIGINAL = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
                    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
_LLAMA3 = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
           "|\\s+(?!\\S)|\\s+")
_QWEN2 = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
          "|\\s+(?!\\S)|\\s+")
_QWEN35 = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*"
           "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
_NEWLINES = "[^\\n]+|[\\n]+"
_AFMOE_DIGITS = "\\p{AFMoE_digits}"
_TINY_AYA_DIGITS = "\\d{1,3}(?=(?:\\d{3})*\\b)"
_KIMI_K2 = "\\p{Han}+"
_FINNISH = ' ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+'
_CJK_DEEPSEEK = '[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+'
_DEEPSEEK3 = ("[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
              "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+")
_UPPER_LOWER = ("[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
                + _CONTRACTIONS + "?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
                "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*" + _CONTRACTIONS + "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*"
                "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
_GPT4O = ("[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+" + _CONTRACTIONS
          + "?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*" + _CONTRACTIONS
          + "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")

#: The expressions llama.cpp applies for each pre-tokenizer kind (``bpeproof.impl.formats.gguf_file.PRE_TYPES``), in
#: order, as its source spells them.
LLAMA_CPP_REGEXES: dict[str, tuple[str, ...]] = {
    "llama3": (_LLAMA3,),
    "jais2": (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
              "|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)"
              "|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}",),
    "dbrx": (_LLAMA3,),
    "smaug": (_LLAMA3,),
    "deepseek-llm": (
        '[\r\n]',
        '\\s?[A-Za-z\xb5\xc0-\xd6\xd8-\xf6\xf8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373'
        '\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481'
        '\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-'
        '\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57'
        '\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-'
        '\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-'
        '\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184'
        '\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-'
        '\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-'
        '\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2'
        '\U000118a0-\U000118df\U0001e900-\U0001e943]+',
        '\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+',
        '\\s+$',
        '[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+',
        "\\p{N}+",
    ),
    **{kind: ("\\p{N}{1,3}", '[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+', _DEEPSEEK3)
       for kind in ("deepseek3-llm", "hunyuan-dense", "joyai-llm", "hy-v4")},
    "spark2_5": ("\\p{N}{1,3}", '[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+',
                 "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
                 "| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+", "\\p{N}"),
    "youtu": ('[\uac00-\ud7a3\u3131-\u318e]+|[\uff01\u2026\u201c\u201d\u2018\u2019\u2014\uff1a\uff1b\uff0c'
              '\u3001-\u303f\ufe30-\ufe4f]+|[\u3105-\u312f]+|[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+',
              "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
              + _CONTRACTIONS + "?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
              "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*" + _CONTRACTIONS + "?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*"
              "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    "deepseek-coder": ("[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", _CJK_DEEPSEEK, "\\p{N}"),
    "falcon": ("[\\p{P}\\$\\+<=>\\^~\\|`]+", _GPT2, "[0-9][0-9][0-9]"),
    **{kind: ("\\p{N}", _GPT2)
       for kind in ("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva", "mellum2")},
    **{kind: (_GPT2,) for kind in ("gpt2", "mpt", "olmo", "jais", "trillion", "granite-docling")},
    **{kind: (_QWEN2,) for kind in ("stablelm2", "qwen2", "hunyuan", "solar-open")},
    "qwen35": (_QWEN35,),
    **{kind: (_FINNISH,) for kind in ("poro", "bloom", "gpt3-finnish")},
    "chatglm4": (_LLAMA3,),
    "viking": (_FINNISH, "\\p{N}"),
    "tekken": ("[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?"
               "((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+"
               "|\\s+(?!\\S)|\\s+",),
    "chameleon": ("<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
                  "[\\p{P}!-/:-@\\[-`{-~]", _GPT2),
    "gpt4o": (_GPT4O,),
    "minimax-m2": (_GPT4O,),
    "granite-emb-multi": (
        "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+" + _CONTRACTIONS
        + "?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*" + _CONTRACTIONS
        + "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",),
    "tiny-aya": (_TINY_AYA_DIGITS, _UPPER_LOWER),
    "kimi-k2": (_KIMI_K2,),
    "superbpe": ("\\p{N}+", "(?=(\\d{3})+(?!\\d))"),
    "bailingmoe": ("'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
                   "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",),
    "seed-coder": (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+"
                   "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",),
    "ufakzeka": ("[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",),
    "grok-2": (_QWEN2,),
    "afmoe": (_AFMOE_DIGITS,
              '[\u4e00-\u9fff\u3400-\u4dbf\u8c48-\ufaff\u3040-\u309f\u30a0-\u30ff\uff65-\uff9f\u2f00-\u2fdf'
              '\u0e40-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f\uaa60-\uaa7f\ua9e0-\ua9ff\uac00-\ud7af'
              '\u1100-\u11ff]+',
              "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
              "| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    "laguna": (_NEWLINES, _QWEN2),
    "exaone-moe": (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}"
                   "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",),
    "minicpm5": ("\\p{N}{1,3}", _CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                 "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    "default": ("[\\p{P}\\$\\+<=>\\^~\\|]+", _GPT2, "\\p{N}+", "[0-9][0-9][0-9]"),
}

#: Pre-tokenizer kinds refused, with the reason.
UNSUPPORTED_PRE = {
    "gemma4": "works on raw UTF-8 with spaces written as U+2581, not on GPT-2's byte table",
    "sarvam-moe": "works on raw UTF-8 with spaces written as U+2581, not on GPT-2's byte table",
    "whitespace": "works on raw UTF-8, not on GPT-2's byte table",
    "kimi-k2": "is hand-written code in llama.cpp that this engine does not reproduce",
}

# The classes of the collapsed text, as regular expression class contents (ASCII members included).
_L = "A-Za-z\xd2"
_N = "0-9\xd1"
_M = "\xd4"
_S = "\\t-\\r "  # llama.cpp's White_Space below 128 (0x09..0x0D, space) and 0x0B, the collapsed White_Space
_CONTRACTION_CASES = "'(?:[sS]|[tT]|[mM]|[dD]|[rR][eE]|[vV][eE]|[lL][lL])"

#: Expressions over the collapsed text that cut exactly as llama.cpp's hand-written splitters do (their
#: ``_add_token`` steps in order, the last alternative being "one character": ``no matches``).
_CUSTOM = {
    _GPT2: f"'(?:[stmd]|re|ve|ll)| ?[{_L}]+| ?[{_N}]+| ?[^{_S}{_L}{_N}]+|[{_S}]+(?![^{_S}])|[{_S}]+|[\\s\\S]",
    _LLAMA3: f"{_CONTRACTION_CASES}|[^\\r\\n{_L}{_N}]?[{_L}]+|[{_N}]{{1,3}}| ?[^{_S}{_L}{_N}]+[\\r\\n]*"
             f"|[{_S}]*[\\r\\n]+|[{_S}]+(?![^{_S}])|[{_S}]+|[\\s\\S]",
    _QWEN2: f"{_CONTRACTION_CASES}|[^\\r\\n{_L}{_N}]?[{_L}]+|[{_N}]| ?[^{_S}{_L}{_N}]+[\\r\\n]*"
            f"|[{_S}]*[\\r\\n]+|[{_S}]+(?![^{_S}])|[{_S}]+|[\\s\\S]",
    _QWEN35: f"{_CONTRACTION_CASES}|[^\\r\\n{_L}{_N}{_M}]?[{_L}{_M}]+|[{_N}]| ?[^{_S}{_L}{_M}{_N}]+[\\r\\n]*"
             f"|[{_S}]*[\\r\\n]+|[{_S}]+(?![^{_S}])|[{_S}]+|[\\s\\S]",
    _NEWLINES: "[^\\n]+|\\n+",
}
_CUSTOM[_LLAMA3_ORIGINAL] = _CUSTOM[_LLAMA3]

# unicode_regex_split's replacement of each \p{..} in a collapsed expression: its class byte and ASCII members.
_UCAT = {"\\p{N}": "number", "\\p{L}": "letter", "\\p{P}": "punctuation", "\\p{M}": "mark", "\\p{S}": "symbol",
         "\\p{Lu}": "letter", "\\p{Ll}": "letter", "\\p{Lt}": "letter", "\\p{Lm}": "letter", "\\p{Lo}": "letter"}
_UCAT_BYTE = {"number": "\xd1", "letter": "\xd2", "punctuation": "\xd3", "mark": "\xd4", "symbol": "\xd5"}
_UCAT_ASCII = {"number": "0-9", "letter": "A-Za-z", "punctuation": "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}", "mark": "",
               "symbol": "\\$\\+<->^`\\|\\~"}


def _uses_categories(expression: str) -> bool:
    return any(name in expression for name in _UCAT)


def collapse_expression(expression: str) -> str:
    """The expression llama.cpp hands to ``std::regex`` for the collapsed text (its loop, copied)."""
    out: list[str] = []
    inside = False
    i = 0
    n = len(expression)
    while i < n:
        char = expression[i]
        if char == "[" and (i == 0 or expression[i - 1] != "\\"):
            out.append("[")
            inside = True
            i += 1
            continue
        if inside and char == "]" and expression[i - 1] != "\\":
            out.append("]")
            inside = False
            i += 1
            continue
        if char == "\\" and i + 3 < n and expression[i + 1] == "p" and expression[i + 2] == "{":
            closing = expression.find("}", i + 3)
            if closing != -1 and closing <= i + 10:
                name = expression[i : closing + 1]
                if name in _UCAT:
                    category = _UCAT[name]
                    body = _UCAT_BYTE[category] + _UCAT_ASCII[category]
                    out.append(body if inside else f"[{body}]")
                    i = closing + 1
                    continue
        out.append(char)
        i += 1
    return "".join(out)


def ecmascript_to_regex(expression: str) -> str:
    """An ECMAScript expression (``std::regex``, no multiline) in the ``regex`` module's syntax, to compile with
    ``regex.ASCII``: ``$`` → ``\\Z``, ``.`` → not a line terminator, ``[`` inside a class escaped."""
    out: list[str] = []
    in_class = False
    i = 0
    n = len(expression)
    while i < n:
        char = expression[i]
        if char == "\\" and i + 1 < n:
            out.append(expression[i : i + 2])
            i += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
                out.append(char)
            elif char == "[":
                out.append("\\[")
            else:
                out.append(char)
        elif char == "[":
            # ECMAScript's empty class matches nothing and "[^]" anything; "]" is never a literal first member.
            if expression.startswith("[]", i) or expression.startswith("[^]", i):
                negated = expression[i + 1] == "^"
                out.append("[\\s\\S]" if negated else "(?!)")
                i += 3 if negated else 2
                continue
            in_class = True
            if expression.startswith("[^", i):
                out.append("[^")
                i += 2
                continue
            out.append(char)
        elif char == "$":
            out.append("\\Z")
        elif char == ".":
            out.append("[^\\n\\r\\u2028\\u2029]")
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _sees_outside(expression: str) -> bool:
    """True when an ECMAScript expression looks at the edges of the searched range: ``^``, ``\\b`` or
    ``\\B`` outside a class, or a look-behind."""
    in_class = False
    i = 0
    while i < len(expression):
        char = expression[i]
        if char == "\\":
            if not in_class and expression[i + 1 : i + 2] in ("b", "B"):
                return True
            i += 2
            continue
        if in_class:
            in_class = char != "]"  # in ECMAScript the first "]" of a class closes it, even right after "["
        elif char == "[":
            in_class = True
            if expression.startswith("[^", i):
                i += 1
        elif char == "^" or expression.startswith("(?<", i):
            return True
        i += 1
    return False


class _Step:
    """One of llama.cpp's expressions: cuts a fragment of the text into pieces as llama.cpp does."""

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.custom = expression in _CUSTOM or expression in (_AFMOE_DIGITS, _TINY_AYA_DIGITS)
        self.collapsed = self.custom or _uses_categories(expression)
        self._whole_fragment = False
        if expression in _CUSTOM:
            self._compiled = regex.compile(_CUSTOM[expression], regex.ASCII)
        elif expression in (_AFMOE_DIGITS, _TINY_AYA_DIGITS):
            self._compiled = regex.compile(f"[{_N}]+", regex.ASCII)
        else:
            source = collapse_expression(expression) if self.collapsed else expression
            if self.collapsed and not expression.isascii():
                raise ValueError(f"llama.cpp refuses {expression!r}: categories and non-ASCII characters together")
            translated = ecmascript_to_regex(source)
            self._whole_fragment = _sees_outside(source)
            try:
                self._compiled = regex.compile(translated, regex.ASCII)
                self._nonnull = regex.compile(f"(?:{translated})(?!\\G)", regex.ASCII)
            except regex.error as error:
                raise ValueError(f"llama.cpp's expression {expression!r} does not compile: {error}") from None

    def cut(self, view: str, start: int, end: int) -> list[tuple[int, int]]:
        """The pieces (absolute spans, possibly empty) of the fragment ``view[start:end]``."""
        if self.expression in (_AFMOE_DIGITS, _TINY_AYA_DIGITS):
            return self._digits(view, start, end)
        if self.custom:
            return [match.span() for match in self._compiled.finditer(view, start, end)]
        if self._whole_fragment:
            # ^, \b or a look-behind: the fragment must be the whole string, as std::regex_iterator sees it.
            fragment, offset, first_position, stop = view[start:end], start, 0, end - start
        else:
            fragment, offset, first_position, stop = view, 0, start, end
        spans: list[tuple[int, int]] = []
        previous = first_position
        for first, last in self._iterate(fragment, first_position, stop):
            if first > previous:
                spans.append((offset + previous, offset + first))
            spans.append((offset + first, offset + last))
            previous = last
        if previous < stop:
            spans.append((offset + previous, end))
        return spans

    def cut_all(self, view: str, fragments: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """The non-empty pieces of every fragment, in order: ``cut`` of each, empty pieces left out (an empty
        piece gives no token and cuts nothing further), a one-character fragment kept as it is (whatever an
        expression matches in it, its only non-empty piece is itself)."""
        out: list[tuple[int, int]] = []
        append = out.append
        if self.expression in (_AFMOE_DIGITS, _TINY_AYA_DIGITS) or self._whole_fragment:
            for start, end in fragments:
                out += [span for span in self.cut(view, start, end) if span[1] > span[0]]
            return out
        finditer = self._compiled.finditer
        if self.custom:
            for start, end in fragments:
                if end - start == 1:
                    append((start, end))
                else:
                    out += [match.span() for match in finditer(view, start, end)]
            return out
        for start, end in fragments:
            if end - start == 1:
                append((start, end))
                continue
            mark = len(out)
            previous = start
            for match in finditer(view, start, end):
                first, last = match.span()
                if first == last:  # std::regex_iterator goes on differently after an empty match
                    del out[mark:]
                    out += [span for span in self.cut(view, start, end) if span[1] > span[0]]
                    break
                if first > previous:
                    append((previous, first))
                append((first, last))
                previous = last
            else:
                if previous < end:
                    append((previous, end))
        return out

    def _iterate(self, text: str, start: int, stop: int) -> Iterator[tuple[int, int]]:
        """The matches ``std::regex_iterator`` yields over ``text[start:stop]`` (searched with pos / endpos).

        Up to the first empty match ``finditer`` finds the same; after one, std::regex_iterator first tries a
        non-empty match at the same place, else searches from one character on."""
        compiled = self._compiled
        match = None
        for match in compiled.finditer(text, start, stop):
            first, last = match.span()
            yield first, last
            if first == last:
                break
        else:
            return
        while match is not None:
            first, last = match.span()
            if last > first:
                match = compiled.search(text, last, stop)
            elif last == stop:
                return
            else:
                again = self._nonnull.match(text, last, stop)
                match = again if again is not None else compiled.search(text, last + 1, stop)
            if match is not None:
                yield match.span()

    def _digits(self, view: str, start: int, end: int) -> list[tuple[int, int]]:
        """``unicode_regex_split_custom_afmoe``: each run of numbers cut into a leading 1 or 2 and then threes,
        the characters before a run joined to its first piece, the rest of the fragment one piece."""
        spans: list[tuple[int, int]] = []
        previous = start
        for match in self._compiled.finditer(view, start, end):
            first, last = match.span()
            current = first + (last - first) % 3
            if current > first:
                spans.append((previous, current))
                previous = current
            while current < last:
                current += 3
                spans.append((previous, current))
                previous = current
        if previous < end:
            spans.append((previous, end))
        return spans


class LlamaCppPreTokenizer(PreTokenizer):
    """llama.cpp's pre-tokenizer for one kind (``LLAMA_CPP_REGEXES``): its expressions applied in turn, each to
    every piece of the one before, as ``unicode_regex_split`` computes them (see the module docstring).

    It has no ``SplitStep``s (``steps`` is empty): the expressions do not mean here what they mean to the
    ``regex`` module.  ``expressions`` lists them as llama.cpp spells them.
    """

    __slots__ = ("_collapse", "_kind", "_split_steps")

    def __init__(self, kind: str) -> None:
        super().__init__(())
        if kind in UNSUPPORTED_PRE:
            raise ValueError(f"llama.cpp's pre-tokenizer {kind!r} {UNSUPPORTED_PRE[kind]}")
        if kind not in LLAMA_CPP_REGEXES:
            raise ValueError(f"llama.cpp has no pre-tokenizer {kind!r}")
        self._kind = kind
        self._split_steps = tuple(_Step(expression) for expression in LLAMA_CPP_REGEXES[kind])
        self._collapse = any(step.collapsed for step in self._split_steps)

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def expressions(self) -> tuple[str, ...]:
        return LLAMA_CPP_REGEXES[self._kind]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LlamaCppPreTokenizer) and other._kind == self._kind

    def __hash__(self) -> int:
        return hash(("llama.cpp", self._kind))

    def __repr__(self) -> str:
        return f"LlamaCppPreTokenizer({self._kind!r})"

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The pieces of ``text`` as (start, end) code point offsets, the empty ones left out."""
        if not text:
            return []
        collapsed = collapse(text) if self._collapse else text
        wide: str | None = None
        spans = [(0, len(text))]
        for step in self._split_steps:
            if step.collapsed:
                view = collapsed
            else:
                if wide is None:
                    wide = _widen(text)
                view = wide
            spans = step.cut_all(view, spans)
        return spans

    def split(self, text: str) -> list[str]:
        return [text[start:end] for start, end in self.spans(text)]

    def to_json_value(self) -> list[dict[str, Any]]:
        raise BPEValueError("llama.cpp's pre-tokenizer is not a list of split steps; it cannot be saved as one")



class LlamaCppModel:
    """llama.cpp's BPE (``llm_tokenizer_bpe_session``) on the tokens of a GGUF file, over the one merge loop
    (``impl.merge_loop.merge``, or its C version) like the models of ``impl.models``; ``semantics`` "llama.cpp".

    ``lookup``: bytes → id of every token merging can form (llama.cpp looks pieces up among all tokens, the
    special ones too).  ``merges``, either

    - (left, right) byte pairs in rank order: the general semantics.  A word starts as its bytes; the adjacent
      pair listed first is joined (leftmost first), whatever the joined bytes are; at the end each piece is
      its token or, when it has none, the tokens of its bytes one by one, a byte without a token left out;
    - or (a, b, c) id triples in rank order, one per pair, ``lookup``'s bytes of a and b joining into c's, for
      a file where no other merge can ever apply (the caller's claim, as
      ``bpeproof.impl.formats.gguf_file.byte_level_tables`` establishes it): the same ids from a pair table over ids,
      run in C when the extension is built.  A byte without a token stays in the word as a unit that joins
      nothing and gives no id, as in llama.cpp.

    ``table``: id → bytes of the ids the model reports as its own (a tokenizer's special tokens are left out
    and decode by their text).  ``ignore_merges``: a word that is itself a token is that token.
    """

    semantics = "llama.cpp"

    #: The id the C loop reports for a byte without a token; ``LlamaCppTokenizer`` drops it.
    BARRIER = -1

    def __init__(
        self,
        lookup: Mapping[bytes, int],
        merges: Sequence[tuple[bytes, bytes]] | Sequence[tuple[int, int, int]],
        table: Mapping[int, bytes],
        *,
        ignore_merges: bool = False,
    ) -> None:
        if not isinstance(lookup, Mapping) or not isinstance(table, Mapping):
            raise BPETypeError("lookup and table must be mappings")
        self._lookup = dict(lookup)
        self._table = dict(table)
        self._ignore_merges = ignore_merges
        self._units: list[int | None] = [self._lookup.get(bytes([byte])) for byte in range(ALPHABET_SIZE)]
        self._ranks: dict[tuple[bytes, bytes], int] = {}
        self._pairs: dict[int, int] | None = None
        self._triples: tuple[list[int], list[int], list[int]] | None = None
        self._fast: Any = None
        self._use_c = _encoder_module.USE_C_LOOP and _fastenc is not None
        if merges and len(merges[0]) == 3:
            a_ids, b_ids, c_ids = (list(column) for column in zip(*merges, strict=True))
            self._setup_pairs(a_ids, b_ids, c_ids, checked=False)
        else:
            for rank, pair in enumerate(merges):
                if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(x, bytes) for x in pair)):
                    raise BPETypeError(f"merge {rank} must be a (left, right) pair of bytes, not {pair!r}")
                self._ranks.setdefault(pair, rank)  # type: ignore[arg-type]

    @classmethod
    def from_columns(cls, lookup: Mapping[bytes, int], a_ids: list[int], b_ids: list[int], c_ids: list[int],
                     table: Mapping[int, bytes], *, ignore_merges: bool = False,
                     checked: bool = False) -> LlamaCppModel:
        """The model of the id triples ``zip(a_ids, b_ids, c_ids)``; ``checked``: the caller has made sure that
        they are distinct pairs of tokens whose bytes join into the result's (``byte_level_tables`` does)."""
        model = cls(lookup, [], table, ignore_merges=ignore_merges)
        model._setup_pairs(a_ids, b_ids, c_ids, checked=checked)
        return model

    def _setup_pairs(self, a_ids: list[int], b_ids: list[int], c_ids: list[int], *, checked: bool) -> None:
        if not checked:
            by_id = dict(zip(self._lookup.values(), self._lookup.keys(), strict=True))
            try:
                joined = list(map(operator.add, map(by_id.__getitem__, a_ids), map(by_id.__getitem__, b_ids)))
                valid = len(a_ids) == len(b_ids) == len(c_ids) and joined == list(map(by_id.__getitem__, c_ids))
            except (KeyError, TypeError):
                valid = False
            if not valid:
                raise BPEValueError("merge triples must be tokens whose bytes join into the result token's")
        # The units: ids of the tokens, and one more for a byte without a token (it joins nothing).
        self._barrier = max(self._lookup.values(), default=0) + 1
        stride = self._stride = self._barrier + 1
        self._unit_of = [self._barrier if unit is None else unit for unit in self._units]
        keys = map(operator.add, map(operator.mul, a_ids, repeat(stride)), b_ids)
        codes = map(operator.add, map(operator.mul, range(len(a_ids)), repeat(stride)), c_ids)
        self._pairs = dict(zip(keys, codes, strict=True))
        if not checked and len(self._pairs) != len(a_ids):
            raise BPEValueError("merge triples must be distinct pairs (one line per pair, the first one)")
        self._triples = (a_ids, b_ids, c_ids)

    @property
    def vocabulary_size(self) -> int:
        return len(self._table)

    @property
    def has_barrier(self) -> bool:
        """True when a byte that can occur in a piece has no token: the C loop then reports ``BARRIER`` for it."""
        return self._fast is not None and any(
            self._units[byte] is None for byte in range(ALPHABET_SIZE) if byte not in _NEVER_IN_UTF8)

    def token_table(self) -> dict[int, bytes]:
        return dict(self._table)

    def encode_word(self, word: bytes) -> tuple[int, ...]:
        lookup = self._lookup
        if self._ignore_merges:
            whole = lookup.get(word)
            if whole is not None:
                return (whole,)
        pairs = self._pairs
        if pairs is not None:
            stride = self._stride
            get = pairs.get
            unit_of = self._unit_of
            ids = merge([unit_of[byte] for byte in word], lambda x, y: get(x * stride + y),
                        lambda x, y, code: code % stride)
            barrier = self._barrier
            return tuple(token for token in ids if token != barrier)
        ranks = self._ranks.get
        parts = merge([word[i : i + 1] for i in range(len(word))], lambda x, y: ranks((x, y)),
                      lambda x, y, code: x + y)
        out: list[int] = []
        for part in parts:
            token = lookup.get(part)
            if token is not None:
                out.append(token)
                continue
            out += [unit for unit in (self._units[byte] for byte in part) if unit is not None]
        return tuple(out)

    def c_merger(self) -> Any:
        """The C loop over the pair table (``_fastenc.Merger.from_pairs``), None for the general semantics."""
        if self._fast is not None or self._triples is None or not self._use_c:
            return self._fast
        ordered = sorted({token for token in self._lookup.values()} | {self._barrier})
        dense_of = [-1] * (self._barrier + 1)
        for index, token in enumerate(ordered):
            dense_of[token] = index
        a_ids, b_ids, c_ids = self._triples
        outputs: list[int] = [self.BARRIER if token == self._barrier else token for token in ordered]
        whole: list[bytes | None] = [None] * len(ordered)
        if self._ignore_merges:
            for data, token in self._lookup.items():
                whole[dense_of[token]] = data
        self._fast = _fastenc.Merger.from_pairs(
            [dense_of[unit] for unit in self._unit_of], list(map(dense_of.__getitem__, a_ids)),
            list(map(dense_of.__getitem__, b_ids)), range(len(a_ids)), list(map(dense_of.__getitem__, c_ids)),
            outputs, whole)
        return self._fast


#: Bytes no UTF-8 encoding of a code point contains (llama.cpp's pieces are always such encodings).
_NEVER_IN_UTF8 = frozenset((0xC0, 0xC1, *range(0xF5, 0x100)))

# ---------------------------------------------------------------------------------------------------------
# The tokenizer
# ---------------------------------------------------------------------------------------------------------

#: The bytes C's ``isspace`` is true for (the C locale): what ``lstrip`` / ``rstrip`` take.
_C_SPACE = " \t\n\v\f\r"


class _Partition:
    """The special tokens cut out of the text, in llama.cpp's order (longest text in bytes first)."""

    def __init__(self, tokens: list[tuple[str, int, bool, bool]]) -> None:
        self.tokens = sorted(tokens, key=lambda item: -len(item[0].encode("utf-8")))
        self._any: Any = None
        self._prefixes: dict[str, list[str]] = {}

    def ambiguity(self) -> str | None:
        """Why llama.cpp's result may depend on the order it gives tokens of equal length (``std::sort`` is not
        stable): two of them can overlap, or one strips spaces another starts or ends with; None if none."""
        groups: dict[int, list[tuple[str, int, bool, bool]]] = {}
        for item in self.tokens:
            groups.setdefault(len(item[0].encode("utf-8")), []).append(item)
        for group in groups.values():
            if len(group) < 2:
                continue
            prefixes: dict[str, str] = {}
            for text, _, _, _ in group:
                for cut in range(1, len(text)):
                    prefixes.setdefault(text[:cut], text)
            for text, _, _, _ in group:
                for cut in range(1, len(text)):
                    other = prefixes.get(text[cut:])
                    if other is not None and other != text:
                        return f"the special tokens {text!r} and {other!r} have the same length and can overlap"
            lstrip = any(item[2] for item in group)
            rstrip = any(item[3] for item in group)
            for text, _, _, _ in group:
                if (rstrip and text[:1] in _C_SPACE and text[:1]) or (lstrip and text[-1:] in _C_SPACE and text[-1:]):
                    return f"the special token {text!r} starts or ends with a space another one of its length strips"
        return None

    def _occurring(self, text: str) -> list[tuple[str, int, bool, bool]]:
        """The tokens that occur in ``text``, in order (a token absent from the text cuts nothing).  A long text
        is scanned once for all of them (the longest token at each position; a token that is a proper prefix of
        one found is looked for on its own), not once per token."""
        tokens = self.tokens
        if len(tokens) <= 16:
            return [item for item in tokens if item[0] in text]
        if len(text) < 4096:
            characters = set(text)
            return [item for item in tokens if item[0][0] in characters and item[0] in text]
        if self._any is None:
            texts = [item[0] for item in tokens]
            self._any = regex.compile(r"\L<tokens>", tokens=texts)
            known = set(texts)
            self._prefixes = {t: [t[:cut] for cut in range(1, len(t)) if t[:cut] in known] for t in texts}
        found = {match.group() for match in self._any.finditer(text, overlapped=True)}
        found |= {prefix for token in list(found) for prefix in self._prefixes[token] if prefix in text}
        return [item for item in tokens if item[0] in found]

    def cut(self, text: str) -> list[str | int]:
        """``tokenizer_st_partition``: the text as raw fragments (str) and special token ids (int), in order."""
        fragments: list[str | int] = [text] if text else []
        for token_text, token, lstrip, rstrip in self._occurring(text):
            if not any(isinstance(fragment, str) and token_text in fragment for fragment in fragments):
                continue
            out: list[str | int] = []
            for fragment in fragments:
                if not isinstance(fragment, str) or token_text not in fragment:
                    out.append(fragment)
                    continue
                base = 0
                stop = len(fragment)
                size = len(token_text)
                while True:
                    found = fragment.find(token_text, base, stop)
                    if found < 0:
                        if stop > base:
                            out.append(fragment[base:stop])
                        break
                    left = found
                    if lstrip:
                        while left > base and fragment[left - 1] in _C_SPACE:
                            left -= 1
                    if left > base:
                        out.append(fragment[base:left])
                    out.append(token)
                    base = found + size
                    if base >= stop:
                        break
                    if rstrip:
                        while base < stop and fragment[base] in _C_SPACE:
                            base += 1
            fragments = out
        return fragments


class LlamaCppTokenizer(Tokenizer):
    """A tokenizer that encodes as llama.cpp's ``llama_tokenize`` does on a byte-level BPE GGUF file, without
    the BOS / EOS it adds when asked to add special tokens (``add_special``), as its test vectors are made.

    ``encode(text)`` is ``llama_tokenize(text, add_special=false, parse_special=false)``: user-defined tokens
    are cut out of the text, control tokens are not.  ``encode(text, allowed_special="all")`` is
    ``parse_special=true``: every control, user-defined and unknown token is cut out; a collection of names
    cuts those control tokens and the user-defined ones.  ``special_tokens`` are the control, user-defined and
    unknown tokens (text → id); they decode to their text.
    """

    _partitions: dict[frozenset[str] | None, _Partition]
    _barrier: bool
    _special_flags: dict[str, tuple[int, bool, bool, bool]]
    gguf: gguf_file.GGUFTokenizer

    def __init__(self, tokenizer: gguf_file.GGUFTokenizer, *, cache_size: int = 1 << 18) -> None:
        """The tokenizer of a GGUF file read by ``bpeproof.impl.formats.gguf_file.read_gguf_tokenizer``; ``FormatError``
        for a pre-tokenizer not reproduced, or special tokens whose cutting llama.cpp leaves unspecified."""
        kind = tokenizer.pre_type
        if kind is None:
            raise FormatError(tokenizer.path, "key 'tokenizer.ggml.model'", "not a byte-level BPE tokenizer")
        try:
            pretokenizer = LlamaCppPreTokenizer(kind)
        except ValueError as error:
            raise FormatError(tokenizer.path, "key 'tokenizer.ggml.pre'", str(error)) from None
        tables = gguf_file.byte_level_tables(tokenizer)
        if tables.merge_ids is not None:
            model = LlamaCppModel.from_columns(tables.lookup, *tables.merge_ids, tables.decoded,
                                               ignore_merges=tokenizer.ignore_merges, checked=True)
        else:
            model = LlamaCppModel(tables.lookup, gguf_file.merge_bytes(tokenizer), tables.decoded,
                                  ignore_merges=tokenizer.ignore_merges)
        specials = tokenizer.special_tokens
        self._setup(model, "words", specials, cache_size, pretokenizer)
        self.gguf = tokenizer
        self._special_flags = {
            text: (token, tokenizer.parsed_always(token), bool(tokenizer.attrs[token] & gguf_file.LSTRIP),
                   bool(tokenizer.attrs[token] & gguf_file.RSTRIP))
            for text, token in specials.items()
        }
        self._partitions = {}
        self._barrier = model.has_barrier
        problem = self._partition(None).ambiguity()
        if problem is not None:
            raise FormatError(tokenizer.path, "key 'tokenizer.ggml.token_type'",
                              f"{problem}: llama.cpp's result then depends on its unspecified sort order")

    @classmethod
    def from_gguf(cls, tokenizer: gguf_file.GGUFTokenizer, *, cache_size: int = 1 << 18) -> LlamaCppTokenizer:
        """``LlamaCppTokenizer(tokenizer)``."""
        return cls(tokenizer, cache_size=cache_size)

    @property
    def always_parsed(self) -> dict[str, int]:
        """The special tokens cut out of the text even without ``allowed_special`` (llama.cpp's user-defined
        tokens), text → id."""
        return {text: flags[0] for text, flags in self._special_flags.items() if flags[1]}

    def _ordinary(self, text: str) -> list[int]:
        ids = super()._ordinary(text)
        if self._barrier:
            return [token for token in ids if token != LlamaCppModel.BARRIER]
        return ids

    def _sequential(self, what: str) -> Any:
        raise BPEValueError(f"{what} needs the article's sequential semantics; this tokenizer runs llama.cpp's BPE,"
                            " which no rule list reproduces in general")

    def __repr__(self) -> str:
        return (f"LlamaCppTokenizer(pre={self.gguf.pre or 'default'!r}, special_tokens={len(self._specials)},"
                f" vocab_size={self.vocab_size})")

    def _partition(self, names: frozenset[str] | None) -> _Partition:
        partition = self._partitions.get(names)
        if partition is None:
            chosen = [(text, token, lstrip, rstrip)
                      for text, (token, always, lstrip, rstrip) in self._special_flags.items()
                      if always or (names is not None and text in names)]
            partition = _Partition(chosen)
            self._partitions[names] = partition
        return partition

    def _encode_text(self, text: str, allowed_special: AllowedSpecial) -> list[int]:
        # Checked even without special tokens: a name that is not one is an error here.
        names = self._named_specials(allowed_special)
        partition = self._partition(names)
        if names is not None and partition is not self._partitions.get(None):
            problem = partition.ambiguity()
            if problem is not None:
                raise BPEValueError(f"{problem}: llama.cpp's result then depends on its unspecified sort order")
        out: list[int] = []
        for fragment in partition.cut(text) if partition.tokens else [text] if text else []:
            if isinstance(fragment, int):
                out.append(fragment)
            else:
                out += self._ordinary(fragment)
        return out

    def encode_bytes(self, data: bytes, *, allowed_special: AllowedSpecial = None) -> list[int]:
        """Encode bytes as llama.cpp does: invalid UTF-8 is read by its lenient decoder (each bad byte one
        U+FFFD, overlong and surrogate forms taken as the code points they spell)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise BPETypeError(f"data must be bytes, not {type(data).__name__}")
        raw = bytes(data)
        try:
            return self._encode_text(raw.decode("utf-8"), allowed_special)
        except UnicodeDecodeError:
            pass
        names = self._named_specials(allowed_special)
        partition = self._partition(names)
        fragments: list[bytes | int] = [raw]
        for token_text, token, lstrip, rstrip in partition.tokens:
            needle = token_text.encode("utf-8")
            fragments = _cut_bytes(fragments, needle, token, lstrip, rstrip)
        out: list[int] = []
        for fragment in fragments:
            if isinstance(fragment, int):
                out.append(fragment)
                continue
            text = _lenient_utf8(fragment)
            for piece in self.pre_tokenize(text):
                out += self._model.encode_word(piece.encode("utf-8", "surrogatepass"))
        return out


def _cut_bytes(fragments: list[bytes | int], needle: bytes, token: int, lstrip: bool,
               rstrip: bool) -> list[bytes | int]:
    """``_Partition.cut`` for one token on byte fragments."""
    spaces = _C_SPACE.encode("ascii")
    out: list[bytes | int] = []
    for fragment in fragments:
        if isinstance(fragment, int) or needle not in fragment:
            out.append(fragment)
            continue
        base, stop = 0, len(fragment)
        while True:
            found = fragment.find(needle, base, stop)
            if found < 0:
                if stop > base:
                    out.append(fragment[base:stop])
                break
            left = found
            while lstrip and left > base and fragment[left - 1] in spaces:
                left -= 1
            if left > base:
                out.append(fragment[base:left])
            out.append(token)
            base = found + len(needle)
            if base >= stop:
                break
            while rstrip and base < stop and fragment[base] in spaces:
                base += 1
    return out


def _lenient_utf8(data: bytes) -> str:
    """llama.cpp's ``unicode_cpts_from_utf8``: a lead byte with its continuation bytes is the code point they
    spell (overlong forms and surrogates included); any other byte is U+FFFD.  A code point above U+10FFFF
    makes llama.cpp fail, so it raises ``InvalidTextError``."""
    out: list[str] = []
    i = 0
    n = len(data)
    while i < n:
        byte = data[i]
        if byte < 0x80:
            out.append(chr(byte))
            i += 1
            continue
        size = 0 if not byte & 0x40 else 2 if not byte & 0x20 else 3 if not byte & 0x10 else 4 if not byte & 0x08 else 0
        if size and i + size - 1 < n and all(data[i + k] & 0xC0 == 0x80 for k in range(1, size)):
            code = byte & (0x7F >> size)
            for k in range(1, size):
                code = (code << 6) | (data[i + k] & 0x3F)
            if code > 0x10FFFF:
                raise InvalidTextError(f"the bytes at {i} spell the code point {code:#x}, above U+10FFFF; llama.cpp"
                                       " fails on this text")
            out.append(chr(code))
            i += size
            continue
        out.append("\ufffd")
        i += 1
    return "".join(out)


def load_gguf_tokenizer(path: str, *, cache_size: int = 1 << 18) -> LlamaCppTokenizer:
    """The ``LlamaCppTokenizer`` of a GGUF file; every feature not reproduced raises ``FormatError`` naming it."""
    return LlamaCppTokenizer.from_gguf(gguf_file.read_gguf_tokenizer(path), cache_size=cache_size)

