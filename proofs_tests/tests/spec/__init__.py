"""proofs_tests/tests/spec"""
