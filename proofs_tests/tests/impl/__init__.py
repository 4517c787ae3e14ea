"""Tests of the impl layer."""
