"""``read_parts``: the parts of a tokenizer (text pipeline, merge model, special tokens) that encodes any supported
file exactly as the file's own library does, read once and built by the table ``READERS``.

Each kind the loader tells by the file's content (``bpeproof.impl.formats.loader.sniff``) has one reader here
(``Reader``), which takes the bytes already read and gives the parts and the record the compiled-vocabulary cache
keeps of them, and knows the classes of the objects that record holds:

- ``bpeproof``, the project's file: the article's sequential semantics (its rules) behind its pattern or steps;
- ``tiktoken``, a rank file: tiktoken's semantics on the ranks as they are
  (``bpeproof.impl.models.tiktoken.TiktokenModel``), for any file, proper or not; the pattern is ``pattern``,
  else guessed from the name or size;
- ``tekken``, Mistral's tekken JSON: tiktoken's semantics on its live ranks, each id shifted by the number of
  special tokens, with the file's pattern (or ``pattern``) and its special tokens, as ``mistral-common`` encodes;
- ``hf-bpe``, a ``tokenizer.json`` with a BPE model: the ``tokenizers`` library's pipeline
  (``bpeproof.impl.pipelines.tokenizer_json``): its added tokens with their flags, its normalizer, its
  pre-tokenizer (or ``pattern``), then its BPE model (``bpeproof.impl.models.hugging_face.HuggingFaceModel`` on
  the words' bytes, ``HuggingFaceTextModel`` on their strings when the model has a word prefix or suffix, byte
  fallback, or a vocabulary of characters); its added tokens are the special tokens
  (``bpeproof.impl.pipelines.hf_parts``);
- ``clip``, CLIP's merges file: CLIP's own tokenizer (``bpeproof.impl.pipelines.clip``);
- ``gpt2``, GPT-2's ``encoder.json`` + ``vocab.bpe``: the Hugging Face BPE model with GPT-2's pattern or
  ``pattern``;
- ``sentencepiece-bpe``, a sentencepiece model of type BPE: ``SentencePieceModel`` on the whole text (no
  pre-tokenization, no special tokens: ``SentencePieceProcessor.encode`` parses none), with the model's
  normalization rules, whatever they are;
- ``gguf``, a GGUF file: llama.cpp's tokenizer for its ``tokenizer.ggml.model`` (``bpeproof.impl.pipelines.gguf``):
  its special-token partition, then for ``gpt2`` the pre-tokenizer its ``tokenizer.ggml.pre`` names and its merges,
  for ``llama`` its SPM session (scores, space prefix, ``<0xXX>`` byte fallback), for ``gemma4`` its BPE over raw
  UTF-8 with spaces written U+2581; no BOS/EOS added;
- ``directory``: the first of ``tokenizer.json``, ``encoder.json`` (with ``vocab.bpe``), ``tokenizer.model`` in it.

``decode_only``: the tokenizer is only used to decode, so a file that states no pattern needs none (the
pre-tokenization of such a tokenizer is the ``words`` pattern, never to be used for encoding).

``cache``: what loading a file computes is kept in the compiled-vocabulary cache (``bpeproof.impl.io.vocab_cache``,
keyed by the file's content, its path as given and these options), and the next load of the same file reads it
from there (``bpeproof.impl.pipelines.compiled_vocab``); False, or ``BPEPROOF_NO_CACHE=1`` in the environment, reads
the file.  The ids are the same either way.

``c_loop``: the models merge in the C loop where the extension is built (False: in their Python loops, the
reference the tests hold the C loop to; part of the cache's key).  The ids are the same either way.

Ids are the file's own.  Whatever the engine cannot execute exactly as the library does (a Hugging Face
normalizer or pre-tokenizer it does not have, BPE dropout, a unigram model, …) is refused with ``FormatError``
naming it: the engine never gives other ids than the library would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bpeproof.impl import formats
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import read_raw
from bpeproof.impl.io.vocab_cache import CacheEntry, caching_enabled
from bpeproof.impl.pipelines import compiled_vocab
from bpeproof.impl.pipelines.text_pipeline import TokenizerParts, WholeText, pipeline_of
from bpeproof.impl.pre_tokenizers import patterns
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, compile_pattern, resolve_pattern
from bpeproof.spec.types import BPETypeError, BPEValueError

__all__ = ["READERS", "Reader", "Source", "guess_pattern", "read_parts", "record_classes"]

#: What a reader gives: the parts, and the record the cache keeps of them (None: not to be cached).
Read = tuple[TokenizerParts, dict[str, Any] | None]


@dataclass(frozen=True)
class Source:
    """A file being loaded: its path as given, the bytes read (decompressed; none for a GGUF file or a directory)
    and the options."""

    path: str
    data: bytes
    pattern: str | None
    decode_only: bool
    c_loop: bool = True

    @property
    def file(self) -> Path:
        return Path(self.path)

    def pattern_or(self, stated: str | None) -> str:
        """``--pattern``, else the pattern the file states, else the one its name or size suggests (``guessed``);
        ``FormatError`` when there is none and the tokenizer is to encode."""
        chosen = self.pattern or stated
        if chosen is None:
            raise FormatError(self.path, None, f"it states no pre-tokenization pattern; pass --pattern"
                              f" ({', '.join(PATTERNS)} or a regex)")
        return chosen


def guess_pattern(vocab: formats.Vocab) -> str | None:
    """A rank file's pattern by its name (r50k/gpt2, cl100k, o200k) or its size; None when neither tells."""
    return patterns.guess_pattern(vocab.source, len(vocab.tokens))


