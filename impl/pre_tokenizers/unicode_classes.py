"""General-category classes of one Unicode version, so that pre-tokenization does not follow the ``regex`` module's.

A pattern such as cl100k's cuts text by ``\\p{L}``, ``\\p{N}`` and the like.  Which code points those classes hold
depends on the Unicode version of the regex engine: the ``regex`` module ships the newest tables (Unicode 18.0 in
its 2026 releases), while tiktoken 0.14's Rust engine and Oniguruma inside Hugging Face ``tokenizers`` classify by
Unicode 16.0.  A letter added in Unicode 17.0 (U+0CDC, say) is a letter to the first and an unassigned code point
to the others, so the two cut ``"\\u0cdc's"`` differently and give other ids.

``pin_pattern`` rewrites every general-category escape of a pattern (``\\p{L}``, ``\\pN``, ``\\P{Lu}``,
``\\p{^M}``, ``\\p{gc=Nd}``, ``\\p{Letter}``, …, inside or outside a character class) as an explicit set of code
point ranges of ``UNICODE_VERSION``, read from ``impl/data/unicode-16.0-categories.txt`` (written from
Unicode's data by ``scripts/make_unicode_table.py``).  Other properties (scripts, ``\\p{Alpha}``) are left to the
``regex`` module, except ``\\w``, ``\\W``, ``\\d``, ``\\D`` outside a class, from which the code points
unassigned in ``UNICODE_VERSION`` are taken out (inside a class they are left as the ``regex`` module has them).
Explicit classes are exact but slow the ``regex`` module down about tenfold, so the engine
uses ``stand_ins`` instead: every code point whose category differs between ``UNICODE_VERSION`` and the installed
``regex`` module (those assigned since, and the rare one whose category changed) is replaced, before the pattern
runs, by a stand-in of its ``UNICODE_VERSION`` category on which both agree.  The text keeps its length in code
points, so the pieces' spans are the same in the original text, whose own characters are then encoded.
"""

from __future__ import annotations

import bisect
from functools import cache
from typing import Any

__all__ = ["UNICODE_VERSION", "category_of", "changed_code_points", "class_ranges", "pin_pattern", "stand_ins"]

#: The Unicode version whose general categories the pre-tokenization classes follow.
UNICODE_VERSION = "16.0"

_MAX = 0x10FFFF

_LONG_NAMES = {
    "letter": "L", "casedletter": "LC", "uppercaseletter": "Lu", "lowercaseletter": "Ll", "titlecaseletter": "Lt",
    "modifierletter": "Lm", "otherletter": "Lo", "mark": "M", "combiningmark": "M", "nonspacingmark": "Mn",
    "spacingmark": "Mc", "enclosingmark": "Me", "number": "N", "decimalnumber": "Nd", "letternumber": "Nl",
    "othernumber": "No", "punctuation": "P", "connectorpunctuation": "Pc", "dashpunctuation": "Pd",
    "openpunctuation": "Ps", "closepunctuation": "Pe", "initialpunctuation": "Pi", "finalpunctuation": "Pf",
    "otherpunctuation": "Po", "symbol": "S", "mathsymbol": "Sm", "currencysymbol": "Sc", "modifiersymbol": "Sk",
    "othersymbol": "So", "separator": "Z", "spaceseparator": "Zs", "lineseparator": "Zl",
    "paragraphseparator": "Zp", "other": "C", "control": "Cc", "format": "Cf", "surrogate": "Cs",
    "privateuse": "Co", "unassigned": "Cn",
}

_CATEGORIES = (
    "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po",
    "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn",
)


@cache
def _runs() -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The table: first code points of the runs, and each run's category."""
    from importlib import resources  # read once, when a category is first asked for (it imports much)

    table = resources.files("bpeproof.impl").joinpath(f"data/unicode-{UNICODE_VERSION}-categories.txt")
    text = table.read_text("ascii")
    starts: list[int] = []
    categories: list[str] = []
    for line in text.splitlines():
        if line and not line.startswith("#"):
            start, category = line.split()
            starts.append(int(start, 16))
            categories.append(category)
    return tuple(starts), tuple(categories)


def category_of(code: int) -> str:
    """The general category of a code point in ``UNICODE_VERSION``."""
    starts, categories = _runs()
    return categories[bisect.bisect_right(starts, code) - 1]


