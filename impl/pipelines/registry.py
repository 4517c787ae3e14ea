"""``load_tokenizer``: any supported vocabulary file as a ``Tokenizer`` that runs its own library's semantics."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bpeproof.impl import formats
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.vocab_cache import CacheEntry, caching_enabled
from bpeproof.impl.pipelines import compiled_vocab
from bpeproof.impl.pre_tokenizers import patterns
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.tokenizer import Tokenizer
from bpeproof.spec.types import BPETypeError, BPEValueError

if TYPE_CHECKING:
    from bpeproof.impl.formats.vocab import PreTokenizerStep, TextModel
    from bpeproof.impl.normalizers.hf import Normalizer
    from bpeproof.impl.pipelines.tokenizer_json import HFPipeline, Rewrite, Step, TextPipelineRecipe
    from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer

__all__ = ["guess_pattern", "load_tokenizer"]


def guess_pattern(vocab: formats.Vocab) -> str | None:
    """A rank file's pattern by its name (r50k/gpt2, cl100k, o200k) or its size; None when neither tells."""
    return patterns.guess_pattern(vocab.source, len(vocab.tokens))


def load_tokenizer(path: str, pattern: str | None = None, *, decode_only: bool = False,
                   cache: bool = True) -> Tokenizer:
    """Any supported vocabulary file as a ``Tokenizer`` that encodes exactly as the file's own library does.

    - the project's file: the article's sequential semantics (its rules);
    - a tiktoken rank file: tiktoken's semantics on the ranks as they are
      (``bpeproof.impl.models.tiktoken.TiktokenModel``), for any file, proper or not; the pattern is ``pattern``,
      else guessed from the name or size;
    - Mistral's tekken JSON: tiktoken's semantics on its live ranks, each id shifted by the number of special
      tokens, with the file's pattern (or ``pattern``) and its special tokens, as ``mistral-common`` encodes;
    - a ``tokenizer.json`` with a BPE model: the ``tokenizers`` library's pipeline
    (``bpeproof.impl.pipelines.tokenizer_json``): its
      added tokens with their flags, its normalizer, its pre-tokenizer (or ``pattern``), then its BPE model
      (``bpeproof.impl.models.hugging_face.HuggingFaceModel`` on the words' bytes, ``HuggingFaceTextModel`` on
      their strings when the model has a word prefix or suffix, byte fallback, or a vocabulary of characters); its
      added tokens are the special tokens;
    - CLIP's merges file: CLIP's own tokenizer (``bpeproof.impl.pipelines.clip``);
    - GPT-2's ``encoder.json`` + ``vocab.bpe``: the Hugging Face BPE model with GPT-2's pattern or ``pattern``;
    - a sentencepiece model of type BPE: ``bpeproof.impl.models.sentencepiece.SentencePieceModel`` on the whole
      text (no pre-tokenization, no special tokens: ``SentencePieceProcessor.encode`` parses none), with the
      model's normalization rules, whatever they are.

    ``decode_only``: the tokenizer is only used to decode, so a file that states no pattern needs none (the
    pre-tokenization of such a tokenizer is the ``words`` pattern, never to be used for encoding).

    - a GGUF file (``*.gguf``, ``*.gguf.gz`` or the magic ``GGUF``): llama.cpp's tokenizer for its
      ``tokenizer.ggml.model`` (``bpeproof.impl.pipelines.gguf``): its special-token partition, then for
      ``gpt2`` the pre-tokenizer its ``tokenizer.ggml.pre`` names and its merges, for ``llama`` its SPM session
      (scores, space prefix, ``<0xXX>`` byte fallback), for ``gemma4`` its BPE over raw UTF-8 with spaces
      written U+2581; no BOS/EOS added.

    ``cache``: what loading a file computes is kept in the compiled-vocabulary cache
    (``bpeproof.impl.io.vocab_cache``, keyed by the file's content, its path as given and these options), and the
    next load of the same file reads it from there (``bpeproof.impl.pipelines.compiled_vocab``); False, or
    ``BPEPROOF_NO_CACHE=1`` in the environment, reads the file.  The ids are the same either way.

    Ids are the file's own.  Whatever the engine cannot execute exactly as the library does (a Hugging Face
    normalizer or pre-tokenizer it does not have, BPE dropout, a unigram model, …) is refused with
    ``FormatError`` naming it: the engine never gives other ids than the library would.
    """
    file = Path(path)
    if not file.exists():
        raise FormatError(path, None, "no such file")
    entry = compiled_vocab.cache_entry(path, pattern, decode_only) if caching_enabled(cache) else None
    if entry is not None:
        cached = _from_cache(entry, path)
        if cached is not None:
            return cached
    tokenizer, record = _load(path, file, pattern, decode_only)
    if entry is not None and record is not None:
        entry.write(record, compiled_vocab.CLASSES)
    return tokenizer


