"""llama.cpp's regular expressions as the ``regex`` module runs them: the expression llama.cpp hands to
``std::regex`` for the collapsed text (each ``\\p{..}`` replaced by its class byte and ASCII members,
``collapse_expression``), and that ECMAScript expression in the ``regex`` module's syntax (``ecmascript_to_regex``).

``bpeproof.impl.pre_tokenizers.llama_cpp`` says when llama.cpp collapses the text and how it runs the expressions.
"""

from __future__ import annotations

__all__ = ["collapse_expression", "ecmascript_to_regex", "sees_outside", "uses_categories"]

# unicode_regex_split's replacement of each \p{..} in a collapsed expression: its class byte and ASCII members.
_UCAT = {"\\p{N}": "number", "\\p{L}": "letter", "\\p{P}": "punctuation", "\\p{M}": "mark", "\\p{S}": "symbol",
         "\\p{Lu}": "letter", "\\p{Ll}": "letter", "\\p{Lt}": "letter", "\\p{Lm}": "letter", "\\p{Lo}": "letter"}
_UCAT_BYTE = {"number": "\xd1", "letter": "\xd2", "punctuation": "\xd3", "mark": "\xd4", "symbol": "\xd5"}
_UCAT_ASCII = {"number": "0-9", "letter": "A-Za-z", "punctuation": "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}", "mark": "",
               "symbol": "\\$\\+<->^`\\|\\~"}


def uses_categories(expression: str) -> bool:
    """True when the expression names a category (``\\p{L}``, ``\\p{N}``, ...): llama.cpp then runs it on the
    collapsed text."""
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


def sees_outside(expression: str) -> bool:
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
