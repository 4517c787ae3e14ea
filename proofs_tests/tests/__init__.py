"""The test suite, one folder per layer."""
