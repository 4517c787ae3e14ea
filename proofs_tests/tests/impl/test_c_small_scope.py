"""Small scope, exhaustively: the C merge loops equal enc_R and the C trainer equals def-bpe on every case up to a size.

CrossHair cannot run C, so the engine's C loops are checked here on every case within the bounds below, not on a
sample, against the specification as the oracle: ``spec.merge.merge`` (M_r, def-merge) folded over the rules as
``spec.bpe.enc_tokens`` folds it (enc_R, def-bpe), and ``spec.bpe.train`` (def-bpe).  The alphabet is Σ = {a, b, c}
(the bytes 97, 98, 99); rule r_j = (x, y ↦ 255 + j) joins any x, y of V_{j-1} = Σ ∪ {256, …, 254 + j}.

Encoding (``impl/_c/_fastenc_merge.h``).  ``merge`` runs the flat-array loop (``merge_short``) on words of at most
SHORT_WORD = 48 bytes and the heap loop (``merge_long``) on longer ones, so no short word reaches the heap loop in
production; ``Merger.merge_each(words, loop)`` runs the loop it is told on each word, whatever its length, all the
inputs of a rule list in one call.  Both loops are run on:

* every rule list of at most 3 rules (3,754 lists) and every input of at most 8 symbols (9,841 inputs, ε included);
* every rule list of 4 rules (129,600 lists) and every input of at most 5 symbols (364 inputs).  Five symbols are the
  fewest on which all four rules can fire (a merge removes one token).
* Outside CI (``BPEPROOF_FULL_SMALL_SCOPE=1``): every rule list of 4 rules and every input of at most 8 symbols.
  That is 27 times the inputs: 215 million runs of each loop, a fraction of a microsecond each in C (its lookups in
  the pair table), plus the oracle's merges: 65 CPU s measured, where this file's share of the suite is seconds.  No
  reduction found is sound without looking inside the loops (the runs of a loop with R and with R minus its last
  rule agree when the loop never looks the last rule's pair up, but which pairs a C loop looks up is not seen from
  outside it).

Two reductions keep that within seconds; neither skips a case on which the loops could differ, given the one
assumption stated:

* The new ids.  The C loops never see a rule's new id: a Merger numbers the token of rule k (from 0) 256 + k, its
  dense id, whatever the rule's c, and maps it to c only when it reports it (``Encoder.c_merger``, ``result_tuple``).
  So the one choice c_j = 255 + j covers every valid choice of new ids for the loops; ``merge_each`` gives the dense
  ids, which with that choice are the rule ids.  (Reporting other ids is checked by ``test_impl_encoder.py``.)
* Renaming the symbols.  For a permutation σ of Σ (the identity on new ids), σR is a valid rule list and
  enc_{σR}(σs) = σ enc_R(s), since def-merge compares tokens only for equality.  The loops treat ids the same way:
  they copy them, look pairs of them up in the pair table, and test only whether one is negative (a position merged
  away); the table of σR is the table of R with the symbols renamed; ranks and positions do not depend on the
  names.  So a loop's run on (σR, σs) is its run on (R, s) renamed, and one rule list of each class stands for its
  six renamings: the least of them in list order.  A prefix of such a list is the least of its own renamings, so
  the lists are found by extending only those: 647 of at most 3 rules, 21,888 of 4 (the test checks that their
  classes add up to every list).  The assumption: the pair table answers by key, whatever slot a key hashes to.
  A fault of the table that showed for some ids and not for their renamings could be missed here.

The oracle computes each answer once per (rule-list prefix, input): enc_R(s) = M_r(enc_{R'}(s)) for R = R'·r, and
M_r is the specification's ``merge`` with its recursive call answered from the answers it has already given (the
``rec`` parameter that ``spec.merge`` offers for exactly this).  A list with no adjacent (a, b) is its own M_r (the
second case of def-merge at every step), so only the inputs whose tokens hold the pair are merged.  Every list of at
most 3 rules and every 16th of 4 also has one input, a different one each time, encoded by ``spec.enc`` itself,
which checks that bookkeeping.

Training (``impl/_c/_fastbpe*``).  Corpora are multisets of words: def-bpe reads a corpus only through its words'
counts (step 2 sums over the words) and the trainer through ``Counter(corpus)``; each is given in one order, sorted.
(Renaming the symbols is no symmetry of training: step 4 breaks ties by the order of the pairs' ids, which a
renaming changes.)  Checked against def-bpe:

* every corpus of at most 3 words of at most 4 symbols (302,620 corpora), trained with no bound by the C loop as
  ``impl.trainer.train`` calls it (``_fastbpe.train`` with the distinct words, their frequencies and m = N − K);
* every corpus of at most 2 words of at most 3 symbols or at most 3 words of at most 2 symbols (1,183 corpora),
  through ``train_distinct`` (the Python path of ``impl.trainer.train`` to the C loop: the words counted, m bounded
  by N − K) with every m from 0 to N − K and with none (4,405 + 1,183 runs; a larger m is N − K), and with no bound
  on two threads, whose partitions split the words by hash.

The oracle of the first set is def-bpe's own steps, each computed once (``SpecTraining``): ``count_pairs``,
``select_pair`` and ``merge`` of ``spec.bpe``/``spec.merge`` from each state of def-bpe's loop (the words after j
merges, and j), the rules after a state kept for every corpus that reaches it; every 331st corpus is also trained
by ``spec.bpe.train`` itself, which checks that bookkeeping.  The second set is checked against ``spec.bpe.train``.

The C trainer used to take about 0.1 ms a call whatever the corpus: it cleared and scanned a table of all 65,536
pairs of bytes and freed its lists on a thread of its own.  Its table of byte pairs is now B x B for the B bytes a
partition holds, the pairs to join are the ones the partitions listed, and a small run frees its lists at once
(``impl/_c/_fastbpe_part.h``, ``_fastbpe_run.h``): about 5 µs a call on these corpora, so the 284,580 corpora of 3
words with a word of 4 symbols fit.  Two threads cost 0.4 ms a call (a thread more to start), which keeps them to
the smaller set; there they miss ``c-train-partitions-apart`` (a pair made in two partitions kept as two), which
the 2-word corpora of 4 symbols find, e.g. (aaa, aaab), and the Hypothesis suite of the trainer kills.

The tests in CI take about 5 s (encoding), 8 s (the 302,620 corpora: two thirds of it the oracle's Python) and
1 s (the bounds) of one core.  Every other mutant of the C merge loops and of the C trainer in
``proofs_tests/planted/mutants.py`` fails one of them within seconds (the one that makes training spin, by its
time limit), among them ``c-enc-heap-no-first-neighbour`` and ``c-train-left-count-by-one``, planted for this
check; the word counter's mutants are not in its scope.
"""

