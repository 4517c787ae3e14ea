"""def-bpe steps 3–5 for every corpus and every number of merges: training stops only at j = m or when every count
is 0, takes the largest count N_j, breaks ties to the smallest pair in the order of V_j, and makes the new id
256 + j, larger than every earlier one; the words after are M_r of the words before.

The induction is over the iterations of the loop of ``spec.bpe.train_trace`` (checked by
``training.lemma_training_loop_is_a_fold`` to be the fold ``training.TRAINING_LOOP`` quotes: its state is j, the
words xs, the steps so far and the depths, and it reads m and the step counter), on the facts of step 2 (the table
of ``count_pairs`` lists every occurring pair with its count N_j, in increasing order: ``pair_counts``):

1. The start (``lemma_training_start_is_as_quoted``): before the loop, no step and j = 0.
2. One iteration (``lemma_iteration_step``), for any j ≥ 0 and any number of words and merges before it: the
   hypothesis is that the steps so far number j, the k-th (from 0) made the id 256 + k.  The step runs the body
   of the real loop (compiled from the source of ``train_trace``, ``while_body``) once, with the calls it makes
   answered by what the other proofs establish: ``count_pairs`` by a table (``Table``: only whether it is empty
   reaches the loop; its entries are step 2's), ``select_pair`` by its result (the pair, its count and the tied
   pairs, opaque: 3. below), M_r by an opaque "M_r applied to this word with this rule" (the merge lemma and the
   direction of M_r hold for every length), the depth guard (no part of def-bpe) by a depth.  It proves: the
   iteration stops exactly when j = m or the table is empty (step 3); otherwise it appends one step whose rule is
   (a, b ↦ 256 + j) with the selected pair and count (steps 4–5), 256 + j is larger than every byte and every
   earlier id 256 + k, k < j, the words after are M_r of each word before, and j becomes j + 1: the hypothesis for
   the next iteration.
3. Step 4 inside ``select_pair`` (its two loops are folds, ``training.lemma_select_pair_is_a_fold``):
   ``training.lemma_largest_count_step`` keeps "``best`` is the largest count read, reached by an entry"; the
   second loop keeps "the first item of ``maxima`` is the smallest pair read whose count is ``best``"
   (``lemma_smallest_maximum_step``, on the table's increasing order from step 2), and ``select_pair`` returns
   that item with ``best``.  So the pair chosen has the largest N_j and is the smallest of those with it.

"The smallest pair in the order of V_j" is the integer order the table is sorted by: bytes come first, by value,
then the new ids in the order they were made, which by 2. is their integer order (256 + k < 256 + j for k < j).

Abstractions, and why they are sound: the words are opaque values (``Opaque``: no operation is defined on them, so
a loop that looked into a word other than through M_r would be a failed step); what the iteration does with them
is the comprehension ``[merge(rule, x, cost) for x in xs]``, which treats every word alike, so two words stand
for any number.  The tied pairs are opaque too.  ``StepsSoFar`` stands for the list of steps so far by its length
(the hypothesis states the rest) and records what is appended.  A step whose code raises (an operation an
abstraction does not have) is a failed step, never assumed.

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.selection
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import cast

# The contracts below name these in their conditions: CrossHair evaluates a condition in this module's namespace.
from bpeproof.proofs_tests.proofs.induction_machinery import NotCovered
from bpeproof.proofs_tests.proofs.loop_machinery import written_as  # noqa: F401 (named by a condition)
from bpeproof.proofs_tests.proofs.training import first_maximum_after
from bpeproof.spec.bpe import Pair, TraceStep, train_trace
from bpeproof.spec.types import ALPHABET_SIZE, Rule

# ---------------------------------------------------------------------------
# Running one iteration of a while loop
# ---------------------------------------------------------------------------


class _BreakToReturn(ast.NodeTransformer):
    """Turn each ``break`` of the loop itself (not of a loop nested in it) into ``return (True, <state>)``."""

    def __init__(self, state: str) -> None:
        self.state = state

    def visit_Break(self, node: ast.Break) -> ast.stmt:
        return ast.parse(f"return (True, {self.state})").body[0]

    def visit_For(self, node: ast.For) -> ast.For:
        return node  # its breaks are its own

    def visit_While(self, node: ast.While) -> ast.While:
        return node


def while_body(function: Callable[..., object], names: tuple[str, ...], carried: tuple[str, ...]
               ) -> Callable[..., tuple[bool, dict[str, object]]]:
    """The body of the first ``while`` loop of ``function``'s source, as a function that runs one iteration.

    Its keyword arguments are ``names``, every name the body reads; it returns (True, ``carried``) at a ``break``
    (the loop stops there) and (False, ``carried``) at the end of the body (the loop goes on).
    """
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    loop = next(node for node in ast.walk(tree) if isinstance(node, ast.While))
    state = "{" + ", ".join(f"{name!r}: {name}" for name in carried) + "}"
    body = [_BreakToReturn(state).visit(statement) for statement in loop.body]
    text = "\n".join(ast.unparse(statement) for statement in body) + f"\nreturn (False, {state})"
    source = f"def iteration(*, {', '.join(names)}):\n" + textwrap.indent(text, "    ")
    namespace: dict[str, object] = {}
    exec(compile(source, "<while body>", "exec"), namespace)  # the function's own loop body, nothing else
    return cast(Callable[..., tuple[bool, dict[str, object]]], namespace["iteration"])


#: One iteration of the loop of ``train_trace``: what it reads, and what it hands to the next iteration.
ITERATION = while_body(train_trace, ("bound", "j", "xs", "cost", "steps", "depths", "count_pairs", "select_pair",
                                     "merge", "_checked_depth", "Rule", "ALPHABET_SIZE", "TraceStep"),
                       ("j", "xs", "steps", "depths"))

# ---------------------------------------------------------------------------
# The abstractions one iteration runs on
# ---------------------------------------------------------------------------


class Opaque:
    """A value the iteration may only pass on or compare for identity: a word, the tied pairs."""

    __slots__ = ("name",)

    def __init__(self, name: int) -> None:
        self.name = name

    def __len__(self) -> int:
        raise NotCovered("looking into an opaque value")

    def __iter__(self) -> object:
        raise NotCovered("looking into an opaque value")

    def __bool__(self) -> bool:
        raise NotCovered("looking into an opaque value")


class Table:
    """The table of ``count_pairs``, of which the iteration sees only whether it is empty (step 2 gives the rest)."""

    def __init__(self, entries: bool) -> None:
        self.entries = entries

    def __bool__(self) -> bool:
        if self.entries:  # noqa: SIM103 (a bool, where CrossHair's symbolic one is refused by ``not``)
            return True
        return False


class StepsSoFar:
    """The steps so far, by their number (the hypothesis states what they are), and what the iteration appends."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.appended: list[TraceStep] = []

    def append(self, step: TraceStep) -> None:
        self.appended.append(step)
        self.size += 1


