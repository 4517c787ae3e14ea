"""Mistral's tekken files (``tekken_*.json``): a tiktoken vocabulary with its pattern and special tokens, in JSON.

The file is read as ``mistral-common``'s ``Tekkenizer.from_file`` reads it::

    {"config": {"pattern": "<tiktoken pat_str>", "default_vocab_size": 131072,
                "default_num_special_tokens": 1000, "version": "v3", ...},
     "vocab": [{"rank": 0, "token_bytes": "<base64>", "token_str": "..." | null}, ...],
     "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": true}, ...]}   # optional up to v7

Only the live part of ``vocab`` is used: its first ``default_vocab_size - default_num_special_tokens``
entries, entry i of rank i, the first 256 the single bytes.  The special tokens take the ids
0 .. ``default_num_special_tokens`` - 1: those the file lists (each of rank = its position), the rest
named ``<SPECIAL_i>``; a file without the list (allowed up to version v7) has mistral-common's twenty
default names.  An ordinary token's id is its rank plus the number of special tokens, and text is encoded
by tiktoken's semantics with the pattern (``TekkenFile.ranks`` holds the shifted ranks).
"""

from __future__ import annotations

import binascii
import os
import re
from dataclasses import dataclass

from bpeproof.impl.formats._json_access import JsonReader
from bpeproof.impl.formats.derive import derive_merges
from bpeproof.impl.formats.vocab import Vocab
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import parse_json, read_bytes

__all__ = ["DEFAULT_SPECIAL_TOKENS", "TekkenFile", "parse_tekken", "read_tekken"]

#: mistral-common's special tokens of a file that lists none (``Tekkenizer.DEPRECATED_SPECIAL_TOKENS``).
DEFAULT_SPECIAL_TOKENS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
)  # fmt: skip

#: The last version whose files may leave out ``special_tokens``.
_LAST_VERSION_WITH_DEFAULTS = 7
_VERSION = re.compile(r"v([0-9]+)")
_ENTRY_KEYS = {"rank", "token_bytes", "token_str"}


@dataclass(frozen=True)
class TekkenFile:
    """What a tekken file says: ``ranks`` (token bytes → id, i.e. rank + ``num_special_tokens``), the pattern,
    the special tokens (name → id) and the version string."""

    ranks: dict[bytes, int]
    pattern: str
    specials: dict[str, int]
    num_special_tokens: int
    version: str


def parse_tekken(path: str | os.PathLike[str], data: bytes) -> TekkenFile:
    """The tokens, pattern and special tokens of a tekken file's content (already decompressed)."""
    reader = JsonReader(path)
    document = reader.obj(parse_json(path, data), "(top level)")
    config = reader.obj(reader.member(document, "config", ""), "config")
    pattern = reader.string(reader.member(config, "pattern", "config"), "config.pattern")
    size = reader.integer(reader.member(config, "default_vocab_size", "config"), "config.default_vocab_size")
    count = reader.integer(
        reader.member(config, "default_num_special_tokens", "config"), "config.default_num_special_tokens"
    )
    version = reader.string(reader.member(config, "version", "config"), "config.version")
    number = _VERSION.fullmatch(version)
    if number is None:
        raise reader.fail("config.version", f"{version[:40]!r} is not a version such as 'v3'")
    vocab = reader.lst(reader.member(document, "vocab", ""), "vocab")
    live = size - count
    if live < 0:
        raise reader.fail("config.default_vocab_size", f"{size} is less than the {count} special tokens")
    if live > len(vocab):
        raise reader.fail("vocab", f"{len(vocab)} entries, fewer than the {live} the config asks for")
    if live == 0:
        raise reader.fail("vocab", "the config leaves no ordinary tokens")
    specials = _special_tokens(reader, document.get("special_tokens"), count, int(number.group(1)))
    ranks: dict[bytes, int] = {}
    decode = binascii.a2b_base64
    for rank in range(live):
        entry = vocab[rank]
        # One look at the usual entry; anything else is examined again to name the problem.
        if not (type(entry) is dict and entry.keys() == _ENTRY_KEYS and type(entry["rank"]) is int
                and entry["rank"] == rank and type(entry["token_bytes"]) is str
                and (entry["token_str"] is None or type(entry["token_str"]) is str)):
            raise _entry_problem(reader, entry, rank)
        try:
            token = decode(entry["token_bytes"], strict_mode=True)
        except (binascii.Error, ValueError):
            raise reader.fail(f"vocab[{rank}].token_bytes", f"{entry['token_bytes'][:40]!r} is not base64") from None
        if rank < 256 and token != bytes([rank]):
            raise reader.fail(f"vocab[{rank}].token_bytes", f"rank {rank} must be the byte 0x{rank:02x}, not {token!r}")
        if token in ranks:
            raise reader.fail(f"vocab[{rank}]", f"the token {token[:40]!r} is already rank {ranks[token] - count}")
        ranks[token] = rank + count
    return TekkenFile(ranks, pattern, specials, count, version)


