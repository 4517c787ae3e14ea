"""The optional C loops (``_fastbpe``: training; ``_fastenc``: encoding, pre-tokenizers, word counting), built by
``pip install``; without a compiler the engine runs its pure-Python paths."""
