"""Tests of the proofs layer."""
