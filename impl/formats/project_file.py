"""The project's own tokenizer file ("bpeproof-tokenizer", versions 1 and 2), plain or gzip: its one reader and
its one writer, used by ``Tokenizer.load``/``save`` and by every command.

One UTF-8 JSON object with exactly the keys ``format`` (the string
"bpeproof-tokenizer"), ``version`` (1 or 2), ``pattern`` (the pre-tokenization
regex), ``pattern_name`` (its name in ``bpeproof.impl.pre_tokenizers.patterns.PATTERNS`` or null),
``rules`` (``[[a, b, c], ...]``: r_1..r_m in order, each over V_{j-1}, the
bytes being the ids 0..255), ``special_tokens`` (name → id, ids outside V_m)
and ``byte_ids`` (null, or the external id of each byte 0..255: 256 distinct
non-negative ids, none of them a rule's new id or a special token's id — a
permutation of 0..255, or ids elsewhere, as DeepSeek's bytes at 3..258).
Version 2 adds ``pretokenizer``, a list of split steps
(``{"pattern", "behavior", "invert"}``, Oniguruma expressions as in a
``tokenizer.json``) that cut the words instead of ``pattern``.  A key given
twice, a missing or unknown key, or a value of the wrong kind is a
``FormatError`` naming the file and the key.

The layout (``Tokenizer.save`` / ``Tokenizer.load``)::

    {
      "format": "bpeproof-tokenizer",   # always this string
      "version": 1 | 2,                  # 2 exactly when the file has "pretokenizer"
      "pattern": "<regular expression>", # the regex-module source used for pre-tokenization
      "pattern_name": "cl100k" | null,   # its name in bpeproof.impl.pre_tokenizers.patterns.PATTERNS, if it has one
      "rules": [[a, b, c], ...],         # r_1..r_m in order, each over V_{j-1}
      "special_tokens": {"<name>": id},  # ids outside V_m, distinct, names non-empty
      "byte_ids": null | [256 ints]      # external id of each byte 0..255 (distinct, apart from the rules'
                                         # new ids and the special ids); null = identity
      "pretokenizer": [                  # version 2 only: the split steps, in order; "pattern" is then
        {"pattern": "<Oniguruma regex>", #   kept but not used for encoding
         "behavior": "isolated",         #   or removed, merged_with_previous, merged_with_next, contiguous
         "invert": false}, ...]
    }

Every key of the version is required and no other key is allowed.  A tokenizer
without a pre-tokenizer is written as version 1, so files that could be read
before are written exactly as before.

As a ``Vocab`` (kind ``bpeproof``), the ids are the external ones: byte ``x``
is the token ``byte_ids[x]``, every rule's new id ``c`` is a token, and each
rule is the merge ``(ext(a), ext(b), c)``.  The file's tokenizer encodes each
pre-token by applying its rules one after another (def-bpe's enc_R, the
"sequential" variant).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any, NoReturn

from bpeproof.impl.encoder import check_rules
from bpeproof.impl.formats.vocab import PreTokenizerStep, Vocab, convert, refuse_ids_above
from bpeproof.impl.io.atomic import atomic_write_bytes
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import compress_if_gz, read_bytes
from bpeproof.impl.models.ids import check_byte_ids, check_special_tokens
from bpeproof.impl.pre_tokenizers.hf_splits import PreTokenizer, SplitStep, steps_from_hf
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, compile_pattern, pattern_name
from bpeproof.spec.types import ALPHABET_SIZE, BPETypeError, BPEValueError, Rule, is_int

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "PRETOKENIZER_FORMAT_VERSION",
    "ProjectDocument",
    "document_text",
    "parse_document",
    "parse_project",
    "project_bytes",
    "read_project",
    "write_project",
]

#: The value of the ``format`` key.
FORMAT_NAME = "bpeproof-tokenizer"
#: The version of a file whose words are cut by ``pattern``.
FORMAT_VERSION = 1
#: The version of a file whose words are cut by split steps (the key ``pretokenizer``).
PRETOKENIZER_FORMAT_VERSION = 2
_KEYS = ("format", "version", "pattern", "pattern_name", "rules", "special_tokens", "byte_ids")
_VERSION_KEYS = {FORMAT_VERSION: _KEYS, PRETOKENIZER_FORMAT_VERSION: (*_KEYS, "pretokenizer")}



@dataclass(frozen=True)
class ProjectDocument:
    """What a project file holds, checked: the rules (internal ids), the pattern, the special tokens, the byte ids
    (None: the bytes are 0..255) and the split steps of a version 2 file (None for version 1)."""

    rules: tuple[Rule, ...]
    pattern: str
    special_tokens: dict[str, int]
    byte_ids: tuple[int, ...] | None = None
    pretokenizer: PreTokenizer | None = None

    @property
    def version(self) -> int:
        return FORMAT_VERSION if self.pretokenizer is None else PRETOKENIZER_FORMAT_VERSION



def _short(value: object, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters for error messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _parse_json(text: str, path: str | os.PathLike[str]) -> Any:
    def reject_constant(name: str) -> NoReturn:
        raise ValueError(f"{name} is not a JSON number")

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise FormatError(path, _short(key, 40).strip("'"), "the key occurs twice in one JSON object")
            out[key] = value
        return out

    try:
        return json.loads(text, parse_constant=reject_constant, object_pairs_hook=no_duplicates)
    except RecursionError:
        raise FormatError(path, "(file)", "JSON nested too deeply") from None
    except FormatError:
        raise
    except ValueError as error:
        raise FormatError(path, "(file)", f"not valid JSON: {error}") from None


def _pretokenizer(value: object, path: str | os.PathLike[str]) -> PreTokenizer:
    """The ``pretokenizer`` key of a version 2 file: an array of ``{"pattern", "behavior", "invert"}`` objects."""
    if not isinstance(value, list):
        raise FormatError(path, "pretokenizer", f"must be an array of split steps, not {_json_type(value)}")
    steps: list[SplitStep] = []
    for index, item in enumerate(value):
        key = f"pretokenizer[{index}]"
        if not isinstance(item, dict):
            raise FormatError(path, key, f"must be an object, not {_json_type(item)}")
        for name in item:
            if name not in ("pattern", "behavior", "invert"):
                raise FormatError(path, f"{key}.{name}", "unknown key")
        fields: tuple[tuple[str, str, type], ...] = (
            ("pattern", "a string", str),
            ("behavior", "a string", str),
            ("invert", "a boolean", bool),
        )
        for name, kind, check in fields:
            if name not in item:
                raise FormatError(path, f"{key}.{name}", "missing")
            if not isinstance(item[name], check):
                raise FormatError(path, f"{key}.{name}", f"must be {kind}, not {_json_type(item[name])}")
        try:
            steps.append(SplitStep(item["pattern"], item["behavior"], item["invert"]))
        except ValueError as error:
            raise FormatError(path, key, str(error)) from None
    return PreTokenizer(steps)


def _rules(value: object, path: str | os.PathLike[str]) -> list[Rule]:
    if not isinstance(value, list):
        raise FormatError(path, "rules", f"must be an array of [a, b, c] triples, not {_json_type(value)}")
    rules: list[Rule] = []
    for index, item in enumerate(value):
        if not isinstance(item, list) or len(item) != 3 or not all(is_int(x) for x in item):
            raise FormatError(path, f"rules[{index}]", f"must be an array of three integers, not {_short(item)}")
        rules.append(Rule(item[0], item[1], item[2]))
    try:
        check_rules(rules)
    except BPEValueError as error:
        raise FormatError(path, "rules", str(error)) from None
    return rules


def parse_document(path: str | os.PathLike[str], data: bytes | str) -> ProjectDocument:
    """The project file content ``data`` (already decompressed), checked; ``path`` names it in errors."""
    if isinstance(data, (bytes, bytearray)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as error:
            raise FormatError(path, "(file)", f"not UTF-8 at byte {error.start}") from None
    else:
        text = data
    document = _parse_json(text, path)
    if not isinstance(document, dict):
        raise FormatError(path, "(file)", f"the top level must be a JSON object, not {_json_type(document)}")
    version = document.get("version", FORMAT_VERSION)
    keys = _VERSION_KEYS.get(version, _KEYS) if is_int(version) else _KEYS
    understood = f"this reader understands versions {FORMAT_VERSION} and {PRETOKENIZER_FORMAT_VERSION}, not"
    if is_int(version) and version not in _VERSION_KEYS:
        raise FormatError(path, "version", f"{understood} {_short(version)}")
    for key in keys:
        if key not in document:
            if key == "pretokenizer":
                raise FormatError(path, "version", f"version {version} files have the key 'pretokenizer'")
            raise FormatError(path, key, "missing")
    for key in document:
        if key not in keys:
            raise FormatError(path, _short(key, 40).strip("'"), "unknown key")
    if document["format"] != FORMAT_NAME:
        raise FormatError(path, "format", f"must be {FORMAT_NAME!r}, not {_short(document['format'])}")
    if not is_int(version) or version not in _VERSION_KEYS:
        raise FormatError(path, "version", f"{understood} {_short(version)}")
    pretokenizer = _pretokenizer(document["pretokenizer"], path) if version == PRETOKENIZER_FORMAT_VERSION else None
    pattern = document["pattern"]
    if not isinstance(pattern, str):
        raise FormatError(path, "pattern", f"must be a string, not {_json_type(pattern)}")
    name = document["pattern_name"]
    if name is not None:
        if not isinstance(name, str) or name not in PATTERNS:
            raise FormatError(path, "pattern_name", f"must be null or one of {sorted(PATTERNS)}, not {_short(name)}")
        if PATTERNS[name] != pattern:
            raise FormatError(path, "pattern_name", f"{name!r} names a different expression than 'pattern'")
    try:
        compile_pattern(pattern)
    except ValueError as error:
        raise FormatError(path, "pattern", str(error)) from None
    rules = _rules(document["rules"], path)
    new_ids = frozenset(rule.c for rule in rules)
    byte_ids = document["byte_ids"]
    checked_bytes: tuple[int, ...] | None = None
    if byte_ids is not None:
        if not isinstance(byte_ids, list):
            raise FormatError(path, "byte_ids", f"must be null or an array of 256 integers, not {_json_type(byte_ids)}")
        try:
            checked_bytes = check_byte_ids(byte_ids, new_ids)
        except (BPEValueError, BPETypeError) as error:
            raise FormatError(path, "byte_ids", str(error)) from None
    specials = document["special_tokens"]
    if not isinstance(specials, dict):
        raise FormatError(path, "special_tokens", f"must be an object, not {_json_type(specials)}")
    for key, value in specials.items():
        if not is_int(value) or value < 0:
            raise FormatError(path, f"special_tokens[{key!r}]", f"must be a non-negative integer, not {_short(value)}")
    vocabulary = new_ids.union(checked_bytes if checked_bytes is not None else range(ALPHABET_SIZE))
    try:
        checked_specials = check_special_tokens(specials, vocabulary)
    except (BPEValueError, BPETypeError) as error:
        raise FormatError(path, "special_tokens", str(error)) from None
    return ProjectDocument(tuple(rules), pattern, checked_specials, checked_bytes, pretokenizer)


def _check_id_digits(document: ProjectDocument, source: str) -> None:
    """Every id of ``document`` has at most as many digits as the reader parses: ``json.loads`` converts integers of
    at most ``sys.get_int_max_str_digits()`` digits (4300 unless changed; 0: any number), and so does the writer."""
    digits = sys.get_int_max_str_digits()
    if digits:
        ids = [*(rule.c for rule in document.rules), *document.special_tokens.values(), *(document.byte_ids or ())]
        refuse_ids_above(source, ids, 10**digits - 1, f"id the project's reader parses (an integer of at most {digits}"
                         " digits: sys.get_int_max_str_digits)", f"10**{digits} - 1")


def document_text(document: ProjectDocument, source: str = "<in memory>") -> str:
    """The file for ``document``: the keys in a fixed order, one rule a line (the one writer of the format).

    An id with more digits than the reader parses raises ``FormatError`` naming ``source``."""
    _check_id_digits(document, source)
    header: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": document.version,
        "pattern": document.pattern,
        "pattern_name": pattern_name(document.pattern),
        "special_tokens": dict(document.special_tokens),
        "byte_ids": list(document.byte_ids) if document.byte_ids is not None else None,
    }
    if document.pretokenizer is not None:
        header["pretokenizer"] = document.pretokenizer.to_json_value()
    lines = [f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}" for key, value in header.items()]
    rules = ",\n".join(f"[{a},{b},{c}]" for a, b, c in document.rules)
    lines.append(f'"rules": [\n{rules}\n]' if rules else '"rules": [\n\n]')
    return "{\n" + ",\n".join(lines) + "\n}\n"


_HF_BEHAVIOR = {"isolated": "Isolated", "removed": "Removed", "merged_with_previous": "MergedWithPrevious",
                "merged_with_next": "MergedWithNext", "contiguous": "Contiguous"}


def _as_hf_step(step: SplitStep) -> PreTokenizerStep:
    raw = {"type": "Split", "pattern": {"Regex": step.pattern}, "behavior": _HF_BEHAVIOR[step.behavior],
           "invert": step.invert}
    return PreTokenizerStep(type="Split", raw=json.dumps(raw, sort_keys=True, ensure_ascii=False),
                            pattern=step.pattern, behavior=step.behavior, invert=step.invert)


def parse_project(path: str | os.PathLike[str], data: bytes, *, pattern: str | None = None) -> Vocab:
    """The project file content ``data`` (already decompressed) as a ``Vocab`` of kind ``bpeproof``.

    ``pattern``, when given, replaces the file's pattern.  Every problem
    raises ``FormatError`` naming the file and the key.
    """
    document = parse_document(path, data)
    byte_ids = document.byte_ids or tuple(range(ALPHABET_SIZE))

    def external(token_id: int) -> int:
        return byte_ids[token_id] if token_id < ALPHABET_SIZE else token_id

    tokens: dict[int, bytes] = {byte_ids[byte]: bytes([byte]) for byte in range(ALPHABET_SIZE)}
    merges: list[tuple[int, int, int]] = []
    for a, b, c in document.rules:
        tokens[c] = tokens[external(a)] + tokens[external(b)]
        merges.append((external(a), external(b), c))
    steps = document.pretokenizer.steps if document.pretokenizer is not None and pattern is None else ()
    return Vocab(
        tokens=dict(sorted(tokens.items())),
        merges=merges,
        specials=dict(document.special_tokens),
        pattern=pattern if pattern is not None else None if steps else document.pattern,
        kind="bpeproof",
        source=os.fspath(path),
        pre_tokenizers=tuple(_as_hf_step(step) for step in steps),
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
    ``bpeproof.impl.formats.convert``), a token of two or more bytes is made by no
    merge, a token is empty, a special token has an empty name or a
    negative id, or an id has more digits than the reader parses.  The file
    records the tokens, merges, special tokens and pattern; its tokenizer
    applies the merges one after another (def-bpe), so a model whose own
    library merges otherwise (by rank, or looking whole words up first) may
    encode some words differently once written.
    """
    source = vocab.source or "<in memory>"
    pretokenizer: PreTokenizer | None = None
    if vocab.pattern is None and vocab.pre_tokenizers:
        try:
            pretokenizer = steps_from_hf(vocab.pre_tokenizers)
        except ValueError as exc:
            raise FormatError(source, "pre_tokenizer", f"{exc}; the project file cannot hold it") from None
    elif vocab.pattern is None:
        raise FormatError(source, "pattern", "the model states no pre-tokenization pattern; the project file needs one")
    pattern = vocab.pattern if vocab.pattern is not None else PATTERNS["words"]
    try:
        compile_pattern(pattern)
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
    # Every merge is proper: each result is a token of two or more bytes, at a file id >= 256 = its rule id.
    internal = {token_id: byte for byte, token_id in enumerate(byte_ids)}
    rules = tuple(Rule(internal.get(a, a), internal.get(b, b), c) for a, b, c in vocab.merges)
    try:
        checked_bytes = check_byte_ids(byte_ids, {rule.c for rule in rules})
    except (BPEValueError, BPETypeError) as exc:
        raise FormatError(source, "tokens", str(exc)) from None
    document = ProjectDocument(rules, pattern, dict(vocab.specials), checked_bytes, pretokenizer)
    return document_text(document, source).encode("utf-8")


def write_project(vocab: Vocab, path: str | os.PathLike[str]) -> None:
    """Write ``vocab`` as the project's tokenizer file (gzip-compressed when ``path`` ends in ``.gz``), atomically.

    Raises ``FormatError``, writing nothing, for a model the format cannot hold (see ``project_bytes``).
    """
    atomic_write_bytes(path, compress_if_gz(path, project_bytes(vocab)))
