"""Readers and writers for real BPE tokenizer files, all producing one in-memory model, ``Vocab``.

Formats: tiktoken rank files, Hugging Face ``tokenizer.json`` (BPE model),
GPT-2's ``encoder.json`` + ``vocab.bpe``, sentencepiece BPE ``.model``
files, Mistral's tekken JSON (read only), CLIP's merges file (read only), and the project's own tokenizer file
("bpeproof-tokenizer"), each
plain or gzip-compressed.  Every reader refuses a malformed file
with one ``FormatError`` naming the file, the place in it and the problem.
``to_rules`` / ``convert`` turn a ``Vocab`` into the specification's rule
list, reporting improper merges.

The names below are imported on first use: loading one format's file does not import every reader.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bpeproof.impl.formats.gpt2 import gpt2_bytes, load_gpt2, write_gpt2
    from bpeproof.impl.formats.hf_json import read_hf_json
    from bpeproof.impl.formats.hf_json_writer import hf_json_bytes, write_hf_json
    from bpeproof.impl.formats.loader import load, sniff
    from bpeproof.impl.formats.project_file import project_bytes, read_project, write_project
    from bpeproof.impl.formats.sentencepiece_model import read_sentencepiece
    from bpeproof.impl.formats.tekken import read_tekken
    from bpeproof.impl.formats.tiktoken_file import read_tiktoken, tiktoken_bytes, write_tiktoken
    from bpeproof.impl.formats.vocab import (
        GPT2_PATTERN,
        KINDS,
        PROBLEM_KINDS,
        Conversion,
        MergeProblem,
        PreTokenizerStep,
        Vocab,
        bytes_to_unicode,
        convert,
        to_rules,
        unicode_to_bytes,
    )
    from bpeproof.impl.io.errors import FormatError

#: Each public name and the module that defines it (imported on first use: reading one format does not load the
#: readers of the others).
_API: dict[str, str] = {
    "Conversion": "bpeproof.impl.formats.vocab",
    "FormatError": "bpeproof.impl.io.errors",
    "GPT2_PATTERN": "bpeproof.impl.formats.vocab",
    "KINDS": "bpeproof.impl.formats.vocab",
    "MergeProblem": "bpeproof.impl.formats.vocab",
    "PROBLEM_KINDS": "bpeproof.impl.formats.vocab",
    "PreTokenizerStep": "bpeproof.impl.formats.vocab",
    "Vocab": "bpeproof.impl.formats.vocab",
    "bytes_to_unicode": "bpeproof.impl.formats.vocab",
    "convert": "bpeproof.impl.formats.vocab",
    "gpt2_bytes": "bpeproof.impl.formats.gpt2",
    "hf_json_bytes": "bpeproof.impl.formats.hf_json_writer",
    "load": "bpeproof.impl.formats.loader",
    "load_gpt2": "bpeproof.impl.formats.gpt2",
    "project_bytes": "bpeproof.impl.formats.project_file",
    "read_hf_json": "bpeproof.impl.formats.hf_json",
    "read_project": "bpeproof.impl.formats.project_file",
    "read_sentencepiece": "bpeproof.impl.formats.sentencepiece_model",
    "read_tekken": "bpeproof.impl.formats.tekken",
    "read_tiktoken": "bpeproof.impl.formats.tiktoken_file",
    "sniff": "bpeproof.impl.formats.loader",
    "tiktoken_bytes": "bpeproof.impl.formats.tiktoken_file",
    "to_rules": "bpeproof.impl.formats.vocab",
    "unicode_to_bytes": "bpeproof.impl.formats.vocab",
    "write_gpt2": "bpeproof.impl.formats.gpt2",
    "write_hf_json": "bpeproof.impl.formats.hf_json_writer",
    "write_project": "bpeproof.impl.formats.project_file",
    "write_tiktoken": "bpeproof.impl.formats.tiktoken_file",
}

__all__ = [
    "GPT2_PATTERN",
    "KINDS",
    "PROBLEM_KINDS",
    "Conversion",
    "FormatError",
    "MergeProblem",
    "PreTokenizerStep",
    "Vocab",
    "bytes_to_unicode",
    "convert",
    "gpt2_bytes",
    "hf_json_bytes",
    "load",
    "load_gpt2",
    "project_bytes",
    "read_hf_json",
    "read_project",
    "read_sentencepiece",
    "read_tekken",
    "read_tiktoken",
    "sniff",
    "tiktoken_bytes",
    "to_rules",
    "unicode_to_bytes",
    "write_gpt2",
    "write_hf_json",
    "write_project",
    "write_tiktoken",
]


if not TYPE_CHECKING:  # for mypy the names are the imports above

    def __getattr__(name: str) -> Any:
        if name not in _API:
            raise AttributeError(f"module 'bpeproof.impl.formats' has no attribute {name!r}")
        value = getattr(importlib.import_module(_API[name]), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
