"""How a text is encoded: each pre-token's merges under the file's own semantics, as text and as a tree, and where
the article's definitions give other tokens.

The steps are the tokenizer's merge model's own report (``bpeproof.impl.models.steps``): the article's enc_R for
the project's files (def-bpe: only the rules that change something are shown, each as one step that replaces
every occurrence of its pair, left to right, def-merge), tiktoken's rank order with its whole-piece look-up,
Hugging Face's merge lines with its flags, sentencepiece's and llama.cpp SPM's score order, llama.cpp's merge
lines.  Consecutive
joins of one merge are one row, as def-merge writes them.  For any other semantics each word is also run
through the article's definitions (def-bpe on the merge list recovered from the file, ``article_steps``), and a
word where they give other tokens is marked.

The tree is the article's figure for "slowest": the word's units at the bottom, every merge a node labelled with
its token and its mark (the rule's number r_k, 1-based as the article numbers them; a rank, a merge line or a
score for the other semantics), the final tokens highlighted; a whole-piece look-up that overrides the merges is
one more node over them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from html import escape
from typing import Any

from bpeproof.impl.io.wording import count
from bpeproof.impl.models.merge_model import SEMANTICS
from bpeproof.impl.models.steps import PieceSteps, StepReporter, show
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.spec.types import BPEValueError

#: What the comparison with the article's definitions runs.
ARTICLE = "the article's def-bpe on the recovered merge list"


@dataclass
class Node:
    """A token in the merge tree of one word."""

    token: int | None  # the tokenizer's id (None for a unit that is no token)
    text: str
    mark: str | None = None  # what chose the merge: the rule's number, a rank, a merge line, a score (None: a unit)
    children: tuple[Node, ...] | None = None


@dataclass
class Step:
    """One row: a merge and the tokens after every occurrence of it is joined."""

    rank: int  # the place in the file's order (0-based)
    label: str  # how the file names it: "r5", "rank 300", "merge 12", "score -3.5"
    pair: tuple[str, str]
    token: str
    tokens: list[str]


@dataclass
class WordExplanation:
    word: bytes
    steps: list[Step] = field(default_factory=list)
    roots: list[Node] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    whole: Node | None = None  # the token a whole-piece look-up gave, when it is not what merging gives
    notes: list[str] = field(default_factory=list)
    article: PieceSteps | None = None  # the article's steps, when they were computed
    compared: bool = False  # whether the article's definitions were run on the word

    @property
    def article_ids(self) -> list[int] | None:
        return None if self.article is None else list(self.article.ids)

    @property
    def differs(self) -> bool:
        """The article's definitions give this word other tokens than the file's semantics."""
        return self.article is not None and list(self.article.ids) != self.ids


@dataclass
class Explanation:
    text: str
    words: list[WordExplanation]
    semantics: str = "sequential"
    encoded: list[int] | None = None  # what ``encode`` gives the text, when it is not the words' ids

    @property
    def ids(self) -> list[int]:
        return [token for word in self.words for token in word.ids]

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"text": self.text, "semantics": self.semantics, "ids": self.ids, "words": []}
        if self.encoded is not None:
            document["encoded"] = self.encoded
        for word in self.words:
            entry: dict[str, Any] = {
                "word": show(word.word),
                "ids": word.ids,
                "tokens": [root.text for root in word.roots],
                "steps": [{"rule": s.rank, "label": s.label, "pair": list(s.pair), "token": s.token,
                           "after": s.tokens} for s in word.steps],
            }
            if word.whole is not None:
                entry["whole"] = {"id": word.whole.token, "token": word.whole.text}
            if word.notes:
                entry["notes"] = word.notes
            if word.compared:
                article = word.article
                entry["article"] = None if article is None else {
                    "ids": list(article.ids), "tokens": [part.text for part in article.parts()],
                    "same": not word.differs}
            document["words"].append(entry)
        return document


def _word(word: bytes, steps: PieceSteps) -> WordExplanation:
    """The rows and the tree of one word's steps."""
    nodes = [Node(part.token, part.text) for part in steps.units]
    rows: list[Step] = []
    for join in steps.joins:
        left, right = nodes[join.position], nodes[join.position + 1]
        node = Node(join.part.token, join.part.text, join.mark, (left, right))
        nodes[join.position : join.position + 2] = [node]
        after = [item.text for item in nodes]
        last = rows[-1] if rows else None
        if last is not None and (last.label, last.pair, last.token) == (join.label, (left.text, right.text), node.text):
            last.tokens = after  # another occurrence of the same merge: def-merge replaces them all in one step
        else:
            rows.append(Step(join.priority, join.label, (left.text, right.text), node.text, after))
    result = WordExplanation(word, rows, nodes, list(steps.ids), notes=list(steps.notes))
    whole = steps.whole
    if whole is not None and [node.token for node in nodes] != [whole.token]:
        result.whole = Node(whole.token, whole.text, "whole", tuple(nodes))
        result.roots = [result.whole]
    return result


