"""llama.cpp's pre-tokenizer for byte-level BPE GGUF files: the regular expressions of a ``tokenizer.ggml.pre``
(``LLAMA_CPP_REGEXES``, copied from ``src/llama-vocab.cpp``), each one cutting the pieces of the one before into
its matches and the text between them, as ``unicode_regex_split`` computes them.

The pieces are reproduced as llama.cpp computes them, which is not always what the expressions say:

- a few expressions are not run as regular expressions but by hand-written code (``unicode_regex_split_custom``:
  GPT-2's, Llama 3's, Qwen 2's and Qwen 3.5's patterns, digit grouping, newline runs); here each is an
  expression over the *collapsed* text that cuts exactly as that code does;
- the others run in ``std::regex`` (ECMAScript).  When one uses ``\\p{..}``, llama.cpp first replaces every
  code point above 127 by one byte for its class (letter, number, punctuation, mark, symbol, White_Space as
  0x0B, anything else 0xD0, from llama.cpp's own Unicode table, ``bpeproof.impl.pre_tokenizers.llama_cpp_unicode``)
  and each ``\\p{..}`` by a class of that byte and the ASCII characters of the category
  (``bpeproof.impl.pre_tokenizers.llama_cpp_regex``).  So ``\\p{Lu}`` and ``\\p{Ll}`` both mean "any letter" above
  127, and a letter is never upper- or lower-case there.  Without ``\\p{..}`` the expression runs on the code
  points, the White_Space ones above 127 replaced by 0x0B.  Either way ``\\s``, ``\\d`` and ``\\w`` are ASCII
  only, ``$`` is the end of the fragment, and an empty match is followed by a non-empty match at the same place
  or a search one character on, as ``std::regex_iterator`` does.

The pre-tokenizer names llama.cpp does not run with the GPT-2 byte table (Gemma 4's, Sarvam's, the whitespace
splitter) and Kimi-K2's (hand-written code not reproduced here) are refused.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterator
from typing import Any

import regex

from bpeproof.impl.pre_tokenizers import llama_cpp_unicode as _llama_cpp_unicode
from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer
from bpeproof.impl.pre_tokenizers.llama_cpp_regex import (
    collapse_expression,
    ecmascript_to_regex,
    sees_outside,
    uses_categories,
)
from bpeproof.spec.types import BPEValueError

__all__ = [
    "LLAMA_CPP_REGEXES",
    "UNSUPPORTED_PRE",
    "LlamaCppPreTokenizer",
    "code_point_class",
    "collapse",
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
GPT2_EXPRESSION = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
_LLAMA3_ORIGINAL = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
                    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
LLAMA3_EXPRESSION = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                     "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
QWEN2_EXPRESSION = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                    "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
QWEN35_EXPRESSION = (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}"
                     "| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
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
    "llama3": (LLAMA3_EXPRESSION,),
    "jais2": (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
              "|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)"
              "|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}",),
    "dbrx": (LLAMA3_EXPRESSION,),
    "smaug": (LLAMA3_EXPRESSION,),
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
    "falcon": ("[\\p{P}\\$\\+<=>\\^~\\|`]+", GPT2_EXPRESSION, "[0-9][0-9][0-9]"),
    **{kind: ("\\p{N}", GPT2_EXPRESSION)
       for kind in ("starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva", "mellum2")},
    **{kind: (GPT2_EXPRESSION,) for kind in ("gpt2", "mpt", "olmo", "jais", "trillion", "granite-docling")},
    **{kind: (QWEN2_EXPRESSION,) for kind in ("stablelm2", "qwen2", "hunyuan", "solar-open")},
    "qwen35": (QWEN35_EXPRESSION,),
    **{kind: (_FINNISH,) for kind in ("poro", "bloom", "gpt3-finnish")},
    "chatglm4": (LLAMA3_EXPRESSION,),
    "viking": (_FINNISH, "\\p{N}"),
    "tekken": ("[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?"
               "((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+"
               "|\\s+(?!\\S)|\\s+",),
    "chameleon": ("<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
                  "[\\p{P}!-/:-@\\[-`{-~]", GPT2_EXPRESSION),
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
    "grok-2": (QWEN2_EXPRESSION,),
    "afmoe": (_AFMOE_DIGITS,
              '[\u4e00-\u9fff\u3400-\u4dbf\u8c48-\ufaff\u3040-\u309f\u30a0-\u30ff\uff65-\uff9f\u2f00-\u2fdf'
              '\u0e40-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f\uaa60-\uaa7f\ua9e0-\ua9ff\uac00-\ud7af'
              '\u1100-\u11ff]+',
              "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
              "| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    "laguna": (_NEWLINES, QWEN2_EXPRESSION),
    "exaone-moe": (_CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}"
                   "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",),
    "minicpm5": ("\\p{N}{1,3}", _CONTRACTIONS + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                 "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    "default": ("[\\p{P}\\$\\+<=>\\^~\\|]+", GPT2_EXPRESSION, "\\p{N}+", "[0-9][0-9][0-9]"),
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
    GPT2_EXPRESSION: f"'(?:[stmd]|re|ve|ll)| ?[{_L}]+| ?[{_N}]+| ?[^{_S}{_L}{_N}]+|[{_S}]+(?![^{_S}])|[{_S}]+|[\\s\\S]",
    LLAMA3_EXPRESSION: f"{_CONTRACTION_CASES}|[^\\r\\n{_L}{_N}]?[{_L}]+|[{_N}]{{1,3}}| ?[^{_S}{_L}{_N}]+[\\r\\n]*"
             f"|[{_S}]*[\\r\\n]+|[{_S}]+(?![^{_S}])|[{_S}]+|[\\s\\S]",
    QWEN2_EXPRESSION: f"{_CONTRACTION_CASES}|[^\\r\\n{_L}{_N}]?[{_L}]+|[{_N}]| ?[^{_S}{_L}{_N}]+[\\r\\n]*"
            f"|[{_S}]*[\\r\\n]+|[{_S}]+(?![^{_S}])|[{_S}]+|[\\s\\S]",
    QWEN35_EXPRESSION: f"{_CONTRACTION_CASES}|[^\\r\\n{_L}{_N}{_M}]?[{_L}{_M}]+|[{_N}]| ?[^{_S}{_L}{_M}{_N}]+[\\r\\n]*"
             f"|[{_S}]*[\\r\\n]+|[{_S}]+(?![^{_S}])|[{_S}]+|[\\s\\S]",
    _NEWLINES: "[^\\n]+|\\n+",
}
_CUSTOM[_LLAMA3_ORIGINAL] = _CUSTOM[LLAMA3_EXPRESSION]


class LlamaCppStep:
    """One of llama.cpp's expressions: cuts a fragment of the text into pieces as llama.cpp does."""

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.custom = expression in _CUSTOM or expression in (_AFMOE_DIGITS, _TINY_AYA_DIGITS)
        self.collapsed = self.custom or uses_categories(expression)
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
            self._whole_fragment = sees_outside(source)
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

    It has no ``LlamaCppStep``s (``steps`` is empty): the expressions do not mean here what they mean to the
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
        self._split_steps = tuple(LlamaCppStep(expression) for expression in LLAMA_CPP_REGEXES[kind])
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