from __future__ import annotations

import itertools
import os
from array import array
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

import bpeproof.spec.bpe
from bpeproof.impl import encoder, trainer
from bpeproof.spec.merge import Steps, merge
from bpeproof.spec.types import ALPHABET_SIZE, Rule

#: Σ: three bytes.
SYMBOLS = (97, 98, 99)

#: The rule lists: up to this many rules, on inputs up to ``LONGEST_INPUT`` symbols; the lists of ``MOST_RULES``
#: rules on inputs up to ``LONGEST_INPUT_OF_MOST``.
MOST_RULES = 4
LONGEST_INPUT = 8
LONGEST_INPUT_OF_MOST = 5

#: Set (to anything) to run the lists of 4 rules on every input of ``LONGEST_INPUT`` symbols too (outside CI).
FULL_SCOPE = "BPEPROOF_FULL_SMALL_SCOPE"

#: ``Merger.merge_each``'s loops: the flat array, the heap.
LOOPS = {"merge_short (flat array)": 0, "merge_long (heap)": 1}

Tokens = tuple[int, ...]
RuleList = tuple[Rule, ...]

#: The six renamings of Σ, as maps (the new ids are left alone).
RENAMINGS = [dict(zip(SYMBOLS, image, strict=True)) for image in itertools.permutations(SYMBOLS)]


def fastenc() -> Any:
    """The ``_fastenc`` extension (the test is skipped when it is not built)."""
    if not encoder.HAVE_C_LOOP:
        pytest.skip("the C extension bpeproof.impl._c._fastenc is not built")
    from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]

    return _fastenc


def renamed(rules: RuleList, renaming: dict[int, int]) -> tuple[tuple[int, int, int], ...]:
    """σR: the symbols of every rule renamed (as plain triples, which compare with rules as the rules' triples do)."""
    return tuple((renaming.get(a, a), renaming.get(b, b), c) for a, b, c in rules)


