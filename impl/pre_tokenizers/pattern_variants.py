r"""The known ways a port reads a pre-tokenization pattern otherwise, each as a rewrite of the expression.

A pattern variant (``PatternVariant``) is what a port of a tokenizer to another regular-expression engine cuts
by: JavaScript's ``\s``, contractions without ``(?i:…)`` (an engine without inline modifiers), the character
classes of newer Unicode tables (the ``regex`` module's own instead of the pinned ones, ``unicode_classes``),
U+180E as white space (older tables), the negative lookahead ``(?!\S)`` dropped (an engine without lookaround),
and, beside the expressions, special tokens' names cut out where they are not allowed (``special_names_variant``).

Each gives the rewritten expression (``transform``: the ``regex`` module's syntax in and out, None when it cannot
be written), which a tokenizer swaps into every stage of its pre-tokenization
(``Tokenizer.rewritten_pre_tokenize``, ``HFPipeline.rewritten``), the text with what it changes taken out
(``neutral``) and short texts on which it differs (``examples``): the checker's diagnosis names a port's cut by the
variant that reproduces it (``bpeproof.proofs_tests.checker.reruns``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import regex

from bpeproof.impl.pre_tokenizers.unicode_classes import changed_code_points, stand_ins

__all__ = [
    "JS_SPACE",
    "PATTERN_VARIANTS",
    "U180E_SPACE",
    "PatternVariant",
    "special_names_variant",
    "with_js_whitespace",
    "with_space",
    "with_u180e_space",
    "without_inline_case",
    "without_lookahead",
]


#: ECMAScript's ``\s`` as the inside of a character class: WhiteSpace and LineTerminator (U+FEFF in; U+0085 and
#: U+001C–U+001F, which Python's regex counts, out).  A port to JavaScript that keeps the pattern splits by this.
JS_SPACE = r"\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def with_js_whitespace(pattern: str) -> str | None:
    r"""``pattern`` with ``\s`` and ``\S`` read as JavaScript reads them; None when that cannot be written
    (``\S`` inside a character class)."""
    return with_space(pattern, JS_SPACE)


#: ``\s`` with U+180E MONGOLIAN VOWEL SEPARATOR, white space (Zs) until Unicode 6.3 made it a format character:
#: an engine on older tables (or a C library's ``iswspace``) cuts by this.
U180E_SPACE = r"\s\u180e"


def with_u180e_space(pattern: str) -> str | None:
    r"""``pattern`` with U+180E read as white space by ``\s`` and not by ``\S``."""
    return with_space(pattern, U180E_SPACE)


def with_space(pattern: str, body: str) -> str | None:
    r"""``pattern`` with ``\s`` read as the class whose inside is ``body`` and ``\S`` as its complement; None when
    that cannot be written (``\S`` inside a character class)."""
    out: list[str] = []
    in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            escape = pattern[index : index + 2]
            if escape == "\\s":
                out.append(body if in_class else f"[{body}]")
            elif escape == "\\S":
                if in_class:
                    return None
                out.append(f"[^{body}]")
            else:
                out.append(escape)
            index += 2
            continue
        if char == "[":  # inside a class a "[" is a literal (the regex module's version 0)
            in_class = True
        elif char == "]":
            in_class = False
        out.append(char)
        index += 1
    return "".join(out)


def without_inline_case(pattern: str) -> str | None:
    """``pattern`` with its case-insensitive groups ``(?i:…)`` matched case-sensitively (as it is when it has
    none: one expression of a pipeline may have them, the others not)."""
    return pattern.replace("(?i:", "(?:")


def as_written(pattern: str) -> str | None:
    return pattern


def without_lookahead(pattern: str) -> str | None:
    """``pattern`` with its negative lookahead ``(?!\\S)`` dropped, as an engine without lookaround (RE2, Go's
    regexp, Rust's regex crate) has to; None when it has none."""
    return pattern.replace("(?!\\S)", "") if "(?!\\S)" in pattern else None


def lookahead_neutral(text: str) -> str:
    """``text`` with each run of white space before a non-space cut to one character (where ``\\s+(?!\\S)`` and
    ``\\s+`` cut alike)."""
    return str(regex.sub(r"\s+(?=\S)", lambda match: match.group()[-1], text))


def lookahead_examples() -> list[str]:
    return ["  a", "a  b", "x\n\n y", "  \tb", " \n a", "a   1", "\t\tx", "a\n  b", "  !", "x \u3000y"]


#: White space to Python's ``\s`` only, and to JavaScript's only.
_PYTHON_ONLY_SPACE = frozenset("\x1c\x1d\x1e\x1f\x85")
_JS_ONLY_SPACE = frozenset("\ufeff")


def js_neutral(text: str) -> str:
    """``text`` with the characters on which the two ``\\s`` disagree replaced by ones they agree on."""
    return "".join("\t" if char in _PYTHON_ONLY_SPACE else "!" if char in _JS_ONLY_SPACE else char for char in text)


def u180e_neutral(text: str) -> str:
    """``text`` with U+180E replaced by U+00AD, a format character to both readings."""
    return text.replace("\u180e", "\xad")


def u180e_examples() -> list[str]:
    return [template.format(c="\u180e") for template in ("{c}", "a{c}b", " {c}a", "{c} a", "a {c}", "a{c} ", "{c}\n",
                                                         "x{c}{c}y", "{c}'s", "{c}1", " {c} ", "a{c}  b", "{c}!")]


def case_neutral(text: str) -> str:
    """``text`` with the letters after each apostrophe in lower case (where case-sensitive contractions agree)."""
    return str(regex.sub(r"(['\u2019])(\p{L}+)", lambda match: match.group(1) + match.group(2).lower(), text))


def unicode_neutral(text: str) -> str:
    """``text`` with the code points whose class changed between Unicode versions replaced by stand-ins."""
    return str(stand_ins(text))


def js_examples() -> list[str]:
    # White space to Python only (U+FEFF, white space to JavaScript only, is often a port's other bug: a missing
    # token for its bytes, a decode that drops it), in short contexts, trailing white space among them (which a
    # port that drops (?!\S) cuts as the reference does, JavaScript's \s not).
    return [template.format(c=char) for char in sorted(_PYTHON_ONLY_SPACE)
            for template in ("{c}", " {c}", "{c} ", "  {c}", "{c}a", " {c}a", "a {c}b", "{c}{c}", "a{c}", "{c}\n",
                             "{c}!", "{c}  ", "a{c} ", "{c} a", " {c} ", "{c}\ta", "x{c}  y")]


def case_examples() -> list[str]:
    return [f"{before}{apostrophe}{ending}" for apostrophe in ("'", "\u2019") for before in ("", "I", "DON")
            for ending in ("S", "T", "LL", "VE", "Re", "M", "D")]


def unicode_examples() -> list[str]:
    changed = changed_code_points()
    chars = [chr(code) for code in changed[:: max(1, len(changed) // 6)][:6]]
    return [template.format(c=char) for char in chars for template in ("{c}", "a{c}", "{c}s", "'{c}", " {c}1")]


@dataclass(frozen=True)
class PatternVariant:
    """A way a port reads the reference's pattern otherwise: its name in group keys, what it does, the pattern it
    gives (None: not possible), the text with what it changes taken out, short texts on which it differs from the
    reference (the two checks that it is the cause, ``Reruns.needed``), and whether code points are classified as
    the reference does (``stand_ins``).  ``cut``: how it cuts a text when that is no rewrite of the expressions
    (``special_names_variant``)."""

    name: str
    description: str
    transform: Callable[[str], str | None]
    neutral: Callable[[str], str]
    examples: Callable[[], list[str]]
    pinned: bool = True
    cut: Callable[[str], list[str]] | None = None


PATTERN_VARIANTS = (
    PatternVariant("js-whitespace", "\\s is JavaScript's (U+0085 and U+001C–U+001F not white space, U+FEFF white"
                   " space)", with_js_whitespace, js_neutral, js_examples),
    PatternVariant("case-sensitive", "the contractions are matched case-sensitively ((?i:…) dropped, as an engine"
                   " without inline modifiers does)", without_inline_case, case_neutral, case_examples),
    PatternVariant("unicode-version", "code points are classified by the regex module's newer Unicode tables, not"
                   " by the version the reference pins", as_written, unicode_neutral, unicode_examples, pinned=False),
    PatternVariant("u180e-space", "U+180E is white space to \\s (as before Unicode 6.3, in engines on older tables)",
                   with_u180e_space, u180e_neutral, u180e_examples),
    PatternVariant("no-lookahead", "the negative lookahead (?!\\S) is dropped, as an engine without lookaround"
                   " (RE2, Go, Rust's regex crate) must: a run of white space is no longer cut before its last"
                   " character", without_lookahead, lookahead_neutral, lookahead_examples),
)


def special_names_variant(special_tokens: Iterable[str], pre_tokenize: Callable[[str], list[str]]
                          ) -> PatternVariant | None:
    """The special tokens' names cut out of the text before its pre-tokenization (``pre_tokenize``), where they are
    not allowed, and each then pre-tokenized and encoded as ordinary text on its own (a port that finds every name
    first and only then asks whether it is allowed); None without special tokens."""
    names = sorted(special_tokens, key=lambda name: (-len(name), name))
    if not names:
        return None
    finder = re.compile("|".join(map(re.escape, names)))

    def cut(text: str) -> list[str]:
        out: list[str] = []
        start = 0
        for match in finder.finditer(text):
            out += pre_tokenize(text[start : match.start()]) + pre_tokenize(match.group())
            start = match.end()
        out += pre_tokenize(text[start:])
        return out

    def neutral(text: str) -> str:
        return finder.sub("", text)

    def examples() -> list[str]:
        return [template.format(n=name) for name in names[:2]
                for template in ("a{n}b", " {n}", "{n} a", "{n}'s", "x{n}1", "  {n}", "{n}\n", "hello {n}world")]

    return PatternVariant("special-names", "special tokens' names are cut out of the text where they are not"
                          " allowed, each then encoded as ordinary text on its own", as_written, neutral, examples,
                          cut=cut)
