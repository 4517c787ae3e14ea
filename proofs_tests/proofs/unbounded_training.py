"""def-bpe with no bound on the merges, as a bounded contract kept out of ``crosshair watch spec impl``'s reach.

``lemma_training_unbounded`` states the training claims of ``bpeproof.spec.contracts`` (``training_claims``) on
``train_trace(corpus, None)``, which runs until no word has a pair left.  It is not in ``spec/`` because a bug that
keeps the chosen pair from being merged (M_r that tests the wrong pair, pairs counted across words) makes that
training run forever, and no CrossHair limit ends it: CrossHair checks its per-path and per-condition limits only
when a path makes a symbolic choice, and ``crosshair check --per_condition_timeout=2`` on such a mutant still ran
after a minute.  In ``spec/`` it would hold watch's one worker (on 2 cores) for good, and watch would report
nothing else.  The CI gate and ``bpeproof prove`` run it as before, with the same bound and budget
(``crosshair_runs``: ``spec.lemma_training_unbounded``), under a time limit for the whole run.  Run::

    crosshair check --report_all --per_condition_timeout=120 bpeproof.proofs_tests.proofs.unbounded_training
"""

from __future__ import annotations

# The contract in the docstring below uses this name.
from bpeproof.spec.contracts import training_claims


def lemma_training_unbounded(w1: bytes, w2: bytes) -> None:
    """def-bpe steps 3–5, prop-bpe-training-termination and prop-bpe-training-cost on the corpus (w1, w2) with no
    bound on the merges (num_merges = None): training runs until no word has a pair left.

    pre: 1 <= len(w1) <= 3 and 1 <= len(w2) <= 3
    post[]: training_claims([w1, w2], None)
    """
