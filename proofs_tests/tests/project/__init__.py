"""proofs_tests/tests/project"""
