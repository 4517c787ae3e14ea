"""Judging one call of the code under test against the specification, and naming the claim it breaks.

``judge(call, outcome)`` returns ``None`` when the answer is the spec's, else a
``Failure`` whose ``claim`` is the article id of the definition or claim that the
answer contradicts, most specific first:

* enc — prop-bpe-length-monotone (|enc_R s| ≤ |s|, and ≥ 1 for s ≠ ε),
  thm-bpe-roundtrip (dec(enc_R s) ≠ s, ids outside V_m included), else def-bpe
  (enc_R: the rules in list order, each M_r left to right).  An exception, a
  time-out or a wrong type break def-bpe (enc_R is total on Σ*).
* dec — def-alphabet-vocab (dec(x) = ⟨⟨t1⟩⟩ … ⟨⟨tn⟩⟩).
* train — prop-bpe-training-termination (no answer within the time limit, or more
  than N − K merges), prop-bpe-vocab-size (new ids not fresh), else the step of
  def-bpe where the first rule differs: step 2 (counts), step 3 (stopping),
  step 4 (the tie-break), step 5 (the new id), with a hint when the answer fits a
  known wrong counting or tie-break.

Inputs longer than ``spec.MAX_SPEC_LENGTH`` are judged with the specification's
own recursive functions (``bpeproof.spec.bpe.enc_tokens``) with Python's recursion limit
raised, in a thread with a large stack.  An implementation may decline such
inputs (raise), as the specification's public ``enc`` does; only a wrong answer
counts there.
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar

from bpeproof.impl.io import wording
from bpeproof.proofs_tests.checker.worker import Call, Outcome
from bpeproof.spec.bpe import Trace, count_pairs, enc_tokens, train_trace
from bpeproof.spec.merge import MAX_SPEC_LENGTH, dec_tokens, rep_tokens, validate_rules
from bpeproof.spec.types import ALPHABET_SIZE, Rule

T = TypeVar("T")

#: One line per article id: what the claim says, for reports.
CLAIMS: dict[str, str] = {
    "def-bpe": "def-bpe: enc_R(s) = M_{r_m}(… M_{r_1}(s) …), the rules in list order, each M_r left to right",
    "def-bpe/train": "def-bpe: training counts pairs inside words (overlaps and repeated words count), takes the"
    " largest count, ties to the smallest pair, new ids 256, 257, …, stops at j = m or when every count is 0",
    "def-alphabet-vocab": "def-alphabet-vocab: dec(t1 … tn) = ⟨⟨t1⟩⟩ ⟨⟨t2⟩⟩ … ⟨⟨tn⟩⟩, the bytes each token stands for",
    "thm-bpe-roundtrip": "thm-bpe-roundtrip: dec(enc_R(s)) = s for every byte string s and valid rule list R",
    "prop-bpe-length-monotone": "prop-bpe-length-monotone: |enc_R(s)| ≤ |s|, and |enc_R(s)| ≥ 1 when s ≠ ε",
    "prop-bpe-training-termination": "prop-bpe-training-termination: training stops, even with no bound on m,"
    " after m' ≤ N − K merges",
    "prop-bpe-vocab-size": "prop-bpe-vocab-size: |V_m| = 256 + m, every new id is fresh",
    "def-merge": "def-merge: a rule (a, b ↦ c) joins two ids of V_{j-1} into an id c not in V_{j-1}",
    "prop-utf8-boundary": "prop-utf8-boundary: a token's bytes alone need not be valid UTF-8",
}


@dataclass
class Failure:
    """One call whose answer differs from the specification's, with the claim it breaks."""

    function: str  # "enc", "dec" or "train"
    claim: str  # the article id
    detail: str  # what exactly differs, in the article's terms
    input: dict[str, Any]
    expected: Any
    actual: Any  # the normalised answer, or a description of the error
    also: tuple[str, ...] = ()
    hint: str = ""
    call: Call | None = None
    earlier: list[Call] = field(default_factory=list)  # calls made before it in the same example
    outcome_kind: str = "ok"  # the kind of the implementation's outcome (see ``Outcome``)

    def size(self) -> int:
        """A measure for keeping the smallest failure seen."""
        return len(repr(self.input)) + sum(len(repr(c)) for c in self.earlier)


def _deep(function: Callable[[], T], depth: int) -> T:
    """Run a recursive spec function on a long input, in a thread with a large stack.

    Python's recursion limit is raised for the call and put back afterwards (Hypothesis
    checks that a test leaves it as it found it); the thread's stack makes sure the C stack
    is not the limit either.
    """
    if depth < MAX_SPEC_LENGTH:
        return function()
    result: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(function())
        except BaseException as error:
            errors.append(error)

    old_size = threading.stack_size()
    old_limit = sys.getrecursionlimit()
    thread = threading.Thread(target=target, daemon=True)
    try:
        threading.stack_size(256 * 1024 * 1024)
        sys.setrecursionlimit(max(old_limit, depth + 1_000))
        thread.start()
        thread.join()
    finally:
        threading.stack_size(old_size)
        sys.setrecursionlimit(old_limit)
    if errors:
        raise errors[0]
    return result[0]


