"""proofs_tests/tests/checker"""
