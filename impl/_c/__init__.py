"""The optional C loops (``_fastbpe``: training; ``_fastenc``: encoding, pre-tokenizers, word counting;
``_fastload``: the loaders' bulk readers), built by ``pip install``; without a compiler the engine runs its
pure-Python paths."""
