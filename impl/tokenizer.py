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

File format (``save`` / ``load``), one UTF-8 JSON object::

    {
      "format": "bpeproof-tokenizer",   # always this string
      "version": 1 | 2,                  # 2 exactly when the file has "pretokenizer"
      "pattern": "<regular expression>", # the regex-module source used for pre-tokenization
      "pattern_name": "cl100k" | null,   # its name in bpeproof.impl.pre_tokenizers.patterns.PATTERNS, if it has one
      "rules": [[a, b, c], ...],         # r_1..r_m in order, each over V_{j-1}
      "special_tokens": {"<name>": id},  # ids outside V_m, distinct, names non-empty
      "byte_ids": null | [256 ints]      # external id of each byte 0..255 (distinct, apart from the rules'
                                         # new ids and the special ids); null = identity
      "pretokenizer": [                  # version 2 only: the split steps, in order; "pattern" is then
        {"pattern": "<Oniguruma regex>", #   kept but not used for encoding
         "behavior": "isolated",         #   or removed, merged_with_previous, merged_with_next, contiguous
         "invert": false}, ...]
    }

Every key of the version is required and no other key is allowed; the loader
raises ``FormatError`` naming the file and the key for anything else.  A
tokenizer without a pre-tokenizer is written as version 1, so files that
could be read before are written exactly as before.

Speed.  When the optional C extension ``impl/_c/_fastenc.c`` is built (and
``bpeproof.impl.encoder.USE_C_LOOP`` is true when the tokenizer is made), the loop over
the words runs in C: cache look-up, UTF-8 bytes, rank-order merging, the list
of ids.  For tiktoken's patterns (cl100k, o200k, r50k) the pre-tokenizer is
written out by hand in C as well, from a table of code point classes of
Unicode 16.0 (``_char_table``, ``bpeproof.impl.pre_tokenizers.unicode_classes``); the tests check it
against ``regex.findall`` on the same classes.  A tokenizer with split steps cuts its words with the
``regex`` module and merges them in C.  Without the
extension the same ids come from the ``regex`` module and ``bpeproof.impl.encoder``'s
Python loops.