def _from_cache(entry: CacheEntry, path: str) -> Tokenizer | None:
    """The tokenizer of the cache's entry, or None (and the entry removed) when it has none that holds together."""
    record = entry.read(compiled_vocab.CLASSES)
    if record is None:
        return None
    try:
        if record["kind"] == "text":
            recipe = record["recipe"]
            pipeline, pretokenizer = _text_pipeline(path, recipe)
            return Tokenizer.from_model(record["model"], recipe.pattern or recipe.file_pattern or "words",
                                        record["specials"], pretokenizer=pretokenizer, pipeline=pipeline)
        if compiled_vocab.companion_changed(record, path):
            return None  # GPT-2's other file is not the one the entry was made with: loaded again, and replaced
        return compiled_vocab.restore(record, path)
    except Exception:  # a record that does not make a tokenizer (written by other code, or damaged): rebuilt
        entry.remove()
        return None


def _load(path: str, file: Path, pattern: str | None, decode_only: bool) -> tuple[Tokenizer, dict[str, Any] | None]:
    """The tokenizer of the file, read and built, and its record for the cache (None: not to be cached)."""
    from bpeproof.impl.formats.loader import is_gguf

    if file.is_file() and is_gguf(file):
        # A GGUF file (llama.cpp): the tokenizer its model names, with the file's own pre-tokenizer and flags
        # (impl.pipelines.gguf).
        from bpeproof.impl.pipelines.gguf import load_gguf_tokenizer

        if pattern is not None:
            raise FormatError(path, None, "a GGUF file names its own pre-tokenizer (tokenizer.ggml.pre); --pattern"
                              " does not apply to it")
        gguf = load_gguf_tokenizer(str(file))
        return gguf, compiled_vocab.gguf_record(gguf)
    kind, data = formats.sniff(file) if file.is_file() else ("directory", b"")
    if kind == "bpeproof":
        tokenizer = Tokenizer.from_json(data, file)
        if pattern is not None:
            tokenizer = Tokenizer(tokenizer.rules, pattern, tokenizer.special_tokens, byte_ids=tokenizer.byte_ids)
        return tokenizer, compiled_vocab.parts_record(tokenizer)
    try:
        if kind == "tiktoken":
            from bpeproof.impl.formats.tiktoken_file import parse_tiktoken

            ranks = parse_tiktoken(file, data)
            chosen = pattern or patterns.guess_pattern(str(file), len(ranks)) or ("words" if decode_only else None)
            if chosen is None:
                raise FormatError(path, None, f"a rank file states no pre-tokenization pattern; pass --pattern"
                                 f" ({', '.join(PATTERNS)} or a regex)")
            tokenizer = Tokenizer.from_tiktoken_ranks(ranks, chosen)
            return tokenizer, compiled_vocab.parts_record(tokenizer)
        if kind == "tekken":
            from bpeproof.impl.formats.tekken import parse_tekken
            from bpeproof.impl.models.tiktoken import TiktokenModel
            from bpeproof.impl.pre_tokenizers.patterns import compile_pattern, resolve_pattern

            tekken = parse_tekken(file, data)
            try:
                compile_pattern(resolve_pattern(pattern or tekken.pattern))
            except ValueError as error:
                raise FormatError(path, None if pattern else "config.pattern", str(error)) from None
            tokenizer = Tokenizer.from_model(TiktokenModel(tekken.ranks), pattern or tekken.pattern, tekken.specials)
            return tokenizer, compiled_vocab.parts_record(tokenizer)
        if kind == "sentencepiece-bpe":
            tokenizer = _sentencepiece(path, file, data, pattern)
            return tokenizer, compiled_vocab.parts_record(tokenizer)
        # A tokenizer.json already read by ``sniff``: parsed from those bytes, not read and decompressed again.
        if kind == "hf-bpe":
            from bpeproof.impl.formats.hf_json import parse_hf_json

            vocab = parse_hf_json(file, data)
        else:
            vocab = formats.load(file, pattern=pattern)
        if vocab.kind == "sentencepiece-bpe" and vocab.source != path:  # a directory's tokenizer.model
            return load_tokenizer(vocab.source, pattern), None
        if vocab.unsupported:
            raise FormatError(path, None, f"the engine does not execute {'; '.join(vocab.unsupported)}, so its ids"
                             " could differ from the file's own library")
        if vocab.text_model is not None:
            return _text_model_tokenizer(path, vocab, vocab.text_model, pattern)
        tokenizer = _merges_tokenizer(path, vocab, pattern, decode_only)
        return tokenizer, compiled_vocab.parts_record(tokenizer, companion=compiled_vocab.companion(file, vocab))
    except (BPEValueError, BPETypeError) as error:
        raise FormatError(path, None, str(error)) from None