def _key(rules: Sequence[Sequence[int]]) -> tuple[tuple[int, int, int], ...]:
    return tuple((int(r[0]), int(r[1]), int(r[2])) for r in rules)


#: Inputs longer than this are judged by the project's engine (``impl.encoder.enc``), which the test suite shows
#: equal to the specification (``proofs_tests/tests/impl/test_impl_encoder.py``); shorter ones by the specification
# itself.
ENGINE_ORACLE_LENGTH = MAX_SPEC_LENGTH


@lru_cache(maxsize=8192)
def _spec_enc(rules: tuple[tuple[int, int, int], ...], data: bytes) -> tuple[int, ...]:
    checked = validate_rules(list(rules))
    if len(data) > ENGINE_ORACLE_LENGTH:
        from bpeproof.impl.encoder import enc as engine_enc

        return tuple(engine_enc(checked, data))
    return tuple(_deep(lambda: enc_tokens(checked, list(data)), len(data)))


@lru_cache(maxsize=8192)
def _spec_dec(rules: tuple[tuple[int, int, int], ...], tokens: tuple[int, ...]) -> bytes:
    checked = validate_rules(list(rules))
    return _deep(lambda: dec_tokens(checked, list(tokens)), len(tokens) + 2 * len(rules))


@lru_cache(maxsize=2048)
def _spec_trace(corpus: tuple[bytes, ...], num_merges: int | None) -> Trace:
    return train_trace(list(corpus), num_merges)


def spec_trace(corpus: Sequence[bytes], num_merges: int | None) -> Trace:
    """def-bpe's training run on ``corpus`` with every step recorded (``spec.train_trace``)."""
    return _spec_trace(tuple(bytes(w) for w in corpus), num_merges)


def expect(call: Call) -> float:
    """Compute (and cache) the specification's answer to ``call``; return the seconds it took.

    The checker gives the implementation a time limit that grows with this.
    """
    start = time.perf_counter()
    kind, args = call
    if kind == "enc":
        spec_enc(*args)
    elif kind == "dec":
        spec_dec(*args)
    else:
        spec_trace(*args)
    return time.perf_counter() - start


def spec_enc(rules: Sequence[Sequence[int]], data: bytes) -> list[int]:
    """enc_R(s) by the specification (def-bpe), for inputs of any length (the guard lifted)."""
    return list(_spec_enc(_key(rules), bytes(data)))


def spec_dec(rules: Sequence[Sequence[int]], tokens: Sequence[int]) -> bytes:
    """dec(x) by the specification (def-alphabet-vocab); raises ``InvalidTokenError`` outside V_m."""
    return _spec_dec(_key(rules), tuple(tokens))


def _rules_repr(rules: Sequence[Sequence[int]]) -> list[tuple[int, int, int]]:
    return list(_key(rules))


def _error_text(outcome: Outcome) -> str:
    if outcome.kind == "raised":
        return f"raised {outcome.message}"
    if outcome.kind == "timeout":
        return outcome.message
    if outcome.kind == "crashed":
        return outcome.message
    return outcome.message


# ---------------------------------------------------------------------------
# enc
# ---------------------------------------------------------------------------


def judge_enc(args: tuple[Any, ...], outcome: Outcome) -> Failure | None:
    """Compare enc(rules, data) with enc_R (def-bpe); classify a difference (see the module docstring)."""
    rules, data = args
    expected = spec_enc(rules, data)
    inputs = {"rules": _rules_repr(rules), "data": bytes(data)}
    long = len(data) > MAX_SPEC_LENGTH
    if outcome.kind != "ok":
        if long and outcome.kind == "raised":
            return None  # declining inputs beyond the spec's own guard is allowed
        return Failure("enc", "def-bpe", f"enc_R is defined on every byte string, but the implementation"
                       f" {_error_text(outcome)}", inputs, expected, _error_text(outcome))
    actual: list[int] = outcome.value
    if actual == expected:
        return None
    checked = validate_rules(list(_key(rules)))
    vocab = set(range(ALPHABET_SIZE)) | {rule.c for rule in checked}
    unknown = [t for t in actual if t not in vocab]
    decoded: bytes | None = None
    if not unknown:
        decoded = _deep(lambda: dec_tokens(checked, actual), len(actual) + 2 * len(checked))
    also: list[str] = []
    if len(actual) > len(data) or (data and not actual):
        claim = "prop-bpe-length-monotone"
        detail = (f"|enc_R(s)| must be ≤ |s| = {len(data)} and ≥ 1 for s ≠ ε;"
                  f" the implementation returned {wording.count(len(actual), 'token')}")
        also.append("thm-bpe-roundtrip")
    elif unknown or decoded != data:
        claim = "thm-bpe-roundtrip"
        if unknown:
            detail = (f"the answer holds ids {sorted(set(unknown))[:5]} that are not in V_m"
                      f" (the rules' new ids are {[rule.c for rule in checked][:8]}), so dec(answer) ≠ s")
        else:
            detail = f"dec(answer) = {decoded!r} ≠ s"
    else:
        claim = "def-bpe"
        detail = ("both token lists decode to s, but enc_R applies the rules in list order, each M_r left"
                  " to right (def-merge), which gives the spec's list")
        first = next((i for i, (x, y) in enumerate(zip(actual, expected, strict=False)) if x != y),
                     min(len(actual), len(expected)))
        detail += f"; the lists first differ at position {first}"
    if claim != "def-bpe":
        also.append("def-bpe")
    return Failure("enc", claim, detail, inputs, expected, actual, tuple(also))


