"""A GGUF file's tokenizer as llama.cpp runs it: the parts of the one of llama.cpp's tokenizers that the file's
model names.

- ``gpt2`` with a byte-level pre-tokenizer: ``bpeproof.impl.pipelines.llama_cpp.byte_level_parts``;
- ``llama`` (SPM): ``bpeproof.impl.pipelines.llama_cpp_spm.spm_parts``;
- ``gemma4``, and ``gpt2`` with the pre-tokenizers llama.cpp runs over raw UTF-8 (``gemma4``,
  ``granite-embed-multi-311m``, ``sarvam-moe``): ``bpeproof.impl.pipelines.llama_cpp_spm.text_bpe_parts``;
- every other model (``bert``, ``t5``, ``rwkv``, …) is refused by ``bpeproof.impl.formats.gguf_tokenizer``.
"""

from __future__ import annotations

from typing import Any

from bpeproof.impl.formats.gguf_tokenizer import GGUFTokenizer
from bpeproof.impl.pipelines.llama_cpp import byte_level_parts
from bpeproof.impl.pipelines.llama_cpp_spm import spm_parts, text_bpe_parts
from bpeproof.impl.pipelines.text_pipeline import TokenizerParts

__all__ = ["gguf_parts"]


def gguf_parts(tokenizer: GGUFTokenizer, *, model: Any = None, c_loop: bool = True) -> TokenizerParts:
    """The parts of a GGUF file's tokenizer (read by ``read_gguf_tokenizer``), as llama.cpp encodes with it;
    ``model``: the model already built for it (the compiled-vocabulary cache's); ``c_loop``: a model built here
    merges in the C loop when it is built (byte-level BPE; the other models have none).  Every feature not
    reproduced raises ``FormatError`` naming it."""
    if tokenizer.model == "llama":
        return spm_parts(tokenizer, model=model)
    if tokenizer.escape_whitespaces:
        return text_bpe_parts(tokenizer, model=model)
    return byte_level_parts(tokenizer, model=model, c_loop=c_loop)
