"""The user-facing tokenizer: pre-tokenization, byte-level BPE per word, special tokens, decoding, files.

A ``Tokenizer`` is a rule list R (def-merge, def-bpe), a pre-tokenization
pattern (``bpeproof.impl.pre_tokenizers.patterns``) and special tokens (def-utf8).  Encoding a text
cuts it into words with the pattern, takes each word's UTF-8 bytes (def-utf8)
and encodes each word on its own with enc_R (def-bpe) — the composition
``bpeproof.spec.text.encode_text`` describes.  Decoding joins the bytes of all tokens
first and decodes UTF-8 once, never token by token, because a token boundary
may fall inside a character (prop-utf8-boundary).

Token ids.  Internally the bytes are the ids 0..255 of V0 (def-alphabet-vocab).
A tokenizer may present the bytes under other ids (``byte_ids``: 256 distinct
non-negative ids, none of them a rule's new id or a special token's id):
tiktoken's rank files permute 0..255, giving byte 0x21 "!" the id 0 and so on;
DeepSeek's ``tokenizer.json`` puts the bytes at 3..258.  Merged tokens keep
their rule ids c, which are ≥ 256 in every valid rule list.

Pre-tokenization.  Either one regular expression (``pattern``), whose matches
are the words, or a ``bpeproof.impl.pre_tokenizers.hf_splits.PreTokenizer`` (``pretokenizer``): a
sequence of Hugging Face ``Split`` steps, each cutting the pieces of the step
before, as a ``tokenizer.json`` file's own pre-tokenizer does.

Files.  ``save`` / ``load`` write and read the project's own file format, one UTF-8 JSON object, which
``bpeproof.impl.formats.project_file`` (its one reader and writer) describes key by key.

Speed.  When the optional C extension ``impl/_c/_fastenc.c`` is built (and
``bpeproof.impl.encoder.USE_C_LOOP`` is true when the tokenizer is made), the loop over
the words runs in C: cache look-up, UTF-8 bytes, rank-order merging, the list
of ids.  For tiktoken's patterns (cl100k, o200k, r50k) the pre-tokenizer is
written out by hand in C as well (``bpeproof.impl.pre_tokenizers.char_table``); any other pattern is cut by
the ``regex`` module (``bpeproof.impl.pre_tokenizers.splitter.regex_pieces``).  A tokenizer with split steps cuts
its words with the ``regex`` module and merges them in C.  Without the extension the same ids come from the
``regex`` module and ``bpeproof.impl.encoder``'s Python loops.

Files and processes.  ``load`` and ``encode_batch`` are done by the file loaders
(``bpeproof.impl.pipelines.registry``) and the worker pools (``bpeproof.impl.parallel``), which build on this
class and return it; it reaches them only through ``bpeproof.impl.tokenizer_hooks``, by name on first use, so
that the imports between them point one way and this module stays free of both.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import partial
from itertools import chain
from typing import Any, Protocol

from bpeproof.impl import tokenizer_hooks
from bpeproof.impl.encoder import Encoder
from bpeproof.impl.ids import check_byte_ids, check_special_tokens
from bpeproof.impl.io.atomic import atomic_write_text
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.models.merge_model import SEMANTICS, MergeModel
from bpeproof.impl.models.sequential import SequentialModel
from bpeproof.impl.models.tiktoken import TiktokenModel
from bpeproof.impl.pre_tokenizers import splitter
from bpeproof.impl.pre_tokenizers.char_table import HAND_WRITTEN, char_table
from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer, SplitStep
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, compile_pattern, pattern_name, resolve_pattern
from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins
from bpeproof.impl.special_tokens import AllowedSpecial, allowed_names, names_finder
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

__all__ = ["TextPipeline", "Tokenizer"]

#: The expressions of the named patterns, which are known to compile.
_NAMED_SOURCES = frozenset(PATTERNS.values())

def check_texts(texts: object) -> None:
    """Refuse a batch that is not a list of str (a str itself included), naming the first item that is not one."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise BPETypeError(f"texts must be a list of str, not {type(texts).__name__}")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise BPETypeError(f"texts[{index}] must be str, not {type(text).__name__}")


