"""llama.cpp's tokenizer as ``llama_tokenize`` runs it on a GGUF file: the special-token partition every model
shares, and the byte-level BPE one (``tokenizer.ggml.model`` = ``gpt2``): pre-tokenizer, merges.  Its SPM
tokenizer and its BPE over text (``gemma4``) build on this class in ``bpeproof.impl.pipelines.llama_cpp_spm``;
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
3. merges each piece's bytes (``bpeproof.impl.models.llama_cpp.LlamaCppModel``).

Decoding gives each token's piece (``llama_token_to_piece`` with special tokens as their text), joined; with
``add_space_prefix`` the first one loses a leading space, as ``llama_detokenize`` does.  ``llama_detokenize``'s
clean-up of spaces before punctuation (``clean_spaces``) is not applied.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from typing import Any

from bpeproof.impl.formats.gguf_tokenizer import LSTRIP, RSTRIP, GGUFTokenizer
from bpeproof.impl.formats.gguf_vocab import byte_level_tables, merge_bytes
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.models.llama_cpp import LlamaCppModel
from bpeproof.impl.pipelines.llama_cpp_specials import SpecialTokenPartition, cut_bytes
from bpeproof.impl.pre_tokenizers.llama_cpp import LlamaCppPreTokenizer
from bpeproof.impl.special_tokens import AllowedSpecial
from bpeproof.impl.stream import StreamDecoder
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.spec.types import BPETypeError, BPEValueError, InvalidTextError

__all__ = ["LlamaCppTokenizer", "lenient_utf8"]


class LlamaCppTokenizer(Tokenizer):
    """A tokenizer that encodes as llama.cpp's ``llama_tokenize`` does on a byte-level BPE GGUF file (and, in
    its subclasses, on the other models), without the BOS / EOS it adds when asked to add special tokens
    (``add_special``), as its test vectors are made.

    ``encode(text)`` is ``llama_tokenize(text, add_special=false, parse_special=false)``: user-defined tokens
    are cut out of the text, control tokens are not.  ``encode(text, allowed_special="all")`` is
    ``parse_special=true``: every control, user-defined and unknown token is cut out; a collection of names
    cuts those control tokens and the user-defined ones.  ``special_tokens`` are the control, user-defined and
    unknown tokens (text → id); they decode to their text.

    A subclass sets up its model with ``_setup``, then ``_setup_specials``, and encodes each fragment of text
    between special tokens in ``_fragment_ids`` / ``_fragment_bytes_ids``.
    """

    _partitions: dict[frozenset[str] | None, SpecialTokenPartition]
    _barrier: bool
    _special_flags: dict[str, tuple[int, bool, bool, bool]]
    gguf: GGUFTokenizer

    def __init__(self, tokenizer: GGUFTokenizer, *, cache_size: int = 1 << 18,
                 model: LlamaCppModel | None = None) -> None:
        """The tokenizer of a GGUF file read by ``bpeproof.impl.formats.gguf_tokenizer.read_gguf_tokenizer``;
        ``FormatError`` for a pre-tokenizer not reproduced, or special tokens whose cutting llama.cpp leaves
        unspecified.  ``model``: the model already built for this file (the compiled-vocabulary cache's,
        ``bpeproof.impl.pipelines.compiled_vocab``), else built here."""
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
                                                   ignore_merges=tokenizer.ignore_merges, checked=True, owned=True)
            else:
                model = LlamaCppModel(tables.lookup, merge_bytes(tokenizer), tables.decoded,
                                      ignore_merges=tokenizer.ignore_merges)
        self._setup(model, "words", tokenizer.special_tokens, cache_size, pretokenizer)
        self._setup_specials(tokenizer)
        self._barrier = model.has_barrier

    def _setup_specials(self, tokenizer: GGUFTokenizer) -> None:
        """What every tokenizer of llama.cpp keeps of a file's special tokens, after ``_setup``: their flags and
        partitions, checked for an order llama.cpp leaves unspecified."""
        self.gguf = tokenizer
        self._special_flags = {
            text: (token, tokenizer.parsed_always(token), bool(tokenizer.attrs[token] & LSTRIP),
                   bool(tokenizer.attrs[token] & RSTRIP))
            for text, token in tokenizer.special_tokens.items()
        }
        self._partitions = {}
        self._barrier = False
        problem = self._partition(None).ambiguity()
        if problem is not None:
            raise FormatError(tokenizer.path, "key 'tokenizer.ggml.token_type'",
                              f"{problem}: llama.cpp's result then depends on its unspecified sort order")

    @classmethod
    def from_gguf(cls, tokenizer: GGUFTokenizer, *, cache_size: int = 1 << 18) -> LlamaCppTokenizer:
        """``LlamaCppTokenizer(tokenizer)``."""
        return cls(tokenizer, cache_size=cache_size)

    @property
    def always_parsed(self) -> dict[str, int]:
        """The special tokens cut out of the text even without ``allowed_special`` (llama.cpp's user-defined
        tokens), text → id."""
        return {text: flags[0] for text, flags in self._special_flags.items() if flags[1]}

    def _ordinary(self, text: str) -> list[int]:
        ids = super()._ordinary(text)
        if self._barrier:
            return [token for token in ids if token != LlamaCppModel.BARRIER]
        return ids

    def _sequential(self, what: str) -> Any:
        kind = "BPE" if self.gguf.model != "llama" else "SPM tokenizer"
        raise BPEValueError(f"{what} needs the article's sequential semantics; this tokenizer runs llama.cpp's"
                            f" {kind}, which no rule list reproduces in general")

    def __repr__(self) -> str:
        pre = self.gguf.pre_type if self.gguf.model == "gemma4" else self.gguf.pre or "default"
        return (f"{type(self).__name__}(model={self.gguf.model!r}, pre={pre!r}, special_tokens={len(self._specials)},"
                f" vocab_size={self.vocab_size})")

    def _partition(self, names: frozenset[str] | None) -> SpecialTokenPartition:
        partition = self._partitions.get(names)
        if partition is None:
            chosen = [(text, token, lstrip, rstrip)
                      for text, (token, always, lstrip, rstrip) in self._special_flags.items()
                      if always or (names is not None and text in names)]
            partition = SpecialTokenPartition(chosen)
            self._partitions[names] = partition
        return partition

    def _encode_text(self, text: str, allowed_special: AllowedSpecial) -> list[int]:
        # Checked even without special tokens: a name that is not one is an error here.
        names = self._named_specials(allowed_special)
        partition = self._partition(names)
        if names is not None and partition is not self._partitions.get(None):
            problem = partition.ambiguity()
            if problem is not None:
                raise BPEValueError(f"{problem}: llama.cpp's result then depends on its unspecified sort order")
        out: list[int] = []
        after_special = True
        for fragment in partition.cut(text) if partition.tokens else [text] if text else []:
            if isinstance(fragment, int):
                out.append(fragment)
                after_special = True
            else:
                out += self._fragment_ids(fragment, after_special)
                after_special = False
        return out

    def _fragment_ids(self, text: str, after_special: bool) -> list[int]:
        """The ids of one fragment of text between special tokens (``after_special``: the first one, or one
        after a special token): pre-tokenized, each piece merged."""
        return self._ordinary(text)

    def _fragment_bytes_ids(self, data: bytes, after_special: bool) -> list[int]:
        """``_fragment_ids`` of a fragment that is not UTF-8: read by llama.cpp's lenient decoder first."""
        out: list[int] = []
        for piece in self.pre_tokenize(lenient_utf8(data)):
            out += self._model.encode_word(piece.encode("utf-8", "surrogatepass"))
        return out

    def encode_bytes(self, data: bytes, *, allowed_special: AllowedSpecial = None) -> list[int]:
        """Encode bytes as llama.cpp does: invalid UTF-8 is read by its lenient decoder (each bad byte one
        U+FFFD, overlong and surrogate forms taken as the code points they spell) where its tokenizer decodes
        the text (byte-level BPE, BPE over text), and taken as it is by SPM."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise BPETypeError(f"data must be bytes, not {type(data).__name__}")
        raw = bytes(data)
        try:
            return self._encode_text(raw.decode("utf-8"), allowed_special)
        except UnicodeDecodeError:
            pass
        names = self._named_specials(allowed_special)
        partition = self._partition(names)
        fragments: list[bytes | int] = [raw]
        for token_text, token, lstrip, rstrip in partition.tokens:
            needle = token_text.encode("utf-8")
            fragments = cut_bytes(fragments, needle, token, lstrip, rstrip)
        out: list[int] = []
        after_special = True
        for fragment in fragments:
            if isinstance(fragment, int):
                out.append(fragment)
                after_special = True
            else:
                out += self._fragment_bytes_ids(fragment, after_special)
                after_special = False
        return out

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The tokens' pieces joined, as llama.cpp's ``llama_detokenize`` gives them (special tokens as their
        text): with ``add_space_prefix`` the first token's piece loses one leading space.  llama.cpp's clean-up
        of spaces before punctuation (``clean_spaces``) is not applied."""
        if isinstance(ids, (str, bytes)):
            return super().decode_bytes(ids)  # refused there
        items = ids if isinstance(ids, (list, tuple)) else list(ids)
        data = super().decode_bytes(items)
        if self.gguf.add_space_prefix and data[:1] == b" " and self.token_bytes(items[0])[:1] == b" ":
            return data[1:]
        return data

    def stream_decoder(self, errors: str = "strict") -> StreamDecoder:
        """A decoder for tokens arriving in pieces: the first token loses its leading space as in
        ``decode_bytes``, the others keep theirs."""
        codecs.lookup_error(errors)
        started = False

        def pieces(ids: Iterable[int]) -> bytes:
            nonlocal started
            items = list(ids)
            data = self.decode_bytes(items) if not started else Tokenizer.decode_bytes(self, items)
            started = started or bool(items)
            return data

        return StreamDecoder(pieces, errors)


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
