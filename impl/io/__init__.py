"""The engine's input and output: corpora, count tables, token arrays, atomic writes, and the one ``FormatError``."""
