"""How a text is encoded: each pre-token's merges in the order the rules apply them, as text and as a tree.

For one word, enc_R applies the rules in list order (def-bpe); only the rules
that change something are shown, each as one step that replaces every
occurrence of its pair, left to right (def-merge).  The tree is the article's
figure for "slowest": the word's bytes at the bottom, every merge a node
labelled with its token and its rule's number r_k (1-based, as the article numbers them), the final
tokens highlighted.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass, field
from html import escape
from typing import Any

from bpeproof.impl.tokenizer import Tokenizer


def show(data: bytes) -> str:
    """A token's bytes as readable text: UTF-8 where valid, \\x escapes elsewhere, ␣ for a space."""
    return data.decode("utf-8", errors="backslashreplace").replace(" ", "␣").replace("\n", "\\n")


@dataclass
class Node:
    """A token in the merge tree of one word."""

    token: int  # the tokenizer's id
    text: str
    rank: int | None = None  # position of the rule in the list (None for a byte)
    children: tuple[Node, Node] | None = None


@dataclass
class Step:
    rank: int
    pair: tuple[str, str]
    token: str
    tokens: list[str]


@dataclass
class WordExplanation:
    word: bytes
    steps: list[Step] = field(default_factory=list)
    roots: list[Node] = field(default_factory=list)

    @property
    def ids(self) -> list[int]:
        return [root.token for root in self.roots]


@dataclass
class Explanation:
    text: str
    words: list[WordExplanation]

    @property
    def ids(self) -> list[int]:
        return [token for word in self.words for token in word.ids]

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "ids": self.ids,
            "words": [
                {
                    "word": show(word.word),
                    "ids": word.ids,
                    "tokens": [root.text for root in word.roots],
                    "steps": [{"rule": s.rank, "pair": list(s.pair), "token": s.token, "after": s.tokens}
                              for s in word.steps],
                }
                for word in self.words
            ],
        }


def explain_word(tokenizer: Tokenizer, word: bytes) -> WordExplanation:
    """Replay enc_R on one word, recording every rule that fires and the tree it builds."""
    rules = tokenizer.rules
    byte_ids = tokenizer.byte_ids
    first: dict[tuple[int, int], int] = {}
    for rank, rule in enumerate(rules):
        first.setdefault((rule.a, rule.b), rank)

    def external(token: int) -> int:
        return byte_ids[token] if token < 256 and byte_ids is not None else token

    def text_of(token: int) -> str:
        return show(tokenizer.token_bytes(external(token)))

    nodes = [Node(external(byte), show(bytes([byte]))) for byte in word]
    ids = list(word)
    result = WordExplanation(word)
    while True:
        ranks = [first[pair] for pair in itertools.pairwise(ids) if pair in first]
        if not ranks:
            break
        rank = min(ranks)
        rule = rules[rank]
        new_ids: list[int] = []
        new_nodes: list[Node] = []
        i = 0
        while i < len(ids):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == (rule.a, rule.b):
                new_ids.append(rule.c)
                new_nodes.append(Node(external(rule.c), text_of(rule.c), rank, (nodes[i], nodes[i + 1])))
                i += 2
            else:
                new_ids.append(ids[i])
                new_nodes.append(nodes[i])
                i += 1
        ids, nodes = new_ids, new_nodes
        result.steps.append(Step(rank, (text_of(rule.a), text_of(rule.b)), text_of(rule.c), [n.text for n in nodes]))
    result.roots = nodes
    return result


def explain(tokenizer: Tokenizer, text: str) -> Explanation:
    """Every pre-token of ``text``, explained."""
    pieces = tokenizer.pre_tokenize(text)
    return Explanation(text, [explain_word(tokenizer, piece.encode("utf-8")) for piece in pieces if piece])


def display_width(text: str) -> int:
    """Terminal columns of ``text``: two for wide and full-width characters (CJK), none for combining marks."""
    return sum(0 if unicodedata.combining(char) else 2 if unicodedata.east_asian_width(char) in "WF" else 1
               for char in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def render_text(explanation: Explanation) -> str:
    lines: list[str] = []
    for word in explanation.words:
        start = " ".join(show(bytes([b])) for b in word.word)
        lines.append(f"{show(word.word)!r}: {start}")
        for step in word.steps:
            rule = f"r{step.rank + 1}: ({step.pair[0]}, {step.pair[1]}) -> {step.token}"
            lines.append(f"  {_pad(rule, 30)} {' '.join(step.tokens)}")
        lines.append(f"  = {word.ids}")
    lines.append(f"ids: {explanation.ids}")
    return "\n".join(lines)


_LEAF_GAP = 64
_LEVEL = 52
_BOX_H = 30


def _height(node: Node) -> int:
    return 0 if node.children is None else 1 + max(_height(child) for child in node.children)


#: Code points XML 1.0 does not allow in a document (C0 controls but tab, LF, CR; surrogates; U+FFFE, U+FFFF).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str) -> str:
    """``text`` escaped for an XML attribute or element; characters XML cannot hold written as ``\\xNN``."""
    return escape(_NOT_XML.sub(lambda match: f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100
                               else f"\\u{ord(match.group()):04x}", text), quote=True)


def render_svg(explanation: Explanation) -> str:
    """The merge trees of all words side by side, drawn like the article's figure."""
    leaves_total = sum(len(word.word) for word in explanation.words) + max(0, len(explanation.words) - 1)
    top = max((_height(root) for word in explanation.words for root in word.roots), default=0)
    width = 40 + max(1, leaves_total) * _LEAF_GAP
    height = 60 + (top + 1) * _LEVEL
    bottom = height - 20 - _BOX_H
    shapes: list[str] = []
    labels: list[str] = []
    cursor = [0]

    def place(node: Node, is_root: bool) -> tuple[float, float]:
        if node.children is None:
            x = 20 + cursor[0] * _LEAF_GAP + _LEAF_GAP / 2
            cursor[0] += 1
            y = float(bottom)
        else:
            (lx, ly), (rx, ry) = (place(child, False) for child in node.children)
            x = (lx + rx) / 2
            y = float(bottom - _height(node) * _LEVEL)
            for cx, cy in ((lx, ly), (rx, ry)):
                shapes.append(f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{x:.1f}" y2="{y + _BOX_H:.1f}" />')
        label = node.text if node.rank is None else f"{node.text} ({node.rank + 1})"
        box_w = max(40, 9 * len(label) + 14)
        colour = ' class="final"' if is_root else ""
        shapes.append(f'<rect{colour} x="{x - box_w / 2:.1f}" y="{y:.1f}" width="{box_w}" height="{_BOX_H}" rx="5" />')
        labels.append(f'<text x="{x:.1f}" y="{y + 20:.1f}">{_xml(label)}</text>')
        return x, y

    for word in explanation.words:
        for root in word.roots:
            place(root, True)
        cursor[0] += 1
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}"'
        f' role="img" aria-label="BPE merge trees of {_xml(explanation.text)}">\n'
        "<style>line,rect{fill:none;stroke:#333;stroke-width:1.3} rect.final{stroke:#c0392b;stroke-width:2}"
        " text{font:14px sans-serif;text-anchor:middle;fill:#111}</style>\n"
        + "\n".join(shapes) + "\n" + "\n".join(labels) + "\n</svg>\n"
    )
