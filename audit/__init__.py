"""The audit of real tokenizer files against the specification (``bpeproof audit``).

``report`` reads a file, runs its own library (``libraries``) and the variants of ``bpeproof.spec.variants``
(fast, over the file's own tables: ``bpeproof.impl.models.variants``) on sampled words (``sampling``) and builds
the report, one section per module (``vocabulary_section``, ``variants_section``, ``project_section``,
``compression_section``, ``greedy_gap_section``), with its ``findings``; ``html`` renders it as one self-contained
page.  The audit sits above the engine: it may run the specification beside it.
"""
