"""llama.cpp's tokenizers over text with spaces written U+2581: its SPM tokenizer (``tokenizer.ggml.model`` =
``llama``) and its SPM-style BPE over raw UTF-8 (``gemma4``, and the pre-tokenizers ``gemma4``,
``granite-embed-multi-311m`` and ``sarvam-moe`` of a ``gpt2`` model), as ``llama_tokenize`` runs them.

Both cut the special tokens out of the text first, exactly as the byte-level tokenizer does
(``bpeproof.impl.pipelines.llama_cpp``, whose pipeline they extend).  Then, for each fragment of text between them:

- SPM (``SpmPipeline``): a space is put before the fragment when the file's ``add_space_prefix`` is
  true (llama.cpp's default for SPM) and the fragment is the first one or follows a special token; every space
  is written U+2581; the whole fragment goes to llama.cpp's SPM session
  (``bpeproof.impl.models.llama_cpp_spm.LlamaCppSpmModel``), bytes as they are (invalid UTF-8 is not replaced).
  No normalization: llama.cpp's SPM reads ``remove_extra_whitespaces`` but does not use it;
- BPE over text (``TextBpePipeline``): every space is written U+2581 (``escape_whitespaces``), the text
  is read by llama.cpp's lenient UTF-8 decoder, cut into runs of newlines and runs of other characters (the
  pre-tokenizer ``[^\\n]+|[\\n]+``, which llama.cpp runs by hand-written code), and each run is merged by the
  file's merges over characters (``bpeproof.impl.models.llama_cpp.LlamaCppTextModel``); a symbol left that is
  no token gives its bytes' ``<0xXX>`` tokens.  For ``gemma4`` a run of newlines that is a token is that token.

Tokens decode as ``llama_token_to_piece`` gives them: U+2581 as the space, a byte token as its byte
(``bpeproof.impl.formats.gguf_vocab.text_pieces``), special tokens as their text.
"""

from __future__ import annotations

import re

from bpeproof.impl.formats.gguf_tokenizer import GGUFTokenizer
from bpeproof.impl.formats.gguf_vocab import merge_sides, text_pieces
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.models.llama_cpp import LlamaCppTextModel
from bpeproof.impl.models.llama_cpp_spm import LlamaCppSpmModel
from bpeproof.impl.normalizers.sentencepiece import SPACE_SYMBOL
from bpeproof.impl.pipelines.llama_cpp import LlamaCppPipeline, lenient_utf8
from bpeproof.impl.pipelines.text_pipeline import TokenizerParts
from bpeproof.spec.types import BPETypeError, BPEValueError

__all__ = ["SpmPipeline", "TextBpePipeline", "spm_parts", "text_bpe_parts"]

_SPACE_BYTES = SPACE_SYMBOL.encode("utf-8")
#: llama.cpp's pre-tokenizer of BPE over text: runs of newlines and runs of anything else.
_NEWLINE_RUNS = re.compile("\n+|[^\n]+")


class SpmPipeline(LlamaCppPipeline):
    """llama.cpp's SPM tokenizer on a GGUF file (``tokenizer.ggml.model`` = ``llama``): each fragment is one word,
    a space before it as ``add_space_prefix`` says, every space written U+2581 (see the module docstring)."""

    def _escaped(self, text: str, after_special: bool) -> str:
        prefix = " " if self.gguf.add_space_prefix and after_special else ""
        return (prefix + text).replace(" ", SPACE_SYMBOL)

    def fragment_words(self, text: str, after_special: bool) -> list[str]:
        return [self._escaped(text, after_special)]

    def fragment_byte_words(self, data: bytes, after_special: bool) -> list[bytes]:
        prefix = b" " if self.gguf.add_space_prefix and after_special else b""
        return [(prefix + data).replace(b" ", _SPACE_BYTES)]


def spm_parts(tokenizer: GGUFTokenizer, *, cache_size: int = 1 << 18, model: LlamaCppSpmModel | None = None
              ) -> TokenizerParts:
    """The parts of llama.cpp's SPM tokenizer.  ``model``: the model already built for this file (the
    compiled-vocabulary cache's), else built here.  The model keeps its own cache of whole fragments."""
    if tokenizer.model != "llama":
        raise FormatError(tokenizer.path, "key 'tokenizer.ggml.model'", "not an SPM tokenizer ('llama')")
    if model is None:
        try:
            model = LlamaCppSpmModel(tokenizer.texts, tokenizer.scores, text_pieces(tokenizer),
                                     cache_size=min(cache_size, 1 << 16))
        except (BPEValueError, BPETypeError) as error:
            raise FormatError(tokenizer.path, "key 'tokenizer.ggml.scores'", str(error)) from None
    return TokenizerParts(SpmPipeline(tokenizer), model, tokenizer.special_tokens, 0)


class TextBpePipeline(LlamaCppPipeline):
    """llama.cpp's BPE over raw UTF-8 with spaces written U+2581 (``gemma4``, ``sarvam-moe``): each fragment cut
    into runs of newlines and runs of other characters (see the module docstring); no BOS / EOS is added
    (llama.cpp always adds BOS for Gemma 4 when asked to add special tokens)."""

    def fragment_words(self, text: str, after_special: bool) -> list[str]:
        words: list[str] = _NEWLINE_RUNS.findall(text.replace(" ", SPACE_SYMBOL))
        return words

    def fragment_byte_words(self, data: bytes, after_special: bool) -> list[bytes]:
        text = lenient_utf8(data.replace(b" ", _SPACE_BYTES))
        return [piece.encode("utf-8", "surrogatepass") for piece in _NEWLINE_RUNS.findall(text)]


def text_bpe_parts(tokenizer: GGUFTokenizer, *, cache_size: int = 1 << 18, model: LlamaCppTextModel | None = None
                   ) -> TokenizerParts:
    """The parts of llama.cpp's BPE over raw UTF-8.  ``model``: the model already built for this file (the
    compiled-vocabulary cache's), else built here."""
    if not tokenizer.escape_whitespaces or tokenizer.model == "llama":
        raise FormatError(tokenizer.path, "key 'tokenizer.ggml.model'", "not a BPE tokenizer over raw UTF-8")
    if model is None:
        lookup = dict(zip(map(str.encode, tokenizer.texts), range(len(tokenizer.texts)), strict=True))
        sides = list(map(str.encode, merge_sides(tokenizer.merges)))
        model = LlamaCppTextModel(lookup, list(zip(sides[0::2], sides[1::2], strict=True)),
                                  text_pieces(tokenizer), newline_runs=tokenizer.pre_type == "gemma4",
                                  ignore_merges=tokenizer.ignore_merges)
    return TokenizerParts(TextBpePipeline(tokenizer), model, tokenizer.special_tokens, cache_size)
