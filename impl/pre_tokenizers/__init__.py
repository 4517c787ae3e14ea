"""Pre-tokenization: how a text is cut into words before BPE merges inside each (patterns, Hugging Face splits,
llama.cpp's expressions, the Unicode tables they classify by)."""
