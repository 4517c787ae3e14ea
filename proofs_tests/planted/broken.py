"""An implementation with a wrong encoder and trainer, for the plugin: ``--bpe-impl proofs_tests.planted.broken``.

``enc`` scans right to left (def-bpe), ``train`` breaks ties by the largest pair (def-bpe step 4);
``dec`` is correct.
"""

from __future__ import annotations

from bpeproof.proofs_tests.planted.correct import dec_table as dec
from bpeproof.proofs_tests.planted.encoders import enc_right_to_left as enc
from bpeproof.proofs_tests.planted.trainers import train_ties_largest as train

__all__ = ["dec", "enc", "train"]