def _merges_tokenizer(path: str, vocab: formats.Vocab, pattern: str | None, decode_only: bool) -> Tokenizer:
    """GPT-2's pair of files (or a tokenizer.json read without its pipeline): the Hugging Face BPE model on the
    file's merges, with ``pattern``, the file's pattern or split steps, or the pattern its name or size suggests."""
    from bpeproof.impl.models.hugging_face import HuggingFaceModel
    from bpeproof.impl.pre_tokenizers.hf_splits import steps_from_hf

    pretokenizer: PreTokenizer | None = None
    chosen = pattern or vocab.pattern
    if chosen is None and vocab.pre_tokenizers:
        try:
            pretokenizer = steps_from_hf(vocab.pre_tokenizers)
        except ValueError as error:
            raise FormatError(path, None, f"{error}; pass --pattern ({', '.join(PATTERNS)} or a regex)") from None
    elif chosen is None:
        chosen = guess_pattern(vocab) or ("words" if decode_only else None)
        if chosen is None:
            raise FormatError(path, None, f"it states no pre-tokenization pattern; pass --pattern"
                             f" ({', '.join(PATTERNS)} or a regex)")
    specials = dict(vocab.specials)
    tokens = dict(vocab.tokens)
    for token in specials.values():
        tokens.pop(token, None)
    model = HuggingFaceModel(tokens, vocab.merges, ignore_merges=vocab.ignore_merges, unk=vocab.unk,
                             fuse_unk=vocab.fuse_unk)
    return Tokenizer.from_model(model, chosen or "words", specials, pretokenizer=pretokenizer)


def _sentencepiece(path: str, file: Path, data: bytes, pattern: str | None) -> Tokenizer:
    """A sentencepiece BPE model as a ``Tokenizer``: the whole text goes to ``SentencePieceModel``."""
    from bpeproof.impl.formats.sentencepiece_model import MODEL_TYPES, parse_charsmap, parse_model_proto
    from bpeproof.impl.models.sentencepiece import SentencePieceModel
    from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer

    if pattern is not None:
        raise FormatError(path, None, "a sentencepiece model does not pre-tokenize: --pattern does not apply")
    proto = parse_model_proto(file, data)
    if proto.model_type != 2:
        name = MODEL_TYPES.get(proto.model_type, str(proto.model_type))
        raise FormatError(path, "trainer_spec.model_type", f"the model type is {name!r}: the engine runs"
                          " sentencepiece's BPE models only")
    charsmap = parse_charsmap(file, proto.precompiled_charsmap) if proto.precompiled_charsmap else None
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
    )
    return Tokenizer.from_model(model, "words", None, cache_size=0, pretokenizer=PreTokenizer([]))


