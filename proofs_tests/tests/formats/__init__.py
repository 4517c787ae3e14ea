"""proofs_tests/tests/formats"""
