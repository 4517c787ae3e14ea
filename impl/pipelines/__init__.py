"""Whole tokenizers as their libraries run them (tokenizer.json, llama.cpp, CLIP), and the registry that maps a file
to one."""
