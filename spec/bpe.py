"""Training and encoding: def-bpe, prop-bpe-training-termination, prop-bpe-training-cost.

``train_trace`` follows steps 1–5 of def-bpe literally and records everything
ex-training-trace tabulates: the chosen pair, its count, the pairs tied with it,
the total token count and each word's segmentation, plus the step count that
prop-bpe-training-cost bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bpeproof.spec.merge import MAX_RULE_DEPTH, MAX_SPEC_LENGTH, Steps, check_tokens, merge, validate_rules
from bpeproof.spec.types import (
    ALPHABET_SIZE,
    BPETypeError,
    InputTooLongError,
    InvalidCorpusError,
    Rule,
    RuleTriple,
    is_int,
)

Pair = tuple[int, int]


@dataclass(frozen=True)
class TraceStep:
    """One row of ex-training-trace: iteration j + 1 of def-bpe."""

    rule: Rule
    count: int  # N_j(a_{j+1}, b_{j+1})
    tied: tuple[Pair, ...]  # other pairs with the same count, in V_j order
    total_tokens: int  # T_{j+1} = Σ_k |x_k^{(j+1)}|
    words: tuple[tuple[int, ...], ...]  # x_k^{(j+1)} for every word k


@dataclass(frozen=True)
class Trace:
    """The whole run of def-bpe on one corpus."""

    corpus_symbols: int  # N = Σ_k |w_k|
    corpus_words: int  # K
    steps: tuple[TraceStep, ...]
    cost: int  # steps counted as in prop-bpe-training-cost

    @property
    def rules(self) -> list[Rule]:
        """The output (r_1, …, r_m') of def-bpe."""
        return [step.rule for step in self.steps]

    @property
    def totals(self) -> list[int]:
        """T_0, T_1, …, T_m': the total token count after each merge."""
        return [self.corpus_symbols] + [step.total_tokens for step in self.steps]


def check_corpus(corpus: Sequence[bytes]) -> list[bytes]:
    """A corpus is a list (w_1, …, w_K) of words in Σ⁺ with K ≥ 1 (def-bpe)."""
    if isinstance(corpus, (str, bytes)) or not isinstance(corpus, Sequence):
        raise BPETypeError(f"corpus must be a sequence of bytes words, not {type(corpus).__name__}")
    if len(corpus) == 0:
        raise InvalidCorpusError("corpus is empty: def-bpe needs K >= 1 words")
    words: list[bytes] = []
    for index, word in enumerate(corpus):
        if not isinstance(word, (bytes, bytearray)):
            raise BPETypeError(f"corpus word {index} must be bytes, not {type(word).__name__}")
        if len(word) == 0:
            raise InvalidCorpusError(f"corpus word {index} is empty: words must be in Σ⁺")
        if len(word) > MAX_SPEC_LENGTH:
            raise InputTooLongError(
                f"corpus word {index} has {len(word)} bytes; the specification evaluates words of at"
                f" most {MAX_SPEC_LENGTH}"
            )
        words.append(bytes(word))
    return words


def check_num_merges(num_merges: int | None) -> int | None:
    """m ≥ 0, or None for no bound (def-bpe, prop-bpe-training-termination)."""
    if num_merges is None:
        return None
    if not is_int(num_merges):
        raise BPETypeError(f"num_merges must be an int or None, not {type(num_merges).__name__}")
    if num_merges < 0:
        raise InvalidCorpusError(f"num_merges = {num_merges} is negative: def-bpe needs m >= 0")
    return num_merges


def count_pairs(words: Sequence[Sequence[int]], steps: Steps | None = None) -> list[tuple[Pair, int]]:
    """N_j(a, b) = Σ_k cnt_{x_k}(a, b) for every pair that occurs (def-bpe step 2).

    Pairs are counted inside each word only, never across two words: every
    adjacent pair of every word is listed, the list is sorted, and equal pairs
    are counted as runs.  The result is sorted by pair, so its order is V_j's
    lexicographic order (ids compare as integers, def-bpe step 5).  Lists and
    sorting, not a dictionary, keep it within what CrossHair can reason about.
    ``steps``, when given, counts one step per pair added to the table.
    """
    pairs = sorted((word[i], word[i + 1]) for word in words for i in range(len(word) - 1))
    table: list[tuple[Pair, int]] = []
    for pair in pairs:
        if steps is not None:
            steps.count += 1
        if table and table[-1][0] == pair:
            table[-1] = (pair, table[-1][1] + 1)
        else:
            table.append((pair, 1))
    return table


def select_pair(table: Sequence[tuple[Pair, int]], steps: Steps | None = None) -> tuple[Pair, int, tuple[Pair, ...]]:
    """def-bpe step 4: the pair with the largest count, ties to the smallest in lexicographic order.

    Returns the chosen pair, its count and the other pairs with the same count.
    ``table`` is sorted by pair, so the first pair with the largest count is the smallest.
    ``steps``, when given, counts one step per table entry read (two passes: α = 2).
    """
    best = 0
    for _, count in table:
        if steps is not None:
            steps.count += 1
        best = max(best, count)
    maxima: list[Pair] = []
    for pair, count in table:
        if steps is not None:
            steps.count += 1
        if count == best:
            maxima.append(pair)
    return maxima[0], best, tuple(maxima[1:])


def _checked_depth(depths: dict[int, int], rule: Rule, index: int) -> int:
    """How many merges deep the new id of ``rule``, merge ``index`` (from 0), is: 1 + the deeper of its parts, a byte
    0 deep and an earlier new id as deep as ``depths`` says.  More than ``MAX_RULE_DEPTH`` raises
    ``InputTooLongError``, as ``validate_rules`` does."""
    depth = 1 + max(0 if part < ALPHABET_SIZE else depths[part] for part in (rule.a, rule.b))
    if depth > MAX_RULE_DEPTH:
        raise InputTooLongError(
            f"merge {index} {tuple(rule)!r}: new id c = {rule.c} would be {depth} merges deep; the recursive"
            f" specification evaluates tokens at most {MAX_RULE_DEPTH} deep (MAX_RULE_DEPTH; train with the"
            f" implementation in impl for deeper rule lists)"
        )
    return depth


def train_trace(corpus: Sequence[bytes], num_merges: int | None) -> Trace:
    """def-bpe, steps 1–5, with everything ex-training-trace shows.

    New ids are 256, 257, …: each is larger than every earlier id, so integer
    order is the order of V_j that step 4 breaks ties by.  With ``num_merges``
    None the loop runs until no word has two tokens left
    (prop-bpe-training-termination guarantees that this happens after at most
    N − K merges).

    The step count follows prop-bpe-training-cost and is counted by the code that
    does the work: one step to write each symbol at initialisation, then the
    steps that ``count_pairs`` (one per pair added to the table), ``select_pair``
    (one per table entry read, in each of its two passes) and ``merge`` (one per
    case of def-merge evaluated) report.  The final, unsuccessful count is included.

    A merge whose new id would be more than ``MAX_RULE_DEPTH`` merges deep raises ``InputTooLongError`` (long words
    can make one): ``validate_rules``, and so ``enc`` and ``dec``, refuse such rule lists.
    """
    words = check_corpus(corpus)
    bound = check_num_merges(num_merges)
    # Step 1: x_k^(0) = w_k, V_0 = Σ, j = 0.
    cost = Steps()
    xs: list[list[int]] = []
    for word in words:
        x: list[int] = []
        for symbol in word:
            x.append(symbol)
            cost.count += 1
        xs.append(x)
    n_symbols = sum(len(x) for x in xs)
    steps: list[TraceStep] = []
    depths: dict[int, int] = {}  # how many merges deep each new id is
    j = 0
    while True:
        # Step 2: stop at j = m, else count the pairs inside each word.
        if bound is not None and j == bound:
            break
        table = count_pairs(xs, cost)
        # Step 3: stop when every count is 0 (no word has an adjacent pair).
        if not table:
            break
        # Step 4: the largest count, ties to the smallest pair.
        (a, b), count, tied = select_pair(table, cost)
        # Step 5: a new id larger than all earlier ones; apply the rule to every word.
        rule = Rule(a, b, ALPHABET_SIZE + j)
        # Not in def-bpe: refuse a new id deeper than enc and dec evaluate (MAX_RULE_DEPTH, as validate_rules does).
        depths[rule.c] = _checked_depth(depths, rule, j)
        xs = [merge(rule, x, cost) for x in xs]
        steps.append(
            TraceStep(
                rule=rule,
                count=count,
                tied=tied,
                total_tokens=sum(len(x) for x in xs),
                words=tuple(tuple(x) for x in xs),
            )
        )
        j += 1
    return Trace(corpus_symbols=n_symbols, corpus_words=len(words), steps=tuple(steps), cost=cost.count)


def train(corpus: Sequence[bytes], num_merges: int | None) -> list[Rule]:
    """The rule list (r_1, …, r_m') that def-bpe learns from ``corpus`` with at most ``num_merges`` merges."""
    return train_trace(corpus, num_merges).rules


def enc_tokens(rules: Sequence[Rule], tokens: list[int]) -> list[int]:
    """enc_R on a token list: M_{r_m}(… M_{r_2}(M_{r_1}(x)) …), rules in the order given (def-bpe)."""
    for rule in rules:
        tokens = merge(rule, tokens)
    return tokens


def enc(rules: Sequence[RuleTriple], data: bytes) -> list[int]:
    """enc_R(s) for a byte string s (def-bpe, def-utf8): total on Σ*, dec(enc_R s) = s (thm-bpe-roundtrip).

    This applies the rules to ``data`` as one sequence.  On a text of several
    words it merges across word boundaries, which trained tokenizers do not do:
    use ``bpeproof.spec.text.enc_words`` to encode word by word.
    """
    checked = validate_rules(rules)
    if not isinstance(data, (bytes, bytearray)):
        raise BPETypeError(f"data must be bytes, not {type(data).__name__}")
    return enc_tokens(checked, check_tokens(list(data), "data"))
