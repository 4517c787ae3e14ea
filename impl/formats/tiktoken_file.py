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
from base64 import b64decode, b64encode

from bpeproof.impl.formats._io import _atomic_write, compress_if_gz, decode_utf8, read_bytes
from bpeproof.impl.formats.derive import derive_merges
from bpeproof.impl.formats.errors import FormatError
from bpeproof.impl.formats.model import Vocab

_RANK = re.compile(r"[0-9]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


_WELL_FORMED = re.compile(rb"(?:[A-Za-z0-9+/=]+[ \t]+[0-9]{1,30}[ \t]*\r?\n|[ \t\r]*\n)*"
                          rb"(?:[A-Za-z0-9+/=]+[ \t]+[0-9]{1,30}[ \t]*\r?|[ \t\r]*)")


def parse_tiktoken(path: str | os.PathLike[str], data: bytes) -> dict[bytes, int]:
    """The ``token bytes → rank`` table in ``data`` (already decompressed), as tiktoken reads it.

    Blank lines are skipped, as tiktoken does.  Every other line must be two
    fields: standard base64 (with padding) of a byte string, and a decimal
    rank.  A field of only padding (``=``) is the empty token, as tiktoken
    decodes it.  No rank and no token may occur twice.  Well-formed files are
    read in one pass as fast as tiktoken reads them; any other file is read
    again line by line to name the first bad line.
    """
    if _WELL_FORMED.fullmatch(data):
        ranks: dict[bytes, int] = {}
        encoded: list[bytes] = []
        try:
            for line in data.split(b"\n"):
                fields = line.split()
                if fields:
                    encoded.append(fields[0])
                    ranks[b64decode(fields[0])] = int(fields[1])
        except (binascii.Error, ValueError):
            return _parse_tiktoken_lines(path, data)
        # Every field must be the canonical base64 of its token (b64decode alone skips stray characters).
        if ranks and len(encoded) == len(ranks) == len(set(ranks.values())) and encoded == [
            b64encode(token) or b"=" for token in ranks
        ]:
            return ranks
    return _parse_tiktoken_lines(path, data)


def _parse_tiktoken_lines(path: str | os.PathLike[str], data: bytes) -> dict[bytes, int]:
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
        if encoded.strip("=") == "" and len(encoded) <= 2:
            token = b""  # tiktoken decodes a field of padding alone as the empty token
        else:
            if not _BASE64.fullmatch(encoded) or len(encoded) % 4:
                raise FormatError(path, where, f"{encoded[:40]!r} is not base64")
            try:
                token = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError) as exc:
                raise FormatError(path, where, f"{encoded[:40]!r} is not base64: {exc}") from exc
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
