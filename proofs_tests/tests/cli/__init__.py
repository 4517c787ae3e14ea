"""Tests of the command line and the public API."""
