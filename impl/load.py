"""``load_tokenizer``: any supported vocabulary file as a ``Tokenizer`` that runs its own library's semantics."""

from __future__ import annotations

import gzip
from pathlib import Path

from impl import formats, patterns
from impl.formats.errors import FormatError
from impl.formats.tiktoken_file import parse_tiktoken
from impl.models import HuggingFaceModel
from impl.patterns import PATTERNS
from impl.pretokenizers import PreTokenizer, steps_from_hf
from impl.tokenizer import FORMAT_NAME, Tokenizer
from spec.types import BPETypeError, BPEValueError

__all__ = ["guess_pattern", "load_tokenizer"]


def _is_project_file(path: Path) -> bool:
    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rb") as handle:
            head = handle.read(4096)
    except (OSError, EOFError):
        return False
    return b'"format"' in head and FORMAT_NAME.encode() in head


def guess_pattern(vocab: formats.Vocab) -> str | None:
    """A rank file's pattern by its name (r50k/gpt2, cl100k, o200k) or its size; None when neither tells."""
    return patterns.guess_pattern(vocab.source, len(vocab.tokens))


def load_tokenizer(path: str, pattern: str | None = None, *, decode_only: bool = False) -> Tokenizer:
    """Any supported vocabulary file as a ``Tokenizer`` that encodes exactly as the file's own library does.

    - the project's file: the article's sequential semantics (its rules);
    - a tiktoken rank file: tiktoken's semantics on the ranks as they are (``impl.models.TiktokenModel``), for
      any file, proper or not; the pattern is ``pattern``, else guessed from the name or size;
    - a byte-level ``tokenizer.json`` or GPT-2's ``encoder.json`` + ``vocab.bpe``: the Hugging Face BPE model
      (``impl.models.HuggingFaceModel``) with the file's pre-tokenizer (``Split`` and ``ByteLevel`` steps) or
      ``pattern``; its added tokens are special tokens.

    ``decode_only``: the tokenizer is only used to decode, so a file that states no pattern needs none (the
    pre-tokenization of such a tokenizer is the ``words`` pattern, never to be used for encoding).

    Ids are the file's own.  Whatever the engine cannot execute exactly as the library does (a normalizer,
    BPE dropout, a sentencepiece model, an unsupported pre-tokenizer step, …) is refused with ``FormatError``
    naming it: the engine never gives other ids than the library would.
    """
    file = Path(path)
    if not file.exists():
        raise FormatError(path, None, "no such file")
    if _is_project_file(file):
        tokenizer = Tokenizer.load(file)
        return tokenizer if pattern is None else Tokenizer(tokenizer.rules, pattern, tokenizer.special_tokens,
                                                           byte_ids=tokenizer.byte_ids)
    kind, data = formats.sniff(file) if file.is_file() else ("directory", b"")
    try:
        if kind == "tiktoken":
            ranks = parse_tiktoken(file, data)
            chosen = pattern or patterns.guess_pattern(str(file), len(ranks)) or ("words" if decode_only else None)
            if chosen is None:
                raise FormatError(path, None, f"a rank file states no pre-tokenization pattern; pass --pattern"
                                 f" ({', '.join(PATTERNS)} or a regex)")
            return Tokenizer.from_tiktoken_ranks(ranks, chosen)
        vocab = formats.load(file, pattern=pattern)
        if vocab.kind == "sentencepiece-bpe":
            raise FormatError(path, None, "the engine does not run sentencepiece's BPE (it merges characters by"
                             " score); use 'bpeproof audit' on it")
        if vocab.unsupported:
            raise FormatError(path, None, f"the engine does not execute {'; '.join(vocab.unsupported)}, so its ids"
                             " could differ from the file's own library")
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
        special_ids = set(specials.values())
        tokens = {token: data for token, data in vocab.tokens.items() if token not in special_ids}
        model = HuggingFaceModel(tokens, vocab.merges, ignore_merges=vocab.ignore_merges, unk=vocab.unk,
                                 fuse_unk=vocab.fuse_unk)
        return Tokenizer.from_model(model, chosen or "words", specials, pretokenizer=pretokenizer)
    except (BPEValueError, BPETypeError) as error:
        raise FormatError(path, None, str(error)) from None