class TextPipeline(Protocol):
    """What turns a text into a model's words: the words and the ids of the (allowed) special tokens, in order.

    ``library_allowed_special``: the ``allowed_special`` under which the pipeline answers as the file's own library
    does when it is given no option ("all" where that library reads special tokens in any text).  A pipeline cut
    by regular expressions may also have ``rewritten(transform, pinned)``, the same pipeline with them read
    otherwise (``HFPipeline.rewritten``, for ``Tokenizer.rewritten_pre_tokenize``)."""

    description: str
    library_allowed_special: AllowedSpecial

    def pieces(self, text: str, allowed: Collection[str] | None = None) -> list[str | int]: ...


class Tokenizer:
    """Byte-level BPE on text: pre-tokenize, enc_R each word, join (def-bpe, def-utf8).

    ``rules``: a valid rule list (def-merge).  ``pattern``: a name of
    ``bpeproof.impl.pre_tokenizers.patterns.PATTERNS`` ("r50k", "cl100k", "o200k", "words") or a raw
    regular expression for the ``regex`` module.  ``special_tokens``: name →
    id, ids outside V_m and distinct (def-utf8); plain encoding never produces
    them.  ``byte_ids``: the external id of each byte: 256 distinct
    non-negative ints, none of them a rule's new id c or a special token's id
    (a permutation of 0..255 always qualifies); None for the identity.
    ``cache_size`` bounds the word cache.

    ``pretokenizer``: a ``bpeproof.impl.pre_tokenizers.hf_splits.PreTokenizer`` or a sequence of
    ``SplitStep`` (Hugging Face ``Split`` steps applied in turn, as a
    ``tokenizer.json`` file's ``Sequence`` pre-tokenizer does); when given it
    cuts the text into words instead of ``pattern``, which is then only kept
    (``pattern`` property, files).  A step with the behaviour "removed" drops
    text, so ``decode(encode(text))`` may be shorter than the text, as with
    the ``tokenizers`` library.  Saved files record the steps (format version 2).
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
        encoder = Encoder(rules, cache_size=0)
        new_ids = frozenset(rule.c for rule in encoder.rules)
        checked_bytes = check_byte_ids(byte_ids, new_ids)
        self._setup(SequentialModel(encoder, checked_bytes), pattern, special_tokens, cache_size, pretokenizer)

    @classmethod
    def from_model(
        cls,
        model: MergeModel,
        pattern: str = "words",
        special_tokens: Mapping[str, int] | None = None,
        *,
        cache_size: int = 1 << 18,
        pretokenizer: PreTokenizer | Sequence[SplitStep] | None = None,
        pipeline: TextPipeline | None = None,
    ) -> Tokenizer:
        """A tokenizer running ``model``'s semantics (``bpeproof.impl.models``: tiktoken, Hugging Face BPE, sequential).

        ``pipeline``: what turns a text into the model's words and the ids of the special tokens in it, instead
        of the pattern or split steps and ``allowed_special`` (a ``tokenizer.json`` file's added tokens,
        normalizer and pre-tokenizer, ``impl.pipelines.tokenizer_json``; CLIP's text cleaning,
        ``impl.pipelines.clip``); ``pattern`` and
        ``pretokenizer`` are then only kept."""
        tokenizer = cls.__new__(cls)
        tokenizer._setup(model, pattern, special_tokens, cache_size, pretokenizer)
        if pipeline is not None:
            tokenizer._pipeline = pipeline
            tokenizer._split_which = -1
            tokenizer._split_table = None
        return tokenizer

    def _setup(
        self,
        model: MergeModel,
        pattern: str,
        special_tokens: Mapping[str, int] | None,
        cache_size: int,
        pretokenizer: PreTokenizer | Sequence[SplitStep] | None,
    ) -> None:
        if not is_int(cache_size) or cache_size < 0:
            raise BPETypeError(f"cache_size must be a non-negative int, not {cache_size!r}")
        self._pipeline: TextPipeline | None = None
        self._model = model
        self._pattern_source = resolve_pattern(pattern)
        # A named pattern compiles: it is compiled when first used (most tokenizers cut their words in C, by
        # split steps or by a pipeline, and never use it).  Any other is compiled now, to be refused now.
        self._compiled: Any = None if self._pattern_source in _NAMED_SOURCES else compile_pattern(self._pattern_source)
        self._pretokenizer = self._check_pretokenizer(pretokenizer)
        # The table of every id's bytes is made when first read (decoding), unless special tokens are to be checked
        # against the model's ids now: most loads only encode.
        table = model.token_table() if special_tokens else None
        self._specials = check_special_tokens(special_tokens, table or ())
        self._special_bytes: dict[int, bytes] = {token: name.encode("utf-8") for name, token in self._specials.items()}
        if table is not None:
            table.update(self._special_bytes)
        self._bytes_of: dict[int, bytes] | None = table
        self._cache = WordCache(self._encode_piece, cache_size)
        self._cache_size = cache_size
        # The C word loop (impl/_c/_fastenc.c) reports the model's ids itself and fills the same cache.
        self._fast: Any = model.c_merger()
        # tiktoken's patterns are also written out by hand in C (split_pattern), with a code point table from regex.
        self._split_table: bytes | None = None
        self._split_which = HAND_WRITTEN.get(self._pattern_source, -1) if self._pretokenizer is None else -1
        if self._fast is not None and self._split_which >= 0:
            self._split_table = char_table()
        self._special_finders: dict[frozenset[str], Any] = {}

    def __repr__(self) -> str:
        pattern = self.pattern_name or repr(self._pattern_source)
        if self._pretokenizer is not None:
            pattern = f"{len(self._pretokenizer.steps)} split steps"
        if self._pipeline is not None:
            pattern = self._pipeline.description or "the file's pipeline"
        return (
            f"Tokenizer(semantics={self.semantics}, pattern={pattern}, special_tokens={len(self._specials)},"
            f" vocab_size={self.vocab_size})"
        )

    # -- construction checks ----------------------------------------------------------------------------

    @staticmethod
    def _check_pretokenizer(pretokenizer: PreTokenizer | Sequence[SplitStep] | None) -> PreTokenizer | None:
        if pretokenizer is None or isinstance(pretokenizer, PreTokenizer):
            return pretokenizer
        if isinstance(pretokenizer, (str, bytes)) or not isinstance(pretokenizer, Sequence):
            raise BPETypeError(
                f"pretokenizer must be a PreTokenizer or a sequence of SplitStep, not {type(pretokenizer).__name__}"
            )
        for index, step in enumerate(pretokenizer):
            if not isinstance(step, SplitStep):
                raise BPETypeError(f"pretokenizer[{index}] must be a SplitStep, not {type(step).__name__}")
        return PreTokenizer(pretokenizer)

    # -- properties -------------------------------------------------------------------------------------

    @property
    def semantics(self) -> str:
        """Which BPE semantics encoding runs: "sequential" (the article's), "tiktoken" or "hf-bpe" (``impl.models``)."""
        return self._model.semantics

    @property
    def model(self) -> MergeModel:
        """The merge model: one pre-token's bytes to ids, under ``semantics``."""
        return self._model

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
        """The pre-tokenization regular expression."""
        return self._pattern_source

    @property
    def pretokenizer(self) -> PreTokenizer | None:
        """The split steps that cut the text into words, or None when ``pattern`` does."""
        return self._pretokenizer

    @property
    def pipeline(self) -> TextPipeline | None:
        """The text pipeline that turns a text into words (a ``tokenizer.json`` file's, CLIP's, …), or None when
        ``pattern`` or ``pretokenizer`` does."""
        return self._pipeline

    @property
    def cache_size(self) -> int:
        """How many words the cache of word → ids keeps."""
        return self._cache_size

    def pre_tokenize(self, text: str) -> list[str]:
        """The words ``encode`` cuts ``text`` into (before special tokens are considered: none are cut out)."""
        if not isinstance(text, str):
            raise BPETypeError(f"text must be str, not {type(text).__name__}")
        if self._pipeline is not None:
            return [piece for piece in self._pipeline.pieces(text, None) if isinstance(piece, str)]
        if self._pretokenizer is not None:
            return self._pretokenizer.split(text)
        return self._regex_pieces(text)

    def rewritten_pre_tokenize(self, transform: Callable[[str], str | None], pinned: bool = True
                               ) -> Callable[[str], list[str]] | None:
        """``pre_tokenize`` as a port that reads every regular expression of the pre-tokenization otherwise cuts:
        the pattern, each split step, or each of the pipeline's (``HFPipeline.rewritten``), passed through
        ``transform`` (the ``regex`` module's syntax in and out; None: the expression cannot be read so) and,
        unless ``pinned``, classified by the ``regex`` module's own Unicode tables instead of ``UNICODE_VERSION``'s.
        None when the pre-tokenization has no regular expression or one cannot be read so.  For a diagnosis
        (which reading of the expressions a port follows): this tokenizer is left as it is."""
        if self._pipeline is not None:
            rewrite = getattr(self._pipeline, "rewritten", None)  # a pipeline without expressions has none
            pipeline: TextPipeline | None = None if rewrite is None else rewrite(transform, pinned)
            if pipeline is None:
                return None
            return lambda text: [piece for piece in pipeline.pieces(text, None) if isinstance(piece, str)]
        if self._pretokenizer is not None:
            rewritten = self._pretokenizer.rewritten(transform, pinned)
            return None if rewritten is None else rewritten.split
        source = transform(self._pattern_source)
        if source is None:
            return None
        try:
            compiled = compile_pattern(source)
        except ValueError:
            return None
        return partial(splitter.regex_pieces if pinned else splitter.unpinned_pieces, compiled)

    @property
    def _table(self) -> dict[int, bytes]:
        """Every id's bytes: the model's tokens and the special tokens' names (made on first use)."""
        if self._bytes_of is None:
            table = self._model.token_table()
            table.update(self._special_bytes)
            self._bytes_of = table
        return self._bytes_of

    @property
    def _regex(self) -> Any:
        """The compiled pattern (compiled on first use)."""
        if self._compiled is None:
            self._compiled = compile_pattern(self._pattern_source)
        return self._compiled

    def _regex_pieces(self, text: str) -> list[str]:
        """The pattern's matches in ``text`` (``splitter.regex_pieces``)."""
        return splitter.regex_pieces(self._regex, text)

    @property
    def pattern_name(self) -> str | None:
        """The name of the pattern in ``patterns.PATTERNS``, or None for a raw expression."""
        return pattern_name(self._pattern_source)

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
        return None if self._pipeline is None else self._pipeline.library_allowed_special

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

    def _ordinary(self, text: str) -> list[int]:
        """Pre-tokenize with the pattern and encode every word through the cache."""
        try:
            return self._ordinary_unchecked(text)
        except InvalidTextError:
            raise
        except ValueError as error:
            if type(error) is not ValueError:
                raise
            raise InvalidTextError(str(error)) from None  # the C loop's word that needs a byte without an id

    def _ordinary_unchecked(self, text: str) -> list[int]:
        fast = self._fast is not None and len(text) < splitter.C_TEXT_LIMIT
        if fast and self._split_table is not None:
            # The hand-written pattern matches at every position: the pieces cover the text.
            # The C loop keeps its own word cache for these patterns, keyed by code points (no str per piece).
            ids: list[int] = self._fast.encode_text(text, self._split_table, self._split_which, self._cache_size)
            return ids
        if self._pretokenizer is not None:
            pieces = self._pretokenizer.split(text)
        else:
            pieces = self._regex_pieces(text)
            if sum(map(len, pieces)) != len(text):
                self._raise_uncovered(text)
        if fast:
            ids = self._fast.encode_pieces(pieces, self._cache, self._cache_size)
            return ids
        return list(chain.from_iterable(map(self._cache.__getitem__, pieces)))

    def _raise_uncovered(self, text: str) -> None:
        position = 0
        for match in self._regex.finditer(stand_ins(text)):
            if match.start() != position:
                break
            position = match.end()
        raise BPEValueError(
            f"the pre-tokenization pattern leaves the text at character {position} unmatched;"
            " a pattern must cover the whole text"
        )

    def _special_finder(self, allowed_special: AllowedSpecial) -> Any:
        """The expression that finds the allowed special tokens' names (made once per set of names), or None."""
        names = self._allowed_names(allowed_special)
        if names is None:
            return None
        if names not in self._special_finders:
            self._special_finders[names] = names_finder(names)
        return self._special_finders[names]

    def _allowed_names(self, allowed_special: AllowedSpecial) -> frozenset[str] | None:
        """The special tokens' names ``allowed_special`` allows, or None for none (and always None for a tokenizer
        without special tokens)."""
        if not self._specials:
            return None
        return self._named_specials(allowed_special)

    def _named_specials(self, allowed_special: AllowedSpecial) -> frozenset[str] | None:
        """The special tokens' names ``allowed_special`` allows, checked (``special_tokens.allowed_names``)."""
        return allowed_names(self._specials, allowed_special)

    def _encode_pipeline(self, pipeline: TextPipeline, text: str, allowed_special: AllowedSpecial) -> list[int]:
        """The pipeline's words encoded through the cache (in C when the model has a C loop), its ids kept."""
        out: list[int] = []
        words: list[str] = []
        fast = self._fast
        for piece in pipeline.pieces(text, self._allowed_names(allowed_special)):
            if isinstance(piece, str):
                words.append(piece)
                continue
            if words:
                out += self._encode_words(words, fast)
                words = []
            out.append(piece)
        if words:
            out += self._encode_words(words, fast)
        return out

    def _encode_words(self, words: list[str], fast: Any) -> list[int]:
        if fast is not None and sum(map(len, words)) < splitter.C_TEXT_LIMIT:
            try:
                ids: list[int] = fast.encode_pieces(words, self._cache, self._cache_size)
            except ValueError as error:
                if type(error) is not ValueError:
                    raise
                raise InvalidTextError(str(error)) from None
            return ids
        return list(chain.from_iterable(map(self._cache.__getitem__, words)))

    def _encode_text(self, text: str, allowed_special: AllowedSpecial) -> list[int]:
        if self._pipeline is not None:
            return self._encode_pipeline(self._pipeline, text, allowed_special)
        finder = self._special_finder(allowed_special)
        if finder is None:
            return self._ordinary(text)
        out: list[int] = []
        start = 0
        for match in finder.finditer(text):
            out += self._ordinary(text[start : match.start()])
            out.append(self._specials[match.group()])
            start = match.end()
        out += self._ordinary(text[start:])
        return out

    def encode(self, text: str, *, allowed_special: AllowedSpecial = None) -> list[int]:
        """Encode a text: cut at the allowed special tokens, pre-tokenize the rest, enc_R each word (def-bpe, def-utf8).

        ``allowed_special``: "all", a collection of names, or None (the
        default: special tokens' strings are encoded as ordinary text).
        Where several names start at the leftmost occurrence the longest wins.
        A text that is not encodable as UTF-8 (lone surrogates) raises ``InvalidTextError``.
        """
        if not isinstance(text, str):
            raise BPETypeError(f"text must be str, not {type(text).__name__}")
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
        ``encode_batch``: the same ids whatever the number (``bpeproof.impl.parallel.encode_batch``, reached through
        ``bpeproof.impl.tokenizer_hooks`` because the worker pools build on this class)."""
        return tokenizer_hooks.encode_batch(self, texts, num_workers=num_workers, allowed_special=allowed_special)

    def encodes_on_threads(self, allowed_special: AllowedSpecial = None) -> bool:
        """Whether ``encode_on_threads`` takes texts (of under ``splitter.C_TEXT_LIMIT`` characters) with these
        allowed special tokens: the C extension is built, the pattern has its hand-written scanner, there is no
        pipeline and no special token to cut out."""
        return (
            self._fast is not None
            and self._split_table is not None
            and self._pipeline is None
            and self._special_finder(allowed_special) is None
        )

    def _c_batch(self, texts: Sequence[str], threads: int, allowed_special: AllowedSpecial, as_uint32: bool) -> Any:
        check_texts(texts)
        if not self.encodes_on_threads(allowed_special) or any(len(text) >= splitter.C_TEXT_LIMIT for text in texts):
            return None
        try:
            return self._fast.encode_texts(
                texts, self._split_table, self._split_which, self._cache_size, threads, True, as_uint32
            )
        except (ValueError, MemoryError, OverflowError):  # UnicodeError is a ValueError
            return False

    def encode_on_threads(
        self, texts: Sequence[str], threads: int, *, allowed_special: AllowedSpecial = None
    ) -> list[list[int]] | None:
        """``[self.encode(text, allowed_special=...) for text in texts]`` on ``threads`` threads of the C loop, which
        encodes with the GIL released; None when these texts do not all go through that loop (see
        ``encodes_on_threads``; a text too long for it).

        A batch the loop cannot encode (a lone surrogate, a byte without an id) is encoded again here, one text
        after another, so that the error is the one ``encode`` raises for the first such text.
        """
        ids = self._c_batch(texts, threads, allowed_special, False)
        if ids is False:
            return [self.encode(text, allowed_special=allowed_special) for text in texts]
        return ids  # type: ignore[no-any-return]

    def encode_on_threads_uint32(
        self, texts: Sequence[str], threads: int, *, allowed_special: AllowedSpecial = None
    ) -> list[bytes] | None:
        """``encode_on_threads``, each text's ids as bytes of little-endian uint32 (a ``.npy`` file's data), made
        without an int object per id; None also when the C loop cannot encode the batch (an id of 2**32 or more
        included): then the caller encodes it otherwise, for its error."""
        ids = self._c_batch(texts, threads, allowed_special, True)
        return None if ids is False else ids

    def encode_bytes(self, data: bytes, *, allowed_special: AllowedSpecial = None) -> list[int]:
        """Encode arbitrary bytes (def-utf8: byte-level BPE is total on Σ*, thm-bpe-roundtrip).

        Invalid UTF-8 is carried through pre-tokenization as the
        ``surrogateescape`` code points U+DC80..U+DCFF (neither letters, digits
        nor spaces), so ``decode_bytes(encode_bytes(b)) == b`` for every b, and
        valid UTF-8 encodes exactly as ``encode`` does.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise BPETypeError(f"data must be bytes, not {type(data).__name__}")
        return self._encode_text(bytes(data).decode("utf-8", "surrogateescape"), allowed_special)

    # -- decoding (def-alphabet-vocab, prop-utf8-boundary) ----------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The joined bytes of the tokens (dec, def-alphabet-vocab), special tokens as their names' UTF-8."""
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
            return b"".join(map(table.__getitem__, items))
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
        return StreamDecoder(self.decode_bytes, errors)

    # -- files ------------------------------------------------------------------------------------------

    def to_json(self, source: str = "<in memory>") -> str:
        """The tokenizer in the project's file format (``bpeproof.impl.formats.project_file``); one rule per line.

        ``FormatError`` (naming ``source``) for an id with more digits than the format's reader parses."""
        from bpeproof.impl.formats.project_file import ProjectDocument, document_text

        model = self._sequential("the project's tokenizer file")
        return document_text(ProjectDocument(self.rules, self._pattern_source, dict(self._specials), model.byte_ids,
                                             self._pretokenizer), source)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the tokenizer to ``path`` atomically (temporary file, fsync, ``os.replace``); nothing is written
        when ``to_json`` refuses it."""
        atomic_write_text(path, self.to_json(os.fspath(path)))

    @classmethod
    def load(cls, path: str | os.PathLike[str], pattern: str | None = None) -> Tokenizer:
        """Any vocabulary file the project reads, with its own library's semantics (``bpeproof.load``).

        A file written by ``save`` (plain or gzip), a tiktoken rank file, a ``tokenizer.json``, GPT-2's or CLIP's
        merges, a sentencepiece model, a tekken file or a GGUF file:
        ``bpeproof.impl.pipelines.registry.load_tokenizer`` (reached through ``bpeproof.impl.tokenizer_hooks``
        because the loaders build on this class), which names what each format means.  ``pattern`` is needed only
        by a rank file whose name does not say it.
        Malformed content raises ``FormatError`` naming the file and the key ("(file)" for the document as a
        whole); so does a file that cannot be read.
        """
        return tokenizer_hooks.load_tokenizer(os.fspath(path), pattern)

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
        list is recovered (``bpeproof.impl.formats.tiktoken_file.tiktoken_rules`` does that, for files where the
        article's semantics give the same ids).
        """
        return cls.from_model(TiktokenModel(ranks), pattern, special_tokens, cache_size=cache_size)

