"""Readers and writers for real BPE tokenizer files, all producing one in-memory model, ``Vocab``.

Formats: tiktoken rank files, Hugging Face ``tokenizer.json`` (BPE model),
GPT-2's ``encoder.json`` + ``vocab.bpe``, sentencepiece BPE ``.model``
files, Mistral's tekken JSON (read only), CLIP's merges file (read only), and the project's own tokenizer file
("bpeproof-tokenizer"), each
plain or gzip-compressed.  Every reader refuses a malformed file
with one ``FormatError`` naming the file, the place in it and the problem.
``to_rules`` / ``convert`` turn a ``Vocab`` into the specification's rule
list, reporting improper merges.
"""

from bpeproof.impl.formats.gpt2 import gpt2_bytes, load_gpt2, write_gpt2
from bpeproof.impl.formats.hf_json import hf_json_bytes, read_hf_json, write_hf_json
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
