"""Normalizers: the text each library's model actually merges (Hugging Face's normalizers, sentencepiece's)."""
