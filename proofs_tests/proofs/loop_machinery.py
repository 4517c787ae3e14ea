"""The machinery of the inductions over a loop of the specification: the loop principle, the check that a loop is
written as the principle needs, and a rule list that a step may read only at its frontier.

``induction_machinery`` runs a recursive definition with its recursive call answered by the induction hypothesis.
Some definitions of the specification are loops instead, because a real rule list has tens of thousands of rules,
far more than Python's recursion limit allows frames for: enc_R is ``for rule in rules: tokens = merge(rule,
tokens)`` (``bpeproof.spec.bpe.enc_tokens``), ⟨⟨t⟩⟩ over V_j scans the rules from r_j down to r_1
(``bpeproof.spec.merge.symbols``), V_m is Σ followed by one new id per rule (``bpeproof.spec.merge.vocabulary``).

The loop principle
------------------
A loop over a list whose only state is what one iteration hands to the next is a fold, and a fold over R · r is
the fold over R followed by one iteration on r (or, scanning from the end, one iteration on r followed by the
fold over R).  So an induction over the list needs a base case (the loop over no item, run as the real code) and
one step (one iteration of the real code, the rest of the loop answered by the induction hypothesis), exactly as
for a recursion, where "the rest of the loop" plays the part of the recursive call.  The principle holds only
for a loop written as a fold: a second variable carried from one iteration to the next (a counter, a bound
computed from the whole list, a stride) breaks it.  So every loop a proof runs through is checked, by its syntax
tree, to be written exactly as the proof's module quotes it (``written_as``): a change to the loop is a proof
that no longer applies, and is reported as a refuted condition, never assumed.

A rule list read only at its frontier
-------------------------------------
``Frontier`` is a rule list of unknown length of which a step reads one rule (at a symbolic index k): reading a
rule below k means the scan has gone on to the rules before, which is where the scan over the shorter list
starts; it raises ``Continue`` with the index, and the step answers the rest of the scan by the induction
hypothesis (``scan_outcome``).  Reading anything else, or asking the list's length, is ``NotCovered``.  The
scan of ``symbols`` carries nothing from one rule to the next but the index (``written_as`` checks it), so a scan
that goes on at index k − 1 is, from there on, the scan over V_k.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import cast

from bpeproof.proofs_tests.proofs.induction_machinery import NotCovered
from bpeproof.spec.merge import SymbolsCall, symbols
from bpeproof.spec.types import InvalidTokenError, Rule


class Continue(Exception):
    """A scan read a rule below the frontier: it goes on at ``index`` with the rules before the frontier."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


class Frontier:
    """A rule list r_1 … r_k r … of unknown length: only ``rule``, at index ``at``, can be read (none if None).

    Reading index i with 0 ≤ i < ``at`` raises ``Continue(i)``; any other read, and ``len``, raise ``NotCovered``.
    """

    def __init__(self, at: int, rule: Rule | None) -> None:
        self.at = at
        self.rule = rule

    def __len__(self) -> int:
        raise NotCovered("the length of a rule list of unknown length")

    def __getitem__(self, index: int | slice) -> Rule:
        if not isinstance(index, int):
            raise NotCovered("a slice of a rule list of unknown length")
        if index == self.at and self.rule is not None:
            return self.rule
        if 0 <= index < self.at:
            raise Continue(index)
        raise NotCovered("a rule past the frontier")


#: How a run of ``symbols`` on a ``Frontier`` ended: ("spelled", its value), ("continue", the index it went on
#: at) or ("invalid",) when the token is in no vocabulary.
Outcome = tuple[object, ...]


def scan_outcome(rules: Frontier, token: int, before: int, rec: SymbolsCall | None = None) -> Outcome:
    """Run ``symbols`` (the real code) on ``rules`` over V_``before``, and say how it ended."""
    try:
        return ("spelled", symbols(rules, token, before, rec=rec))  # type: ignore[arg-type]
    except Continue as going_on:
        return ("continue", going_on.index)
    except InvalidTokenError:
        return ("invalid",)


def written_as(function: Callable[..., object], statements: str) -> bool:
    """Whether the body of ``function`` holds ``statements`` (one or more, in order, in one block: its own body or a
    block nested in it), as syntax.

    Names, operators and constants must match exactly; comments, blank lines and line breaks do not matter.
    """
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    if not isinstance(definition, ast.FunctionDef):
        return False
    wanted = [ast.dump(statement) for statement in ast.parse(textwrap.dedent(statements)).body]
    for node in ast.walk(definition):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and all(isinstance(statement, ast.stmt) for statement in block):
                dumped = [ast.dump(statement) for statement in block]
                if any(dumped[i : i + len(wanted)] == wanted for i in range(len(dumped) - len(wanted) + 1)):
                    return True
    return False


def loop_body(statements: str, carried: tuple[str, ...], number: int = 0) -> Callable[..., dict[str, object]]:
    """The body of the ``number``-th ``for`` loop of ``statements``, as a function that runs one iteration.

    ``statements`` is the quoted text of a loop that ``written_as`` checks is the specification's own, so the
    function runs the specification's statements.  Its arguments are the loop's target names, then ``carried``
    (what one iteration hands to the next, and what the body reads besides), by keyword; it returns ``carried``
    after the iteration.
    """
    tree = ast.parse(textwrap.dedent(statements))
    loop = [node for node in ast.walk(tree) if isinstance(node, ast.For)][number]
    targets = [node.id for node in ast.walk(loop.target) if isinstance(node, ast.Name)]
    body = "\n".join(ast.unparse(statement) for statement in loop.body)
    after = "return {" + ", ".join(f"{name!r}: {name}" for name in carried) + "}"
    source = f"def iteration(*, {', '.join((*targets, *carried))}):\n" + textwrap.indent(f"{body}\n{after}", "    ")
    namespace: dict[str, object] = {}
    exec(compile(source, "<loop body>", "exec"), namespace)  # the quoted (checked) text, nothing else
    return cast(Callable[..., dict[str, object]], namespace["iteration"])


def after_loop(statements: str, names: tuple[str, ...], number: int = 0) -> Callable[..., object]:
    """The statements that follow the ``number``-th top-level ``for`` loop of ``statements``, as a function of
    ``names`` (by keyword: the state the loop leaves and what the statements read) that returns what they return.

    As for ``loop_body``, ``statements`` is quoted text that ``written_as`` checks is the specification's own.
    """
    tree = ast.parse(textwrap.dedent(statements))
    loops = [position for position, node in enumerate(tree.body) if isinstance(node, ast.For)]
    rest = "\n".join(ast.unparse(statement) for statement in tree.body[loops[number] + 1 :])
    source = f"def rest(*, {', '.join(names)}):\n" + textwrap.indent(rest, "    ")
    namespace: dict[str, object] = {}
    exec(compile(source, "<after the loop>", "exec"), namespace)  # the quoted (checked) text, nothing else
    return cast(Callable[..., object], namespace["rest"])


def body_of(function: Callable[..., object]) -> str:
    """The statements of ``function``'s body, as text: a step that runs them (``loop_body``, ``after_loop``) runs
    the code as it is, where ``written_as`` checks that it is still the loop a proof quotes."""
    definition = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    if not isinstance(definition, ast.FunctionDef):
        raise NotCovered("the source of something other than a function")
    return "\n".join(ast.unparse(statement) for statement in definition.body)
