"""A GGUF file's tokenizer as llama.cpp runs it: the one of llama.cpp's tokenizers that the file's model names.

- ``gpt2`` with a byte-level pre-tokenizer: ``bpeproof.impl.pipelines.llama_cpp.LlamaCppTokenizer``;
- ``llama`` (SPM): ``bpeproof.impl.pipelines.llama_cpp_spm.LlamaCppSpmTokenizer``;
- ``gemma4``, and ``gpt2`` with the pre-tokenizers llama.cpp runs over raw UTF-8 (``gemma4``,
  ``granite-embed-multi-311m``, ``sarvam-moe``): ``bpeproof.impl.pipelines.llama_cpp_spm.LlamaCppTextBpeTokenizer``;
- every other model (``bert``, ``t5``, ``rwkv``, …) is refused by ``bpeproof.impl.formats.gguf_tokenizer``.
"""

from __future__ import annotations

from bpeproof.impl.formats.gguf_tokenizer import read_gguf_tokenizer
from bpeproof.impl.pipelines.llama_cpp import LlamaCppTokenizer
from bpeproof.impl.pipelines.llama_cpp_spm import LlamaCppSpmTokenizer, LlamaCppTextBpeTokenizer

__all__ = ["load_gguf_tokenizer"]


def load_gguf_tokenizer(path: str, *, cache_size: int = 1 << 18) -> LlamaCppTokenizer:
    """The tokenizer of a GGUF file, as llama.cpp encodes with it; every feature not reproduced raises
    ``FormatError`` naming it."""
    tokenizer = read_gguf_tokenizer(path)
    if tokenizer.model == "llama":
        return LlamaCppSpmTokenizer(tokenizer, cache_size=cache_size)
    if tokenizer.escape_whitespaces:
        return LlamaCppTextBpeTokenizer(tokenizer, cache_size=cache_size)
    return LlamaCppTokenizer(tokenizer, cache_size=cache_size)