def _category_set(name: str) -> frozenset[str] | None:
    """The two-letter categories a property name stands for, or None when it is no general category."""
    key = name.replace("_", "").replace(" ", "").replace("-", "")
    for prefix in ("generalcategory=", "gc=", "is"):
        if key.lower().startswith(prefix) and len(key) > len(prefix):
            key = key[len(prefix):]
            break
    key = _LONG_NAMES.get(key.lower(), key)
    if key in ("L&", "LC"):
        return frozenset({"Lu", "Ll", "Lt"})
    if len(key) == 1 and key.upper() in "LMNPSZC":
        return frozenset(c for c in _CATEGORIES if c[0] == key.upper())
    if len(key) == 2 and key[0].upper() + key[1].lower() in _CATEGORIES:
        return frozenset({key[0].upper() + key[1].lower()})
    return None


@cache
def class_ranges(categories: frozenset[str]) -> tuple[tuple[int, int], ...]:
    """The code point ranges (inclusive) whose category in ``UNICODE_VERSION`` is one of ``categories``."""
    starts, names = _runs()
    ranges: list[tuple[int, int]] = []
    for index, start in enumerate(starts):
        if names[index] not in categories:
            continue
        end = starts[index + 1] - 1 if index + 1 < len(starts) else _MAX
        if ranges and ranges[-1][1] == start - 1:
            ranges[-1] = (ranges[-1][0], end)
        else:
            ranges.append((start, end))
    return tuple(ranges)


@cache
def _class_body(categories: frozenset[str]) -> str:
    parts = []
    for low, high in class_ranges(categories):
        parts.append(_escape(low) if low == high else f"{_escape(low)}-{_escape(high)}")
    return "".join(parts)


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


@cache
def _unassigned_class() -> str:
    """A class of the code points the ``regex`` module knows but ``UNICODE_VERSION`` leaves unassigned."""
    ranges: list[list[int]] = []
    for code in changed_code_points():
        if category_of(code) != "Cn":
            continue
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    body = "".join(_escape(low) if low == high else f"{_escape(low)}-{_escape(high)}" for low, high in ranges)
    return f"[{body}]" if body else "[^\\x00-\\U0010ffff]"


def _property_end(source: str, index: int) -> tuple[str, int] | None:
    """The property name of the escape ``\\p`` / ``\\P`` at ``source[index]`` and the index after it."""
    after = index + 2
    if after < len(source) and source[after] == "{":
        close = source.find("}", after)
        return None if close < 0 else (source[after + 1 : close], close + 1)
    if after < len(source):
        return source[after], after + 1
    return None


def pin_pattern(source: str) -> str:
    """``source`` with every general-category escape replaced by the explicit code point ranges of
    ``UNICODE_VERSION``; escapes of other properties, and everything else, are kept as they are.

    The escapes of one character class are joined into one set of ranges (``[\\p{Lu}\\p{Lt}]`` becomes one
    list of ranges of Lu ∪ Lt), which keeps the expression short."""
    if not any(f"\\{kind}" in source for kind in "pPwWdD"):
        return source
    out: list[str] = []
    pending: set[str] = set()  # categories of the class being read, written out when the class ends

    def flush() -> None:
        if pending:
            out.append(_class_body(frozenset(pending)))
            pending.clear()

    index = 0
    in_class = False
    while index < len(source):
        char = source[index]
        if char == "\\" and index + 1 < len(source):
            kind = source[index + 1]
            found = _property_end(source, index) if kind in "pP" else None
            if found is not None:
                name, end = found
                negated = kind == "P"
                if name.startswith("^"):
                    negated, name = not negated, name[1:]
                categories = _category_set(name)
                if categories is not None:
                    chosen = frozenset(_CATEGORIES) - categories if negated else categories
                    if in_class:
                        pending.update(chosen)
                    else:
                        out.append(f"[{_class_body(chosen)}]")
                    index = end
                    continue
            if kind in "wWdD" and not in_class:
                # \w and \d outside a class: the code points unassigned in UNICODE_VERSION are neither.
                unassigned = _unassigned_class()
                escape = source[index : index + 2]
                out.append(f"(?:(?!{unassigned}){escape})" if kind in "wd" else f"(?:{unassigned}|{escape})")
                index += 2
                continue
            out.append(source[index : index + 2])
            index += 2
            continue
        if in_class:
            if char == "[" and source.startswith("[:", index):  # a POSIX class such as [:alpha:]
                close = source.find(":]", index + 2)
                if close >= 0:
                    out.append(source[index : close + 2])
                    index = close + 2
                    continue
            if char == "]":
                flush()
                in_class = False
        elif char == "[":
            in_class = True
            start = index + 2 if source.startswith("^", index + 1) else index + 1
            out.append(source[index:start])
            index = start
            if source.startswith("]", index):  # a ']' right after '[' or '[^' is a literal
                out.append("]")
                index += 1
            continue
        out.append(char)
        index += 1
    flush()
    return "".join(out)


