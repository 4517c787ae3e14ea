"""A correct implementation under the names the plugin looks for: ``--bpe-impl proofs_tests.planted.reference``."""

from __future__ import annotations

from bpeproof.proofs_tests.planted.correct import dec_table as dec
from bpeproof.proofs_tests.planted.correct import enc_rank_order as enc
from bpeproof.proofs_tests.planted.correct import train_word_counts as train

__all__ = ["dec", "enc", "train"]
