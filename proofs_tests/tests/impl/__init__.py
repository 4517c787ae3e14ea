"""proofs_tests/tests/impl"""
