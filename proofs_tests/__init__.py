"""The checker and the test suite: CrossHair contracts, Hypothesis properties, differential tests and mutants.

Importing this package loads nothing else: the pytest plugin (``plugin``) that every pytest run on a machine with
bpeproof installed loads imports only pytest until one of its ``--bpe-*`` options is used.
"""
