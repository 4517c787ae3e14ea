"""proofs_tests/tests/audit"""
