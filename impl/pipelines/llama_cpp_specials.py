"""llama.cpp's special-token partition (``tokenizer_st_partition``): the special tokens cut out of a text before
it is pre-tokenized, longest text first; each one's occurrences, left to right, in every fragment not yet cut; a
token flagged ``lstrip`` / ``rstrip`` also takes the spaces before / after it.  Which tokens are cut is the
tokenizer's choice (``bpeproof.impl.pipelines.llama_cpp``)."""

from __future__ import annotations

from typing import Any

import regex

__all__ = ["SpecialTokenPartition", "cut_bytes"]

#: The bytes C's ``isspace`` is true for (the C locale): what ``lstrip`` / ``rstrip`` take.
_C_SPACE = " \t\n\v\f\r"


class SpecialTokenPartition:
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
        """The tokens that occur in ``text``, in order (a token absent from the text cuts nothing).  Past a few
        tokens, one search of their trie first tells a text that holds none (most texts; Qwen2's 290 padding
        tokens share their first character with code); a long text is then scanned once for all of them (the
        longest token at each position; a token that is a proper prefix of one found is looked for on its own),
        not once per token."""
        tokens = self.tokens
        if len(tokens) <= 16:
            return [item for item in tokens if item[0] in text]
        if self._any is None:
            texts = [item[0] for item in tokens]
            self._any = regex.compile(r"\L<tokens>", tokens=texts)
            known = set(texts)
            self._prefixes = {t: [t[:cut] for cut in range(1, len(t)) if t[:cut] in known] for t in texts}
        if self._any.search(text) is None:  # none occurs (most texts): one pass of the tokens' trie
            return []
        if len(text) < 4096:
            characters = set(text)
            return [item for item in tokens if item[0][0] in characters and item[0] in text]
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


def cut_bytes(fragments: list[bytes | int], needle: bytes, token: int, lstrip: bool,
              rstrip: bool) -> list[bytes | int]:
    """``SpecialTokenPartition.cut`` for one token on byte fragments."""
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