def read_parts(path: str, pattern: str | None = None, *, decode_only: bool = False, cache: bool = True,
               c_loop: bool = True) -> TokenizerParts:
    """The parts of a tokenizer that encodes the file at ``path`` exactly as its own library does (see the module
    docstring): from the compiled-vocabulary cache when it has them, else read by the file's reader in
    ``READERS``.  Malformed content raises ``FormatError`` naming the file and the key."""
    file = Path(path)
    if not file.exists():
        raise FormatError(path, None, "no such file")
    # One read of a vocabulary file: its bytes give the cache's key and, on a miss, its kind and content.  A file
    # too large to be one (a GGUF model with its tensors) is read in part by the cache's key and its reader.
    raw = read_raw(file) if file.is_file() and file.stat().st_size <= compiled_vocab.GGUF_WHOLE_LIMIT else None
    entry = compiled_vocab.cache_entry(path, pattern, decode_only, raw, c_loop) if caching_enabled(cache) else None
    if entry is not None:
        cached = _from_cache(entry, path)
        if cached is not None:
            return cached
    kind, data = formats.sniff(file, raw) if file.is_file() else ("directory", b"")
    try:
        parts, record = READERS[kind].read(Source(path, data, pattern, decode_only, c_loop))
    except (BPEValueError, BPETypeError) as error:
        raise FormatError(path, None, str(error)) from None
    if entry is not None and record is not None:
        entry.write(record, kind, record_classes(kind))
    return parts


def record_classes(kind: str) -> tuple[type, ...]:
    """The classes whose objects the cache's record of a file of ``kind`` may hold (its reader's, imported now);
    ``KeyError`` for a kind that has no reader."""
    return READERS[kind].classes()


def _from_cache(entry: CacheEntry, path: str) -> TokenizerParts | None:
    """The parts of the cache's entry, or None (and the entry removed) when it has none that holds together."""
    record = entry.read(record_classes)
    if record is None:
        return None
    try:
        if record["kind"] == "text":
            from bpeproof.impl.pipelines.hf_parts import restored_parts

            return restored_parts(path, record)
        if compiled_vocab.companion_changed(record, path):
            return None  # GPT-2's other file is not the one the entry was made with: loaded again, and replaced
        return compiled_vocab.restore(record, path)
    except Exception:  # a record that does not make a tokenizer (written by other code, or damaged): rebuilt
        entry.remove()
        return None