class Depths:
    """The depths of the new ids so far (the guard of ``MAX_RULE_DEPTH``, no part of def-bpe): written, never read
    by the loop (a symbolic key in a real dictionary would make CrossHair fix its value)."""

    def __init__(self) -> None:
        self.written: list[tuple[int, int]] = []

    def __setitem__(self, key: int, value: int) -> None:
        self.written.append((key, value))


def iterate(j: int, has_bound: bool, m: int, entries: bool, a: int, b: int, count: int
            ) -> tuple[bool, dict[str, object], StepsSoFar, list[Opaque], Opaque] | None:
    """One iteration of the real loop on the abstractions; None if it cannot be run on them."""
    words, tied, table = [Opaque(1), Opaque(2)], Opaque(3), Table(entries)

    def counted(xs: object, cost: object) -> Table:
        if xs is not words:
            raise NotCovered("pairs counted in something other than the words")
        return table

    def selected(given: object, cost: object) -> tuple[Pair, int, Opaque]:
        if given is not table:
            raise NotCovered("a pair selected from something other than the table")
        return (a, b), count, tied

    def applied(rule: Rule, x: object, cost: object) -> tuple[str, Rule, object]:
        return ("M_r", rule, x)

    steps = StepsSoFar(j)
    try:
        stopped, after = ITERATION(
            bound=m if has_bound else None, j=j, xs=words, cost=None, steps=steps, depths=Depths(), count_pairs=counted,
            select_pair=selected, merge=applied, _checked_depth=lambda depths, rule, index: 1, Rule=Rule,
            ALPHABET_SIZE=ALPHABET_SIZE, TraceStep=TraceStep)
    except (NotCovered, TypeError, AttributeError, IndexError):
        return None
    return stopped, after, steps, words, tied


