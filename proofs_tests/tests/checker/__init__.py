"""Tests of the checker layer."""
