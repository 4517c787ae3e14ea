"""The project's own tokenizer file ("bpeproof-tokenizer", version 1), plain or gzip-compressed.

One UTF-8 JSON object with exactly the keys ``format`` (the string
"bpeproof-tokenizer"), ``version`` (1), ``pattern`` (the pre-tokenization
regex), ``pattern_name`` (its name in ``impl.patterns.PATTERNS`` or null),
``rules`` (``[[a, b, c], ...]``: r_1..r_m in order, each over V_{j-1}, the
bytes being the ids 0..255), ``special_tokens`` (name → id, ids outside V_m)
and ``byte_ids`` (null, or the external id of each byte 0..255: 256 distinct
non-negative ids, none of them a rule's new id or a special token's id — a
permutation of 0..255, or ids elsewhere, as DeepSeek's bytes at 3..258).
``impl.tokenizer.Tokenizer.save`` writes it.  ``Tokenizer.save`` writes a
version 2 file, with the key ``pretokenizer``, for a tokenizer that cuts words
with split steps; this module reads and writes version 1, whose single
pattern a ``Vocab`` holds.

As a ``Vocab`` (kind ``bpeproof``), the ids are the external ones: byte ``x``
is the token ``byte_ids[x]``, every rule's new id ``c`` is a token, and each
rule is the merge ``(ext(a), ext(b), c)``.  The file's tokenizer encodes each
pre-token by applying its rules one after another (def-bpe's enc_R, the
"sequential" variant).
"""

from __future__ import annotations

import json
import os
import re

from impl.formats._io import _atomic_write, compress_if_gz, parse_json, read_bytes
from impl.formats._json_access import JsonReader
from impl.formats.errors import FormatError
from impl.formats.model import Vocab, convert
from impl.patterns import PATTERNS, compile_pattern, pattern_name
from spec.types import ALPHABET_SIZE

#: The value of the ``format`` key.
PROJECT_FORMAT = "bpeproof-tokenizer"
#: The version this module reads and writes.
PROJECT_VERSION = 1
#: The keys of the file, all required, no others allowed.
PROJECT_KEYS = ("format", "version", "pattern", "pattern_name", "rules", "special_tokens", "byte_ids")

#: Recognises the file by its content: the ``format`` member (anywhere in the object).
PROJECT_MARKER = re.compile(rb'"format"\s*:\s*"bpeproof-tokenizer"')


def _check_pattern(reader: JsonReader, pattern: str, key: str) -> None:
    """A pattern the ``regex`` module compiles, or ``FormatError`` for ``key``."""
    try:
        compile_pattern(pattern)
    except Exception as exc:  # the regex module raises several kinds of errors for odd expressions
        raise reader.fail(key, f"not a valid regular expression: {exc}") from None


def _byte_ids(reader: JsonReader, value: object, new_ids: set[int]) -> list[int]:
    """The external id of each byte: the identity for null, else 256 distinct ids >= 0 apart from ``new_ids``."""
    if value is None:
        return list(range(ALPHABET_SIZE))
    items = reader.lst(value, "byte_ids")
    if len(items) != ALPHABET_SIZE:
        raise reader.fail("byte_ids", f"expected {ALPHABET_SIZE} integers, found {len(items)}")
    ids = [reader.integer(item, f"byte_ids[{index}]") for index, item in enumerate(items)]
    owner: dict[int, int] = {}
    for byte, token_id in enumerate(ids):
        if token_id in owner or token_id < 0:
            problem = f"the bytes {owner[token_id]} and {byte} share the id" if token_id in owner else "negative id"
            detail = f"{problem} {token_id}"
            raise reader.fail("byte_ids", f"not a permutation of 0..255 nor 256 distinct ids >= 0 ({detail})")
        if token_id in new_ids:
            raise reader.fail("byte_ids", f"byte {byte} has the id {token_id}, which a rule makes")
        owner[token_id] = byte
    return ids


