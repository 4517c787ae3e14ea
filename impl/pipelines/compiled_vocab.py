"""A loaded tokenizer as an entry of the compiled-vocabulary cache, and back (``bpeproof.impl.io.vocab_cache``).

What loading a file computes is its model (the merge tables, token tables and the C merge loop's tables) and the
few parts around it; an entry keeps them as records, packed as typed arrays (``bpeproof.impl.io.packed_state``):

- ``parts``: a tokenizer's parts (``TokenizerParts``): its model, special tokens, word cache size and pipeline, a
  pattern or split steps kept as those, any other (CLIP's, sentencepiece's) as it is;
- ``gguf``: a GGUF file's tokenizer (``bpeproof.impl.pipelines.gguf``): the file's tokenizer as read
  (``GGUFTokenizer``) and the model, from which ``gguf_parts`` makes the parts again;
- ``text``: a ``tokenizer.json`` run through its text pipeline: the model, the special tokens, and the parts of
  the file the pipeline is built from (``bpeproof.impl.pipelines.tokenizer_json.TextPipelineRecipe``; the pipeline
  itself holds functions, which are not stored), which the registry builds again.

A record of GPT-2's pair of files keeps the name and digest of the other file (``vocab.bpe`` beside
``encoder.json``); when that file has changed the entry is not used.

An entry holds objects of the classes its reader gives (``bpeproof.impl.pipelines.registry.Reader.classes``: its
models and what they hold, with ``PARTS_CLASSES`` for a ``parts`` record), as class objects, never by name.  A GGUF
file larger than ``GGUF_WHOLE_LIMIT`` (a model with its tensors) is keyed by its header and key-value pairs, where
the tokenizer is, rather than read whole.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.vocab_cache import CacheEntry, cache_directory, file_digest
from bpeproof.impl.pipelines.text_pipeline import (
    PatternPipeline,
    SplitStepsPipeline,
    TokenizerParts,
    WholeText,
    pipeline_of,
)
from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer, SplitStep

__all__ = [
    "GGUF_WHOLE_LIMIT",
    "PARTS_CLASSES",
    "cache_entry",
    "companion",
    "companion_changed",
    "gguf_record",
    "parts_record",
    "restore",
    "text_record",
]

#: The classes a ``parts`` record holds besides its model's: split steps, and the pipeline of a whole text.
PARTS_CLASSES: tuple[type, ...] = (PreTokenizer, SplitStep, WholeText)

#: GGUF files up to this size are keyed by their whole content, larger ones by their header and key-value pairs.
GGUF_WHOLE_LIMIT = 1 << 28


def _content_digest(file: Path) -> str:
    """The digest a file's entry is keyed by: of its bytes, or of a large GGUF file's key-value pairs only."""
    if file.stat().st_size <= GGUF_WHOLE_LIMIT:
        return file_digest(file)
    from bpeproof.impl.formats.gguf_container import read_gguf_metadata
    from bpeproof.impl.formats.loader import is_gguf

    if not is_gguf(file):
        return file_digest(file)
    end = read_gguf_metadata(file, lambda key: False).end  # the pairs are walked over, not decoded
    with open(file, "rb") as handle:
        return "gguf-head:" + hashlib.sha256(handle.read(end)).hexdigest()


def cache_entry(path: str | os.PathLike[str], pattern: str | None, decode_only: bool, raw: bytes | None = None,
                c_loop: bool = True) -> CacheEntry | None:
    """The entry of the file at ``path`` loaded with these options; None when there is no cache directory or the
    file is not a regular file that can be read (then the loader says what is wrong).  ``raw``: the file's bytes,
    when the caller has read them (the digest is theirs; the file is not read again); ``c_loop``: whether the
    models merge in the C loop (``registry.read_parts``'s)."""
    from bpeproof.impl import encoder

    file = Path(path)
    directory = cache_directory()
    if directory is None or not file.is_file():
        return None
    try:
        content = hashlib.sha256(raw).hexdigest() if raw is not None else _content_digest(file)
    except (OSError, ValueError):
        return None
    # The path as given: names choose a rank file's pattern (``cl100k`` in the name) and GPT-2's other file.
    options = {"path": os.fspath(path), "pattern": pattern, "decode_only": decode_only,
               "c_loop": [encoder.HAVE_C_LOOP, c_loop, encoder.C_RULE_LIMIT]}
    return CacheEntry(directory, content, options)


def parts_record(parts: TokenizerParts, *, companion: Path | None = None) -> dict[str, Any]:
    """The record of a tokenizer's parts; ``companion``: the other file of GPT-2's pair it was read with, whose
    digest the record keeps (``companion_changed``)."""
    pipeline = parts.pipeline
    plain = isinstance(pipeline, (PatternPipeline, SplitStepsPipeline))  # kept as its pattern or steps
    record = {"kind": "parts", "model": parts.model, "pattern": pipeline.pattern, "specials": parts.special_tokens,
              "pretokenizer": pipeline.pretokenizer if plain else None, "pipeline": None if plain else pipeline,
              "cache_size": parts.cache_size}
    if companion is not None:
        record["companion"] = [companion.name, file_digest(companion)]
    return record


def gguf_record(gguf: Any, model: Any) -> dict[str, Any]:
    """The record of a GGUF file's tokenizer: the file's tokenizer as read, and the model."""
    return {"kind": "gguf", "gguf": gguf, "model": model}


def text_record(model: Any, specials: dict[str, int], recipe: Any) -> dict[str, Any]:
    """The record of a ``tokenizer.json`` with its text pipeline: the model, special tokens and the recipe the
    pipeline is built from (``bpeproof.impl.pipelines.tokenizer_json.TextPipelineRecipe``)."""
    return {"kind": "text", "model": model, "specials": specials, "recipe": recipe}


def companion(file: Path, vocab: Any) -> Path | None:
    """The other file of GPT-2's pair that ``vocab`` was read with (the loader's own choice), None for any
    other kind of file."""
    if vocab.kind != "gpt2":
        return None
    from bpeproof.impl.formats.loader import gpt2_companion

    return gpt2_companion(file)


def companion_changed(record: dict[str, Any], path: str) -> bool:
    """Whether the record was made with the other file of a GPT-2 pair that is no longer the one next to
    ``path`` (another name, or other content)."""
    kept = record.get("companion")
    if kept is None:
        return False
    from bpeproof.impl.formats.loader import gpt2_companion

    try:
        found = gpt2_companion(Path(path))
        return found is None or [found.name, file_digest(found)] != list(kept)
    except (OSError, FormatError):
        return True


def restore(record: dict[str, Any], path: str) -> TokenizerParts:
    """The parts of a ``parts`` or ``gguf`` record (a ``text`` record is ``hf_parts``'); ``path`` names the file
    loaded now (an entry may have been written for a copy of it elsewhere)."""
    if record["kind"] == "gguf":
        from bpeproof.impl.pipelines.gguf import gguf_parts

        gguf = record["gguf"]
        object.__setattr__(gguf, "path", path)  # the file loaded now (``dataclasses.replace`` would unpack it all)
        return gguf_parts(gguf, model=record["model"])
    if record["kind"] != "parts":
        raise ValueError(f"a record of the unknown kind {record['kind']!r}")
    specials = record["specials"]
    pipeline = record["pipeline"] or pipeline_of(record["pattern"], record["pretokenizer"], specials)
    return TokenizerParts(pipeline, record["model"], specials, record["cache_size"])
