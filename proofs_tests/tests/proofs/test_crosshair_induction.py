"""The induction gate: lem-merge-step and what follows from it, proved for lists of every length
(``proofs_tests.proofs.induction``, on the machinery of ``proofs_tests.proofs.induction_machinery``), and the
inductions over the rule list and on token lists built on it (``rule_lists``, ``token_lists``, with
``loop_machinery``).

* CrossHair must answer "Confirmed over all paths" for every condition of those modules: each base case and each
  inductive step of the strong induction on |x|, whose rest u has no length bound, the well-foundedness of every
  recursion, the round trip's start, ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩ for ``symbols``, the N − K variant; the spellings over
  V_k, the loop of enc_R and the vocabulary for rule lists of any length, the loops checked to be folds;
  dec(xy) = dec(x)dec(y) and the run length for lists of any length.
* Each planted false claim of ``proofs_tests/planted/false_steps.py`` and ``false_heap_steps.py`` must be refuted at
  its step (``planted_*``) and go through at its other steps (``passes_*``), with the same budget.
* Without CrossHair: the step machinery (``Segment``, ``Recursion``, ``unfold``, ``Frontier``, ``Uniform``) computes
  on real lists exactly what the definitions compute, the loops are folds on real rule lists, and every planted
  claim is false on a real list.
"""

from __future__ import annotations

import inspect
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof.proofs_tests.planted import false_heap_steps
from bpeproof.proofs_tests.planted import false_steps as planted
from bpeproof.proofs_tests.proofs import crosshair_runs as runs
from bpeproof.proofs_tests.proofs import induction, token_lists, training, training_cost
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
from bpeproof.proofs_tests.proofs.loop_machinery import Continue, Frontier, scan_outcome
from bpeproof.spec.bpe import Pair, count_pairs, enc_tokens, select_pair
from bpeproof.spec.merge import Steps, cnt_tokens, dec_over, dec_tokens, merge, rep_tokens, symbols, vocabulary
from bpeproof.spec.types import ALPHABET_SIZE, InvalidTokenError, Rule

TIMEOUT = runs.RUN_TIMEOUT + 60

#: Token ids 0..2 and the new id 3: tiny alphabets reach a = b rules, runs and overlaps.
TOKENS = st.integers(0, 3)
RULES = st.builds(Rule, st.integers(0, 2), st.integers(0, 2), st.just(3))


def atoms(rule: Rule) -> machinery.Spelling:
    """A spelling of V' = {0, 1, 2} ∪ {3} in the free monoid: token t ≤ 2 is the atom 10 + t."""
    return spelling(rule, [(t, 10 + t) for t in range(3)])


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize(("module", "at_least"), [(runs.INDUCTION, 45), (runs.RULE_LISTS, 14), (runs.TOKEN_LISTS, 8),
                                                 (runs.TRAINING, 14), (runs.TRAINING_COST, 11),
                                                 (runs.MERGE_DIRECTION, 5), (runs.PAIR_COUNTS, 7),
                                                 (runs.SELECTION, 3), (runs.RULE_RANK, 10)])
def test_every_induction_condition_confirmed(module: str, at_least: int) -> None:
    path = runs.module_file(module)
    done = runs.result("induction")
    expected = runs.condition_lines(path)
    assert len(expected) >= at_least, f"{module} lost conditions"
    found = runs.verdicts(done.output, path)
    not_confirmed = {
        line: found.get(line, "no verdict") for line in sorted(expected) if found.get(line) != runs.CONFIRMED
    }
    assert not not_confirmed, f"induction conditions not confirmed: {not_confirmed}\n{done.output}"
    assert done.returncode == 0, done.output


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize(("module", "functions_of", "at_least"), [(runs.PLANTED_STEPS, planted, 13),
                                                                 (runs.PLANTED_HEAP_STEPS, false_heap_steps, 2)])