def _decoded_bytes(text_model: TextModel, token: int, data: bytes) -> bytes:
    """What a token decodes to: its bytes, without the word prefix before them and with a space for the word
    suffix after them (as the files' decoders spell words)."""
    from bpeproof.impl.formats.vocab import token_string_to_bytes

    string = text_model.strings.get(token)
    if string is None or not (text_model.prefix or text_model.suffix):
        return data
    prefix, suffix = text_model.prefix or "", text_model.suffix or ""
    space = string.endswith(suffix) and len(string) > len(suffix) if suffix else False
    if space:
        string = string[: -len(suffix)]
    if prefix and string.startswith(prefix) and len(string) > len(prefix):
        string = string[len(prefix):]
    core = token_string_to_bytes(string) if text_model.byte_level else None
    return (core if core is not None else string.encode("utf-8")) + (b" " if space else b"")


def _text_model_tokenizer(path: str, vocab: formats.Vocab, text_model: TextModel,
                          pattern: str | None) -> tuple[Tokenizer, dict[str, Any] | None]:
    """A Hugging Face ``tokenizer.json`` (or CLIP's merges file) as the library runs it: its added tokens,
    normalizer and pre-tokenizer (``bpeproof.impl.pipelines.tokenizer_json``), then its BPE model on the words;
    and its record for the cache.

    The words go to ``HuggingFaceModel`` (with the C loop) when the model only needs their bytes: a byte-level
    vocabulary whose last pre-tokenizer step is its only ``ByteLevel`` one, no word prefix, suffix or byte
    fallback, an unknown token that is in the vocabulary; to ``HuggingFaceTextModel`` otherwise."""
    import json

    from bpeproof.impl.formats.vocab import token_string_to_bytes
    from bpeproof.impl.models.hugging_face import HuggingFaceModel, HuggingFaceTextModel
    from bpeproof.impl.normalizers.hf import Normalizer
    from bpeproof.impl.pipelines.tokenizer_json import TextPipelineRecipe

    if vocab.kind == "clip":
        from bpeproof.impl.pipelines.clip import clip_tokenizer

        tokenizer = clip_tokenizer(path, vocab, text_model, pattern)
        return tokenizer, compiled_vocab.parts_record(tokenizer)
    try:
        normalizer = Normalizer.from_json(None if text_model.normalizer is None else json.loads(text_model.normalizer))
    except ValueError as error:
        raise FormatError(path, "normalizer", str(error)) from None
    steps = vocab.pre_tokenizers
    kinds = [step.type for step in steps]
    specials = {token.content: token.id for token in text_model.added_tokens}
    for token in text_model.added_tokens:
        # The library numbers an added token that is not in the model's vocabulary from the model's size on,
        # whatever id the file gives it: beside a model whose ids start late or have gaps, that is another token's.
        string = text_model.strings.get(token.id)
        if string is not None and string != token.content:
            raise FormatError(path, "added_tokens", f"{token.content[:40]!r} takes the id {token.id} in the tokenizers"
                              f" library (it is not in the model's vocabulary, so it is numbered on from the model's"
                              f" {text_model.vocabulary_size} tokens), which is also the model's token {string[:40]!r};"
                              " the file's ids are ambiguous")
    special_ids = set(specials.values())
    tokens = dict(vocab.tokens)  # the ordinary tokens: one copy, the added tokens taken out of it
    for special in special_ids:
        tokens.pop(special, None)
    byte_model = (
        text_model.byte_level and bool(kinds) and kinds[-1] == "ByteLevel" and kinds.count("ByteLevel") == 1
        and text_model.prefix is None and text_model.suffix is None and not vocab.byte_fallback
        and (text_model.unk_token is None or (vocab.unk is not None and vocab.unk not in special_ids))
        and "ByteLevel" not in normalizer.kinds
        and (text_model.spelt  # (the reader found every string but the added tokens' spelt byte-level)
             or token_string_to_bytes("".join(map(text_model.strings.__getitem__, tokens))) is not None)
    )
    recipe = TextPipelineRecipe(text_model.normalizer, text_model.added_tokens, steps, pattern, vocab.pattern,
                                text_model.byte_level, byte_model)
    pipeline, pretokenizer = _text_pipeline(path, recipe, normalizer)
    if byte_model:
        model: HuggingFaceModel | HuggingFaceTextModel = HuggingFaceModel(
            tokens, vocab.merges, ignore_merges=vocab.ignore_merges, unk=vocab.unk, fuse_unk=vocab.fuse_unk)
    else:
        model = HuggingFaceTextModel(
            text_model.strings, vocab.merges,
            {token: _decoded_bytes(text_model, token, data) for token, data in tokens.items()},
            prefix=text_model.prefix, suffix=text_model.suffix, unk_token=text_model.unk_token,
            fuse_unk=vocab.fuse_unk, byte_fallback=vocab.byte_fallback, ignore_merges=vocab.ignore_merges)
    tokenizer = Tokenizer.from_model(model, pattern or vocab.pattern or "words", specials, pretokenizer=pretokenizer,
                                     pipeline=pipeline)
    return tokenizer, compiled_vocab.text_record(tokenizer, recipe)


