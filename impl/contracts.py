"""The article's claims as CrossHair contracts on the engine's merge step: the trainer's M_r and the merge loops.

The same claims as ``bpeproof.spec.contracts``, stated without the specification (the
engine never calls it): the number of replacements of a merge step is
|x| − |M_r x| (lem-merge-step (2) read as a definition), the occurrences
of a pair are counted inline, and the engine's merge loops (``impl.merge_loop``, the loops of the encoder) are
held to the trainer's merge step applied rule by rule.  Every contract is on lists and confirmed over all paths
within its bounds.  Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.impl.contracts

``crosshair watch spec impl`` checks these as you edit, so each one is cheap per path and ends on any input.  The
round trip and the N − K bound on the encoder and the trainer, searches that dictionaries keep from ending (11 CPU
seconds of every pass of watch, before the first report), are in ``bpeproof.proofs_tests.proofs.equivalence``,
out of watch's reach.
"""

from __future__ import annotations

# The contracts in the docstrings below use these names.
from bpeproof.impl.merge_loop import Code, Join, merge_long, merge_short
from bpeproof.impl.trainer import apply_rule
from bpeproof.spec.types import ALPHABET_SIZE, Rule

C = ALPHABET_SIZE


def _is_byte(value: int) -> bool:
    return 0 <= value < ALPHABET_SIZE


def _in_v1(tokens: list[int]) -> bool:
    return all(0 <= t <= C for t in tokens)


def occurrences(x: list[int], a: int, b: int) -> int:
    """cnt_x(a, b) (def-merge): positions i with (x_i, x_{i+1}) = (a, b), overlapping ones included."""
    return sum(1 for i in range(len(x) - 1) if x[i] == a and x[i + 1] == b)


def replacements(a: int, b: int, x: list[int]) -> int:
    """rep_r(x) of the implementation's merge step, as |x| − |M_r x|."""
    return len(x) - len(apply_rule(Rule(a, b, C), x))


def lemma_impl_merge_step(a: int, b: int, x: list[int]) -> None:
    """lem-merge-step (3), (4) and prop-bpe-length-monotone (1) for the trainer's M_r, r = (a, b ↦ 256).

    Lists only, so CrossHair confirms it over all paths; claim (1) needs the encoder's token table and is
    checked with the round trip.

    pre: _is_byte(a) and _is_byte(b)
    pre: len(x) <= 4
    pre: _in_v1(x)
    post[]: 0 <= replacements(a, b, x) <= occurrences(x, a, b)
    post: occurrences(x, a, b) == 0 or replacements(a, b, x) >= 1
    post: a == b or replacements(a, b, x) == occurrences(x, a, b)
    """


# --- the merge loops -------------------------------------------------------------------------------------------


def rank_code(rules: list[Rule]) -> Code[int]:
    """The pair table the encoder gives the loops, for a rule list, by a scan: the rank of the first rule joining
    (x, y), None when no rule does."""

    def code(x: int, y: int) -> int | None:
        for rank, rule in enumerate(rules):
            if rule.a == x and rule.b == y:
                return rank
        return None

    return code


def rank_join(rules: list[Rule]) -> Join[int]:
    """The unit that replaces a pair of rank k: the new id of rule k."""

    def join(x: int, y: int, rank: int) -> int:
        return rules[rank].c

    return join


def flat_loop(rules: list[Rule], x: list[int]) -> list[int]:
    """x merged by rank, leftmost first, by the flat-list loop (``merge_loop.merge_short``) on a copy of x."""
    return merge_short(list(x), rank_code(rules), rank_join(rules))


def heap_loop(rules: list[Rule], x: list[int]) -> list[int]:
    """x merged by rank, leftmost first, by the heap loop (``merge_loop.merge_long``) on a copy of x."""
    return merge_long(list(x), rank_code(rules), rank_join(rules))


def rule_by_rule(rules: list[Rule], x: list[int]) -> list[int]:
    """enc_R of def-bpe with the trainer's merge step: M_{r_m}(… M_{r_1}(x) …)."""
    for rule in rules:
        x = apply_rule(rule, x)
    return x


def _run_merged(merged: list[int], a: int, length: int) -> bool:
    """exr-run-length: a^ℓ merged by (a, a ↦ 256) is 256^⌊ℓ/2⌋ a^(ℓ mod 2), the odd a at the right end."""
    return merged == [C] * (length // 2) + [a] * (length % 2)


def flat_loop_merges_run(a: int, length: int) -> bool:
    """exr-run-length for the flat-list loop with the pair table of the one rule (a, a ↦ 256)."""
    return _run_merged(flat_loop([Rule(a, a, C)], [a] * length), a, length)


def heap_loop_merges_run(a: int, length: int) -> bool:
    """exr-run-length for the heap loop with the pair table of the one rule (a, a ↦ 256)."""
    return _run_merged(heap_loop([Rule(a, a, C)], [a] * length), a, length)


def merge_step_merges_run(a: int, length: int) -> bool:
    """exr-run-length for the trainer's M_r, r = (a, a ↦ 256)."""
    return _run_merged(apply_rule(Rule(a, a, C), [a] * length), a, length)


def stale_rules(a: int) -> list[Rule]:
    """(a, a ↦ 256), (256, a ↦ 257), (256, 256 ↦ 258): on a a a a, the heap entry of (256, a) pushed after the
    first merge is out of date once the second merge makes (256, 256)."""
    return [Rule(a, a, C), Rule(C, a, C + 1), Rule(C, C, C + 2)]


def heap_loop_is_rule_by_rule(rules: list[Rule], x: list[int]) -> bool:
    """The heap loop by rank gives what the rules applied one by one give."""
    return heap_loop(rules, x) == rule_by_rule(rules, x)


def flat_loop_is_rule_by_rule(rules: list[Rule], x: list[int]) -> bool:
    """The flat-list loop by rank gives what the rules applied one by one give."""
    return flat_loop(rules, x) == rule_by_rule(rules, x)


def lemma_merge_steps_on_a_run(a: int, length: int) -> None:
    """exr-run-length for each merge step of the engine: (a, a ↦ 256) on a^ℓ gives 256^⌊ℓ/2⌋ a^(ℓ mod 2).

    The two loops, with the pair table of that one rule, and the trainer's M_r each join the leftmost pair first
    and go on after it: a loop that takes the rightmost of equal pairs, or a step that goes on at the second token
    of the pair it joined, leaves the odd a elsewhere or joins too few.

    pre: _is_byte(a)
    pre: 0 <= length <= 7
    post[]: flat_loop_merges_run(a, length)
    post: heap_loop_merges_run(a, length)
    post: merge_step_merges_run(a, length)
    """


def lemma_loops_skip_stale_pairs(a: int, length: int) -> None:
    """Both merge loops give enc_R on a^ℓ for the rules of ``stale_rules``, which make a heap entry out of date.

    On a a a a the heap loop must skip its entry of (256, a) once the pair there has become (256, 256), and merge
    that pair by its own rule.

    pre: _is_byte(a)
    pre: 0 <= length <= 6
    post[]: heap_loop_is_rule_by_rule(stale_rules(a), [a] * length)
    post: flat_loop_is_rule_by_rule(stale_rules(a), [a] * length)
    """
