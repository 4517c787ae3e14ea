"""What every merge model is: the ``MergeModel`` protocol a ``Tokenizer`` runs, and ``SEMANTICS``, the semantics a
model can run with what each follows (the package docstring of ``bpeproof.impl.models`` names each one's module)."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["SEMANTICS", "MergeModel"]

#: The semantics a model can run, with what each follows.
SEMANTICS = {
    "sequential": "the article's enc_R: the rules applied one after another, in list order (def-bpe)",
    "tiktoken": "tiktoken: the whole pre-token if it is a token, else the lowest-ranked joined bytes first",
    "hf-bpe": "Hugging Face BPE model: the lowest-ranked merge line first, its joined string's id as result",
    "sentencepiece-bpe": "sentencepiece's BPE: the normalized text, the pair spelling the highest-scoring piece first"
    " (leftmost among equal scores), unknown characters as <0xXX> byte pieces or unk",
    "llama.cpp": "llama.cpp's BPE tokenizer: its special-token partition and pre-tokenizer, the lowest-ranked merge"
    " of two token strings first (bpeproof.impl.pipelines.llama_cpp)",
    "llama.cpp-spm": "llama.cpp's SPM tokenizer: its special-token partition, a space prefix, spaces as U+2581, the"
    " two symbols spelling the highest-scoring token first (leftmost among equals), bytes of the rest as <0xXX>"
    " tokens (bpeproof.impl.pipelines.llama_cpp_spm)",
}


class MergeModel(Protocol):
    """What a ``Tokenizer`` needs of a semantics: ids for one pre-token and bytes for every id."""

    @property
    def semantics(self) -> str: ...

    @property
    def vocabulary_size(self) -> int: ...

    def encode_word(self, word: bytes) -> tuple[int, ...]: ...

    def token_table(self) -> dict[int, bytes]: ...

    def c_merger(self) -> Any: ...