# ---------------------------------------------------------------------------
# dec
# ---------------------------------------------------------------------------


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def judge_dec(args: tuple[Any, ...], outcome: Outcome) -> Failure | None:
    """Compare dec(rules, ids) with def-alphabet-vocab's dec."""
    rules, tokens = args
    expected = spec_dec(rules, tokens)
    inputs = {"rules": _rules_repr(rules), "ids": list(tokens)}
    if outcome.kind != "ok":
        return Failure("dec", "def-alphabet-vocab", f"dec is defined on every list of ids in V_m, but the"
                       f" implementation {_error_text(outcome)}", inputs, expected, _error_text(outcome))
    actual: bytes = outcome.value
    if actual == expected:
        return None
    checked = validate_rules(list(_key(rules)))
    pieces = [_deep(lambda t=t: dec_tokens(checked, [t]), 2 * len(checked) + 2) for t in tokens]  # type: ignore[misc]
    detail = "dec(t1 … tn) = ⟨⟨t1⟩⟩ … ⟨⟨tn⟩⟩"
    if len(pieces) <= 12:
        detail += " = " + " + ".join(repr(p) for p in pieces)
    also: list[str] = []
    hint = ""
    if any(not _valid_utf8(p) for p in pieces):
        also.append("prop-utf8-boundary")
        hint = ("some tokens' bytes are not valid UTF-8 on their own (prop-utf8-boundary): dec works on bytes,"
                " never on text")
    return Failure("dec", "def-alphabet-vocab", detail, inputs, expected, actual, tuple(also), hint)


# ---------------------------------------------------------------------------
# train
# ---------------------------------------------------------------------------

Pair = tuple[int, int]


def _argmax(table: dict[Pair, int]) -> Pair | None:
    if not table or max(table.values()) <= 0:
        return None
    best = max(table.values())
    return min(pair for pair, n in table.items() if n == best)


def _first_seen(words: Sequence[Sequence[int]], pairs: set[Pair]) -> Pair | None:
    for word in words:
        for pair in itertools.pairwise(word):
            if pair in pairs:
                return pair
    return None


def _count_hint(words: list[list[int]], chosen: Pair) -> str:
    """Which wrong counting of def-bpe step 2 would have picked ``chosen`` (empty if none known)."""
    joined = [t for w in words for t in w]
    across = dict(count_pairs([joined]))
    distinct = dict(count_pairs([list(w) for w in dict.fromkeys(tuple(w) for w in words)]))
    non_overlapping = {
        pair: sum(rep_tokens(Rule(pair[0], pair[1], -1), w) for w in words) for pair, _ in count_pairs(words)
    }
    fits = [
        name
        for name, table in (
            ("counting pairs across word boundaries", across),
            ("counting each distinct word once (word frequencies lost)", distinct),
            ("counting non-overlapping occurrences (rep instead of cnt)", non_overlapping),
        )
        if _argmax(table) == chosen
    ]
    return "the choice fits " + ", or ".join(fits) if fits else ""


