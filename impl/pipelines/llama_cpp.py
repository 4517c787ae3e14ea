"""llama.cpp's tokenizer as ``llama_tokenize`` runs it on a GGUF file: the special-token partition every model
shares, and the byte-level BPE one (``tokenizer.ggml.model`` = ``gpt2``): pre-tokenizer, merges.  Its SPM
tokenizer and its BPE over text (``gemma4``) build on this pipeline in ``bpeproof.impl.pipelines.llama_cpp_spm``;
``bpeproof.impl.pipelines.gguf`` picks the one a file needs.

Encoding a text with a byte-level BPE vocabulary, llama.cpp

1. cuts the special tokens out of it (``tokenizer_st_partition``, ``bpeproof.impl.pipelines.llama_cpp_specials``):
   the tokens that are control, user-defined or unknown, longest text first; each one's occurrences, left to
   right, in every fragment not yet cut; a token flagged ``lstrip`` / ``rstrip`` also takes the spaces before /
   after it.  When special tokens are not parsed (``parse_special`` false, which ``encode`` without
   ``allowed_special`` follows) only the user-defined tokens are cut (those not also control);
2. pre-tokenizes every other fragment with the regular expressions of its ``tokenizer.ggml.pre``
   (``bpeproof.impl.pre_tokenizers.llama_cpp``, which says where llama.cpp departs from what they say), each
   one cutting the pieces of the one before into its matches and the text between them;
3. merges each piece's bytes (``bpeproof.impl.models.llama_cpp.LlamaCppModel``; a byte without a token, which
   its C loop reports as ``LlamaCppModel.BARRIER``, gives no id).

Decoding gives each token's piece (``llama_token_to_piece`` with special tokens as their text), joined; with
``add_space_prefix`` the first one loses a leading space, as ``llama_detokenize`` does.  ``llama_detokenize``'s
clean-up of spaces before punctuation (``clean_spaces``) is not applied.
"""

from __future__ import annotations

from bpeproof.impl.encoder import HAVE_C_LOOP
from bpeproof.impl.formats.gguf_tokenizer import LSTRIP, RSTRIP, GGUFTokenizer
from bpeproof.impl.formats.gguf_vocab import byte_level_tables, merge_bytes
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.models.llama_cpp import LlamaCppModel
from bpeproof.impl.pipelines.llama_cpp_specials import SpecialTokenPartition, cut_bytes
from bpeproof.impl.pipelines.text_pipeline import TextPipeline, TokenizerParts
from bpeproof.impl.pre_tokenizers.llama_cpp import LlamaCppPreTokenizer
from bpeproof.impl.pre_tokenizers.llama_cpp_scan import llama_cpp_scanner, llama_cpp_table
from bpeproof.spec.types import BPEValueError, InvalidTextError

__all__ = ["LlamaCppPipeline", "byte_level_parts", "lenient_utf8"]


class LlamaCppPipeline(TextPipeline):
    """What ``llama_tokenize`` does to a text before merging, on a byte-level BPE GGUF file (and, in its
    subclasses, on the other models), without the BOS / EOS it adds when asked to add special tokens
    (``add_special``), as its test vectors are made.

    ``pieces(text, None)`` is ``llama_tokenize(text, add_special=false, parse_special=false)``: user-defined tokens
    are cut out of the text, control tokens are not.  With the names of every special token it is
    ``parse_special=true``: every control, user-defined and unknown token is cut out; fewer names cut those
    control tokens and the user-defined ones.  The special tokens are the control, user-defined and unknown
    tokens (text → id); they decode to their text.  A subclass says how each fragment of text between special
    tokens becomes words (``fragment_words``, ``fragment_byte_words``).
    """

    def __init__(self, tokenizer: GGUFTokenizer, pretokenizer: LlamaCppPreTokenizer | None = None) -> None:
        """``FormatError`` for special tokens whose cutting llama.cpp leaves unspecified."""
        self.gguf = tokenizer
        self._pretokenizer = pretokenizer
        self.strips_space_prefix = tokenizer.add_space_prefix
        pre = tokenizer.pre_type if tokenizer.model == "gemma4" else tokenizer.pre or "default"
        self.description = f"llama.cpp's {tokenizer.model} tokenizer, pre-tokenizer {pre}"
        self._special_flags = {
            text: (token, tokenizer.parsed_always(token), bool(tokenizer.attrs[token] & LSTRIP),
                   bool(tokenizer.attrs[token] & RSTRIP))
            for text, token in tokenizer.special_tokens.items()
        }
        self._partitions: dict[frozenset[str] | None, SpecialTokenPartition] = {}
        if type(self) is LlamaCppPipeline and pretokenizer is not None and HAVE_C_LOOP:
            # llama.cpp's splitter for GPT-2's, Llama 3's or Qwen2's expression: a scanner on llama.cpp's classes.
            self.c_scanner = llama_cpp_scanner(pretokenizer.kind)
            self.whole_when_unnamed = not self.always_parsed  # (user-defined tokens are cut out of every text)
        problem = self._partition(None).ambiguity()
        if problem is not None:
            raise FormatError(tokenizer.path, "key 'tokenizer.ggml.token_type'",
                              f"{problem}: llama.cpp's result then depends on its unspecified sort order")

    @property
    def always_parsed(self) -> dict[str, int]:
        """The special tokens cut out of the text even without names (llama.cpp's user-defined tokens), text →
        id."""
        return {text: flags[0] for text, flags in self._special_flags.items() if flags[1]}

    def _partition(self, names: frozenset[str] | None) -> SpecialTokenPartition:
        partition = self._partitions.get(names)
        if partition is None:
            chosen = [(text, token, lstrip, rstrip)
                      for text, (token, always, lstrip, rstrip) in self._special_flags.items()
                      if always or (names is not None and text in names)]
            partition = SpecialTokenPartition(chosen)
            self._partitions[names] = partition
        return partition

    def stretches(self, text: str, names: frozenset[str] | None) -> list[str | int]:
        """The fragments of text between the special tokens cut out of it, and their ids, in order."""
        partition = self._partition(names)
        if names is not None and partition is not self._partitions.get(None):
            problem = partition.ambiguity()
            if problem is not None:
                raise BPEValueError(f"{problem}: llama.cpp's result then depends on its unspecified sort order")
        return partition.cut(text) if partition.tokens else [text] if text else []

    def words(self, stretch: str) -> list[str]:
        return self.fragment_words(stretch, True)

    def scanner_table(self) -> bytes:
        return llama_cpp_table()

    def pieces(self, text: str, names: frozenset[str] | None) -> list[str | int]:
        out: list[str | int] = []
        after_special = True
        for fragment in self.stretches(text, names):
            if isinstance(fragment, int):
                out.append(fragment)
                after_special = True
            else:
                out += self.fragment_words(fragment, after_special)
                after_special = False
        return out

    def fragment_words(self, text: str, after_special: bool) -> list[str]:
        """The words of one fragment of text between special tokens (``after_special``: the first one, or one
        after a special token): the pieces of the file's pre-tokenizer."""
        assert self._pretokenizer is not None
        return self._pretokenizer.split(text)

    def fragment_byte_words(self, data: bytes, after_special: bool) -> list[bytes]:
        """``fragment_words`` of a fragment that is not UTF-8: read by llama.cpp's lenient decoder first."""
        return [piece.encode("utf-8", "surrogatepass") for piece in self.fragment_words(lenient_utf8(data), True)]

    def byte_pieces(self, data: bytes, names: frozenset[str] | None) -> list[bytes | int] | None:
        """Bytes as llama.cpp encodes them: invalid UTF-8 is read by its lenient decoder (each bad byte one
        U+FFFD, overlong and surrogate forms taken as the code points they spell) where its tokenizer decodes the
        text (byte-level BPE, BPE over text), and taken as it is by SPM."""
        fragments: list[bytes | int] = [data]
        for token_text, token, lstrip, rstrip in self._partition(names).tokens:
            fragments = cut_bytes(fragments, token_text.encode("utf-8"), token, lstrip, rstrip)
        out: list[bytes | int] = []
        after_special = True
        for fragment in fragments:
            if isinstance(fragment, int):
                out.append(fragment)
                after_special = True
            else:
                out += self.fragment_byte_words(fragment, after_special)
                after_special = False
        return out