def _gguf(source: Source) -> Read:
    """A GGUF file (llama.cpp): the tokenizer its model names, with the file's own pre-tokenizer and flags."""
    from bpeproof.impl.formats.gguf_tokenizer import read_gguf_tokenizer
    from bpeproof.impl.pipelines.gguf import gguf_parts

    if source.pattern is not None:
        raise FormatError(source.path, None, "a GGUF file names its own pre-tokenizer (tokenizer.ggml.pre);"
                          " --pattern does not apply to it")
    gguf = read_gguf_tokenizer(source.path)
    parts = gguf_parts(gguf, c_loop=source.c_loop)
    return parts, compiled_vocab.gguf_record(gguf, parts.model)


def _project(source: Source) -> Read:
    """The project's own file: its rules, pattern or split steps, special tokens and byte ids (``--pattern``
    replaces the pattern and the steps)."""
    from bpeproof.impl.formats.project_file import parse_document
    from bpeproof.impl.models.ids import check_special_tokens
    from bpeproof.impl.models.sequential import SequentialModel

    document = parse_document(source.file, source.data)
    try:
        model = SequentialModel.checked(document.rules, document.byte_ids, c_loop=source.c_loop)
        specials = check_special_tokens(document.special_tokens, model.token_table())
    except (BPEValueError, BPETypeError) as error:
        raise FormatError(source.path, "(file)", str(error)) from None
    if source.pattern is not None:
        pipeline = pipeline_of(resolve_pattern(source.pattern), None, specials)
    else:
        pipeline = pipeline_of(resolve_pattern(document.pattern), document.pretokenizer, specials)
    parts = TokenizerParts(pipeline, model, specials)
    return parts, compiled_vocab.parts_record(parts)


def _rank_file(source: Source) -> Read:
    """A tiktoken rank file: tiktoken's semantics on its ranks, the pattern given, named or guessed."""
    from bpeproof.impl.formats.tiktoken_file import parse_tiktoken
    from bpeproof.impl.models.tiktoken import TiktokenModel

    ranks = parse_tiktoken(source.file, source.data)
    guessed = patterns.guess_pattern(source.path, len(ranks)) or ("words" if source.decode_only else None)
    if source.pattern is None and guessed is None:
        raise FormatError(source.path, None, f"a rank file states no pre-tokenization pattern; pass --pattern"
                          f" ({', '.join(PATTERNS)} or a regex)")
    model = TiktokenModel(ranks, c_loop=source.c_loop)
    parts = TokenizerParts(pipeline_of(resolve_pattern(source.pattern_or(guessed)), None, {}), model)
    return parts, compiled_vocab.parts_record(parts)


def _tekken(source: Source) -> Read:
    """Mistral's tekken file: tiktoken's semantics on its live ranks, its pattern and special tokens."""
    from bpeproof.impl.formats.tekken import parse_tekken
    from bpeproof.impl.models.tiktoken import TiktokenModel

    tekken = parse_tekken(source.file, source.data)
    try:
        chosen = resolve_pattern(source.pattern or tekken.pattern)
        compile_pattern(chosen)
    except ValueError as error:
        raise FormatError(source.path, None if source.pattern else "config.pattern", str(error)) from None
    specials = dict(tekken.specials)
    parts = TokenizerParts(pipeline_of(chosen, None, specials), TiktokenModel(tekken.ranks, c_loop=source.c_loop),
                           specials)
    return parts, compiled_vocab.parts_record(parts)