def judge_train(args: tuple[Any, ...], outcome: Outcome) -> Failure | None:
    """Compare train(corpus, m) with def-bpe's rules; name the step where the first rule differs."""
    corpus, num_merges = args
    trace = spec_trace(corpus, num_merges)
    expected = trace.rules
    inputs = {"corpus": [bytes(w) for w in corpus], "num_merges": num_merges}
    n_symbols, k_words = trace.corpus_symbols, trace.corpus_words
    bound = n_symbols - k_words

    def fail(claim: str, detail: str, actual: Any, also: tuple[str, ...] = (), hint: str = "") -> Failure:
        return Failure("train", claim, detail, inputs, expected, actual, also, hint)

    if outcome.kind == "timeout" or (outcome.kind == "crashed" and "exit code -9" in outcome.message):
        return fail("prop-bpe-training-termination",
                    f"training must stop after at most N − K = {n_symbols} − {k_words} = {bound} merges"
                    f" (num_merges = {num_merges}); the implementation {outcome.message}",
                    _error_text(outcome), ("def-bpe",))
    if outcome.kind != "ok":
        return fail("def-bpe", f"training is defined on every corpus (K ≥ 1 words in Σ⁺) and m ≥ 0 or None;"
                    f" the implementation {_error_text(outcome)}", _error_text(outcome))
    actual: list[Rule] = outcome.value
    if actual == expected:
        return None
    if len(actual) > bound:
        return fail("prop-bpe-training-termination",
                    f"{len(actual)} merges, more than N − K = {n_symbols} − {k_words} = {bound}", actual)
    if num_merges is not None and len(actual) > num_merges:
        return fail("def-bpe", f"def-bpe step 2: training stops at j = m = {num_merges};"
                    f" the implementation made {len(actual)} merges", actual)
    known = set(range(ALPHABET_SIZE))
    for j, (a, b, c) in enumerate(actual):
        if a not in known or b not in known:
            return fail("def-merge", f"rule {j} {(a, b, c)} joins an id that is not in V_{j}", actual)
        if c in known:
            return fail("prop-bpe-vocab-size", f"rule {j} {(a, b, c)} reuses id {c}, already in V_{j}:"
                        f" |V_m| = 256 + m needs every new id fresh", actual)
        known.add(c)
    for j in range(max(len(actual), len(expected))):
        mine = actual[j] if j < len(actual) else None
        theirs = expected[j] if j < len(expected) else None
        if mine == theirs:
            continue
        # x_k^(j), the words before iteration j + 1, as the specification's trace recorded them
        before = trace.steps[j - 1].words if j > 0 else tuple(tuple(w) for w in inputs["corpus"])
        words: list[list[int]] = [list(w) for w in before]
        table = dict(count_pairs(words))
        best = max(table.values()) if table else 0
        prefix = f"def-bpe, iteration {j + 1}"
        if mine is None:
            assert theirs is not None
            step = "step 3" if num_merges is None or j < num_merges else "step 2"
            merges = "1 merge" if j == 1 else f"{j} merges"
            times = "once" if best == 1 else f"{best} times"
            detail = (f"{prefix} ({step}): the implementation stopped after {merges}, but the pair"
                      f" {(theirs.a, theirs.b)} still occurs {times}: training stops only at j = m"
                      f" or when every count is 0")
            hint = "it stops when the best count is 1" if best == 1 else ""
            return fail("def-bpe", detail, actual, (), hint)
        if theirs is None:
            detail = (f"{prefix} (step 3): every pair count is 0 here (each word is one token), so training"
                      f" stops; the implementation added {tuple(mine)}")
            return fail("def-bpe", detail, actual, (), _count_hint(words, (mine.a, mine.b)))
        if (mine.a, mine.b) == (theirs.a, theirs.b):
            return fail("def-bpe", f"{prefix} (step 5): the new id is c_{j + 1} = 256 + {j} = {theirs.c};"
                        f" the implementation used {mine.c}", actual)
        count = table.get((mine.a, mine.b), 0)
        if count == best:
            tied = sorted(pair for pair, n in table.items() if n == best)
            hint = ""
            if (mine.a, mine.b) == max(tied):
                hint = "it takes the largest of the tied pairs"
            elif (mine.a, mine.b) == _first_seen(words, set(tied)):
                hint = "it takes the tied pair seen first in the corpus"
            return fail("def-bpe", f"{prefix} (step 4, tie-break): the pairs {tied[:6]} all occur {best} times;"
                        f" ties go to the smallest pair (compare a, then b): {(theirs.a, theirs.b)}, not"
                        f" {(mine.a, mine.b)}", actual, (), hint)
        return fail("def-bpe", f"{prefix} (step 2, counts): N_{j}{(mine.a, mine.b)} = {count}, but"
                    f" N_{j}{(theirs.a, theirs.b)} = {best} is the largest (pairs counted inside each word,"
                    f" overlapping occurrences included, every repeat of a word counted)",
                    actual, (), _count_hint(words, (mine.a, mine.b)))
    return None


JUDGES: dict[str, Callable[[tuple[Any, ...], Outcome], Failure | None]] = {
    "enc": judge_enc,
    "dec": judge_dec,
    "train": judge_train,
}


def judge(call: Call, outcome: Outcome) -> Failure | None:
    """Judge one call of the code under test; the failure, if any, carries the call."""
    kind, args = call
    failure = JUDGES[kind](args, outcome)
    if failure is not None:
        failure.call = call
        failure.outcome_kind = outcome.kind
    return failure