def byte_level_parts(tokenizer: GGUFTokenizer, *, cache_size: int = 1 << 18, model: LlamaCppModel | None = None,
                     c_loop: bool = True) -> TokenizerParts:
    """The parts of llama.cpp's byte-level BPE tokenizer on a GGUF file read by
    ``bpeproof.impl.formats.gguf_tokenizer.read_gguf_tokenizer``; ``FormatError`` for a pre-tokenizer not
    reproduced.  ``model``: the model already built for this file (the compiled-vocabulary cache's), else built
    here, merging in the C loop when it is built and ``c_loop``."""
    kind = tokenizer.pre_type
    if kind is None or tokenizer.model != "gpt2" or tokenizer.escape_whitespaces:
        raise FormatError(tokenizer.path, "key 'tokenizer.ggml.model'", "not a byte-level BPE tokenizer")
    try:
        pretokenizer = LlamaCppPreTokenizer(kind)
    except ValueError as error:
        raise FormatError(tokenizer.path, "key 'tokenizer.ggml.pre'", str(error)) from None
    if model is None:
        tables = byte_level_tables(tokenizer)
        if tables.merge_ids is not None:
            model = LlamaCppModel.from_columns(tables.lookup, *tables.merge_ids, tables.decoded,
                                               ignore_merges=tokenizer.ignore_merges, checked=True, owned=True,
                                               c_loop=c_loop)
        else:
            model = LlamaCppModel(tables.lookup, merge_bytes(tokenizer), tables.decoded,
                                  ignore_merges=tokenizer.ignore_merges, c_loop=c_loop)
    return TokenizerParts(LlamaCppPipeline(tokenizer, pretokenizer), model, tokenizer.special_tokens, cache_size)


def lenient_utf8(data: bytes) -> str:
    """llama.cpp's ``unicode_cpts_from_utf8``: a lead byte with its continuation bytes is the code point they
    spell (overlong forms and surrogates included); any other byte is U+FFFD.  A code point above U+10FFFF
    makes llama.cpp fail, so it raises ``InvalidTextError``."""
    out: list[str] = []
    i = 0
    n = len(data)
    while i < n:
        byte = data[i]
        if byte < 0x80:
            out.append(chr(byte))
            i += 1
            continue
        size = 0 if not byte & 0x40 else 2 if not byte & 0x20 else 3 if not byte & 0x10 else 4 if not byte & 0x08 else 0
        if size and i + size - 1 < n and all(data[i + k] & 0xC0 == 0x80 for k in range(1, size)):
            code = byte & (0x7F >> size)
            for k in range(1, size):
                code = (code << 6) | (data[i + k] & 0x3F)
            if code > 0x10FFFF:
                raise InvalidTextError(f"the bytes at {i} spell the code point {code:#x}, above U+10FFFF; llama.cpp"
                                       " fails on this text")
            out.append(chr(code))
            i += size
            continue
        out.append("\ufffd")
        i += 1
    return "".join(out)
