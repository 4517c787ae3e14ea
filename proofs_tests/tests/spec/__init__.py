"""Tests of the spec layer."""
