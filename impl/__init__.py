"""bpeproof's implementation: the fast engine and everything a user touches.

The engine (``train``, ``enc``, ``dec``, ``Tokenizer``, the file formats) gives
exactly the specification's answers and never calls it; ``proofs_tests``
shows that they agree.  ``train``, ``enc``, ``dec`` and ``apply_rule`` have the
specification's names, argument shapes and results.
"""

from bpeproof.impl.encoder import Encoder, dec, enc
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.impl.trainer import apply_rule, count_words, train, train_counts, train_iter

__all__ = ["Encoder", "Tokenizer", "apply_rule", "count_words", "dec", "enc", "train", "train_counts", "train_iter"]
