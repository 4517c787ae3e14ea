"""proofs_tests/tests/cli"""
