r"""Pre-tokenization patterns: how a text is cut into words before BPE encodes each word (def-bpe, def-utf8).

def-bpe counts pairs inside words only, and trained tokenizers encode a text
word by word.  A pattern here is a regular expression for the ``regex`` module
whose matches, taken left to right, are the words.  Named patterns:

``r50k``   GPT-2 / r50k_base (tiktoken's ``r50k_pat_str``),
``cl100k`` cl100k_base,
``o200k``  o200k_base (all three exactly as tiktoken's ``tiktoken_ext/openai_public.py`` writes them),
``llama3`` Llama 3's (the expression of its ``tokenizer.json``: cl100k as first published, without ``\s++$``,
           which cuts a run of white space that ends a text after its last line break),
``qwen2``  Qwen2's: ``llama3`` with every digit a word of its own,
``words``  the specification's default ``spec.split_words``: runs of non-space characters with at most
           one space before them, and runs of white space.

Any other string is taken as a raw regular expression.
"""

from __future__ import annotations

from functools import cache
from typing import Any

__all__ = [
    "PATTERNS",
    "SPLIT_SEQUENCES",
    "PatternTimeoutError",
    "backtracks",
    "compile_pattern",
    "compile_pinned",
    "guess_pattern",
    "pattern_name",
    "resolve_pattern",
    "time_limit",
]

_R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

_CL100K = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)

_O200K = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# ``spec.split_words`` is `` ?\S+|\s+(?!\S)|\s+`` under Python's ``re``, whose ``\s`` also matches the
# separators U+001C–U+001F (``str.isspace``); the ``regex`` module's ``\s`` is Unicode White_Space and
# does not.  Adding them keeps the named pattern equal to the specification's pre-tokenizer.
_SPACE = r"[\s\x1c-\x1f]"
_NON_SPACE = r"[^\s\x1c-\x1f]"
_WORDS = rf" ?{_NON_SPACE}+|{_SPACE}+(?!{_NON_SPACE})|{_SPACE}+"

_LLAMA3 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"""
    r"""\s+(?!\S)|\s+"""
)

_QWEN2 = _LLAMA3.replace(r"|\p{N}{1,3}|", r"|\p{N}|")

#: Named sequences of split steps, each keeping its matches apart (``isolated``): a ``tokenizer.json``'s
#: ``Sequence`` of ``Split`` pre-tokenizers, each expression in the ``regex`` module's syntax.  DeepSeek-V3's cuts
#: digits in groups of three, then runs of kana and ideographs, then the rest.
SPLIT_SEQUENCES: dict[str, tuple[str, ...]] = {
    "deepseek3": (
        r"\p{N}{1,3}",
        "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
        r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|"""
        r""" ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    ),
}

#: Named patterns, each a regular expression for the ``regex`` module.
PATTERNS: dict[str, str] = {
    "r50k": _R50K,
    "cl100k": _CL100K,
    "o200k": _O200K,
    "llama3": _LLAMA3,
    "qwen2": _QWEN2,
    "words": _WORDS,
}


class PatternTimeoutError(ValueError):
    """A pre-tokenization pattern ran past its time limit on a text (it backtracks without end)."""


@cache  # asked for every piece a split step cuts, of a few expressions
def backtracks(source: str) -> bool:
    """Whether an expression may take exponential time: a repeated group whose body repeats or alternates
    (``(a|aa)+``, ``(a+)*``, ``(?:\\d{1,3})+``).  Such patterns run under ``time_limit``; the others (tiktoken's,
    GPT-2's, DeepSeek's) run without one, since the ``regex`` module is three times slower under a time limit."""
    bodies: list[bool] = []  # for each open group: whether it holds a quantifier or an alternation so far
    index = 0
    in_class = False
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if source.startswith("]", index + 1) or source.startswith("^]", index + 1):
                index += 2 if source[index + 1] == "]" else 3
                continue
        elif char == "(":
            bodies.append(False)
        elif char == ")" and bodies:
            inner = bodies.pop()
            if inner and source[index + 1 : index + 2] in ("*", "+", "{"):
                return True
            if inner and bodies:
                bodies[-1] = True
        elif char in "*+?{|" and bodies:
            bodies[-1] = True
        index += 1
    return False


def time_limit(text: str) -> float:
    """Seconds a pattern that ``backtracks`` may spend on ``text``: 5 s plus 1 s per million characters."""
    return 5.0 + len(text) / 1_000_000


def resolve_pattern(pattern: str) -> str:
    """The regular expression a pattern argument stands for: a name of ``PATTERNS`` or the expression itself."""
    if not isinstance(pattern, str):
        raise TypeError(
            f"pattern must be a str (a name of PATTERNS or a regular expression), not {type(pattern).__name__}"
        )
    return PATTERNS.get(pattern, pattern)


def pattern_name(source: str) -> str | None:
    """The name under which ``source`` is registered in ``PATTERNS``, or None for a raw expression."""
    for name, known in PATTERNS.items():
        if known == source:
            return name
    return None


def compile_pattern(pattern: str) -> Any:
    """Compile a pattern (a name of ``PATTERNS`` or a raw expression) with the ``regex`` module.

    Raises ``ValueError`` with the regex module's own message when the expression is invalid.
    """
    import regex  # here: a load that cuts its words in C or by split steps never needs the module

    source = resolve_pattern(pattern)
    try:
        return regex.compile(source)
    except regex.error as error:
        raise ValueError(f"invalid pre-tokenization pattern {source!r}: {error}") from None
    except (OverflowError, RecursionError, MemoryError) as error:
        raise ValueError(f"invalid pre-tokenization pattern {source!r}: {type(error).__name__}") from None


def compile_pinned(pattern: str) -> Any:
    """``compile_pattern`` with the general-category classes written out as the code point ranges of
    ``impl.pre_tokenizers.unicode_classes.UNICODE_VERSION``: what the engine's pre-tokenizers match (they get there
    another way,
    by ``stand_ins``, since explicit ranges make the ``regex`` module about ten times slower)."""
    from bpeproof.impl.pre_tokenizers.unicode_classes import pin_pattern

    return compile_pattern(pin_pattern(resolve_pattern(pattern)))


def guess_pattern(source: str, token_count: int) -> str | None:
    """The pattern of a tiktoken rank file, which holds none: by its file name (r50k/gpt2, cl100k, o200k) or by its
    number of tokens; None when neither tells."""
    name = source.replace("\\", "/").rsplit("/", 1)[-1].lower()
    for key, pattern in (("r50k", "r50k"), ("gpt2", "r50k"), ("p50k", "r50k"), ("cl100k", "cl100k"),
                         ("o200k", "o200k")):
        if key in name:
            return pattern
    return {50256: "r50k", 50257: "r50k", 100256: "cl100k", 199998: "o200k"}.get(token_count)
