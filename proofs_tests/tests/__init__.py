"""proofs_tests/tests"""