def _sentencepiece(source: Source) -> Read:
    """A sentencepiece BPE model: ``SentencePieceModel`` on the whole text."""
    from bpeproof.impl.formats.sentencepiece_model import MODEL_TYPES, parse_charsmap, parse_model_proto
    from bpeproof.impl.models.sentencepiece import SentencePieceModel

    if source.pattern is not None:
        raise FormatError(source.path, None, "a sentencepiece model does not pre-tokenize: --pattern does not apply")
    proto = parse_model_proto(source.file, source.data)
    if proto.model_type != 2:
        name = MODEL_TYPES.get(proto.model_type, str(proto.model_type))
        raise FormatError(source.path, "trainer_spec.model_type", f"the model type is {name!r}: the engine runs"
                          " sentencepiece's BPE models only")
    charsmap = parse_charsmap(source.file, proto.precompiled_charsmap) if proto.precompiled_charsmap else None
    model = SentencePieceModel(
        columns=(proto.texts, proto.scores, proto.types),
        byte_fallback=proto.byte_fallback,
        add_dummy_prefix=proto.add_dummy_prefix,
        remove_extra_whitespaces=proto.remove_extra_whitespaces,
        escape_whitespaces=proto.escape_whitespaces,
        treat_whitespace_as_suffix=proto.treat_whitespace_as_suffix,
        charsmap_units=charsmap.units if charsmap is not None else (),
        charsmap_replacements=charsmap.replacements if charsmap is not None else None,
        unk_surface=proto.unk_surface,
        c_loop=source.c_loop,
    )
    parts = TokenizerParts(WholeText(), model, {}, 0)  # the model keeps its own cache of whole texts
    return parts, compiled_vocab.parts_record(parts)


def _tokenizer_json(source: Source) -> Read:
    """A tokenizer.json, parsed from the bytes ``sniff`` read (not read and decompressed again)."""
    from bpeproof.impl.formats.hf_json import parse_hf_json

    return _vocab_parts(source, parse_hf_json(source.file, source.data))


def _other_vocab(source: Source) -> Read:
    """GPT-2's pair of files, CLIP's merges or a directory: read by ``formats.load``, which finds the other file."""
    vocab = formats.load(source.file, pattern=source.pattern)
    if vocab.kind == "sentencepiece-bpe" and vocab.source != source.path:  # a directory's tokenizer.model
        return read_parts(vocab.source, source.pattern, c_loop=source.c_loop), None
    return _vocab_parts(source, vocab)


def _vocab_parts(source: Source, vocab: formats.Vocab) -> Read:
    """A ``Vocab`` with a text pipeline (a tokenizer.json, CLIP's merges) or with merges only (GPT-2's files)."""
    if vocab.unsupported:
        raise FormatError(source.path, None, f"the engine does not execute {'; '.join(vocab.unsupported)}, so its"
                          " ids could differ from the file's own library")
    if vocab.text_model is not None:
        if vocab.kind == "clip":
            from bpeproof.impl.pipelines.clip import clip_parts

            parts = clip_parts(source.path, vocab, vocab.text_model, source.pattern)
            return parts, compiled_vocab.parts_record(parts)
        from bpeproof.impl.pipelines.hf_parts import text_model_parts

        return text_model_parts(source.path, vocab, vocab.text_model, source.pattern, c_loop=source.c_loop)
    parts = _merges_parts(source, vocab)
    return parts, compiled_vocab.parts_record(parts, companion=compiled_vocab.companion(source.file, vocab))


def _merges_parts(source: Source, vocab: formats.Vocab) -> TokenizerParts:
    """GPT-2's pair of files (or a tokenizer.json read without its pipeline): the Hugging Face BPE model on the
    file's merges, with ``pattern``, the file's pattern or split steps, or the pattern its name or size suggests."""
    from bpeproof.impl.models.hugging_face import HuggingFaceModel
    from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer, steps_from_hf

    pretokenizer: PreTokenizer | None = None
    chosen = source.pattern or vocab.pattern
    if chosen is None and vocab.pre_tokenizers:
        try:
            pretokenizer = steps_from_hf(vocab.pre_tokenizers)
        except ValueError as error:
            raise FormatError(source.path, None, f"{error}; pass --pattern ({', '.join(PATTERNS)} or a regex)"
                              ) from None
    elif chosen is None:
        chosen = source.pattern_or(guess_pattern(vocab) or ("words" if source.decode_only else None))
    specials = dict(vocab.specials)
    tokens = dict(vocab.tokens)
    for token in specials.values():
        tokens.pop(token, None)
    model = HuggingFaceModel(tokens, vocab.merges, ignore_merges=vocab.ignore_merges, unk=vocab.unk,
                             fuse_unk=vocab.fuse_unk, c_loop=source.c_loop)
    return TokenizerParts(pipeline_of(resolve_pattern(chosen or "words"), pretokenizer, specials), model, specials)


