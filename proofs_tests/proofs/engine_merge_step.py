"""The trainer's merge step equals M_r (def-merge) for token lists of every length: an induction on the tokens left
to scan, checked by CrossHair.

The engine's M_r is ``impl.trainer.apply_rule``, which checks its arguments and runs ``impl.trainer_loops.merge_list``:
a ``while`` loop over the positions, left to right, whose state is the output so far (``out``) and the position
(``i``).  The specification's M_r is the recursion of ``spec.merge.merge``.  This module proves them equal for
every list, by induction on r = n − i, the number of tokens the loop has still to scan.

The claim
---------
L(r): for every list ``tokens`` of length n, every position i with n − i = r and every output so far ``out``, the
loop started in the state (out, i) returns out · M_r(tokens[i:]).

* base r = 0 (``lemma_merge_list_base``): the test ``i < n`` fails, the loop returns out, and M_r(ε) = ε (the real
  definition);
* step r = 1 (``lemma_merge_list_step_last``): the test holds, one iteration (the loop's own body) appends t1 and
  moves to i + 1 = n, where L(0) gives out · t1; M_r((t1)) = (t1) (the real definition);
* step r ≥ 2 (``lemma_merge_list_step``): tokens[i:] = t1 t2 u with u of ANY length.  One iteration appends c and
  moves to i + 2 when (t1, t2) = (a, b), else appends t1 and moves to i + 1; the rest of the loop, from (out', i'),
  is L(n − i') by the hypothesis: out' · M_r(tokens[i':]), with M_r(tokens[i':]) a symbolic list of any length.
  M_r(t1 t2 u) is one unfolding of the real definition, whose recursive call must be on that very list
  tokens[i':] (u or t2 u) and is answered by the same value; any other recursive call is not covered.  Both
  sides must be the same list; and i < i' ≤ n, so r decreases and stays ≥ 0: the induction is well founded.

So the loop started as ``merge_list`` starts it, out = ε and i = 0, returns M_r(tokens) for every list.

The abstractions (each implements only what the loop's body uses, with its meaning on the list, or raises
``NotCovered``): ``Ahead`` is the token list whose first i items (i symbolic) the step never reads, followed by
tokens[i:] (a ``Segment`` of unknown length); ``Output`` is ``out``, of which the step only appends (reading an
earlier item is not covered), so its earlier items are left out of both sides.

The loop
--------
The induction needs the loop to carry nothing from one iteration to the next but (out, i): ``merge_list`` and the
end of ``apply_rule`` are checked by their syntax trees to be written exactly as quoted below
(``lemma_merge_list_is_a_loop_on_positions``), and every step runs the quoted body and test themselves
(``while_parts``).  A change to the loop is a refuted condition until the quoted text and this proof follow it.

Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.engine_merge_step
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable
from typing import cast

# The contracts below name these in their conditions: CrossHair evaluates a condition in this module's namespace.
from bpeproof.impl.trainer import apply_rule
from bpeproof.impl.trainer_loops import merge_list
from bpeproof.proofs_tests.proofs.induction_machinery import NotCovered, Recursion, Segment, as_list, merge_call
from bpeproof.proofs_tests.proofs.loop_machinery import written_as
from bpeproof.spec.merge import merge
from bpeproof.spec.types import Rule

# ---------------------------------------------------------------------------
# The loop, as the proof needs it written
# ---------------------------------------------------------------------------

#: The trainer's M_r: a scan of the positions, its only state the output so far and the position.
MERGE_LIST = """
out: list[int] = []
i, n = 0, len(tokens)
while i < n:
    if i + 1 < n and tokens[i] == a and tokens[i + 1] == b:
        out.append(c)
        i += 2
    else:
        out.append(tokens[i])
        i += 1