def longer_lists(rules: RuleList) -> Iterator[tuple[RuleList, int]]:
    """The valid lists of one more rule than ``rules`` that are the least of their renamings (def-merge: the new rule
    joins two ids of the vocabulary so far into a new id, larger than all before), each with the number of distinct
    lists its renamings give."""
    vocabulary = [*SYMBOLS, *(rule.c for rule in rules)]
    for a in vocabulary:
        for b in vocabulary:
            longer = (*rules, Rule(a, b, ALPHABET_SIZE + len(rules)))
            images = {renamed(longer, renaming) for renaming in RENAMINGS}
            if min(images) == longer:
                yield longer, len(images)


def every_input(longest: int) -> list[bytes]:
    """Every string over Σ of at most ``longest`` symbols, shorter first: those of at most k symbols come first."""
    return [bytes(letters) for n in range(longest + 1) for letters in itertools.product(SYMBOLS, repeat=n)]


def packed(tokens: Tokens) -> bytes:
    """``tokens`` as ``merge_each`` gives a word's ids: native int32, then -1."""
    return array("i", (*tokens, -1)).tobytes()


class SpecMerge:
    """M_r of the specification, each answer computed once: ``spec.merge.merge`` with its recursive call answered from
    the answers already given (its ``rec`` parameter), each kept with its ids packed."""

    def __init__(self) -> None:
        self.answers: dict[Rule, dict[Tokens, tuple[Tokens, bytes]]] = {}

    def of(self, rule: Rule) -> dict[Tokens, tuple[Tokens, bytes]]:
        """The answers of M_r given so far, by input."""
        return self.answers.setdefault(rule, {})

    def apply(self, rule: Rule, tokens: Tokens) -> tuple[Tokens, bytes]:
        """M_r(tokens), and packed."""
        known = self.of(rule)
        answer = known.get(tokens)
        if answer is None:
            merged = tuple(merge(rule, list(tokens), rec=self._recursive_call))
            answer = known[tokens] = (merged, packed(merged))
        return answer

    def _recursive_call(self, rule: Rule, tokens: list[int], steps: Steps | None) -> list[int]:
        return list(self.apply(rule, tuple(tokens))[0])


def first_difference(rules: RuleList, words: Sequence[bytes], found: bytes, expected: Sequence[bytes]) -> str:
    """The first input on which a loop's ids differ from the specification's, for the failure message."""
    per_word: list[list[int]] = [[]]
    for token in array("i", found):
        if token == -1:
            per_word.append([])
        else:
            per_word[-1].append(token)
    for word, ids, answer in zip(words, per_word, expected, strict=False):
        spec_ids = array("i", answer).tolist()[:-1]
        if ids != spec_ids:
            return f"rules {[tuple(rule) for rule in rules]}, input {word!r}: the loop gives {ids}, enc_R {spec_ids}"
    return f"rules {[tuple(rule) for rule in rules]}: ids for {len(per_word) - 1} words, not {len(words)}"


def test_c_merge_loops_equal_enc_on_every_small_case() -> None:
    """Both C merge loops give enc_R on every rule list and input of the scope in the module docstring."""
    check_merge_loops(LONGEST_INPUT_OF_MOST, 364)


@pytest.mark.skipif(not os.environ.get(FULL_SCOPE), reason=f"about a minute of one core: set {FULL_SCOPE}=1")
@pytest.mark.timeout(1200)
def test_c_merge_loops_equal_enc_with_four_rules_on_every_input_of_8() -> None:
    """Both C merge loops give enc_R on every list of 4 rules and every input of at most 8 symbols (outside CI)."""
    check_merge_loops(LONGEST_INPUT, 9_841)