def _text_pipeline(path: str, recipe: TextPipelineRecipe,
                   normalizer: Normalizer | None = None) -> tuple[HFPipeline, PreTokenizer | None]:
    """The text pipeline of a ``tokenizer.json`` (``normalizer``: its normalizer, when already built), and the
    split steps that cut as it does when it is only those (``Tokenizer.pretokenizer``)."""
    import json

    from bpeproof.impl.normalizers.hf import Normalizer
    from bpeproof.impl.pipelines.tokenizer_json import HFPipeline, needs_alignment
    from bpeproof.impl.pre_tokenizers.hf_splits import steps_from_hf

    if normalizer is None:
        try:
            normalizer = Normalizer.from_json(None if recipe.normalizer is None else json.loads(recipe.normalizer))
        except ValueError as error:
            raise FormatError(path, "normalizer", str(error)) from None
    pattern, steps = recipe.pattern, recipe.steps
    try:
        executable = _executable(recipe)
    except ValueError as error:
        raise FormatError(path, "pre_tokenizer", f"{error}; pass --pattern ({', '.join(PATTERNS)} or a regex)"
                          ) from None
    try:
        pipeline = HFPipeline(normalizer, recipe.added_tokens, executable,
                              track=pattern is None and needs_alignment(steps),
                              description=_describe(normalizer, steps, pattern),
                              rebuild=partial(_executable, recipe))
    except ValueError as error:
        raise FormatError(path, "added_tokens", str(error)) from None
    pretokenizer: PreTokenizer | None = None
    if pattern is None and not normalizer and {step.type for step in steps} <= {"Split", "ByteLevel"}:
        try:
            pretokenizer = steps_from_hf(steps)  # the same cuts, as split steps (``Tokenizer.pretokenizer``)
        except ValueError:
            pretokenizer = None
    return pipeline, pretokenizer


def _executable(recipe: TextPipelineRecipe, rewrite: Rewrite | None = None) -> list[Step]:
    """The executable pre-tokenizer steps of ``recipe`` (``--pattern``'s, else the file's), with every regular
    expression read as ``rewrite`` says when given (``HFPipeline.rewritten``); ``ValueError`` when a step is not
    executed or an expression cannot be read so."""
    from bpeproof.impl.normalizers.hf import byte_level_piece
    from bpeproof.impl.pipelines.tokenizer_json import pattern_step, steps_from_file

    if recipe.pattern is None:
        return steps_from_file(recipe.steps, map_bytes=not recipe.byte_model, rewrite=rewrite)
    from bpeproof.impl.pre_tokenizers.patterns import compile_pattern, resolve_pattern

    source = resolve_pattern(recipe.pattern)
    pinned = True
    if rewrite is not None:
        transform, pinned = rewrite
        rewritten = transform(source)
        if rewritten is None:
            raise ValueError(f"the pattern {source!r} cannot be rewritten so")
        source = rewritten
    executable = [pattern_step(compile_pattern(source), pinned)]
    if recipe.byte_level and not recipe.byte_model:
        executable.append(lambda piece: [byte_level_piece(piece)])
    return executable


def _describe(normalizer: Normalizer, steps: tuple[PreTokenizerStep, ...], pattern: str | None) -> str:
    parts = [f"normalizer {', '.join(normalizer.kinds)}"] if normalizer else []
    if pattern is not None:
        parts.append(f"pattern {pattern!r}")
    elif steps:
        parts.append(f"pre-tokenizer {', '.join(step.type for step in steps)}")
    return "; ".join(parts) or "no normalizer or pre-tokenizer"
