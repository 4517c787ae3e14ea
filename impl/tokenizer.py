"""The user-facing tokenizer: one text pipeline and one merge model; encoding, special tokens, decoding, files.

A ``Tokenizer`` is a ``TextPipeline`` (``bpeproof.impl.pipelines.text_pipeline``), which turns a text into words and
the ids of the special tokens it reads, and a ``MergeModel`` (``bpeproof.impl.models``), which turns each word's
bytes into ids.  The article's tokenizer is the sequential model on a rule list R (def-merge, def-bpe) behind a
pre-tokenization pattern, with special tokens (def-utf8): encoding cuts a text into words with the pattern, takes
each word's UTF-8 bytes and encodes each word on its own with enc_R, the composition
``bpeproof.spec.text.encode_text`` describes.  Every file format is another pipeline or model (tiktoken's ranks,
a ``tokenizer.json``'s added tokens, normalizer and pre-tokenizer, sentencepiece, llama.cpp, CLIP).  Decoding
joins the bytes of all tokens first and decodes UTF-8 once, never token by token, because a token boundary may fall
inside a character (prop-utf8-boundary).

Token ids.  Internally the bytes are the ids 0..255 of V0 (def-alphabet-vocab).  A tokenizer may present the bytes
under other ids (``byte_ids``: 256 distinct non-negative ids, none of them a rule's new id or a special token's id):
tiktoken's rank files permute 0..255, giving byte 0x21 "!" the id 0 and so on; DeepSeek's ``tokenizer.json`` puts
the bytes at 3..258.  Merged tokens keep their rule ids c, which are ≥ 256 in every valid rule list.

Speed.  What runs in C is chosen once, when the tokenizer is assembled: a model with a C merge loop
(``impl/_c/_fastenc.c``: cache look-up, UTF-8 bytes, rank-order merging, the list of ids) merges every word there;
a pipeline whose stretches a hand-written C scanner cuts (tiktoken's patterns, ``c_scanner``) has each stretch cut
and merged in one C call.  Without the extension the same ids come from the ``regex`` module and the Python loops.

Files and processes.  ``load`` reads the parts of a tokenizer from any supported file
(``bpeproof.impl.pipelines.registry``) and ``encode_batch`` sends a tokenizer's parts to worker processes
(``bpeproof.impl.parallel``); both take the parts, not this class, so every import points downward.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain
from typing import Any

from bpeproof.impl.encoder import Encoder
from bpeproof.impl.io.atomic import atomic_write_text
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.models.ids import check_special_tokens
from bpeproof.impl.models.merge_model import SEMANTICS, MergeModel
from bpeproof.impl.models.sequential import SequentialModel
from bpeproof.impl.models.tiktoken import TiktokenModel
from bpeproof.impl.pipelines.special_tokens import AllowedSpecial, allowed_names
from bpeproof.impl.pipelines.text_pipeline import TextPipeline, TokenizerParts, check_texts, pipeline_of
from bpeproof.impl.pre_tokenizers import splitter
from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer, SplitStep
from bpeproof.impl.pre_tokenizers.patterns import pattern_name, resolve_pattern
from bpeproof.impl.scanned_text import FAILED, ScannedText
from bpeproof.impl.stream import StreamDecoder
from bpeproof.impl.word_cache import WordCache
from bpeproof.spec.types import (
    ALPHABET_SIZE,
    BPETypeError,
    BPEValueError,
    InvalidTextError,
    InvalidTokenError,
    Rule,
    RuleTriple,
    is_int,
)

__all__ = ["TextPipeline", "Tokenizer", "TokenizerParts", "check_texts", "load_tokenizer"]

#: The id a model's C loop reports for a byte without a token (llama.cpp's ``LlamaCppModel.BARRIER``), dropped.
_BARRIER = -1


class Tokenizer:
    """Byte-level BPE on text: a text pipeline, then a merge model on each word, joined (def-bpe, def-utf8).

    ``rules``: a valid rule list (def-merge), run with the article's sequential semantics.  ``pattern``: a name of
    ``impl.pre_tokenizers.patterns.PATTERNS`` ("r50k", "cl100k", "o200k", "llama3", "qwen2", "words") or a raw regular
    expression for the ``regex`` module.  ``special_tokens``: name → id, ids outside V_m and distinct (def-utf8); plain
    encoding never produces them.  ``byte_ids``: the external id of each byte: 256 distinct non-negative ints, none of
    them a rule's new id c or a special token's id (a permutation of 0..255 always qualifies); None for the identity.
    ``cache_size`` bounds the word cache.

    ``pretokenizer``: a ``bpeproof.impl.pre_tokenizers.hf_splits.PreTokenizer`` or a sequence of ``SplitStep``
    (Hugging Face ``Split`` steps applied in turn, as a ``tokenizer.json`` file's ``Sequence`` pre-tokenizer does);
    when given it cuts the text into words instead of ``pattern``, which is then only kept (``pattern`` property,
    files).  A step with the behaviour "removed" drops text, so ``decode(encode(text))`` may be shorter than the
    text, as with the ``tokenizers`` library.  Saved files record the steps (format version 2).

    Any other pipeline and model: ``from_parts`` (``from_model`` for a model behind a pattern or split steps).
    """

    def __init__(
        self,
        rules: Sequence[RuleTriple],
        pattern: str = "words",
        special_tokens: Mapping[str, int] | None = None,
        *,
        byte_ids: Sequence[int] | None = None,
        cache_size: int = 1 << 18,
        pretokenizer: PreTokenizer | Sequence[SplitStep] | None = None,
    ) -> None:
        self._assemble(SequentialModel.checked(rules, byte_ids), special_tokens, cache_size,
                       pattern=pattern, pretokenizer=pretokenizer)

    @classmethod
    def from_model(
        cls,
        model: MergeModel,
        pattern: str = "words",
        special_tokens: Mapping[str, int] | None = None,
        *,
        cache_size: int = 1 << 18,
        pretokenizer: PreTokenizer | Sequence[SplitStep] | None = None,
    ) -> Tokenizer:
        """A tokenizer running ``model``'s semantics (``bpeproof.impl.models``: tiktoken, Hugging Face BPE,
        sequential, …) behind ``pattern``, or the split steps ``pretokenizer`` when given."""
        tokenizer = cls.__new__(cls)
        tokenizer._assemble(model, special_tokens, cache_size, pattern=pattern, pretokenizer=pretokenizer)
        return tokenizer

    @classmethod
    def from_parts(cls, parts: TokenizerParts) -> Tokenizer:
        """The tokenizer of a text pipeline and a merge model (``TokenizerParts``: a file's, as the loaders read
        it, or any other)."""
        tokenizer = cls.__new__(cls)
        tokenizer._assemble(parts.model, parts.special_tokens, parts.cache_size, pipeline=parts.pipeline)
        return tokenizer

    def _assemble(
        self,
        model: MergeModel,
        special_tokens: Mapping[str, int] | None,
        cache_size: int,
        *,
        pipeline: TextPipeline | None = None,
        pattern: str = "words",
        pretokenizer: PreTokenizer | Sequence[SplitStep] | None = None,
    ) -> None:
        """Check the parts and choose, once, what runs in C (see the module docstring)."""
        if not is_int(cache_size) or cache_size < 0:
            raise BPETypeError(f"cache_size must be a non-negative int, not {cache_size!r}")
        self._model = model
        if pipeline is None:
            source = resolve_pattern(pattern)
            checked = PreTokenizer.of(pretokenizer)
        # The table of every id's bytes is made when first read (decoding), unless special tokens are to be checked
        # against the model's ids now: most loads only encode.
        table = model.token_table() if special_tokens else None
        self._specials = check_special_tokens(special_tokens, table or ())
        self._special_bytes: dict[int, bytes] = {token: name.encode("utf-8") for name, token in self._specials.items()}
        if table is not None:
            table.update(self._special_bytes)
        self._bytes_of: dict[int, bytes] | None = table
        self._pipeline = pipeline if pipeline is not None else pipeline_of(source, checked, self._specials)
        self._cache = WordCache(self._encode_piece, cache_size)
        self._cache_size = cache_size
        # The C word loop (impl/_c/_fastenc.c) reports the model's ids itself and fills the same cache.
        self._fast: Any = model.c_merger()
        self._barrier: bool = bool(getattr(model, "has_barrier", False))
        # A pipeline cut by a hand-written C scanner, with a model merged in C: each stretch in one C call (not for a
        # model whose loop reports a unit as several ids, which only encode_pieces spells out, or a barrier, which
        # only _encode_words leaves out).
        scans = self._fast is not None and not self._barrier and not getattr(model, "reports_spelt", False)
        which = getattr(self._pipeline, "c_scanner", -1) if scans else -1
        self._scanned = ScannedText(self._fast, which, self._pipeline, cache_size) if which >= 0 else None

    def __repr__(self) -> str:
        return (
            f"Tokenizer(semantics={self.semantics}, pattern={self._pipeline.description or 'the file pipeline'},"
            f" special_tokens={len(self._specials)}, vocab_size={self.vocab_size})"
        )

    # -- properties -------------------------------------------------------------------------------------

    @property
    def semantics(self) -> str:
        """Which BPE semantics encoding runs: "sequential" (the article's), "tiktoken" or "hf-bpe" (``impl.models``)."""
        return self._model.semantics

    @property
    def model(self) -> MergeModel:
        """The merge model: one pre-token's bytes to ids, under ``semantics``."""
        return self._model

    @property
    def pipeline(self) -> TextPipeline:
        """The text pipeline: a text to the model's words and the ids of the special tokens read in it."""
        return self._pipeline

    @property
    def parts(self) -> TokenizerParts:
        """The tokenizer's parts (``from_parts`` makes it again from them)."""
        return TokenizerParts(self._pipeline, self._model, dict(self._specials), self._cache_size)

    def _sequential(self, what: str) -> SequentialModel:
        if not isinstance(self._model, SequentialModel):
            raise BPEValueError(
                f"{what} needs the article's sequential semantics; this tokenizer runs {self.semantics!r}"
                f" ({SEMANTICS[self.semantics]}), which no rule list reproduces in general"
            )
        return self._model

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rule list r_1..r_m (internal ids: bytes are 0..255); only for the sequential semantics."""
        return self._sequential("a rule list").rules

    @property
    def pattern(self) -> str:
        """The pre-tokenization regular expression ("words"' for a pipeline that is not cut by one)."""
        return getattr(self._pipeline, "pattern", resolve_pattern("words"))

    @property
    def pretokenizer(self) -> PreTokenizer | None:
        """The split steps that cut the text into words, or None when a pattern or another pipeline does."""
        return getattr(self._pipeline, "pretokenizer", None)

    @property
    def cache_size(self) -> int:
        """How many words the cache of word → ids keeps."""
        return self._cache_size

    def pre_tokenize(self, text: str) -> list[str]:
        """The words ``encode`` cuts ``text`` into (before special tokens are considered: none are cut out)."""
        if not isinstance(text, str):
            raise BPETypeError(f"text must be str, not {type(text).__name__}")
        return [piece for piece in self._pipeline.pieces(text, None) if isinstance(piece, str)]

    def rewritten_pre_tokenize(self, transform: Callable[[str], str | None], pinned: bool = True
                               ) -> Callable[[str], list[str]] | None:
        """``pre_tokenize`` as a port that reads every regular expression of the pipeline otherwise cuts (its
        ``rewritten``): each passed through ``transform`` (the ``regex`` module's syntax in and out; None: the
        expression cannot be read so) and, unless ``pinned``, classified by the ``regex`` module's own Unicode tables
        instead of ``UNICODE_VERSION``'s.  None when the pipeline has no regular expression or one cannot be read
        so.  For a diagnosis (which reading of the expressions a port follows): this tokenizer is left as it is."""
        rewrite = getattr(self._pipeline, "rewritten", None)  # a pipeline of another kind may not offer it
        pipeline: TextPipeline | None = None if rewrite is None else rewrite(transform, pinned)
        if pipeline is None:
            return None
        return lambda text: [piece for piece in pipeline.pieces(text, None) if isinstance(piece, str)]

    @property
    def _table(self) -> dict[int, bytes]:
        """Every id's bytes: the model's tokens and the special tokens' names (made on first use)."""
        if self._bytes_of is None:
            table = self._model.token_table()
            table.update(self._special_bytes)
            self._bytes_of = table
        return self._bytes_of

    @property
    def pattern_name(self) -> str | None:
        """The name of the pattern in ``patterns.PATTERNS``, or None for a raw expression."""
        return pattern_name(self.pattern)

    @property
    def special_tokens(self) -> dict[str, int]:
        """A copy of the special tokens, name → id."""
        return dict(self._specials)

    @property
    def library_allowed_special(self) -> AllowedSpecial:
        """The ``allowed_special`` under which ``encode`` answers as the file's own library does by default: "all"
        for a ``tokenizer.json`` (the ``tokenizers`` library reads every added token in any text: it has no mode
        for ordinary text), None for the others (tiktoken's ``encode_ordinary``, llama.cpp without
        ``parse_special``)."""
        return self._pipeline.library_allowed_special

    @property
    def byte_ids(self) -> tuple[int, ...]:
        """The id of each byte 0..255 (the smallest id standing for it alone; -1 where none does)."""
        if isinstance(self._model, SequentialModel):
            byte_ids = self._model.byte_ids
            return byte_ids if byte_ids is not None else tuple(range(ALPHABET_SIZE))
        found = [-1] * ALPHABET_SIZE
        for token in sorted(self._model.token_table().items(), reverse=True):
            if len(token[1]) == 1:
                found[token[1][0]] = token[0]
        return tuple(found)

    @property
    def vocab_size(self) -> int:
        """The number of ids: |V_m| = 256 + m (prop-bpe-vocab-size) plus the special tokens."""
        return self._model.vocabulary_size + len(self._specials)

    @property
    def encoder(self) -> Encoder:
        """The compiled rule list (internal ids); only for the sequential semantics."""
        return self._sequential("the rule encoder").encoder

    def token_bytes(self, token: int) -> bytes:
        """⟨⟨t⟩⟩ for an id of V_m, or the UTF-8 bytes of a special token's name (def-alphabet-vocab, def-utf8)."""
        if not is_int(token):
            raise BPETypeError(f"token must be an int, not {type(token).__name__}")
        try:
            return self._table[token]
        except KeyError:
            raise InvalidTokenError(f"token {token} is not in the vocabulary of this tokenizer") from None

    def clear_cache(self) -> None:
        """Forget every cached word."""
        self._cache.clear()
        if self._fast is not None:
            self._fast.clear_cache()

    # -- encoding (def-bpe, def-utf8) -------------------------------------------------------------------

    def _encode_piece(self, piece: str) -> tuple[int, ...]:
        """The model's ids for one word's bytes; the word cache calls this on a miss."""
        return self._model.encode_word(piece.encode("utf-8", "surrogateescape"))

    def _allowed_names(self, allowed_special: AllowedSpecial) -> frozenset[str] | None:
        """The special tokens' names ``allowed_special`` allows, checked (``special_tokens.allowed_names``); None
        for none."""
        return allowed_names(self._specials, allowed_special)

    def _encode_text(self, text: str, allowed_special: AllowedSpecial) -> list[int]:
        names = self._allowed_names(allowed_special)
        if self._scanned is None:
            return self._encode_pieces(self._pipeline.pieces(text, names))
        if names is None and self._pipeline.whole_when_unnamed:
            return self._scan(text)
        out: list[int] = []
        for item in self._pipeline.stretches(text, names):
            if isinstance(item, int):
                out.append(item)
            else:
                out += self._scan(item)
        return out

    def _scan(self, text: str) -> list[int]:
        """One stretch cut by the pipeline's C scanner and merged in C, through the C loop's own word cache."""
        assert self._scanned is not None
        if len(text) >= splitter.C_TEXT_LIMIT:
            return self._encode_words(self._pipeline.words(text))
        return self._scanned.stretch(text)

    def _encode_pieces(self, pieces: list[str | int]) -> list[int]:
        """The pipeline's words encoded through the cache (in C when the model has a C loop), its ids kept."""
        out: list[int] = []
        words: list[str] = []
        for piece in pieces:
            if isinstance(piece, str):
                words.append(piece)
                continue
            if words:
                out += self._encode_words(words)
                words = []
            out.append(piece)
        if words:
            out += self._encode_words(words)
        return out

    def _encode_words(self, words: list[str]) -> list[int]:
        fast = self._fast
        if fast is not None and sum(map(len, words)) < splitter.C_TEXT_LIMIT:
            try:
                ids: list[int] = fast.encode_pieces(words, self._cache, self._cache_size)
            except ValueError as error:
                if type(error) is not ValueError:
                    raise
                raise InvalidTextError(str(error)) from None
        else:
            ids = list(chain.from_iterable(map(self._cache.__getitem__, words)))
        if self._barrier:
            return [token for token in ids if token != _BARRIER]
        return ids

    # -- encoding entry points -------------------------------------------------------------------------

    def encode(self, text: str, *, allowed_special: AllowedSpecial = None) -> list[int]:
        """Encode a text: the pipeline's words and special tokens, enc_R on each word (def-bpe, def-utf8).

        ``allowed_special``: "all", a collection of names, or None (the default: special tokens' strings are encoded
        as ordinary text).  Where several names start at the leftmost occurrence the longest wins.  A text that is
        not encodable as UTF-8 (lone surrogates) raises ``InvalidTextError``."""
        if not isinstance(text, str):
            raise BPETypeError(f"text must be str, not {type(text).__name__}")
        if (self._scanned is not None and self._pipeline.whole_when_unnamed
                and self._allowed_names(allowed_special) is None):
            # The whole text in one C call, which refuses a surrogate itself, for the error below (checked here first,
            # it cost a sixth of the time).
            ids = self._scanned.whole_text(text)
            if ids is not None:
                return ids
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as error:
                raise InvalidTextError(
                    f"the text is not encodable as UTF-8 at character {error.start}: {error.reason}"
                ) from None
        return self._encode_text(text, allowed_special)

    def encode_ordinary(self, text: str) -> list[int]:
        """``encode`` with no special tokens."""
        return self.encode(text, allowed_special=None)

    def encode_batch(
        self, texts: Sequence[str], *, num_workers: int | None = None, allowed_special: AllowedSpecial = None
    ) -> list[list[int]]:
        """``encode`` of each text, in ``num_workers`` processes (default: all cores), like tiktoken's
        ``encode_batch``: the same ids whatever the number (``bpeproof.impl.parallel.encode_batch``, which sends the
        workers this tokenizer's parts)."""
        from bpeproof.impl.parallel import encode_batch

        return encode_batch(self, texts, num_workers=num_workers, allowed_special=allowed_special)

    def encodes_on_threads(self, allowed_special: AllowedSpecial = None) -> bool:
        """Whether ``encode_on_threads`` takes texts (of under ``splitter.C_TEXT_LIMIT`` characters) with these
        allowed special tokens: the pipeline has a hand-written C scanner (and the extension is built)."""
        self._allowed_names(allowed_special)
        return self._scanned is not None

    def _c_batch(self, texts: Sequence[str], threads: int, allowed_special: AllowedSpecial, as_uint32: bool) -> Any:
        check_texts(texts)
        if self._scanned is None:
            return None
        return self._scanned.batch(texts, threads, self._allowed_names(allowed_special), as_uint32)

    def encode_on_threads(
        self, texts: Sequence[str], threads: int, *, allowed_special: AllowedSpecial = None
    ) -> list[list[int]] | None:
        """``[self.encode(text, allowed_special=...) for text in texts]`` on ``threads`` threads of the C loop, which
        encodes with the GIL released (``impl.scanned_text``: whole texts, or the stretches the pipeline leaves
        between added tokens); None when the pipeline has no C scanner (``encodes_on_threads``).

        A batch the loop cannot encode (a lone surrogate, a byte without an id, a text too long for it) is encoded
        again here, one text after another, so that the error is the one ``encode`` raises for the first such text.
        """
        ids = self._c_batch(texts, threads, allowed_special, False)
        if ids is FAILED:
            return [self.encode(text, allowed_special=allowed_special) for text in texts]
        return ids  # type: ignore[no-any-return]

    def encode_on_threads_uint32(
        self, texts: Sequence[str], threads: int, *, allowed_special: AllowedSpecial = None
    ) -> list[bytes] | None:
        """``encode_on_threads``, each text's ids as bytes of little-endian uint32 (a ``.npy`` file's data), made
        without an int object per id; None also when the C loop cannot encode the batch (an id of 2**32 or more
        included): then the caller encodes it otherwise, for its error."""
        ids = self._c_batch(texts, threads, allowed_special, True)
        return None if ids is FAILED else ids

    def encode_bytes(self, data: bytes, *, allowed_special: AllowedSpecial = None) -> list[int]:
        """Encode arbitrary bytes (def-utf8: byte-level BPE is total on Σ*, thm-bpe-roundtrip).

        Invalid UTF-8 is carried through pre-tokenization as the
        ``surrogateescape`` code points U+DC80..U+DCFF (neither letters, digits
        nor spaces), so ``decode_bytes(encode_bytes(b)) == b`` for every b, and
        valid UTF-8 encodes exactly as ``encode`` does.  A pipeline may read such bytes its own way
        (``TextPipeline.byte_pieces``: llama.cpp's lenient decoder).
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise BPETypeError(f"data must be bytes, not {type(data).__name__}")
        raw = bytes(data)
        try:
            return self._encode_text(raw.decode("utf-8"), allowed_special)
        except UnicodeDecodeError:
            pass
        # Bytes that are not UTF-8: words of bytes where the pipeline reads them its own way (llama.cpp's lenient
        # decoder), else the surrogateescape text.
        items = self._pipeline.byte_pieces(raw, self._allowed_names(allowed_special))
        if items is None:
            return self._encode_text(raw.decode("utf-8", "surrogateescape"), allowed_special)
        out: list[int] = []
        for item in items:
            if isinstance(item, int):
                out.append(item)
            else:
                out += self._model.encode_word(item)
        return out

    # -- decoding (def-alphabet-vocab, prop-utf8-boundary) ----------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The joined bytes of the tokens (dec, def-alphabet-vocab), special tokens as their names' UTF-8; without
        the first token's leading space where the pipeline put one there (``strips_space_prefix``)."""
        return self._joined(ids, self._pipeline.strips_space_prefix)

    def _joined(self, ids: Iterable[int], strip: bool) -> bytes:
        if isinstance(ids, (str, bytes)):
            raise BPETypeError(f"ids must be a list of ints, not {type(ids).__name__}")
        items = ids if isinstance(ids, (list, tuple)) else list(ids)
        if not set(map(type, items)) <= {int}:
            for index, token in enumerate(items):
                if not is_int(token):
                    raise BPETypeError(f"ids[{index}] must be an int, not {type(token).__name__}")
            items = [int(token) for token in items]
        table = self._table
        try:
            data = b"".join(map(table.__getitem__, items))
            if strip and data[:1] == b" " and table[items[0]][:1] == b" ":
                return data[1:]
            return data
        except KeyError:
            for index, token in enumerate(items):
                if token not in table:
                    raise InvalidTokenError(
                        f"ids[{index}] = {token} is not in the vocabulary of this tokenizer"
                    ) from None
            raise  # pragma: no cover

    def decode(self, ids: Iterable[int], errors: str = "strict") -> str:
        """The text of the tokens: their bytes joined, then UTF-8 decoded once (prop-utf8-boundary).

        ``errors="strict"`` raises ``InvalidTextError`` naming the first bad
        byte; ``"replace"`` (or any other codec error handler) is passed to ``bytes.decode``.
        """
        data = self.decode_bytes(ids)
        try:
            return data.decode("utf-8", errors)
        except UnicodeDecodeError as error:
            raise InvalidTextError(
                f"the decoded bytes are not valid UTF-8 at byte {error.start}: {error.reason}"
            ) from None

    def stream_decoder(self, errors: str = "strict") -> StreamDecoder:
        """A decoder for tokens arriving in pieces that never shows half a character (prop-utf8-boundary)."""
        codecs.lookup_error(errors)
        if not self._pipeline.strips_space_prefix:
            return StreamDecoder(self.decode_bytes, errors)
        started = False

        def pieces(ids: Iterable[int]) -> bytes:
            nonlocal started
            items = list(ids)
            data = self._joined(items, not started)  # only the first token of all loses its space
            started = started or bool(items)
            return data

        return StreamDecoder(pieces, errors)

    # -- files ------------------------------------------------------------------------------------------

    def to_json(self, source: str = "<in memory>") -> str:
        """The tokenizer in the project's file format (``bpeproof.impl.formats.project_file``); one rule per line.

        ``FormatError`` (naming ``source``) for an id with more digits than the format's reader parses."""
        from bpeproof.impl.formats.project_file import ProjectDocument, document_text

        model = self._sequential("the project's tokenizer file")
        return document_text(ProjectDocument(self.rules, self.pattern, dict(self._specials), model.byte_ids,
                                             self.pretokenizer), source)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the tokenizer to ``path`` atomically (temporary file, fsync, ``os.replace``); nothing is written
        when ``to_json`` refuses it."""
        atomic_write_text(path, self.to_json(os.fspath(path)))

    @classmethod
    def load(cls, path: str | os.PathLike[str], pattern: str | None = None, *, decode_only: bool = False,
             cache: bool = True) -> Tokenizer:
        """Any vocabulary file the project reads, with its own library's semantics (``bpeproof.load``): its parts
        read by ``bpeproof.impl.pipelines.registry.read_parts`` (which says what each format means, and what
        ``decode_only`` and ``cache`` do), assembled.  ``pattern`` is needed only by a rank file whose name does
        not say it.  Malformed content raises ``FormatError`` naming the file and the key ("(file)" for the
        document as a whole); so does a file that cannot be read."""
        from bpeproof.impl.pipelines.registry import read_parts

        name = os.fspath(path)
        parts = read_parts(name, pattern, decode_only=decode_only, cache=cache)
        try:
            return cls.from_parts(parts)
        except (BPEValueError, BPETypeError) as error:
            raise FormatError(name, None, str(error)) from None

    @classmethod
    def from_json(cls, data: bytes | str, path: str | os.PathLike[str] = "<string>") -> Tokenizer:
        """Parse the file format (``impl.formats.project_file.parse_document``, the format's one reader); ``path``
        only names the source in error messages."""
        from bpeproof.impl.formats.project_file import parse_document

        document = parse_document(path, data)
        try:
            return cls(document.rules, document.pattern, document.special_tokens, byte_ids=document.byte_ids,
                       pretokenizer=document.pretokenizer)
        except (BPEValueError, BPETypeError) as error:
            raise FormatError(path, "(file)", str(error)) from None

    # -- tiktoken rank files ----------------------------------------------------------------------------

    @classmethod
    def from_tiktoken_ranks(
        cls,
        ranks: Mapping[bytes, int],
        pattern: str,
        special_tokens: Mapping[str, int] | None = None,
        *,
        cache_size: int = 1 << 18,
    ) -> Tokenizer:
        """A tokenizer that encodes exactly as tiktoken does with this rank file (token bytes → rank = id).

        Any rank file, proper or not, the empty token included: ``impl.models.tiktoken.TiktokenModel``.  No merge
        list is recovered (``impl.formats.tiktoken_file.tiktoken_rules`` does that, where the article's semantics
        give the same ids)."""
        return cls.from_model(TiktokenModel(ranks), pattern, special_tokens, cache_size=cache_size)


def load_tokenizer(path: str, pattern: str | None = None, *, decode_only: bool = False, cache: bool = True
                   ) -> Tokenizer:
    """``Tokenizer.load``: any supported vocabulary file as a ``Tokenizer`` that encodes exactly as the file's own
    library does."""
    return Tokenizer.load(path, pattern, decode_only=decode_only, cache=cache)