def check_merge_loops(longest_of_most: int, inputs_of_most: int) -> None:
    """Both loops against enc_R on every list of at most 3 rules and every input of at most ``LONGEST_INPUT``
    symbols, and on every list of 4 rules and every input of at most ``longest_of_most`` symbols (of which there
    are ``inputs_of_most``)."""
    merger_type = fastenc().Merger
    assert array("i").itemsize == 4, "merge_each gives int32 ids"
    spec_merge = SpecMerge()
    inputs = every_input(LONGEST_INPUT)
    short_inputs = every_input(longest_of_most)
    assert inputs[: len(short_inputs)] == short_inputs
    lists_checked = Counter[int]()
    classes = Counter[int]()
    pairs_checked = 0

    def check(rules: RuleList, images: int, answers: list[Tokens], expected: list[bytes], words: list[bytes]) -> None:
        nonlocal pairs_checked
        merger = merger_type([rule.a for rule in rules], [rule.b for rule in rules],
                             [*range(ALPHABET_SIZE), *(rule.c for rule in rules)])
        whole = b"".join(expected)
        for name, loop in LOOPS.items():
            found = merger.merge_each(words, loop)
            assert found == whole, f"{name}: {first_difference(rules, words, found, expected)}"
        # The bookkeeping above against the specification's own enc_R, on one input of every list of at most 3
        # rules and of every 16th list of 4, a different input each time.
        checked = sum(lists_checked.values())
        if len(rules) < MOST_RULES or checked % 16 == 0:
            sample = (7919 * checked) % len(words)
            assert bpeproof.spec.bpe.enc(rules, words[sample]) == list(answers[sample]), (rules, words[sample])
        lists_checked[len(rules)] += 1
        classes[len(rules)] += images
        pairs_checked += len(words)
        if len(rules) == MOST_RULES:
            return
        if len(rules) == MOST_RULES - 1:
            answers, expected, words = answers[: len(short_inputs)], expected[: len(short_inputs)], short_inputs
        # Where each pair occurs: the inputs that the next rule's M_r changes.
        holding: dict[tuple[int, int], list[int]] = {}
        for index, tokens in enumerate(answers):
            for pair in set(itertools.pairwise(tokens)):
                holding.setdefault(pair, []).append(index)
        for longer, longer_images in longer_lists(rules):
            rule = longer[-1]
            known = spec_merge.of(rule)
            next_answers, next_expected = answers.copy(), expected.copy()
            for index in holding.get((rule.a, rule.b), ()):
                answer = known.get(answers[index]) or spec_merge.apply(rule, answers[index])
                next_answers[index], next_expected[index] = answer
            check(longer, longer_images, next_answers, next_expected, words)

    start = [tuple(word) for word in inputs]
    check((), 1, start, [packed(tokens) for tokens in start], inputs)
    # Every valid rule list is the renaming of exactly one list checked: 1, 9, 9·16, 9·16·25, 9·16·25·36 lists.
    assert dict(classes) == {0: 1, 1: 9, 2: 144, 3: 3_600, 4: 129_600}
    assert dict(lists_checked) == {0: 1, 1: 2, 2: 26, 3: 618, 4: 21_888}
    assert len(short_inputs) == inputs_of_most
    assert pairs_checked == 647 * 9_841 + 21_888 * inputs_of_most


def every_corpus(most_words: int, longest: int) -> set[tuple[bytes, ...]]:
    """Every multiset of 1 to ``most_words`` words of 1 to ``longest`` symbols over Σ, as a sorted tuple."""
    words = [word for word in every_input(longest) if word]
    return {corpus for count in range(1, most_words + 1)
            for corpus in itertools.combinations_with_replacement(words, count)}


def c_train(corpus: Sequence[bytes], num_merges: int | None, threads: int = 1) -> list[Rule]:
    """The C trainer on ``corpus``, reached as ``impl.trainer.train`` reaches it."""
    return trainer.train_distinct(Counter(corpus), num_merges, False, "c", threads)


