"""proofs_tests/tests/proofs"""
