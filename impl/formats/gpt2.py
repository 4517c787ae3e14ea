"""GPT-2's "data gym" files: ``encoder.json`` (token string → id) and ``vocab.bpe`` (the merges).

Both may be gzip-compressed.  ``vocab.bpe`` starts with a ``#version`` line,
then one merge a line: the two token strings separated by one space.  Token
strings spell bytes by GPT-2's byte ↔ character table.  ``<|endoftext|>``
(any entry of the form ``<|…|>`` that no merge makes) is a special token.
"""

from __future__ import annotations

import json
import os
import re
from itertools import compress
from operator import itemgetter
from pathlib import Path
from typing import cast

from bpeproof.impl.formats._json_access import JsonReader
from bpeproof.impl.formats.hf_json import resolve_merges, unmerged_tokens
from bpeproof.impl.formats.vocab import (
    GPT2_PATTERN,
    U32_ID_LIMIT,
    Vocab,
    bytes_to_token_string,
    refuse_ids_above,
    token_string_to_bytes,
    token_strings_each_to_bytes,
)
from bpeproof.impl.io.atomic import atomic_write_files
from bpeproof.impl.io.c_readers import c_readers
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import compress_if_gz, decode_utf8, parse_json, read_bytes

_SPECIAL = re.compile(r"<\|[^|]+\|>")


def parse_encoder(path: str | os.PathLike[str], data: bytes) -> tuple[dict[str, int], dict[int, bytes]]:
    """The ``encoder.json`` content ``data`` as (token string → id, id → bytes)."""
    reader = JsonReader(path)
    fast = c_readers()
    found = fast.json_ids(data) if fast is not None else None  # (the usual file read in C, as the JSON reader would)
    encoder = found if found is not None else reader.obj(parse_json(path, data), "(top level)")
    ids: dict[str, int] = {}
    tokens: dict[int, bytes] = {}
    numbers = cast("list[int]", list(encoder.values()))  # (ints when the first test holds)
    if set(map(type, numbers)) == {int} and len(set(numbers)) == len(numbers) and "" not in encoder:
        # The usual file, in whole-list passes: distinct int ids, every string spelt in GPT-2's table.
        spelt = token_strings_each_to_bytes(list(encoder))
        if None not in spelt:
            tokens = dict(zip(numbers, cast("list[bytes]", spelt), strict=True))
            listed = list(tokens)
            return cast("dict[str, int]", encoder), tokens if listed == sorted(listed) else dict(sorted(tokens.items()))
    for text, value in encoder.items():
        key = f"[{text[:40]!r}]"
        token_id = reader.integer(value, key)
        if token_id in tokens:
            raise reader.fail(key, f"the id {token_id} is given to two tokens")
        if not text:
            raise reader.fail(key, "an empty token")
        token = token_string_to_bytes(text)
        if token is None:
            raise reader.fail(key, "the token has a character that is not in GPT-2's byte table")
        ids[text] = token_id
        tokens[token_id] = token
    if not tokens:
        raise FormatError(path, None, "the encoder holds no tokens")
    return ids, dict(sorted(tokens.items()))