#: Stand-ins by category: non-ASCII code points with no case relation to ASCII letters, checked against both
#: tables before use (``_stand_in_for``).  Cn: a noncharacter, unassigned in every version.
_STAND_IN_CHOICES = {
    "Lu": "\u0391", "Ll": "\u03b1", "Lt": "\u01c5", "Lm": "\u02b0", "Lo": "\u05d0", "Mn": "\u0300",
    "Mc": "\u0903", "Me": "\u20dd", "Nd": "\u0660", "Nl": "\u2160", "No": "\u00bd", "Pc": "\u203f",
    "Pd": "\u2010", "Ps": "\u2045", "Pe": "\u2046", "Pi": "\u00ab", "Pf": "\u00bb", "Po": "\u00a1",
    "Sm": "\u00d7", "Sc": "\u00a2", "Sk": "\u00b4", "So": "\u00a9", "Zs": "\u2002", "Zl": "\u2028",
    "Zp": "\u2029", "Cc": "\u0080", "Cf": "\u00ad", "Co": "\ue000", "Cn": "\ufdd0",
}


@cache
def _compiled_category(category: str) -> object:
    import regex

    return regex.compile(f"\\P{{{category}}}+")


@cache
def changed_code_points() -> tuple[int, ...]:
    """The code points whose general category in the installed ``regex`` module is not the one of
    ``UNICODE_VERSION`` (mostly those assigned in later versions); found once, then kept on disk between runs
    (``bpeproof.impl.io.table_cache``)."""
    import array

    from bpeproof.impl.io.table_cache import store_table, stored_table

    depends = f"unicode-{UNICODE_VERSION}"
    stored = stored_table("changed", depends)
    if stored is not None and len(stored) % 4 == 0:
        found = array.array("I")
        found.frombytes(stored)
        return tuple(found)
    changed = _changed_in_regex()
    store_table("changed", depends, array.array("I", changed).tobytes())
    return changed


def _changed_in_regex() -> tuple[int, ...]:
    """``changed_code_points`` found with the ``regex`` module: each run of the table, searched for code points
    outside its category."""
    import array

    points = array.array("I", range(0x110000))
    everything = points.tobytes().decode("utf-32-le" if _little_endian() else "utf-32-be", "surrogatepass")
    starts, names = _runs()
    changed: list[int] = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else _MAX + 1
        if names[index] == "Cs":
            continue  # surrogates never reach a pattern (text is valid Unicode)
        finder: Any = _compiled_category(names[index])
        for match in finder.finditer(everything, start, end):
            changed.extend(range(match.start(), match.end()))
    return tuple(changed)


def _little_endian() -> bool:
    import sys

    return sys.byteorder == "little"


@cache
def _stand_in_for(category: str) -> str:
    """A code point of ``category`` in both tables, non-ASCII, that no case-insensitive ASCII letter matches."""
    import regex

    preferred = _STAND_IN_CHOICES[category]
    changed = _changed_set()
    candidates = [preferred, *(chr(low) for low, _ in class_ranges(frozenset({category})))]
    for candidate in candidates:
        code = ord(candidate)
        if (code > 0x7F and code not in changed and category_of(code) == category
                and not regex.match(r"(?i:[a-z])", candidate)):
            return candidate
    raise LookupError(f"no stand-in for the category {category}")  # pragma: no cover - every category has one


@cache
def _changed_set() -> frozenset[int]:
    return frozenset(changed_code_points())


@cache
def _changed_chars() -> frozenset[str]:
    return frozenset(map(chr, changed_code_points()))


@cache
def _stand_in_table() -> dict[int, str]:
    """``str.translate`` table of the changed code points."""
    return {code: _stand_in_for(category_of(code)) for code in changed_code_points()}


def stand_ins(text: str) -> str:
    """``text`` with every code point of ``changed_code_points`` replaced by a stand-in of its ``UNICODE_VERSION``
    category (the same length in code points); ``text`` itself when there is none."""
    if text.isascii() or _changed_chars().isdisjoint(text):
        return text
    return text.translate(_stand_in_table())
