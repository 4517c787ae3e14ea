"""proofs_tests/checker"""
