"""tiktoken rank files: one ``base64(token bytes) rank`` a line, plain or gzip-compressed.

The rank is the token's id.  The file holds no merges, no special tokens and
no pre-tokenization pattern; the merges are recovered as ``derive`` explains,
and a pattern may be passed in.
"""

from __future__ import annotations

import base64
import binascii
import os
import re

from impl.formats._io import _atomic_write, compress_if_gz, decode_utf8, read_bytes
from impl.formats.derive import derive_merges
from impl.formats.errors import FormatError
from impl.formats.model import Vocab

_RANK = re.compile(r"[0-9]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def parse_tiktoken(path: str | os.PathLike[str], data: bytes) -> dict[bytes, int]:
    """The ``token bytes → rank`` table in ``data`` (already decompressed), checked line by line.

    Blank lines are skipped, as tiktoken does.  Every other line must be two
    fields: standard base64 (with padding) of a non-empty byte string, and a
    decimal rank.  No rank and no token may occur twice.
    """
    text = decode_utf8(path, data)
    ranks: dict[bytes, int] = {}
    line_of_rank: dict[int, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"line {number}"
        if len(fields) != 2:
            raise FormatError(path, where, f"expected 'base64 rank', found {len(fields)} field(s)")
        encoded, rank_text = fields
        if not _BASE64.fullmatch(encoded) or len(encoded) % 4:
            raise FormatError(path, where, f"{encoded[:40]!r} is not base64")
        try:
            token = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise FormatError(path, where, f"{encoded[:40]!r} is not base64: {exc}") from exc
        if not token:
            raise FormatError(path, where, "the token is empty")
        if not _RANK.fullmatch(rank_text):
            raise FormatError(path, where, f"the rank {rank_text[:40]!r} is not a non-negative integer")
        if len(rank_text) > 30:
            raise FormatError(path, where, f"the rank {rank_text[:40]}… is too large")
        rank = int(rank_text)
        if rank in line_of_rank:
            raise FormatError(path, where, f"rank {rank} already given on line {line_of_rank[rank]}")
        if token in ranks:
            raise FormatError(path, where, f"token {token!r} already given rank {ranks[token]}")
        line_of_rank[rank] = number
        ranks[token] = rank
    if not ranks:
        raise FormatError(path, None, "the file holds no tokens")
    return ranks


def vocab_from_ranks(ranks: dict[bytes, int], *, source: str = "", pattern: str | None = None) -> Vocab:
    """A ``Vocab`` of kind ``tiktoken`` for a ``token bytes → rank`` table, with its merges recovered."""
    ordered = sorted(((rank, token) for token, rank in ranks.items()))
    merges, unsplit = derive_merges(ordered, ranks, ranks)
    return Vocab(
        tokens={rank: token for rank, token in ordered},
        merges=merges,
        pattern=pattern,
        kind="tiktoken",
        source=source,
        unsplit=unsplit,
    )


def read_tiktoken(path: str | os.PathLike[str], *, pattern: str | None = None) -> Vocab:
    """Read a tiktoken rank file (``.gz`` or gzip content is decompressed); ``pattern`` is recorded as given."""
    ranks = parse_tiktoken(path, read_bytes(path))
    return vocab_from_ranks(ranks, source=os.fspath(path), pattern=pattern)


def tiktoken_bytes(vocab: Vocab) -> bytes:
    """The rank file text for ``vocab``: its tokens in id order, the id as the rank (specials are left out).

    Raises ``FormatError`` when two tokens stand for the same bytes or a token
    is empty: a rank file cannot hold either.
    """
    seen: dict[bytes, int] = {}
    lines: list[str] = []
    special_ids = set(vocab.specials.values())
    for token_id in sorted(vocab.tokens):
        if token_id in special_ids:
            continue
        token = vocab.tokens[token_id]
        if not token:
            raise FormatError(vocab.source or "<in memory>", f"token {token_id}", "an empty token cannot be written")
        if token_id < 0:
            raise FormatError(vocab.source or "<in memory>", f"token {token_id}", "a rank cannot be negative")
        if token in seen:
            raise FormatError(
                vocab.source or "<in memory>",
                f"token {token_id}",
                f"stands for the same bytes {token!r} as token {seen[token]}; a rank file holds each once",
            )
        seen[token] = token_id
        lines.append(f"{base64.b64encode(token).decode('ascii')} {token_id}\n")
    return "".join(lines).encode("ascii")


def write_tiktoken(vocab: Vocab, path: str | os.PathLike[str]) -> None:
    """Write ``vocab`` as a tiktoken rank file, gzip-compressed when ``path`` ends in ``.gz``, atomically."""
    _atomic_write(path, compress_if_gz(path, tiktoken_bytes(vocab)))