def test_planted_steps_fail_at_their_step(module: str, functions_of: ModuleType, at_least: int) -> None:
    path = runs.module_file(module)
    done = runs.result("induction.planted")
    found = runs.verdicts(done.output, path)
    functions = [name for name, _ in inspect.getmembers(functions_of, inspect.isfunction)
                 if name.startswith(("planted_", "passes_")) and getattr(functions_of, name).__module__ == module]
    assert sum(name.startswith("planted_") for name in functions) >= at_least
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


# ---------------------------------------------------------------------------
# The loops over the rule list, and the machinery of their inductions, on real rule lists
# ---------------------------------------------------------------------------


@st.composite
def valid_rules(draw: st.DrawFn) -> list[Rule]:
    """A valid rule list over the bytes a, b, c (97..99) and the ids made before each rule: new ids 256, 257, …"""
    rules: list[Rule] = []
    for j in range(draw(st.integers(0, 7))):
        known = [97, 98, 99, *(ALPHABET_SIZE + i for i in range(j))]
        rules.append(Rule(draw(st.sampled_from(known)), draw(st.sampled_from(known)), ALPHABET_SIZE + j))
    return rules


@settings(max_examples=200)
@given(valid_rules(), st.binary(max_size=12).map(lambda data: bytes(97 + byte % 3 for byte in data)))
def test_the_loops_over_the_rules_are_folds(rules: list[Rule], data: bytes) -> None:
    """On real rule lists, what the inductions over the rule list take from the loops' being folds: enc over R · r
    is M_r after enc over R, V_{R·r} is V_R followed by c, and S_{k+1}(t) = S_k(t) for t ∈ V_k."""
    for j in range(len(rules)):
        earlier, rule = rules[:j], rules[j]
        assert enc_tokens([*earlier, rule], list(data)) == merge(rule, enc_tokens(earlier, list(data)))
        assert vocabulary([*earlier, rule]) == vocabulary(earlier) + [rule.c]
        for t in vocabulary(earlier):
            assert symbols(rules, t, j + 1) == symbols(rules, t, j)
    assert dec_tokens(rules, enc_tokens(rules, list(data))) == data


def test_frontier_reads_only_its_rule() -> None:
    rule = Rule(97, 98, 256)
    frontier = Frontier(3, rule)
    assert frontier[3] == rule
    with pytest.raises(Continue) as going_on:
        _ = frontier[2]
    assert going_on.value.index == 2
    for wrong in (4, -1):
        with pytest.raises(NotCovered):
            _ = frontier[wrong]
    with pytest.raises(NotCovered):
        len(frontier)
    with pytest.raises(NotCovered):
        _ = Frontier(-1, None)[-1]
    assert scan_outcome(Frontier(3, rule), 97, 4) == ("continue", 2)
    assert scan_outcome(Frontier(0, rule), 97, 1) == ("spelled", b"a")
    assert scan_outcome(Frontier(0, rule), 300, 1) == ("invalid",)


@pytest.mark.parametrize("length", range(9))
def test_run_machinery_computes_the_definitions(length: int) -> None:
    """``run_base`` and ``run_step`` give, on a^ℓ, what merge, rep and cnt give on the real list."""
    a, c = 0, 3
    rule = Rule(a, a, c)
    facts = token_lists.run_base(a, c, length) if length <= 1 else token_lists.run_step(a, c, length - 2)
    real = merge(rule, [a] * length)
    q, p = length // 2, length % 2
    assert real == [c] * q + [a] * p
    assert facts.merged == (token_lists.Runs(c, q, a, p) if length >= 2 else real)
    assert (facts.rep, facts.cnt) == (rep_tokens(rule, [a] * length), cnt_tokens([a] * length, a, a))
    assert len(token_lists.Uniform(a, length)) == length
    assert all(token_lists.Uniform(a, length)[i] == a for i in range(length))
    with pytest.raises(NotCovered):
        _ = token_lists.Uniform(a, length)[length]


