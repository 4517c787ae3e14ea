"""The audit of real tokenizer files against the specification (``bpeproof audit``).

``report`` reads a file, runs its own library and the variants of ``bpeproof.spec.variants`` on sampled words and
builds the report; ``html`` renders it as one self-contained page.  The audit sits above the engine: it may run the
specification beside it.
"""