return out
"""

#: ``apply_rule``, once its arguments are checked: ``merge_list`` on a copy of the tokens.
APPLY_RULE = """
a, b, c = rule
return merge_list(list(tokens), a, b, c)
"""


def while_parts(
    statements: str, names: tuple[str, ...], context: dict[str, object] | None = None
) -> tuple[Callable[..., bool], Callable[..., dict[str, object]]]:
    """The test and the body of the first ``while`` loop of ``statements``, as two functions of ``names`` (by
    keyword): the test's value, and the values of ``names`` after one run of the body, with ``"break"`` saying
    whether the body left the loop.  ``context`` holds the other names the loop reads (the engine module's).

    ``statements`` is the quoted text that ``written_as`` checks is the engine's own, so these run its statements.
    """
    loop = next(node for node in ast.walk(ast.parse(textwrap.dedent(statements))) if isinstance(node, ast.While))
    arguments = ", ".join(names)
    body = "\n".join(ast.unparse(statement) for statement in loop.body)
    state = ", ".join(f"{name!r}: {name}" for name in names)
    # The body inside a loop of one pass, so that its ``break`` means what it means in the while loop.
    once = f"for _ in (0,):\n{textwrap.indent(body, '    ')}\nelse:\n    return {{{state}, 'break': False}}"
    after = f"{once}\nreturn {{{state}, 'break': True}}"
    source = (f"def test(*, {arguments}):\n    return {ast.unparse(loop.test)}\n"
              f"def iteration(*, {arguments}):\n" + textwrap.indent(after, "    "))
    namespace: dict[str, object] = dict(context or {})
    exec(compile(source, "<loop>", "exec"), namespace)  # the quoted (checked) text, nothing else
    return cast(Callable[..., bool], namespace["test"]), cast(Callable[..., dict[str, object]], namespace["iteration"])


#: What the loop reads and writes: its state (out, i) and what it only reads.
NAMES = ("out", "i", "tokens", "n", "a", "b", "c")
#: The test and the body of the loop of ``MERGE_LIST``.
Loop = tuple[Callable[..., bool], Callable[..., dict[str, object]]]
LOOP: Loop = while_parts(MERGE_LIST, NAMES)


def lemma_merge_list_is_a_loop_on_positions() -> None:
    """``merge_list`` is the loop quoted in ``MERGE_LIST`` and ``apply_rule`` runs it on a copy of the tokens.

    post[]: written_as(merge_list, MERGE_LIST)
    post: written_as(apply_rule, APPLY_RULE)
    """


# ---------------------------------------------------------------------------
# The abstractions: the tokens from position i on, and the output so far
# ---------------------------------------------------------------------------


class Ahead:
    """The token list p · w with |p| = ``at`` (symbolic) never read: its length, and its items from ``at`` on."""

    def __init__(self, at: int, ahead: list[int]) -> None:
        self.at = at
        self.ahead = ahead

    def __len__(self) -> int:
        return self.at + len(self.ahead)

    def __getitem__(self, index: int) -> int:
        if not isinstance(index, int) or index < self.at:
            raise NotCovered("an item before the position the loop is at")
        return self.ahead[index - self.at]


class Output:
    """``out``, a list whose earlier items are never read: only what the step appends is kept."""

    def __init__(self) -> None:
        self.items: list[int] = []

    def append(self, item: int) -> None:
        self.items.append(item)


def one_iteration(
    a: int, b: int, c: int, i: int, ahead: list[int], loop: Loop = LOOP
) -> tuple[bool, list[int], int]:
    """The loop in the state (out, i) with tokens[i:] = ``ahead``: whether its test holds, and after one run of its
    body, what it appended to out and the new position.  ``loop`` is the test and body run (a planted one, or the
    engine's)."""
    test, body = loop
    tokens, n, out = Ahead(i, ahead), i + len(ahead), Output()
    if not test(out=out, i=i, tokens=tokens, n=n, a=a, b=b, c=c):
        return False, out.items, i
    after = body(out=out, i=i, tokens=tokens, n=n, a=a, b=b, c=c)
    if after["out"] is not out or after["break"]:
        raise NotCovered("a body that replaces the output or leaves the loop")
    return True, out.items, cast(int, after["i"])


# ---------------------------------------------------------------------------
# L(r) by induction on r = n − i
# ---------------------------------------------------------------------------


def ends_with_out(a: int, b: int, c: int, i: int) -> bool:
    """L(0): at i = n the test fails, nothing is appended, and out = out · M_r(ε)."""
    goes_on, appended, _ = one_iteration(a, b, c, i, [])
    return not goes_on and appended == [] and merge(Rule(a, b, c), []) == []


def last_token(a: int, b: int, c: int, i: int, t1: int, loop: Loop = LOOP) -> bool:
    """L(0) ⇒ L(1): one iteration on tokens[i:] = (t1) reaches n, where L(0) leaves out' as it is; M_r((t1)) = (t1)."""
    goes_on, appended, after = one_iteration(a, b, c, i, [t1], loop)
    ahead = [t1]
    return goes_on and after == i + 1 and appended + merge(Rule(a, b, c), ahead[after - i :]) == (
        merge(Rule(a, b, c), ahead))


def step_sides(
    a: int, b: int, c: int, i: int, t1: int, t2: int, u: list[int], rest: list[int], loop: Loop = LOOP
) -> tuple[object, ...]:
    """L(r') ⇒ L(r) for tokens[i:] = t1 t2 u: (whether the test holds, i' − i, the loop's value, the specification's).

    Both values leave out's earlier items out.  The loop's is what one iteration appends followed by the
    hypothesis' M_r(tokens[i':]) = ``rest`` (any length); the specification's is M_r(t1 t2 u) by one unfolding,
    its recursive call answered by ``rest`` on tokens[i':] only.
    """
    ahead = as_list(Segment([t1, t2], u))
    goes_on, appended, after = one_iteration(a, b, c, i, ahead, loop)
    moved = after - i
    if not 1 <= moved <= 2:
        return goes_on, moved, None, None
    hypothesis = as_list(Segment([], rest))
    rule = Rule(a, b, c)
    spec = merge(rule, ahead, rec=merge_call(rule, Recursion(len(ahead), [(ahead[moved:], hypothesis)])))
    return goes_on, moved, appended + hypothesis, spec


def step_holds(sides: tuple[object, ...]) -> bool:
    """The test held, the position moved by 1 or 2 (so i < i' ≤ n), and both values are the same list."""
    goes_on, moved, loop_value, spec_value = sides
    return goes_on is True and moved in (1, 2) and loop_value is not None and loop_value == spec_value


def lemma_merge_list_base(a: int, b: int, c: int, i: int) -> None:
    """L(0): the loop in the state (out, n) returns out = out · M_r(ε), for every n = i ≥ 0.

    pre: i >= 0
    post[]: ends_with_out(a, b, c, i)
    """


def lemma_merge_list_step_last(a: int, b: int, c: int, i: int, t1: int) -> None:
    """L(0) ⇒ L(1): tokens[i:] = (t1), i ≥ 0 of ANY size.

    pre: i >= 0
    post[]: last_token(a, b, c, i, t1)
    """


def lemma_merge_list_step(a: int, b: int, c: int, i: int, t1: int, t2: int, u: list[int], rest: list[int]) -> None:
    """L(r') for r' < r ⇒ L(r), r ≥ 2: tokens[i:] = t1 t2 u with u of ANY length, i ≥ 0 of any size.

    ``rest`` is M_r(tokens[i':]), given by the hypothesis L(n − i'); nothing else constrains it.

    pre: i >= 0
    post[]: step_holds(step_sides(a, b, c, i, t1, t2, u, rest))
    """