Files and processes.  ``load`` and ``encode_batch`` are done by the file loaders
(``bpeproof.impl.pipelines.registry``) and the worker pools (``bpeproof.impl.parallel``), which build on this
class and return it; it reaches them only through ``bpeproof.impl.tokenizer_hooks``, by name on first use, so
that the imports between them point one way and this module stays free of both.
"""

from __future__ import annotations

import codecs
import os
import sys
from collections import Counter
from collections.abc import Callable, Collection, Container, Iterable, Mapping, Sequence
from itertools import chain, islice
from pathlib import Path
from typing import Any, Literal, Protocol

from bpeproof.impl import encoder as _encoder
from bpeproof.impl import tokenizer_hooks
from bpeproof.impl.encoder import Encoder
from bpeproof.impl.formats.project_file import (
    FORMAT_NAME,
    FORMAT_VERSION,
    PRETOKENIZER_FORMAT_VERSION,
    ProjectDocument,
    document_text,
    parse_document,
)
from bpeproof.impl.ids import check_byte_ids, check_special_tokens
from bpeproof.impl.io.atomic import atomic_write_bytes, atomic_write_text
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.models.merge_model import SEMANTICS, MergeModel
from bpeproof.impl.models.sequential import SequentialModel
from bpeproof.impl.models.tiktoken import TiktokenModel
from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer, SplitStep
from bpeproof.impl.pre_tokenizers.patterns import (
    PATTERNS,
    PatternTimeoutError,
    backtracks,
    compile_pattern,
    pattern_name,
    resolve_pattern,
    time_limit,
)
from bpeproof.impl.pre_tokenizers.unicode_classes import UNICODE_VERSION, pin_pattern, stand_ins
from bpeproof.impl.stream import StreamDecoder
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

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "PRETOKENIZER_FORMAT_VERSION",
    "AllowedSpecial",
    "FormatError",
    "TextPipeline",
    "Tokenizer",
    "check_special_tokens",
]

# FORMAT_NAME, FORMAT_VERSION, PRETOKENIZER_FORMAT_VERSION: bpeproof.impl.formats.project_file, the format's one reader.

#: Texts of at least this many characters are encoded by the Python loops: the C loop takes words below 2**31 bytes.
C_TEXT_LIMIT = 2**29

#: What ``encode`` may treat as special tokens: all of them, the named ones, or none (None / empty).
AllowedSpecial = Literal["all"] | Collection[str] | None


def regex_pieces(compiled: Any, text: str) -> list[str]:
    """The matches of a compiled pattern in ``text`` (whole matches, also when it has groups), classified by
    ``UNICODE_VERSION`` (``bpeproof.impl.pre_tokenizers.unicode_classes.stand_ins``); a pattern that ``backtracks``
    runs under
    ``time_limit`` (``PatternTimeoutError`` past it)."""
    pinned = stand_ins(text)
    if not backtracks(compiled.pattern):
        if pinned is not text:
            return [text[match.start() : match.end()] for match in compiled.finditer(pinned)]
        return [match.group() for match in compiled.finditer(text)] if compiled.groups else list(compiled.findall(text))
    limit = time_limit(text)
    try:
        return [text[match.start() : match.end()] for match in compiled.finditer(pinned, timeout=limit)]
    except TimeoutError:
        raise PatternTimeoutError(
            f"the pre-tokenization pattern {compiled.pattern[:60]!r} ran more than {limit:.0f} s on a text of"
            f" {len(text)} characters: it backtracks without end (a repeated group that repeats or alternates)"
        ) from None


def _c_scanner(source: str) -> int:
    """The number of ``source`` in ``impl/_c/_fastenc_scan.h`` when its C scanner runs here, else -1."""
    which = _HAND_WRITTEN.get(source, -1)
    return which if which >= 0 and _encoder.HAVE_C_LOOP and _encoder.USE_C_LOOP else -1


def pattern_splitter(pattern: str) -> Callable[[str], list[str]]:
    """The words a pattern (a name of ``PATTERNS`` or an expression) cuts a text into, as a tokenizer with that
    pattern finds them: tiktoken's three patterns by the hand-written C scanner when the extension is built, any
    pattern otherwise by ``regex_pieces``.  Training counts its words with this, so that a trained tokenizer
    encodes a text with the words it was trained on."""
    source = resolve_pattern(pattern)
    compiled = compile_pattern(source)
    which = _c_scanner(source)
    if which >= 0:
        from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]

        split, table = _fastenc.split_pattern, _char_table()

        def hand_written(text: str) -> list[str]:
            if len(text) >= C_TEXT_LIMIT:
                return regex_pieces(compiled, text)
            pieces: list[str] = split(text, table, which)
            return pieces

        return hand_written

    def with_regex(text: str) -> list[str]:
        return regex_pieces(compiled, text)

    return with_regex


def _text_to_count(text: str) -> str:
    if not isinstance(text, str):
        raise BPETypeError(f"a text to count must be str, not {type(text).__name__}")
    return text


class WordCounts:
    """The words of texts with their frequencies, the texts cut as ``pattern_splitter(pattern)`` cuts them:
    ``trainer.count_words(texts, pretokenize=pattern_splitter(pattern))``, added up over the calls of ``add``.  For
    tiktoken's three patterns with the C extension built, the pieces are counted in C as the scanner finds them
    (``_fastenc.WordCounter``: a str and a count for each distinct word, no object for each piece)."""

    def __init__(self, pattern: str) -> None:
        self._source = resolve_pattern(pattern)
        self._split = pattern_splitter(self._source)
        which = _c_scanner(self._source)
        self._c: Any = None
        if which >= 0:
            from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]

            self._c, self._which, self._table = _fastenc.WordCounter(), which, _char_table()
        self._counts: Counter[bytes] = Counter()

    def add(self, texts: Iterable[str]) -> None:
        """Count the words of every text (str)."""
        from bpeproof.impl.trainer import count_words

        if self._c is None:
            self._counts.update(count_words(map(_text_to_count, texts), pretokenize=self._split))
            return
        add, table, which = self._c.add, self._table, self._which
        long_texts: list[str] = []
        for text in map(_text_to_count, texts):
            if len(text) < C_TEXT_LIMIT:
                add(text, table, which)
            else:  # beyond the scanner's limit: the regex module
                long_texts.append(text)
        if long_texts:
            self._counts.update(count_words(long_texts, pretokenize=self._split))

    def counts(self) -> Counter[bytes]:
        """Every word counted so far (UTF-8 bytes) with its count."""
        if self._c is None:
            return Counter(self._counts)
        try:
            counts: Counter[bytes] = Counter(self._c.counts())
        except UnicodeEncodeError as error:  # a lone surrogate, as count_words reports it
            raise InvalidTextError(f"word {error.object!r} cannot be encoded as UTF-8: {error.reason}") from None
        counts.update(self._counts)
        return counts


class TextPipeline(Protocol):
    """What turns a text into a model's words: the words and the ids of the (allowed) special tokens, in order."""

    description: str

    def pieces(self, text: str, allowed: Collection[str] | None = None) -> list[str | int]: ...



