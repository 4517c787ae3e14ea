"""A ``tokenizer.json``'s parts as the ``tokenizers`` library runs it: its text pipeline (added tokens, normalizer,
pre-tokenizer: ``bpeproof.impl.pipelines.tokenizer_json``) and its BPE model on the words, read from the file or
made again from the compiled-vocabulary cache's record (the pipeline holds functions, so the cache keeps the recipe
it is built from, ``TextPipelineRecipe``)."""

from __future__ import annotations

import json
from functools import partial
from typing import TYPE_CHECKING, Any

from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.pipelines import compiled_vocab
from bpeproof.impl.pipelines.text_pipeline import TokenizerParts
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, resolve_pattern

if TYPE_CHECKING:
    from bpeproof.impl import formats
    from bpeproof.impl.formats.vocab import PreTokenizerStep, TextModel
    from bpeproof.impl.normalizers.hf import Normalizer
    from bpeproof.impl.pipelines.hf_steps import Rewrite, Step
    from bpeproof.impl.pipelines.tokenizer_json import HFPipeline, TextPipelineRecipe
    from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer

__all__ = ["restored_parts", "text_model_parts"]

#: Normalizers whose result on a stretch of text is a function of its text alone (no empty match whose insertion a
#: later step refuses): a pipeline with these may cut its words at once, unless a step reads where its piece starts
#: and the text alone cannot tell (``hf_steps.plain_words``).
_TEXT_ONLY_NORMALIZERS = frozenset({"NFC", "NFD", "NFKC", "NFKD", "Lowercase"})


def restored_parts(path: str, record: dict[str, Any]) -> TokenizerParts:
    """The parts of a cache's ``text`` record: the pipeline built again from its recipe, beside the stored model."""
    pipeline = _text_pipeline(path, record["recipe"])
    return TokenizerParts(pipeline, record["model"], record["specials"])


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


def text_model_parts(path: str, vocab: formats.Vocab, text_model: TextModel, pattern: str | None, *,
                     c_loop: bool = True) -> tuple[TokenizerParts, dict[str, Any] | None]:
    """A Hugging Face ``tokenizer.json`` as the library runs it: its added tokens, normalizer and pre-tokenizer
    (``bpeproof.impl.pipelines.tokenizer_json``), then its BPE model on the words; and its record for the cache.

    The words go to ``HuggingFaceModel`` (with the C loop) when the model only needs their bytes: a byte-level
    vocabulary whose last pre-tokenizer step is its only ``ByteLevel`` one, no word prefix, suffix or byte
    fallback, an unknown token that is in the vocabulary; to ``HuggingFaceTextModel`` otherwise.  ``c_loop``: the
    model merges in C where the extension is built and it can (False: in its Python loop)."""
    from bpeproof.impl.formats.vocab import token_string_to_bytes
    from bpeproof.impl.models.hugging_face import HuggingFaceModel, HuggingFaceTextModel
    from bpeproof.impl.normalizers.hf import Normalizer
    from bpeproof.impl.pipelines.tokenizer_json import TextPipelineRecipe

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
    pipeline = _text_pipeline(path, recipe, normalizer)
    if byte_model:
        model: HuggingFaceModel | HuggingFaceTextModel = HuggingFaceModel(
            tokens, vocab.merges, ignore_merges=vocab.ignore_merges, unk=vocab.unk, fuse_unk=vocab.fuse_unk,
            c_loop=c_loop)
    else:
        model = HuggingFaceTextModel(
            text_model.strings, vocab.merges,
            {token: _decoded_bytes(text_model, token, data) for token, data in tokens.items()},
            prefix=text_model.prefix, suffix=text_model.suffix, unk_token=text_model.unk_token,
            fuse_unk=vocab.fuse_unk, byte_fallback=vocab.byte_fallback, ignore_merges=vocab.ignore_merges,
            c_loop=c_loop)
    return TokenizerParts(pipeline, model, specials), compiled_vocab.text_record(model, specials, recipe)


def _text_pipeline(path: str, recipe: TextPipelineRecipe, normalizer: Normalizer | None = None) -> HFPipeline:
    """The text pipeline of a ``tokenizer.json`` (``normalizer``: its normalizer, when already built), with its
    pattern and the split steps that cut as it does when it is only those (``Tokenizer.pretokenizer``)."""
    from bpeproof.impl.normalizers.hf import Normalizer
    from bpeproof.impl.pipelines.hf_steps import needs_alignment
    from bpeproof.impl.pipelines.tokenizer_json import HFPipeline
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
    pipeline.pattern = resolve_pattern(pattern or recipe.file_pattern or "words")
    if pattern is None and not normalizer and {step.type for step in steps} <= {"Split", "ByteLevel"}:
        try:
            pipeline.pretokenizer = steps_from_hf(steps)  # the same cuts, as split steps
        except ValueError:
            pipeline.pretokenizer = None
    if pattern is None and set(normalizer.kinds) <= _TEXT_ONLY_NORMALIZERS:
        _cut_plain(pipeline, recipe, bool(normalizer))
    pipeline.travels_as(_text_pipeline, path, recipe)  # the worker processes of encode_batch build it again
    return pipeline


def _cut_plain(pipeline: HFPipeline, recipe: TextPipelineRecipe, normalizes: bool) -> None:
    """Where the normalizer reads only text: the words go to the model as text, so the stretches between added
    tokens are normalized as text and cut by the steps as plain strings (``HFPipeline.cut_by``), by the split
    steps at once (and a hand-written C scanner where one cuts as they do) for a byte model after ``Split`` steps,
    else by the steps' plain words (``hf_steps.plain_words``), unless a step maps bytes or reads where its piece
    starts in a way the text alone cannot tell."""
    from bpeproof.impl.pipelines.hf_steps import cuts_from_file, plain_words
    from bpeproof.impl.pre_tokenizers.hf_splits import steps_from_hf
    from bpeproof.impl.pre_tokenizers.splitter import steps_scanner

    steps = recipe.steps
    if recipe.byte_model and {step.type for step in steps} <= {"Split", "ByteLevel"}:
        try:
            split: PreTokenizer | None = steps_from_hf(steps)
        except ValueError:  # a ByteLevel step adding a prefix space: the steps' plain words below
            split = None
        if split is not None:
            pipeline.cut_by(split.split, steps_scanner(split))
            return
    try:
        cuts = cuts_from_file(steps, map_bytes=not recipe.byte_model)
    except ValueError:
        return
    found = plain_words(cuts, normalizes=normalizes,
                        normalized_tokens=any(token.normalized for token in recipe.added_tokens))
    if found is not None:
        words, first = found
        pipeline.cut_by(words, first=first)


def _executable(recipe: TextPipelineRecipe, rewrite: Rewrite | None = None) -> list[Step]:
    """The executable pre-tokenizer steps of ``recipe`` (``--pattern``'s, else the file's), with every regular
    expression read as ``rewrite`` says when given (``HFPipeline.rewritten``); ``ValueError`` when a step is not
    executed or an expression cannot be read so."""
    from bpeproof.impl.normalizers.hf import byte_level_piece
    from bpeproof.impl.pipelines.hf_steps import pattern_step, steps_from_file

    if recipe.pattern is None:
        return steps_from_file(recipe.steps, map_bytes=not recipe.byte_model, rewrite=rewrite)
    from bpeproof.impl.pre_tokenizers.patterns import compile_pattern

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