def _rules(reader: JsonReader, value: object) -> list[tuple[int, int, int]]:
    """The rule list, each rule over the vocabulary built before it (def-merge), in the file's internal ids."""
    known = set(range(ALPHABET_SIZE))
    rules: list[tuple[int, int, int]] = []
    for index, item in enumerate(reader.lst(value, "rules")):
        key = f"rules[{index}]"
        triple = reader.lst(item, key)
        if len(triple) != 3:
            raise reader.fail(key, f"expected [a, b, c], found {len(triple)} values")
        a, b, c = (reader.integer(part, f"{key}[{place}]") for place, part in enumerate(triple))
        for name, part in (("a", a), ("b", b)):
            if part not in known:
                raise reader.fail(key, f"{name} = {part} is not in the vocabulary built by the rules before it")
        if c in known:
            raise reader.fail(key, f"the new id c = {c} is already in the vocabulary")
        known.add(c)
        rules.append((a, b, c))
    return rules


def _specials(reader: JsonReader, value: object, vocabulary: set[int]) -> dict[str, int]:
    """Special tokens: non-empty UTF-8 names, distinct ids outside the rules' vocabulary (def-utf8)."""
    specials: dict[str, int] = {}
    owner: dict[int, str] = {}
    for name, token_id in reader.obj(value, "special_tokens").items():
        key = f"special_tokens[{name[:40]!r}]"
        token_id = reader.integer(token_id, key)
        if not name:
            raise reader.fail(key, "a special token needs a non-empty name")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise reader.fail(key, "the name is not encodable as UTF-8") from None
        if token_id in vocabulary:
            raise reader.fail(key, f"the id {token_id} is already a token of the rules' vocabulary")
        if token_id in owner:
            raise reader.fail(key, f"the id {token_id} is also the special token {owner[token_id][:40]!r}")
        owner[token_id] = name
        specials[name] = token_id
    return specials


def parse_project(path: str | os.PathLike[str], data: bytes, *, pattern: str | None = None) -> Vocab:
    """The project file content ``data`` (already decompressed) as a ``Vocab`` of kind ``bpeproof``.

    ``pattern``, when given, replaces the file's pattern.  Every problem
    raises ``FormatError`` naming the file and the key.
    """
    reader = JsonReader(path)
    document = reader.obj(parse_json(path, data), "(top level)")
    for key in PROJECT_KEYS:
        reader.member(document, key, "")
    for key in document:
        if key not in PROJECT_KEYS:
            raise reader.fail(str(key)[:40], "unknown key")
    if document["format"] != PROJECT_FORMAT:
        raise reader.fail("format", f"expected {PROJECT_FORMAT!r}")
    version = reader.integer(document["version"], "version")
    if version != PROJECT_VERSION:
        raise reader.fail("version", f"this reader understands version {PROJECT_VERSION}, not {version}")
    file_pattern = reader.string(document["pattern"], "pattern")
    name = document["pattern_name"]
    if name is not None:
        name = reader.string(name, "pattern_name")
        if name not in PATTERNS:
            raise reader.fail("pattern_name", f"expected null or one of {sorted(PATTERNS)}, found {name[:40]!r}")
        if PATTERNS[name] != file_pattern:
            raise reader.fail("pattern_name", f"{name!r} names another expression than 'pattern'")
    _check_pattern(reader, file_pattern, "pattern")
    rules = _rules(reader, document["rules"])
    new_ids = {c for _, _, c in rules}
    byte_ids = _byte_ids(reader, document["byte_ids"], new_ids)
    vocabulary = set(byte_ids) | new_ids
    specials = _specials(reader, document["special_tokens"], vocabulary)

    def external(token_id: int) -> int:
        return byte_ids[token_id] if token_id < ALPHABET_SIZE else token_id

    tokens: dict[int, bytes] = {byte_ids[byte]: bytes([byte]) for byte in range(ALPHABET_SIZE)}
    merges: list[tuple[int, int, int]] = []
    for a, b, c in rules:
        tokens[c] = tokens[external(a)] + tokens[external(b)]
        merges.append((external(a), external(b), c))
    return Vocab(
        tokens=dict(sorted(tokens.items())),
        merges=merges,
        specials=specials,
        pattern=pattern if pattern is not None else file_pattern,
        kind="bpeproof",
        source=os.fspath(path),
    )


def read_project(path: str | os.PathLike[str], *, pattern: str | None = None) -> Vocab:
    """Read the project's tokenizer file (``.gz`` or gzip content is decompressed) as a ``Vocab``.

    ``pattern``, when given, replaces the file's own pre-tokenization pattern.
    """
    return parse_project(path, read_bytes(path), pattern=pattern)