def _gguf_classes() -> tuple[type, ...]:
    from bpeproof.impl.formats.gguf_tokenizer import GGUFTokenizer
    from bpeproof.impl.models.llama_cpp import LlamaCppModel, LlamaCppTextModel
    from bpeproof.impl.models.llama_cpp_spm import LlamaCppSpmModel

    return GGUFTokenizer, LlamaCppModel, LlamaCppTextModel, LlamaCppSpmModel


def _project_classes() -> tuple[type, ...]:
    from bpeproof.impl.encoder import Encoder
    from bpeproof.impl.models.sequential import SequentialModel
    from bpeproof.spec.types import Rule

    return SequentialModel, Encoder, Rule, *compiled_vocab.PARTS_CLASSES


def _rank_file_classes() -> tuple[type, ...]:
    from bpeproof.impl.models.tiktoken import TiktokenModel

    return TiktokenModel, *compiled_vocab.PARTS_CLASSES


def _sentencepiece_classes() -> tuple[type, ...]:
    from bpeproof.impl.models.char_merges import CharMerger
    from bpeproof.impl.models.sentencepiece import SentencePieceModel
    from bpeproof.impl.normalizers.sentencepiece import SentencePieceNormalizer

    return SentencePieceModel, SentencePieceNormalizer, *compiled_vocab.PARTS_CLASSES, CharMerger


def _tokenizer_json_classes() -> tuple[type, ...]:
    """A ``tokenizer.json``'s, with its text pipeline (a ``text`` record) or without (GPT-2's files: ``parts``)."""
    from bpeproof.impl.formats.vocab import AddedToken, PreTokenizerStep
    from bpeproof.impl.models.char_merges import CharMerger
    from bpeproof.impl.models.hugging_face import HuggingFaceModel, HuggingFaceTextModel
    from bpeproof.impl.pipelines.tokenizer_json import TextPipelineRecipe

    return (HuggingFaceModel, HuggingFaceTextModel, TextPipelineRecipe, AddedToken, PreTokenizerStep,
            *compiled_vocab.PARTS_CLASSES, CharMerger)


def _other_vocab_classes() -> tuple[type, ...]:
    """GPT-2's files, CLIP's merges, or a directory's ``tokenizer.json`` or ``encoder.json``."""
    from bpeproof.impl.pipelines.clip import ClipPipeline

    return *_tokenizer_json_classes(), ClipPipeline


@dataclass(frozen=True)
class Reader:
    """How one kind of file is read: ``read`` gives its parts and the record the cache keeps of them; ``classes``
    the classes whose objects that record may hold, given to the cache as class objects (imported when called, so
    that a load imports only the modules of its own kind; a renamed class fails there and in type checking, never
    silently in an entry)."""

    read: Callable[[Source], Read]
    classes: Callable[[], tuple[type, ...]]


#: Each kind of file (as ``formats.sniff`` tells it by its content) → the reader of its parts.
READERS: dict[str, Reader] = {
    "gguf": Reader(_gguf, _gguf_classes),
    "bpeproof": Reader(_project, _project_classes),
    "tiktoken": Reader(_rank_file, _rank_file_classes),
    "tekken": Reader(_tekken, _rank_file_classes),
    "sentencepiece-bpe": Reader(_sentencepiece, _sentencepiece_classes),
    "hf-bpe": Reader(_tokenizer_json, _tokenizer_json_classes),
    "gpt2": Reader(_other_vocab, _other_vocab_classes),
    "clip": Reader(_other_vocab, _other_vocab_classes),
    "directory": Reader(_other_vocab, _other_vocab_classes),
}