_CHAR_TABLE: bytes | None = None

#: The patterns that ``impl/_c/_fastenc_scan.h`` (part of ``impl/_c/_fastenc.c``) writes out by hand, and its number
# for each.
_HAND_WRITTEN = {PATTERNS["cl100k"]: 0, PATTERNS["o200k"]: 1, PATTERNS["r50k"]: 2}


def _char_table() -> bytes:
    """For every code point, its classes in Unicode 16.0, as ``split_pattern`` in ``_c/_fastenc_scan.h`` reads them.

    Two planes of 0x110000 bytes.  First plane: bit 0 ``\\p{L}``, bit 1 ``\\p{N}``, bit 2 ``\\s``,
    bits 3–6 which letter of "sdmtlver" (1–8) the code point matches under ``(?i:…)``, 0 for none.
    Second plane: bit 0 ``[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]``, bit 1 ``[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]``
    (o200k's classes).  Computed with the regex module on the classes written out as code point ranges of
    ``UNICODE_VERSION`` (``bpeproof.impl.pre_tokenizers.unicode_classes.pin_pattern``), so that the hand-written
    pre-tokenizers
    classify exactly as the patterns do under ``stand_ins``.  Built once per process, kept on disk.
    """
    global _CHAR_TABLE
    if _CHAR_TABLE is None:
        _CHAR_TABLE = _cached_char_table()
    if _CHAR_TABLE is None:
        import array

        import regex

        size = 0x110000
        points = array.array("I", range(size))
        if points.itemsize == 4 and sys.byteorder == "little":  # chr of every code point, quickly
            everything = points.tobytes().decode("utf-32-le", "surrogatepass")
        else:  # pragma: no cover - platforms with another int size or byte order
            everything = "".join(map(chr, range(size)))
        planes: list[bytearray] = []
        for classes in (
            ((1, r"\p{L}+"), (2, r"\p{N}+"), (4, r"(?:(?!\p{Cn})\s)+")),
            ((1, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"), (2, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]+")),
        ):
            combined = 0
            for flag, expression in classes:
                layer = bytearray(size)
                # The classes as UNICODE_VERSION has them (explicit ranges), not the regex module's own tables.
                for match in regex.finditer(pin_pattern(expression), everything):
                    layer[match.start() : match.end()] = bytes([flag]) * (match.end() - match.start())
                combined |= int.from_bytes(layer, "little")  # the flags are distinct bits: OR the layers at once
            planes.append(bytearray(combined.to_bytes(size, "little")))
        for index, letter in enumerate("sdmtlver", start=1):
            for match in regex.finditer(f"(?i:{letter})", everything):
                planes[0][match.start()] |= index << 3
        _CHAR_TABLE = bytes(planes[0] + planes[1])
        _store_char_table(_CHAR_TABLE)
    return _CHAR_TABLE


def _char_table_path() -> Path:
    """Where the code point table is kept between runs: keyed by the regex module's and Python's Unicode versions."""
    import hashlib
    import unicodedata

    import regex

    key = f"{regex.__version__}-{unicodedata.unidata_version}-{sys.version_info[:2]}-unicode-{UNICODE_VERSION}"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bpeproof"
    return base / f"chars-{hashlib.sha256(key.encode()).hexdigest()[:16]}.bin"


def _cached_char_table() -> bytes | None:
    """The table from the cache, if a complete one is there (its SHA-256 is stored after it and checked)."""
    import hashlib

    try:
        data = _char_table_path().read_bytes()
    except OSError:
        return None
    table, digest = data[:-32], data[-32:]
    if len(table) != 2 * 0x110000 or hashlib.sha256(table).digest() != digest:
        return None
    return table


def _store_char_table(table: bytes) -> None:
    """Keep the table for the next run; a cache that cannot be written is only slower."""
    import hashlib

    try:
        path = _char_table_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, table + hashlib.sha256(table).digest())
    except OSError:
        pass


