"""The induction gate: lem-merge-step and what follows from it, proved for lists of every length
(``proofs_tests.proofs.induction``, on the machinery of ``proofs_tests.proofs.induction_machinery``).

* CrossHair must answer "Confirmed over all paths" for every condition of ``proofs_tests.proofs.induction``: each base
case and
  each inductive step of the strong induction on |x|, whose rest u has no length bound, the well-foundedness of
  every recursion, the round trip's start, ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩ for ``symbols`` and the N − K variant.
* Each planted false claim of ``proofs_tests/planted/false_steps.py`` must be refuted at its step
  (``planted_*``) and go through at its other steps (``passes_*``), with the same budget.
* Without CrossHair: the step machinery (``Segment``, ``Recursion``, ``unfold``) computes on real lists exactly
  what the definitions compute, and every planted claim is false on a real list.
"""

from __future__ import annotations

import inspect

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof.proofs_tests.planted import false_steps as planted
from bpeproof.proofs_tests.proofs import crosshair_runs as runs
from bpeproof.proofs_tests.proofs import induction
from bpeproof.proofs_tests.proofs import induction_machinery as machinery
from bpeproof.proofs_tests.proofs.induction_machinery import (
    EMPTY,
    LEMMA,
    Facts,
    NotCovered,
    Segment,
    as_list,
    facts_of,
    spelling,
    unfold,
)
from bpeproof.spec.merge import dec_over, merge
from bpeproof.spec.types import Rule

TIMEOUT = runs.RUN_TIMEOUT + 60

#: Token ids 0..2 and the new id 3: tiny alphabets reach a = b rules, runs and overlaps.
TOKENS = st.integers(0, 3)
RULES = st.builds(Rule, st.integers(0, 2), st.integers(0, 2), st.just(3))


def atoms(rule: Rule) -> machinery.Spelling:
    """A spelling of V' = {0, 1, 2} ∪ {3} in the free monoid: token t ≤ 2 is the atom 10 + t."""
    return spelling(rule, [(t, 10 + t) for t in range(3)])


@pytest.mark.timeout(TIMEOUT)
def test_every_induction_condition_confirmed() -> None:
    path = runs.module_file(runs.INDUCTION)
    done = runs.result("induction")
    expected = runs.condition_lines(path)
    assert len(expected) >= 45, "bpeproof.proofs_tests.proofs.induction lost conditions"
    found = runs.verdicts(done.output, path)
    not_confirmed = {
        line: found.get(line, "no verdict") for line in sorted(expected) if found.get(line) != runs.CONFIRMED
    }
    assert not not_confirmed, f"induction conditions not confirmed: {not_confirmed}\n{done.output}"
    assert done.returncode == 0, done.output


@pytest.mark.timeout(TIMEOUT)
def test_planted_steps_fail_at_their_step() -> None:
    path = runs.module_file(runs.PLANTED_STEPS)
    done = runs.result("induction.planted")
    found = runs.verdicts(done.output, path)
    functions = [name for name, _ in inspect.getmembers(planted, inspect.isfunction)
                 if name.startswith(("planted_", "passes_"))]
    assert sum(name.startswith("planted_") for name in functions) >= 5
    covered: set[int] = set()
    wrong: dict[str, list[str]] = {}
    for name in functions:
        lines = runs.condition_lines(path, name)
        assert lines, name
        covered |= lines
        verdicts = [found.get(line, "no verdict") for line in sorted(lines)]
        if name.startswith("planted_"):
            ok = all(v.startswith("error:") and " when calling " in v for v in verdicts)
        else:
            ok = all(v == runs.CONFIRMED for v in verdicts)
        if not ok:
            wrong[name] = verdicts
    assert not wrong, f"planted steps with the wrong verdict: {wrong}\n{done.output}"
    assert covered == runs.condition_lines(path), "a condition of the planted module belongs to no function"
    assert done.returncode == 1, done.output  # a counterexample; anything else (a crash, a usage error) is broken


# ---------------------------------------------------------------------------
# The step machinery on real lists
# ---------------------------------------------------------------------------