class SpecTraining:
    """def-bpe's rules, each step computed once: the steps of ``spec.bpe.train_trace`` (``count_pairs``,
    ``select_pair``, the rule with the new id 256 + j, ``spec.merge.merge`` on every word) from each state of its
    loop, the words kept as a sorted tuple (a multiset, which is all def-bpe reads: step 2 sorts the pairs of all
    words, step 5 merges each word alone).  The rules from a state after j merges depend on that state and j only,
    so the rules after it are computed once for all the corpora that reach it."""

    def __init__(self) -> None:
        self.after: dict[tuple[tuple[Tokens, ...], int], tuple[Rule, ...]] = {}
        self.merged: dict[tuple[Rule, Tokens], Tokens] = {}

    def step(self, words: tuple[Tokens, ...], j: int) -> tuple[Rule, tuple[Tokens, ...]] | None:
        """Iteration j + 1 of def-bpe: its rule and the words after it, or None when training stops (step 3)."""
        table = bpeproof.spec.bpe.count_pairs(words)
        if not table:
            return None
        (a, b), _, _ = bpeproof.spec.bpe.select_pair(table)
        rule = Rule(a, b, ALPHABET_SIZE + j)
        after = []
        for word in words:
            merged = self.merged.get((rule, word))
            if merged is None:
                merged = self.merged[rule, word] = tuple(merge(rule, list(word)))
            after.append(merged)
        return rule, tuple(sorted(after))

    def rules_after(self, words: tuple[Tokens, ...], j: int) -> tuple[Rule, ...]:
        """The rules def-bpe learns from the state (words, j) with no bound on the merges."""
        known = self.after.get((words, j))
        if known is None:
            done = self.step(words, j)
            known = self.after[words, j] = () if done is None else (done[0], *self.rules_after(done[1], j + 1))
        return known

    def rules(self, corpus: tuple[Tokens, ...]) -> list[Rule]:
        """def-bpe on a sorted corpus, no bound (its first state is its own: not kept)."""
        done = self.step(corpus, 0)
        return [] if done is None else [done[0], *self.rules_after(done[1], 1)]


def test_c_trainer_equals_def_bpe_on_every_small_corpus() -> None:
    """The C trainer learns def-bpe's rules on every corpus of the scope in the module docstring."""
    if not trainer.HAVE_C_LOOP:
        pytest.skip("the C extension bpeproof.impl._c._fastbpe is not built")
    from bpeproof.impl._c import _fastbpe  # type: ignore[attr-defined]

    spec_training = SpecTraining()
    words = [word for word in every_input(4) if word]
    spelled = [tuple(word) for word in words]
    checked = 0
    # Every multiset of 1 to 3 words, as sorted tuples of word indices (equal words side by side).
    for count in range(1, 4):
        for chosen in itertools.combinations_with_replacement(range(len(words)), count):
            distinct = sorted(set(chosen))
            freqs = [chosen.count(index) for index in distinct]
            most = sum(len(words[index]) for index in distinct) - len(distinct)
            found = _fastbpe.train([words[index] for index in distinct], freqs, most, 1)
            expected = spec_training.rules(tuple(spelled[index] for index in chosen))
            assert found == [tuple(rule) for rule in expected], [words[index] for index in chosen]
            # SpecTraining's bookkeeping against the specification's own def-bpe, on every 331st corpus.
            if checked % 331 == 0:
                corpus = [words[index] for index in chosen]
                assert bpeproof.spec.bpe.train(corpus, None) == expected, corpus
            checked += 1
    assert checked == len(every_corpus(3, 4)) == 302_620


def test_c_trainer_equals_def_bpe_with_every_bound() -> None:
    """The C trainer through ``train_distinct``, with every bound m and on two threads, learns def-bpe's rules."""
    if not trainer.HAVE_C_LOOP:
        pytest.skip("the C extension bpeproof.impl._c._fastbpe is not built")
    each_bound = every_corpus(2, 3) | every_corpus(3, 2)
    assert len(each_bound) == 1_183
    calls = 0
    for corpus in sorted(each_bound):
        distinct = set(corpus)
        most = sum(map(len, distinct)) - len(distinct)
        for bound in (*range(most + 1), None):
            assert c_train(corpus, bound) == bpeproof.spec.bpe.train(corpus, bound), (corpus, bound)
            calls += 1
        assert c_train(corpus, None, threads=2) == bpeproof.spec.bpe.train(corpus, None), (corpus, "on two threads")
        calls += 1
    assert calls == 4_405 + 2 * 1_183


def test_merge_each_refuses_what_it_cannot_merge() -> None:
    """``merge_each`` takes a list of bytes and loop 0 or 1, and gives nothing for no words."""
    merger = fastenc().Merger([97], [97], [*range(ALPHABET_SIZE), 256])
    assert merger.merge_each([], 0) == merger.merge_each([], 1) == b""
    assert array("i", merger.merge_each([b"aaa", b""], 1)).tolist() == [256, 97, -1, -1]
    with pytest.raises(ValueError, match="loop must be 0"):
        merger.merge_each([b"aa"], 2)
    with pytest.raises(TypeError, match="words must be bytes, not str"):
        merger.merge_each([b"aa", "aa"], 0)
    with pytest.raises(TypeError):
        merger.merge_each((b"aa",), 0)
