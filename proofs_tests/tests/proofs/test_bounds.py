"""The bound-search tool (``bpeproof.proofs_tests.proofs.bounds``) follows the contracts: every bound it raises is
there."""

from __future__ import annotations

import pytest

from bpeproof.proofs_tests.planted.mutants import ROOT
from bpeproof.proofs_tests.proofs import bounds


@pytest.mark.parametrize("bound", bounds.BOUNDS, ids=lambda b: b.function)
def test_each_bound_is_once_in_its_contract(bound: bounds.Bound) -> None:
    text = (ROOT / bound.path).read_text(encoding="utf-8")
    raised = bounds.with_size(bound, text, bound.ci + 1)
    assert raised != text and bound.line(bound.ci + 1) in raised
    assert len(raised.splitlines()) == len(text.splitlines())
    assert bounds.with_size(bound, text, bound.ci) == text


def test_every_spec_contract_with_a_length_bound_is_listed() -> None:
    """A new bounded lemma in the spec's contracts must join the tool's table (or be a fixed-size one)."""
    text = (ROOT / "spec" / "contracts.py").read_text(encoding="utf-8")
    lemmas = {line.split("(")[0].removeprefix("def ") for line in text.splitlines() if line.startswith("def lemma_")}
    assert lemmas - {b.function for b in bounds.BOUNDS} == {"lemma_vocabulary_size"}  # no size: two rules, any ids


def test_a_bound_that_is_not_there_is_an_error() -> None:
    text = (ROOT / "spec" / "contracts.py").read_text(encoding="utf-8")
    wrong = bounds.Bound(bounds.SPEC, "lemma_merge_step", "    pre: len(y) <= {n}\n", 4)
    with pytest.raises(bounds.BoundError, match="not once"):
        bounds.with_size(wrong, text, 5)
    with pytest.raises(bounds.BoundError, match="no such function"):
        bounds.with_size(bounds.Bound(bounds.SPEC, "lemma_gone", "x{n}", 1), text, 2)