def parse_merges(path: str | os.PathLike[str], data: bytes) -> list[tuple[str, str, str]]:
    """The merges in the ``vocab.bpe`` content ``data`` as ``(left, right, "line n")``."""
    text = decode_utf8(path, data)
    pairs: list[tuple[str, str, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if (number == 1 and line.startswith("#version")) or not line.strip():
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise FormatError(path, f"line {number}", f"expected 'left right', found {line[:60]!r}")
        pairs.append((parts[0], parts[1], f"line {number}"))
    return pairs


def _plain_merges(data: bytes, ids: dict[str, int]) -> list[tuple[int, int, int]] | None:
    """The merges of the usual ``vocab.bpe``, read by the C reader (``bpeproof.impl.io.c_readers``): UTF-8 lines of
    "left right" (one space, a side on each side), the first one ``#version…``, no carriage return and no blank
    line but the last, every side and join a token; None for any other file (``parse_merges`` and
    ``resolve_merges`` then read it line by line, naming the first problem)."""
    fast = c_readers()
    if fast is None or b"\r" in data:
        return None
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return None
    if lines and lines[0].startswith("#version"):
        del lines[0]
    if lines and lines[-1] == "":
        del lines[-1]
    texts = list(ids)
    found: list[tuple[int, int, int]] | None = fast.merge_ids(texts, bytes(len(texts)), lines, True,
                                                              list(ids.values()))
    return found


def load_gpt2(
    encoder_path: str | os.PathLike[str], merges_path: str | os.PathLike[str], *, pattern: str | None = GPT2_PATTERN
) -> Vocab:
    """Read GPT-2's ``encoder.json`` and ``vocab.bpe``; ``source`` is the encoder's path.

    ``pattern`` defaults to GPT-2's own pre-tokenization pattern, which the
    files do not hold.
    """
    ids, tokens = parse_encoder(encoder_path, read_bytes(encoder_path))
    merges_data = read_bytes(merges_path)
    merges = _plain_merges(merges_data, ids)
    if merges is None:
        merges = resolve_merges(merges_path, parse_merges(merges_path, merges_data), ids, encoder_path)
    made = set(map(itemgetter(2), merges))
    unmade = set(ids.values()).difference(made)
    specials = {
        text: token_id
        for text, token_id in compress(ids.items(), map(unmade.__contains__, ids.values()))
        if len(tokens[token_id]) >= 2 and _SPECIAL.fullmatch(text)
    }
    return Vocab(
        tokens=tokens,
        merges=merges,
        specials=specials,
        pattern=pattern,
        kind="gpt2",
        source=os.fspath(encoder_path),
        unsplit=unmerged_tokens(tokens, merges, set(specials.values())),
    )


def merges_path_for(encoder_path: str | os.PathLike[str]) -> Path | None:
    """The ``vocab.bpe`` next to an ``encoder.json`` (same prefix and compression, or the other), or the
    ``merges.txt`` next to a ``vocab.json`` (the tokenizers library's names for them), if any."""
    path = Path(encoder_path)
    name = path.name
    candidates: list[str] = []
    for encoder, merges in (("encoder.json", "vocab.bpe"), ("vocab.json", "merges.txt")):
        if encoder in name:
            base = name.replace(encoder, merges)
            candidates += [base, base.removesuffix(".gz") if base.endswith(".gz") else base + ".gz"]
    candidates += ["vocab.bpe", "vocab.bpe.gz", "merges.txt", "merges.txt.gz"]
    for candidate in candidates:
        if (path.parent / candidate).is_file():
            return path.parent / candidate
    return None


def gpt2_bytes(vocab: Vocab) -> tuple[bytes, bytes]:
    """The ``encoder.json`` and ``vocab.bpe`` contents for ``vocab`` (every token, specials included).

    Raises ``FormatError`` when two tokens stand for the same bytes, a token is
    empty, a merge's result is not the join of its parts, or an id is negative
    or above ``U32_ID_LIMIT`` (the tokenizers library reads GPT-2's files too).
    """
    source = vocab.source or "<in memory>"
    refuse_ids_above(source, vocab.tokens, U32_ID_LIMIT, "id the tokenizers library reads (a 32-bit unsigned integer)")
    encoder: dict[str, int] = {}
    for token_id in sorted(vocab.tokens):
        data = vocab.tokens[token_id]
        if not data or token_id < 0:
            raise FormatError(source, f"token {token_id}", "an empty token or a negative id cannot be written")
        text = bytes_to_token_string(data)
        if text in encoder:
            raise FormatError(source, f"token {token_id}", f"stands for the same bytes as token {encoder[text]}")
        encoder[text] = token_id
    lines = ["#version: 0.2"]
    for index, (a, b, c) in enumerate(vocab.merges):
        if a not in vocab.tokens or b not in vocab.tokens or vocab.tokens.get(c) != vocab.tokens[a] + vocab.tokens[b]:
            raise FormatError(source, f"merge {index}", f"{(a, b, c)}: token {c} is not the join of tokens {a} and {b}")
        lines.append(f"{bytes_to_token_string(vocab.tokens[a])} {bytes_to_token_string(vocab.tokens[b])}")
    encoder_data = json.dumps(encoder, ensure_ascii=False).encode("utf-8")
    return encoder_data, ("\n".join(lines) + "\n").encode("utf-8")


def write_gpt2(vocab: Vocab, encoder_path: str | os.PathLike[str], merges_path: str | os.PathLike[str]) -> None:
    """Write ``vocab`` as GPT-2's ``encoder.json`` and ``vocab.bpe`` (each gzip-compressed when its name ends
    in ``.gz``): both are written and fsynced before either replaces its old file (``atomic_write_files``)."""
    encoder_data, merges_data = gpt2_bytes(vocab)
    atomic_write_files([(encoder_path, compress_if_gz(encoder_path, encoder_data)),
                        (merges_path, compress_if_gz(merges_path, merges_data))])