def test_planted_claims_over_rule_lists_are_false_on_real_lists() -> None:
    rules = [Rule(97, 98, 256), Rule(256, 99, 257)]
    assert symbols(rules, 257, 2) == b"abc"
    with pytest.raises(InvalidTokenError):
        symbols(rules, 257, 1)  # S_2(c_2) ≠ S_1(c_2): a rule changes the spelling of its own new id
    one = [Rule(97, 98, 256)]
    assert len(enc_tokens(one, list(b"c"))) > len(b"c") - len(one)  # a rule whose pair does not occur
    assert len(set(vocabulary([Rule(97, 98, 97)]))) == ALPHABET_SIZE  # a new id already in V: |V| does not grow
    assert dec_tokens([], [97, 98]) != dec_tokens([], [98]) + dec_tokens([], [97])
    assert rep_tokens(Rule(97, 97, 256), [97]) == 0 != (1 + 1) // 2


# ---------------------------------------------------------------------------
# The quoted loop bodies of training, and their abstractions, on real lists
# ---------------------------------------------------------------------------


@settings(max_examples=200)
@given(st.lists(st.lists(st.integers(0, 2), max_size=6), min_size=1, max_size=4))
def test_the_quoted_loop_bodies_are_the_spec_on_real_lists(words: list[list[int]]) -> None:
    """Iterating the quoted bodies (``loop_body``) over real lists gives what ``count_pairs`` and ``select_pair``
    give; the abstractions of the lists they build (``LastEntry``, ``Maxima``) follow the real lists' last and first
    items; and the pair picked occurs in the corpus."""
    pairs = sorted((word[i], word[i + 1]) for word in words for i in range(len(word) - 1))
    table: list[tuple[Pair, int]] = []
    for pair in pairs:
        last = training.LastEntry(table[-1] if table else None)
        training.GROUPING(pair=pair, table=table, steps=None)
        training.GROUPING(pair=pair, table=last, steps=None)
        assert last.last == table[-1]
    assert table == count_pairs(words)
    if not table:
        return
    best = 0
    for entry in table:
        best = training.largest_after(*entry[0], entry[1], best)
    maxima: list[Pair] = []
    for pair, count in table:
        first = training.Maxima(maxima[0] if maxima else None)
        training.MAXIMA(pair=pair, count=count, maxima=maxima, best=best, steps=None)
        training.MAXIMA(pair=pair, count=count, maxima=first, best=best, steps=None)
        assert first.first == (maxima[0] if maxima else None)
    assert (maxima[0], best, tuple(maxima[1:])) == select_pair(table)
    a, b = maxima[0]
    assert sum(cnt_tokens(word, a, b) for word in words) >= 1


def test_planted_claim_on_training_is_false_on_a_real_list() -> None:
    assert cnt_tokens([0, 1], 0, 1) == 1 < 2  # the pair at position 0 of (0, 1) is counted once, not twice


@settings(max_examples=200)
@given(RULES, st.lists(TOKENS, min_size=1, max_size=10))
def test_merge_cost_machinery_counts_the_real_steps(rule: Rule, x: list[int]) -> None:
    """``merge_cost`` gives, on a real list, the steps ``merge`` counts: one, plus the recursive call's; at most |x|."""
    steps = Steps()
    merge(rule, x, steps)
    assert 1 <= steps.count <= len(x)
    if len(x) <= 1:
        assert training_cost.merge_cost(rule, x, None, 0) == steps.count
        return
    u = x[2:]
    y = u if (x[0], x[1]) == (rule.a, rule.b) else x[1:]
    inner = Steps()
    merge(rule, y, inner)
    known = as_list(Segment(y[: len(y) - len(u)], u))  # u, or t2 u: the list the step's hypothesis is about
    assert training_cost.merge_cost(rule, as_list(Segment(x[:2], u)), known, inner.count) == steps.count
    assert training_cost.after_symbol(97, 5) == 6 and training_cost.after_entry(0, 1, 2, 0, 0) == 2
