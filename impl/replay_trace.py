"""A vocabulary file's merges replayed on a corpus, as a training table: which merges of the file fire on the
corpus under the file's own semantics, how often, and how many tokens are left after each (``bpeproof trace
--vocab``).

The corpus is cut into pre-tokens by the tokenizer itself (its pattern, split steps or pipeline); every distinct
pre-token is run once through its merge model's report (``bpeproof.impl.models.steps``), weighted by how often it
occurs.  A row is one merge of the file (a rule, a rank, a merge line, a score), in the file's order, with the
number of joins it makes on the corpus; the tokens after a row are the starting units less every join up to it.
For def-bpe's own files this is the training table of ex-training-trace read backwards from the rules: the
count of each rule is the number of pairs it replaces.  A whole-piece look-up (tiktoken, ``ignore_merges``) that
gives a piece one token decides before any merge: it is the first row, and the merges of that piece are not
counted.  Every distinct pre-token is also run through the article's definitions (def-bpe on the merge list
recovered from the file, ``article_steps``), and the pieces where they give other tokens are counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from bpeproof.impl.models.steps import PieceSteps, StepReporter, show
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.spec.types import BPEValueError

__all__ = ["ReplayRow", "ReplayTrace", "replay_corpus"]

#: The label of the row of whole-piece look-ups.
WHOLE = "whole piece"


@dataclass
class ReplayRow:
    """One merge of the file on the corpus: its place and name in the file's order, its pair, how many joins it
    makes, its token, the tokens left after it."""

    rank: int
    label: str
    pair: tuple[str, str]
    count: int
    token: str
    total_tokens: int = 0


@dataclass
class ReplayTrace:
    """The table, and what the corpus was: its pre-tokens (``words``, ``distinct``), its starting units
    (``units``), its bytes, the ids the file's tokenizer gives it, the pre-tokens a whole-piece look-up decides
    (``whole``), and the pieces where the article's definitions give other tokens (``differ``: piece, the file's
    ids, the article's) or do not apply (``unapplied``)."""

    semantics: str
    words: int
    distinct: int
    units: int
    bytes: int
    ids: int
    rows: list[ReplayRow] = field(default_factory=list)
    differ: list[tuple[str, list[int], list[int]]] = field(default_factory=list)
    unapplied: int = 0
    whole: int = 0  # the pre-tokens a whole-piece look-up gives one token instead of their merges

    @property
    def merges(self) -> list[ReplayRow]:
        """The rows of the file's merges (the whole-piece look-up's row left out)."""
        return [row for row in self.rows if row.label != WHOLE]


def replay_corpus(tokenizer: Tokenizer, texts: Iterable[str]) -> ReplayTrace:
    """The file's merges on the pre-tokens of ``texts``, under the tokenizer's semantics (module docstring)."""
    model = tokenizer.model
    if not isinstance(model, StepReporter):
        raise BPEValueError(f"the {tokenizer.semantics!r} merge model does not report its merge steps")
    counts: Counter[bytes] = Counter()
    for text in texts:
        counts.update(piece.encode("utf-8", "surrogateescape") for piece in tokenizer.pre_tokenize(text) if piece)
    rows: dict[tuple[int, str, tuple[str, str], str], ReplayRow] = {}
    whole = ReplayRow(-1, WHOLE, ("", ""), 0, "-")
    trace = ReplayTrace(tokenizer.semantics, sum(counts.values()), len(counts), 0,
                        sum(len(word) * n for word, n in counts.items()), 0)
    for word, n in counts.items():
        steps = model.merge_steps(word)
        trace.units += len(steps.units) * n
        trace.ids += len(steps.ids) * n
        merged = steps.parts()
        if steps.whole is not None and [part.token for part in merged] != [steps.whole.token]:
            whole.count += (len(steps.units) - 1) * n  # one token instead of the units: that many fewer
            trace.whole += n
        else:
            _count_joins(steps, n, rows)
        if tokenizer.semantics != "sequential":
            article = model.article_steps(word)
            if article is None:
                trace.unapplied += 1
            elif list(article.ids) != list(steps.ids):
                trace.differ.append((show(word), list(steps.ids), list(article.ids)))
    ordered = sorted(rows.values(), key=lambda row: row.rank)
    trace.rows = ([whole] if whole.count else []) + ordered
    total = trace.units
    for row in trace.rows:
        total -= row.count
        row.total_tokens = total
    return trace


def _count_joins(steps: PieceSteps, n: int, rows: dict[tuple[int, str, tuple[str, str], str], ReplayRow]) -> None:
    parts = list(steps.units)
    for join in steps.joins:
        pair = (parts[join.position].text, parts[join.position + 1].text)
        parts[join.position : join.position + 2] = [join.part]
        key = (join.priority, join.label, pair, join.part.text)
        row = rows.get(key)
        if row is None:
            rows[key] = ReplayRow(join.priority, join.label, pair, n, join.part.text)
        else:
            row.count += n