def project_bytes(vocab: Vocab) -> bytes:
    """The project file content for ``vocab``: the same layout as ``Tokenizer.save`` (one rule a line).

    Raises ``FormatError`` when the format cannot hold the model: it has no
    pattern (or one that does not compile), its byte tokens are not one token
    for each byte value at the ids 0..255, a merge is improper (see
    ``impl.formats.convert``), a token of two or more bytes is made by no
    merge, a token is empty, or a special token has an empty name or a
    negative id.  The file records the tokens, merges, special tokens and
    pattern; its tokenizer applies the merges one after another (def-bpe), so
    a model whose own library merges otherwise (by rank, or looking whole words
    up first) may encode some words differently once written.
    """
    source = vocab.source or "<in memory>"
    if vocab.pattern is None:
        raise FormatError(source, "pattern", "the model states no pre-tokenization pattern; the project file needs one")
    try:
        compile_pattern(vocab.pattern)
    except Exception as exc:
        raise FormatError(source, "pattern", f"not a valid regular expression: {exc}") from None
    special_ids = set(vocab.specials.values())
    for name, token_id in vocab.specials.items():
        if not name or token_id < 0:
            raise FormatError(source, f"special token {name[:40]!r}", "needs a non-empty name and an id >= 0")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise FormatError(source, f"special token {name[:40]!r}", "the name is not UTF-8") from None
    if len(special_ids) != len(vocab.specials):
        raise FormatError(source, "specials", "two special tokens share an id")
    byte_ids = [-1] * ALPHABET_SIZE
    for token_id, data in sorted(vocab.tokens.items()):
        if token_id in special_ids:
            continue
        if not data:
            raise FormatError(source, f"token {token_id}", "an empty token cannot be written")
        if len(data) != 1:
            if token_id < ALPHABET_SIZE:
                raise FormatError(source, f"token {token_id}", "a token of two or more bytes needs an id >= 256")
            continue
        if not 0 <= token_id < ALPHABET_SIZE:
            raise FormatError(source, f"token {token_id}", f"the byte {data!r} is not at an id in 0..255")
        if byte_ids[data[0]] != -1:
            raise FormatError(
                source, f"token {token_id}", f"stands for the same byte as token {byte_ids[data[0]]}"
            )
        byte_ids[data[0]] = token_id
    if -1 in byte_ids:
        raise FormatError(source, "tokens", f"no token stands for the byte 0x{byte_ids.index(-1):02X}")
    conversion = convert(vocab)
    improper = conversion.improper
    if improper:
        more = f" (and {len(improper) - 1} more)" if len(improper) > 1 else ""
        raise FormatError(source, f"merge {improper[0].index}", f"improper: {improper[0].detail}{more}")
    unreachable = [problem for problem in conversion.problems if problem.kind == "unreachable-token"]
    if unreachable:
        raise FormatError(source, f"token {unreachable[0].token}", unreachable[0].detail)
    # Every merge is proper and the bytes are 0..255, so each result is a file id >= 256 = its rule id.
    internal = {token_id: byte for byte, token_id in enumerate(byte_ids)}
    rules = [(internal.get(a, a), internal.get(b, b), c) for a, b, c in vocab.merges]
    header = {
        "format": PROJECT_FORMAT,
        "version": PROJECT_VERSION,
        "pattern": vocab.pattern,
        "pattern_name": pattern_name(vocab.pattern),
        "special_tokens": dict(vocab.specials),
        "byte_ids": None if byte_ids == list(range(ALPHABET_SIZE)) else byte_ids,
    }
    lines = [f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}" for key, value in header.items()]
    body = ",\n".join(f"[{a},{b},{c}]" for a, b, c in rules)
    lines.append(f'"rules": [\n{body}\n]' if rules else '"rules": []')
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8")


def write_project(vocab: Vocab, path: str | os.PathLike[str]) -> None:
    """Write ``vocab`` as the project's tokenizer file (gzip-compressed when ``path`` ends in ``.gz``), atomically.

    Raises ``FormatError``, writing nothing, for a model the format cannot hold (see ``project_bytes``).
    """
    _atomic_write(path, compress_if_gz(path, project_bytes(vocab)))