def iteration_claims(j: int, has_bound: bool, m: int, entries: bool, a: int, b: int, count: int) -> bool:
    """Step 3: the iteration stops exactly when j = m or the table is empty, and then changes nothing; steps 4–5:
    otherwise it appends the rule (a, b ↦ 256 + j) with the selected pair and count, 256 + j is larger than every
    earlier id, the words become M_r of each word, and j becomes j + 1."""
    ran = iterate(j, has_bound, m, entries, a, b, count)
    if ran is None:
        return False
    stopped, after, steps, words, tied = ran
    if stopped != ((has_bound and j == m) or not entries):
        return False
    if stopped:
        return after["j"] == j and after["xs"] is words and not steps.appended
    rule = Rule(a, b, ALPHABET_SIZE + j)
    if len(steps.appended) != 1:
        return False
    step = steps.appended[0]
    return (
        step.rule == rule and step.count == count and step.tied is cast(object, tied)
        and rule.c >= ALPHABET_SIZE and rule.c > ALPHABET_SIZE + j - 1
        and after["xs"] == [("M_r", rule, word) for word in words]
        and after["j"] == j + 1 and steps.size == j + 1
    )


#: The state before the loop of ``train_trace``: no step yet, j = 0.
TRAINING_START = """
steps: list[TraceStep] = []
depths: dict[int, int] = {}
j = 0
"""


def lemma_training_start_is_as_quoted() -> None:
    """Before the loop, ``train_trace`` has made no step and j = 0 (as quoted in ``TRAINING_START``).

    post[]: written_as(train_trace, TRAINING_START)
    """


def lemma_iteration_step(j: int, has_bound: bool, m: int, entries: bool, a: int, b: int, count: int) -> None:
    """One iteration of def-bpe's loop, after j merges (any j, any corpus): the hypothesis is that j steps were
    made, the k-th with the id 256 + k; m ≥ 0 when there is a bound; a non-empty table's selected count is ≥ 1.

    pre: j >= 0 and m >= 0 and count >= 1
    post[]: iteration_claims(j, has_bound, m, entries, a, b, count)
    """


# ---------------------------------------------------------------------------
# Step 4: the first item of ``maxima`` is the smallest pair read with the largest count
# ---------------------------------------------------------------------------


def smallest_maximum(pa: int, pb: int, count: int, best: int, fa: int, fb: int, has_first: bool) -> bool:
    """After one iteration of the second loop of ``select_pair`` on ((pa, pb), count), the first item of ``maxima``
    is the smallest pair read whose count is ``best`` (None if none), given that it was before."""
    first = (fa, fb) if has_first else None
    read = ([first] if first is not None else []) + ([(pa, pb)] if count == best else [])
    return first_maximum_after(pa, pb, count, best, first) == (min(read) if read else None)


def lemma_smallest_maximum_step(pa: int, pb: int, count: int, best: int, fa: int, fb: int, has_first: bool) -> None:
    """The table's pairs are increasing (step 2), so every pair read before (pa, pb), the first maximum among them,
    is smaller; the hypothesis: ``maxima``'s first item is the smallest pair read so far with the count ``best``.

    pre: count >= 1
    pre: not has_first or (fa, fb) < (pa, pb)
    post[]: smallest_maximum(pa, pb, count, best, fa, fb, has_first)
    """
