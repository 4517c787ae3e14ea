"""Opening a vocabulary file of any supported format as a ``Tokenizer`` for the command line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from impl import formats, patterns
from impl.commands import UsageError
from impl.patterns import PATTERNS
from impl.pretokenizers import PreTokenizer, steps_from_hf
from impl.tokenizer import FORMAT_NAME, Tokenizer
from spec.types import BPETypeError, BPEValueError


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


def load_tokenizer(path: str, pattern: str | None = None) -> Tokenizer:
    """The project's tokenizer file, or a tiktoken rank file, ``tokenizer.json`` or GPT-2 pair, as a Tokenizer.

    Ids are the file's own: its byte tokens keep their ids (``byte_ids``, anywhere), and so do its merged tokens.
    Words are cut by ``pattern`` when given, else by the file's one pattern (or, for a rank file, the one its
    name or size suggests), else by a ``tokenizer.json`` file's own pre-tokenizer steps (``Split`` and
    ``ByteLevel``, as a ``PreTokenizer``).
    """
    file = Path(path)
    if not file.exists():
        raise UsageError(f"{path}: no such file")
    if _is_project_file(file):
        tokenizer = Tokenizer.load(file)
        return tokenizer if pattern is None else Tokenizer(tokenizer.rules, pattern, tokenizer.special_tokens,
                                                           byte_ids=tokenizer.byte_ids)
    vocab = formats.load(file, pattern=pattern)
    if vocab.kind == "sentencepiece-bpe":
        raise UsageError(f"{path}: sentencepiece models merge characters, not bytes; use 'bpeproof audit' on them")
    conversion = formats.convert(vocab)
    if conversion.improper:
        first = conversion.improper[0]
        raise UsageError(f"{path}: the merge list is not proper ({len(conversion.improper)} problems; first:"
                         f" {first.detail}); 'bpeproof audit' lists them")
    byte_ids = [-1] * 256
    for file_id, rule_id in sorted(conversion.id_map.items(), reverse=True):
        if rule_id < 256:
            byte_ids[rule_id] = file_id
    if -1 in byte_ids:
        raise UsageError(f"{path}: byte {byte_ids.index(-1)} has no token; 'bpeproof audit' shows what is missing")
    renumbered = [f for f, r in conversion.id_map.items() if r >= 256 and f != r]
    if renumbered:
        raise UsageError(f"{path}: token {renumbered[0]} would need a new id; only files whose merged ids are >= 256"
                         " can be used for encoding")
    pretokenizer: PreTokenizer | None = None
    chosen = pattern or vocab.pattern
    if chosen is None and vocab.pre_tokenizers:
        try:
            pretokenizer = steps_from_hf(vocab.pre_tokenizers)
        except ValueError as error:
            raise UsageError(f"{path}: {error}; pass --pattern ({', '.join(PATTERNS)} or a regex)") from None
    elif chosen is None:
        chosen = guess_pattern(vocab)
        if chosen is None:
            raise UsageError(f"{path}: it states no pre-tokenization pattern; pass --pattern"
                             f" ({', '.join(PATTERNS)} or a regex)")
    try:
        return Tokenizer(conversion.rules, chosen or "words", vocab.specials, byte_ids=byte_ids,
                         pretokenizer=pretokenizer)
    except (BPEValueError, BPETypeError) as error:
        raise UsageError(f"{path}: {error}") from None


def parse_ids(words: list[str], source: str) -> list[int]:
    """Token ids from text: integers separated by spaces or commas, or a JSON list."""
    text = " ".join(words).strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise UsageError(f"{source}: not a JSON list of ids: {error.msg}") from None
        items = value if isinstance(value, list) else [value]
    else:
        items = text.replace(",", " ").split()
    ids: list[int] = []
    for item in items:
        try:
            ids.append(int(item))
        except (TypeError, ValueError):
            raise UsageError(f"{source}: {item!r} is not a token id") from None
    return ids
