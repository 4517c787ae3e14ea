"""Tests of the audit layer."""
