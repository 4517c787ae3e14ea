"""The audit of real tokenizer files against the specification (``bpeproof audit``).

``report`` reads a file, runs its own library (``libraries``) and the variants of ``bpeproof.spec.variants``
(fast, over the file's own tables: ``variants``) on sampled words and builds the report; ``html`` renders it as
one self-contained page.  The audit sits above the engine: it may run the
specification beside it.
"""
