"""proofs_tests/proofs"""
