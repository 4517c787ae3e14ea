"""The proofs: CrossHair contracts on the engine's Python paths, the induction for every length, the bound search,
and the CrossHair runs of the test suite."""