def _entry_problem(reader: JsonReader, value: object, rank: int) -> FormatError:
    """What is wrong with the vocabulary entry ``value`` at position ``rank``."""
    key = f"vocab[{rank}]"
    entry = reader.obj(value, key)
    if set(entry) != _ENTRY_KEYS:
        return reader.fail(key, f"the keys are {sorted(entry)}, not {sorted(_ENTRY_KEYS)}")
    if reader.integer(entry["rank"], f"{key}.rank") != rank:
        return reader.fail(f"{key}.rank", f"{entry['rank']}, not its position {rank}")
    reader.string(entry["token_bytes"], f"{key}.token_bytes")
    return reader.fail(f"{key}.token_str", "expected a string or null")


def _special_tokens(reader: JsonReader, value: object, count: int, version: int) -> dict[str, int]:
    """Name → id of all ``count`` special tokens: the listed ones, then ``<SPECIAL_i>`` up to ``count``."""
    names: list[str] = []
    if value is None:
        if version > _LAST_VERSION_WITH_DEFAULTS:
            raise reader.fail("special_tokens", f"missing; files of versions after v{_LAST_VERSION_WITH_DEFAULTS}"
                              " must list their special tokens")
        names = list(DEFAULT_SPECIAL_TOKENS)
    else:
        for index, item in enumerate(reader.lst(value, "special_tokens")):
            key = f"special_tokens[{index}]"
            entry = reader.obj(item, key)
            rank = reader.integer(reader.member(entry, "rank", key), f"{key}.rank")
            if rank != index:
                raise reader.fail(f"{key}.rank", f"{rank}, not its position {index}")
            names.append(reader.string(reader.member(entry, "token_str", key), f"{key}.token_str"))
    if len(names) > count:
        raise reader.fail("special_tokens", f"{len(names)} special tokens, more than the {count} of the config")
    names += [f"<SPECIAL_{index}>" for index in range(len(names), count)]
    specials: dict[str, int] = {}
    for index, name in enumerate(names):
        if not name:
            raise reader.fail(f"special_tokens[{index}].token_str", "empty")
        if name in specials:
            raise reader.fail("special_tokens", f"{name!r} is special token {specials[name]} and {index}")
        specials[name] = index
    return specials


def vocab_from_tekken(tekken: TekkenFile, *, source: str = "") -> Vocab:
    """The ``Vocab`` of a tekken file: a rank file (kind ``tiktoken``) with ids shifted by the special tokens,
    its pattern and its special tokens."""
    ordered = sorted((rank, token) for token, rank in tekken.ranks.items())
    merges, unsplit = derive_merges(ordered, tekken.ranks, tekken.ranks)
    return Vocab(
        tokens={rank: token for rank, token in ordered},
        merges=merges,
        specials=dict(tekken.specials),
        pattern=tekken.pattern,
        kind="tiktoken",
        source=source,
        unsplit=unsplit,
    )


def read_tekken(path: str | os.PathLike[str]) -> Vocab:
    """Read a tekken file (gzip content is decompressed)."""
    return vocab_from_tekken(parse_tekken(path, read_bytes(path)), source=os.fspath(path))