def explain_word(tokenizer: Tokenizer, word: bytes) -> WordExplanation:
    """One pre-token's merges under the tokenizer's semantics, and the article's where they differ."""
    model = tokenizer.model
    if not isinstance(model, StepReporter):
        raise BPEValueError(f"the {tokenizer.semantics!r} merge model does not report its merge steps")
    result = _word(word, model.merge_steps(word))
    if tokenizer.semantics != "sequential":
        result.article = model.article_steps(word)
        result.compared = True
    return result


def explain(tokenizer: Tokenizer, text: str) -> Explanation:
    """Every pre-token of ``text``, explained; ``encoded`` says what ``encode`` gives when it is not the
    pre-tokens' ids (a pipeline that cuts tokens out of the text first)."""
    pieces = tokenizer.pre_tokenize(text)
    words = [explain_word(tokenizer, piece.encode("utf-8", "surrogateescape")) for piece in pieces if piece]
    explanation = Explanation(text, words, tokenizer.semantics)
    encoded = tokenizer.encode(text)
    if encoded != explanation.ids:  # tokens the text pipeline cuts out before pre-tokenizing (added, user-defined)
        explanation.encoded = encoded
    return explanation


def display_width(text: str) -> int:
    """Terminal columns of ``text``: two for wide and full-width characters (CJK), none for combining marks."""
    return sum(0 if unicodedata.combining(char) else 2 if unicodedata.east_asian_width(char) in "WF" else 1
               for char in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def _leaves(node: Node) -> list[Node]:
    return [node] if node.children is None else [leaf for child in node.children for leaf in _leaves(child)]


def render_text(explanation: Explanation) -> str:
    lines: list[str] = []
    if explanation.semantics != "sequential":
        lines.append(f"semantics: {SEMANTICS.get(explanation.semantics, explanation.semantics)}")
    for word in explanation.words:
        start = " ".join(leaf.text for root in word.roots for leaf in _leaves(root))
        lines.append(f"{show(word.word)!r}: {start}")
        for step in word.steps:
            rule = f"{step.label}: ({step.pair[0]}, {step.pair[1]}) -> {step.token}"
            lines.append(f"  {_pad(rule, 30)} {' '.join(step.tokens)}")
        if word.whole is not None:
            merged = " ".join(child.text for child in word.whole.children or ())
            flag = "" if explanation.semantics == "tiktoken" else " (ignore_merges)"
            lines.append(f"  whole piece: {word.whole.text} is token {word.whole.token}, taken whole{flag} instead of"
                         f" the merged {merged}")
        lines += [f"  ({note})" for note in word.notes]
        lines.append(f"  = {word.ids}")
        if word.compared and word.article is None:
            lines.append(f"  ({ARTICLE} does not apply: a unit of the word is no token)")
        elif word.differs and word.article is not None:
            tokens = " ".join(part.text for part in word.article.parts())
            lines.append(f"  ≠ {ARTICLE}: {list(word.article.ids)} ({tokens})")
    lines.append(f"ids: {explanation.ids}")
    if explanation.encoded is not None:
        lines.append(f"encode gives {explanation.encoded}: the tokens it cuts out of the text before pre-tokenizing"
                     " (added or user-defined tokens) are no merges and are not shown above")
    compared = [word for word in explanation.words if word.compared]
    if compared:
        differ = sum(word.differs for word in compared)
        missing = sum(word.article is None for word in compared)
        verdict = (f"other tokens for {differ} of {count(len(compared), 'piece')}" if differ
                   else "the same tokens for every piece" if not missing else "the same tokens where it applies")
        lines.append(f"{ARTICLE}: {verdict}" + (f"; it does not apply to {count(missing, 'piece')}" if missing else ""))
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
    leaves_total = sum(len(_leaves(root)) for word in explanation.words for root in word.roots)
    leaves_total += max(0, len(explanation.words) - 1)
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
            below = [place(child, False) for child in node.children]
            x = sum(cx for cx, _ in below) / len(below)
            y = float(bottom - _height(node) * _LEVEL)
            for cx, cy in below:
                shapes.append(f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{x:.1f}" y2="{y + _BOX_H:.1f}" />')
        label = node.text if node.mark is None else f"{node.text} ({node.mark})"
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