class _PieceCache(dict[str, tuple[int, ...]]):
    """word → token ids, computed on a miss by ``dict.__missing__`` so that hits stay in C; bounded."""

    __slots__ = ("_compute", "_limit")

    def __init__(self, compute: Callable[[str], tuple[int, ...]], limit: int) -> None:
        super().__init__()
        self._compute = compute
        self._limit = limit

    def __missing__(self, piece: str) -> tuple[int, ...]:
        value = self._compute(piece)
        if self._limit:
            if len(self) >= self._limit:
                # Insertion order: drop the older half; amortised O(1) per word.
                for key in list(islice(self, max(1, len(self) // 2))):
                    self.pop(key, None)
            self[piece] = value
        return value


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
        checked_bytes = self._check_byte_ids(byte_ids, new_ids)
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
        self._regex = compile_pattern(self._pattern_source)
        self._pretokenizer = self._check_pretokenizer(pretokenizer)
        table = model.token_table()
        self._specials = check_special_tokens(special_tokens, table)
        self._special_bytes: dict[int, bytes] = {token: name.encode("utf-8") for name, token in self._specials.items()}
        table.update(self._special_bytes)
        self._table = table
        self._cache = _PieceCache(self._encode_piece, cache_size)
        self._cache_size = cache_size
        # The C word loop (impl/_c/_fastenc.c) reports the model's ids itself and fills the same cache.
        self._fast: Any = model.c_merger()
        # tiktoken's patterns are also written out by hand in C (split_pattern), with a code point table from regex.
        self._split_table: bytes | None = None
        self._split_which = _HAND_WRITTEN.get(self._pattern_source, -1) if self._pretokenizer is None else -1
        if self._fast is not None and self._split_which >= 0:
            self._split_table = _char_table()
        self._special_splitters: dict[frozenset[str], Any] = {}

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
    def _check_byte_ids(byte_ids: Sequence[int] | None, new_ids: Container[int] = ()) -> tuple[int, ...] | None:
        """256 distinct non-negative ints, none in ``new_ids`` (the rules' new ids); None for the identity."""
        return check_byte_ids(byte_ids, new_ids)

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

    def _regex_pieces(self, text: str) -> list[str]:
        """The pattern's matches in ``text`` (``regex_pieces``)."""
        return regex_pieces(self._regex, text)

    @property
    def pattern_name(self) -> str | None:
        """The name of the pattern in ``patterns.PATTERNS``, or None for a raw expression."""
        return pattern_name(self._pattern_source)

    @property
    def special_tokens(self) -> dict[str, int]:
        """A copy of the special tokens, name → id."""
        return dict(self._specials)

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
        fast = self._fast is not None and len(text) < C_TEXT_LIMIT
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

    def _splitter(self, allowed_special: AllowedSpecial) -> Any:
        names = self._allowed_names(allowed_special)
        if names is None:
            return None
        splitter = self._special_splitters.get(names)
        if splitter is None:
            import regex

            # Alternatives longest first: at the leftmost match position the longest name wins.
            ordered = sorted(names, key=lambda name: (-len(name), name))
            splitter = regex.compile("|".join(regex.escape(name) for name in ordered))
            self._special_splitters[names] = splitter
        return splitter

    def _allowed_names(self, allowed_special: AllowedSpecial) -> frozenset[str] | None:
        """The special tokens' names ``allowed_special`` allows, or None for none (and always None for a tokenizer
        without special tokens)."""
        if not self._specials:
            return None
        return self._named_specials(allowed_special)

    def _named_specials(self, allowed_special: AllowedSpecial) -> frozenset[str] | None:
        """The special tokens' names ``allowed_special`` allows, checked: "all", or a collection of known names;
        None for none."""
        if allowed_special is None:
            return None
        if allowed_special == "all":
            return frozenset(self._specials) or None
        if isinstance(allowed_special, str):
            raise BPETypeError('allowed_special must be "all", a collection of special token names, or None')
        names = frozenset(allowed_special)
        unknown = sorted(name for name in names if name not in self._specials)
        if unknown:
            raise BPEValueError(f"allowed_special names unknown special tokens: {unknown!r}")
        return names or None

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
        if fast is not None and sum(map(len, words)) < C_TEXT_LIMIT:
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
        splitter = self._splitter(allowed_special)
        if splitter is None:
            return self._ordinary(text)
        out: list[int] = []
        start = 0
        for match in splitter.finditer(text):
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