@settings(max_examples=300)
@given(RULES, TOKENS, TOKENS, st.lists(TOKENS, max_size=8))
def test_one_unfolding_computes_the_definitions(rule: Rule, t1: int, t2: int, u: list[int]) -> None:
    """``unfold`` on x = t1 t2 u, answered by the real quantities of the list def-merge recurses on, gives x's."""
    spell = atoms(rule)
    y = u if (t1, t2) == (rule.a, rule.b) else [t2] + u
    x_segment = Segment([t1, t2], u)
    y_segment = Segment([], u) if y is u else Segment([t2], u)
    hypothesis = facts_of(rule, y, spell)
    hypothesis = Facts(hypothesis.length, as_list(Segment([], hypothesis.merged)), hypothesis.rep, hypothesis.cnt,
                       hypothesis.dec, hypothesis.dec_merged)
    got = unfold(rule, as_list(x_segment), spell, [(as_list(y_segment), hypothesis)])
    want = facts_of(rule, [t1, t2] + u, spell)
    assert isinstance(got.merged, Segment)
    assert (got.length, got.merged.to_list(), got.rep, got.cnt, got.dec, got.dec_merged) == (
        want.length, want.merged, want.rep, want.cnt, want.dec, want.dec_merged)
    assert all(claim(rule, want) for claim in LEMMA)


@settings(max_examples=100)
@given(RULES, st.lists(TOKENS, max_size=1))
def test_base_cases_compute_the_definitions(rule: Rule, x: list[int]) -> None:
    spell = atoms(rule)
    got, want = unfold(rule, x, spell, []), facts_of(rule, x, spell)
    assert got == want
    assert all(claim(rule, got) for claim in LEMMA)


def test_a_recursive_call_outside_the_hypothesis_is_refused() -> None:
    rule = Rule(0, 1, 3)
    u = [2, 2]
    wrong = as_list(Segment([2], u))  # 2 2 2: a "hypothesis" on a list M_r does not recurse on for 0 1 2 2
    with pytest.raises(NotCovered):
        unfold(rule, as_list(Segment([0, 1], u)), atoms(rule), [(wrong, facts_of(rule, [2, 2, 2], atoms(rule)))])
    with pytest.raises(machinery.IllFounded):
        machinery.Recursion(2, [])([1, 0])


@settings(max_examples=300)
@given(st.lists(TOKENS, max_size=3), st.lists(TOKENS, max_size=5), st.data())
def test_segment_is_the_list_it_stands_for(prefix: list[int], rest: list[int], data: st.DataObject) -> None:
    """Every operation of a Segment gives what the list gives, or raises NotCovered: never another answer."""
    start = data.draw(st.integers(0, len(rest)))
    segment = Segment(list(prefix), rest, start)
    items = prefix + rest[start:]
    assert len(segment) == len(items) and bool(segment) == bool(items) and segment.to_list() == items
    for index in range(len(items)):
        assert segment[index] == items[index]
    for k in range(len(items) + 2):
        try:
            part = segment[k:]
        except NotCovered:
            assert k > len(items)
        else:
            assert isinstance(part, Segment) and part.to_list() == items[k:]
    head = data.draw(st.lists(TOKENS, max_size=2))
    joined = head + as_list(segment)
    assert isinstance(joined, Segment) and joined.to_list() == head + items
    other = Segment(data.draw(st.lists(TOKENS, max_size=3)), rest, start)
    assert (segment == other) == (items == other.to_list())
    stranger = Segment(list(prefix), list(rest), start)  # equal items, another list behind them
    with pytest.raises(NotCovered):
        _ = segment == stranger
    with pytest.raises(NotCovered):
        list(segment)


# ---------------------------------------------------------------------------
# Each planted claim is false on a real list, where its refuted step says
# ---------------------------------------------------------------------------


def test_planted_claims_are_false_on_real_lists() -> None:
    rule = Rule(0, 0, 3)
    aaa = facts_of(rule, [0, 0, 0], atoms(rule))
    assert (aaa.rep, aaa.cnt) == (1, 2)
    assert not planted.rep_equals_cnt(rule, aaa) and not planted.shortens_by_cnt(rule, aaa)
    single = facts_of(rule, [1], atoms(rule))
    assert not planted.always_shortens(rule, single)
    distinct = Rule(0, 1, 3)
    right = atoms(distinct)

    def swapped(token: int) -> tuple[int, ...]:
        return right(1) + right(0) if token == 3 else right(token)

    ab = [0, 1]
    assert dec_over(swapped, merge(distinct, ab), EMPTY) != dec_over(swapped, ab, EMPTY)
    one_word = induction.with_word(facts_of(distinct, ab, right), induction.NO_WORDS)
    assert one_word.cnt == 1 and not planted.drops_by_two(one_word)
    with pytest.raises(machinery.IllFounded):
        planted.circular_merge(distinct, [1, 0], machinery.merge_call(distinct, machinery.Recursion(2, [([0, 1], [])])))
