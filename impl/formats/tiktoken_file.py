"""tiktoken rank files: one ``base64(token bytes) rank`` a line, plain or gzip-compressed.

The rank is the token's id.  The file holds no merges, no special tokens and
no pre-tokenization pattern; the merges are recovered as ``derive`` explains,
and a pattern may be passed in.  This is the project's one reader of the format
(``load_tiktoken_ranks``, ``read_tiktoken``) and its one writer; ``tiktoken_rules``
turns a rank table into the specification's rule list with the same recovery.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from bpeproof.impl.io.c_readers import c_readers
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import compress_if_gz, decode_utf8, read_bytes
from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError, Rule

if TYPE_CHECKING:
    from bpeproof.impl.formats.vocab import Vocab

# ``Vocab`` (``impl.formats.vocab``) and the merge recovery are imported where a ``Vocab`` is made or written: a
# tokenizer loaded from a rank file needs neither.

_RANK = re.compile(r"[0-9]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")



def parse_tiktoken(path: str | os.PathLike[str], data: bytes) -> dict[bytes, int]:
    """The ``token bytes → rank`` table in ``data`` (already decompressed), as tiktoken reads it.

    Lines end as tiktoken ends them (``bytes.splitlines``: at LF, CR or CR LF)
    and fields are separated by ASCII white space (``bytes.split``).  Blank
    lines are skipped, as tiktoken does.  Every other line must be two
    fields: standard base64 (with padding) of a byte string, and a decimal
    rank.  A field of only padding (``=``) is the empty token, as tiktoken
    decodes it.  No rank and no token may occur twice.  Well-formed files are
    read in a few passes over the whole file, faster than tiktoken reads them
    (``_well_formed_ranks``); any other file is read again line by line to name
    the first bad line.
    """
    ranks = _well_formed_ranks(data)
    return ranks if ranks is not None else _parse_tiktoken_lines(path, data)


def _well_formed_ranks(data: bytes) -> dict[bytes, int] | None:
    """The table of a file whose every line is ``base64 rank`` (or blank), read by whole-file passes at C speed
    (no Python step per line); None for any other file, which ``_parse_tiktoken_lines`` then reads or refuses.

    Lines end at LF or CR LF only and hold no vertical tab or form feed (the two white-space characters that
    ``bytes.split`` cuts at and a line of a rank file never holds), so that cutting at LF is tiktoken's
    ``splitlines``.  Every non-blank line must have two fields; the first must be the canonical base64 of what
    it decodes to (``a2b_base64`` alone skips stray characters: encoding the token again must give the field
    back, which also refuses the empty token, left to the line reader), the second at most 30 decimal digits.
    The C reader (``bpeproof.impl.io.c_readers``) reads the same files in one pass.
    """
    fast = c_readers()
    if fast is not None:
        found: dict[bytes, int] | None = fast.rank_file(data)
        return found if found is not None and len(set(found.values())) == len(found) else None
    if b"\x0b" in data or b"\x0c" in data or data.count(b"\r") != data.count(b"\r\n"):
        return None
    if not set(map(len, map(bytes.split, data.split(b"\n")))) <= {0, 2}:
        return None
    fields = data.split()
    encoded, numbers = fields[0::2], fields[1::2]
    if not encoded or not all(map(bytes.isdigit, numbers)) or max(map(len, numbers)) > 30:
        return None
    try:
        # binascii's functions are what b64decode and b64encode call on bytes, without their Python wrappers.
        tokens = list(map(binascii.a2b_base64, encoded))
    except binascii.Error:
        return None
    # Each encoding ends in a newline and no field holds one: the joined texts are equal only item by item.
    if b"".join(map(binascii.b2a_base64, tokens)) != b"\n".join(encoded) + b"\n":
        return None
    ranks = dict(zip(tokens, map(int, numbers), strict=True))
    if len(ranks) != len(tokens) or len(set(ranks.values())) != len(tokens):
        return None
    return ranks


def _parse_tiktoken_lines(path: str | os.PathLike[str], data: bytes) -> dict[bytes, int]:
    decode_utf8(path, data)  # invalid UTF-8 is named as such, with its line
    ranks: dict[bytes, int] = {}
    line_of_rank: dict[int, int] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        # tiktoken's own split: ASCII white space only (str.split would also cut at U+00A0, U+001F, ...).
        fields = [field.decode("utf-8") for field in line.split()]
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
    from bpeproof.impl.formats.derive import derive_merges
    from bpeproof.impl.formats.vocab import Vocab

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


def load_tiktoken_ranks(path: str | os.PathLike[str]) -> dict[bytes, int]:
    """The ``token bytes → rank`` table of a tiktoken rank file (``.gz`` or gzip content is decompressed), as
    ``parse_tiktoken`` reads it: what ``tiktoken.Encoding`` takes as ``mergeable_ranks``."""
    return parse_tiktoken(path, read_bytes(path))


def read_tiktoken(path: str | os.PathLike[str], *, pattern: str | None = None) -> Vocab:
    """Read a tiktoken rank file (``.gz`` or gzip content is decompressed); ``pattern`` is recorded as given."""
    return vocab_from_ranks(load_tiktoken_ranks(path), source=os.fspath(path), pattern=pattern)


def tiktoken_rules(ranks: Mapping[bytes, int]) -> tuple[list[Rule], tuple[int, ...]]:
    """The rule list and byte ids equivalent to a tiktoken rank table (``Tokenizer.from_tiktoken_ranks``).

    The single bytes must hold the ranks 0..255 (they become the byte ids) and
    every longer token must be what tiktoken's own merge of its bytes, with
    the ranks below its own, ends in when it ends in two parts (``derive``):
    the rule joining those two parts gets the token's rank as its new id.  A
    token that merge cannot make (it stops at three parts or more) has no
    rule that makes it and raises ``BPEValueError``, as does a table that is
    not of that form; a value of the wrong type raises ``BPETypeError``.
    """
    if not isinstance(ranks, Mapping):
        raise BPETypeError(f"ranks must be a mapping of bytes to int, not {type(ranks).__name__}")
    for token, rank in ranks.items():
        if not isinstance(token, bytes) or not token:
            raise BPETypeError(f"rank file token {token!r} must be non-empty bytes")
        if not isinstance(rank, int) or isinstance(rank, bool) or rank < 0:
            raise BPETypeError(f"rank of {token!r} must be a non-negative int, not {rank!r}")
    if len(set(ranks.values())) != len(ranks):
        raise BPEValueError("two tokens of the rank file share a rank")
    byte_ids = [-1] * ALPHABET_SIZE
    for byte in range(ALPHABET_SIZE):
        byte_rank = ranks.get(bytes([byte]))
        if byte_rank is None:
            raise BPEValueError(f"the rank file has no token for byte {byte}")
        if byte_rank >= ALPHABET_SIZE:
            raise BPEValueError(
                f"byte {byte} has rank {byte_rank}: the single bytes must hold the ranks 0..255 for the ids to carry"
                " over"
            )
        byte_ids[byte] = byte_rank
    vocab = vocab_from_ranks(dict(ranks))
    if vocab.unsplit:
        rank = vocab.unsplit[0]  # the lowest: derive_merges goes in rank order
        raise BPEValueError(f"token {vocab.tokens[rank]!r} of rank {rank} is not two tokens of lower rank joined"
                            " (tiktoken's merge of its bytes with the lower ranks does not end in two parts)")

    def internal(token_id: int) -> int:
        data = vocab.tokens[token_id]
        return data[0] if len(data) == 1 else token_id

    rules = [Rule(internal(a), internal(b), c) for a, b, c in vocab.merges]
    return rules, tuple(byte_ids)


def tiktoken_bytes(vocab: Vocab) -> bytes:
    """The rank file text for ``vocab``: its tokens in id order, the id as the rank (specials are left out).

    Raises ``FormatError`` when two tokens stand for the same bytes, a token
    is empty, or an id is negative or above ``TIKTOKEN_RANK_LIMIT``: a rank
    file cannot hold any of these.
    """
    from bpeproof.impl.formats.vocab import TIKTOKEN_RANK_LIMIT, refuse_ids_above

    seen: dict[bytes, int] = {}
    lines: list[str] = []
    special_ids = set(vocab.specials.values())
    ranked = (token_id for token_id in vocab.tokens if token_id not in special_ids)
    refuse_ids_above(vocab.source or "<in memory>", ranked, TIKTOKEN_RANK_LIMIT, "rank tiktoken uses (it reads ranks"
                     f" as 32-bit unsigned integers and takes {TIKTOKEN_RANK_LIMIT + 1} for no rank)")
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
    from bpeproof.impl.io.atomic import atomic_write_bytes

    atomic_write_bytes(path, compress_if_gz(path, tiktoken_bytes(vocab)))
