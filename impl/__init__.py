"""bpeproof's implementation: the fast engine and everything a user touches.

The engine (trainer, encoder, tokenizer, file formats) gives exactly the
specification's answers and never calls it; ``proofs_tests`` shows that they
agree.
"""
