"""Tests of the project's own standards: types, lint, layers, the README's commands."""
