"""Tests of the file readers and writers (impl.formats)."""
