"""Hugging Face ``tokenizer.json`` files with a BPE model, plain or gzip-compressed.

Reads the model's vocabulary (token string → id) and merges (``"a b"``
strings or ``["a", "b"]`` pairs: both occur in published files), the
``ignore_merges`` and ``byte_fallback`` flags, ``added_tokens`` as special
tokens, and the pre-tokenizer: a ``Sequence`` is recorded step by step, and
the regex is extracted when exactly one step splits the text.  What the
engine needs to run the file as the library does is kept in
``Vocab.text_model``: the token strings, the model's word prefix and
suffix, the normalizer (canonical JSON), the added tokens with their flags
and the ids the library gives them.  Normalizers the engine does not
execute and BPE dropout are listed in ``Vocab.unsupported``.

In a byte-level file (a ``ByteLevel`` pre-tokenizer or decoder) each
character of a token string stands for one byte by GPT-2's table; otherwise
token strings are UTF-8 text, and with ``byte_fallback`` the tokens
``<0x00>``…``<0xFF>`` stand for single bytes.
"""

from __future__ import annotations

import dataclasses
import json
import operator
import os
import re
from collections.abc import Sequence
from itertools import chain, compress, repeat
from typing import cast

from bpeproof.impl.formats._json_access import JsonReader
from bpeproof.impl.formats.vocab import (
    GPT2_PATTERN,
    AddedToken,
    PreTokenizerStep,
    TextModel,
    Vocab,
    token_string_to_bytes,
    token_strings_each_to_bytes,
)
from bpeproof.impl.io.c_readers import c_readers
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import parse_json, read_bytes

_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
#: Merges joined by line breaks, each two non-empty parts cut at one space (what ``_merge_pairs`` reads).
_MERGE_LINES = re.compile(r"(?:[^ \n]+ [^ \n]+\n)*[^ \n]+ [^ \n]+")

# ---------------------------------------------------------------------------
# Shared with the GPT-2 reader
# ---------------------------------------------------------------------------


def resolve_merges(
    path: str | os.PathLike[str],
    pairs: Sequence[tuple[str, str, str]],
    ids: dict[str, int],
    vocabulary_path: str | os.PathLike[str] | None = None,
    prefix: str | None = None,
) -> list[tuple[int, int, int]]:
    """Ids ``(a, b, c)`` for merges given as token strings ``(left, right, where)``.

    Both parts and their join must be in ``ids``; ``where`` names the line or
    key in errors.  ``vocabulary_path`` is the file holding ``ids`` when it is
    not ``path`` (GPT-2's ``encoder.json``); errors then name it too.  With a
    ``prefix`` (a BPE model's ``continuing_subword_prefix``) the join is, as
    the library builds it, the left part followed by the right part less its
    first ``len(prefix)`` bytes.
    """
    vocabulary = f"the vocabulary ({os.fspath(vocabulary_path)})" if vocabulary_path else "the vocabulary"
    cut = len(prefix.encode("utf-8")) if prefix else 0
    merges: list[tuple[int, int, int]] = []
    for left, right, where in pairs:
        for name, part in (("left", left), ("right", right)):
            if part not in ids:
                raise FormatError(path, where, f"the {name} part {part!r} of the merge is not in {vocabulary}")
        joined = left + right
        if cut:
            tail = right.encode("utf-8")
            try:
                joined = left + tail[cut:].decode("utf-8")
            except UnicodeDecodeError:
                joined = ""
            if len(tail) < cut or not joined:
                raise FormatError(path, where, f"the right part {right!r} does not hold the prefix's"
                                  f" {cut} bytes on a character boundary: the library cannot build the merge")
        if joined not in ids:
            raise FormatError(path, where, f"the merge result {joined!r} is not in {vocabulary}")
        merges.append((ids[left], ids[right], ids[joined]))
    return merges


def unmerged_tokens(tokens: dict[int, bytes], merges: Sequence[tuple[int, int, int]], exclude: set[int]) -> list[int]:
    """Ids of tokens of two or more bytes that no merge makes, other than those in ``exclude`` (in whole-list
    passes)."""
    made = set(map(operator.itemgetter(2), merges))
    longer = compress(tokens, map(operator.le, repeat(2), map(len, tokens.values())))
    return sorted(set(longer) - made - exclude)


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _steps(reader: JsonReader, value: object, key: str) -> list[PreTokenizerStep]:
    """The pre-tokenizer ``value`` as a flat list of steps (``Sequence`` steps are expanded)."""
    if value is None:
        return []
    step = reader.obj(value, key)
    kind = reader.string(reader.member(step, "type", key), f"{key}.type")
    if kind == "Sequence":
        children = reader.lst(reader.member(step, "pretokenizers", key), f"{key}.pretokenizers")
        out: list[PreTokenizerStep] = []
        for index, child in enumerate(children):
            out.extend(_steps(reader, child, f"{key}.pretokenizers[{index}]"))
        return out
    if kind == "Split":
        pattern_obj = reader.obj(reader.member(step, "pattern", key), f"{key}.pattern")
        if "Regex" in pattern_obj:
            pattern = reader.string(pattern_obj["Regex"], f"{key}.pattern.Regex")
        elif "String" in pattern_obj:
            pattern = re.escape(reader.string(pattern_obj["String"], f"{key}.pattern.String"))
        else:
            raise reader.fail(f"{key}.pattern", "expected a 'Regex' or 'String' member")
        behavior = reader.string(reader.member(step, "behavior", key), f"{key}.behavior")
        invert = reader.optional_bool(step, "invert", key, False)
        return [PreTokenizerStep("Split", _canonical(step), pattern, behavior, invert)]
    if kind == "ByteLevel":
        use_regex = reader.optional_bool(step, "use_regex", key, True)
        add_prefix_space = reader.optional_bool(step, "add_prefix_space", key, True)
        return [
            PreTokenizerStep(
                "ByteLevel",
                _canonical(step),
                GPT2_PATTERN if use_regex else None,
                add_prefix_space=add_prefix_space,
                use_regex=use_regex,
            )
        ]
    return [PreTokenizerStep(kind, _canonical(step))]


def pattern_of(steps: Sequence[PreTokenizerStep]) -> str | None:
    """The one regex that splits the text, when exactly one step splits it by an isolated regex match.

    A ``ByteLevel`` step without ``use_regex`` only maps bytes and does not
    count.  Several splitting steps (as in DeepSeek's files) give None: a
    sequence of splits is not one regex; the steps are in ``pre_tokenizers``.
    """
    splitting = [step for step in steps if not (step.type == "ByteLevel" and not step.use_regex)]
    if len(splitting) != 1:
        return None
    step = splitting[0]
    if step.type == "ByteLevel" or (step.type == "Split" and step.behavior == "Isolated" and not step.invert):
        return step.pattern
    return None


def _is_byte_level(root: dict[str, object], steps: Sequence[PreTokenizerStep]) -> bool:
    decoder = root.get("decoder")
    decoders = [decoder]
    if isinstance(decoder, dict) and decoder.get("type") == "Sequence" and isinstance(decoder.get("decoders"), list):
        decoders = list(decoder["decoders"])
    return (
        any(step.type == "ByteLevel" for step in steps)
        or any(isinstance(item, dict) and item.get("type") == "ByteLevel" for item in decoders)
        or "ByteLevel" in _normalizer_types(root.get("normalizer"))
    )


def _token_bytes(reader: JsonReader, text: str, byte_level: bool, byte_fallback: bool) -> bytes:
    where = f"model.vocab[{text[:40]!r}]"
    if not text:
        raise reader.fail(where, "an empty token")
    if byte_level:
        data = token_string_to_bytes(text)
        if data is not None:
            return data
        # A character outside GPT-2's table: the library's ByteLevel decoder gives the token's UTF-8 bytes.
    match = _BYTE_TOKEN.fullmatch(text)
    if byte_fallback and match:
        return bytes([int(match.group(1), 16)])
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise reader.fail(where, "the token is not valid Unicode text") from exc


def _merge_pairs(reader: JsonReader, merges: list[object]) -> list[tuple[str, str, str]]:
    pairs: list[tuple[str, str, str]] = []
    for index, item in enumerate(merges):
        key = f"model.merges[{index}]"
        where = f"key {key}"
        if isinstance(item, str) and item.startswith("#version"):
            continue  # the library skips these lines of the legacy form
        if isinstance(item, str):
            parts = item.split(" ")
            if len(parts) != 2 or not parts[0] or not parts[1]:
                raise reader.fail(key, f"expected 'left right', found {item[:60]!r}")
            pairs.append((parts[0], parts[1], where))
        elif isinstance(item, list):
            if len(item) != 2:
                raise reader.fail(key, f"expected a pair of token strings, found {len(item)} items")
            pairs.append((reader.string(item[0], f"{key}[0]"), reader.string(item[1], f"{key}[1]"), where))
        else:
            raise reader.fail(key, "expected a 'left right' string or a [left, right] pair")
    return pairs


def _counts_from_zero(numbers: list[int]) -> bool:
    """Whether ``numbers`` are the ints 0, 1, 2, … in order, as most files number their tokens (told by the C
    reader in one pass; False without it)."""
    fast = c_readers()
    found = fast.int_array(numbers) if fast is not None else None
    return bool(found is not None and found[2])


def _plain_merges(
    items: list[object], ids: dict[str, int], counting: bool | None = None
) -> list[tuple[int, int, int]] | None:
    """The merges of the usual file, all ``"left right"`` strings or all ``[left, right]`` pairs of token strings
    whose parts and joins are tokens, read in whole-list passes (no Python step per merge); None for any other
    list, which ``_merge_pairs`` and ``resolve_merges`` then read merge by merge, naming the first problem.
    ``counting``: whether the ids are 0, 1, 2, … in order (found here when not given)."""
    kinds = set(map(type, items))
    fast = c_readers()
    if fast is not None and kinds == {str}:
        texts = list(ids)
        numbers = list(ids.values())
        if counting is None:
            counting = _counts_from_zero(numbers)
        # (ids 0, 1, 2, … in order: the positions are the ids)
        found: list[tuple[int, int, int]] | None = fast.merge_ids(
            texts, bytes(len(texts)), items, True, True if counting else numbers)
        if found is not None:
            return found
    if kinds == {str}:
        # Joined by line breaks, which no merge holds: one match checks every line, one split cuts them all.
        joined = "\n".join(cast("list[str]", items))
        if joined.count("\n") != len(items) - 1 or "#version" in joined or not _MERGE_LINES.fullmatch(joined):
            return None  # (a line of the legacy form's version, which the library skips, among them)
        fields = joined.replace("\n", " ").split(" ")
        lefts, rights = fields[0::2], fields[1::2]
    elif kinds == {list}:
        pairs = cast("list[list[object]]", items)
        if set(map(len, pairs)) != {2} or set(map(type, chain.from_iterable(pairs))) != {str}:
            return None
        lefts = [pair[0] for pair in cast("list[list[str]]", pairs)]
        rights = [pair[1] for pair in cast("list[list[str]]", pairs)]
    else:
        return None if items else []
    try:
        return list(zip(map(ids.__getitem__, lefts), map(ids.__getitem__, rights),
                        map(ids.__getitem__, map(operator.add, lefts, rights)), strict=True))
    except KeyError:
        return None


def _is_utf8_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_hf_json(path: str | os.PathLike[str], data: bytes) -> Vocab:
    """The ``Vocab`` in the tokenizer.json content ``data`` (already decompressed)."""
    try:
        return _parse_hf_json(path, data)
    except RecursionError as exc:
        raise FormatError(path, "pre_tokenizer", "nested too deeply") from exc


def _read_document(path: str | os.PathLike[str], data: bytes) -> object:
    """The JSON document in ``data``, as ``parse_json`` reads it.  The model's vocabulary and merges, nearly all of
    a file, are read by the C reader when they have the usual form (``bpeproof.impl.io.c_readers``), and the JSON
    reader reads the rest with them left empty; a document it refuses is read again whole, for its message."""
    fast = c_readers()
    found = fast.tokenizer_json_model(data) if fast is not None else None
    if found is None:
        return parse_json(path, data)
    vocabulary, merges, (vocab_start, vocab_end, merges_start, merges_end) = found
    if vocab_start < merges_start:
        rest = data[:vocab_start] + b"{}" + data[vocab_end:merges_start] + b"[]" + data[merges_end:]
    else:
        rest = data[:merges_start] + b"[]" + data[merges_end:vocab_start] + b"{}" + data[vocab_end:]
    try:
        root = parse_json(path, rest)
    except FormatError:
        return parse_json(path, data)
    model = root.get("model") if type(root) is dict else None
    if type(model) is not dict or model.get("vocab") != {} or model.get("merges") != []:  # pragma: no cover
        return parse_json(path, data)
    model["vocab"], model["merges"] = vocabulary, merges
    return root


def _parse_hf_json(path: str | os.PathLike[str], data: bytes) -> Vocab:
    reader = JsonReader(path)
    root = reader.obj(_read_document(path, data), "(top level)")
    model = reader.obj(reader.member(root, "model", ""), "model")
    model_type = model.get("type", "BPE")
    if model_type != "BPE":
        raise reader.fail("model.type", f"the model is {model_type!r}, not 'BPE'")
    ignore_merges = reader.optional_bool(model, "ignore_merges", "model", False)
    byte_fallback = reader.optional_bool(model, "byte_fallback", "model", False)
    steps = tuple(_steps(reader, root.get("pre_tokenizer"), "pre_tokenizer"))
    byte_level = _is_byte_level(root, steps)
    prefix = _optional_string(reader, model, "continuing_subword_prefix")
    suffix = _optional_string(reader, model, "end_of_word_suffix")

    specials: dict[str, int] = {}
    flagged: list[AddedToken] = []
    added = root.get("added_tokens")
    for index, item in enumerate(reader.lst(added, "added_tokens") if added is not None else []):
        key = f"added_tokens[{index}]"
        entry = reader.obj(item, key)
        content = reader.string(reader.member(entry, "content", key), f"{key}.content")
        token_id = reader.integer(reader.member(entry, "id", key), f"{key}.id")
        if content in specials:
            raise reader.fail(f"{key}.content", f"{content[:40]!r} is already an added token")
        if not _is_utf8_text(content):
            raise reader.fail(f"{key}.content", "the text holds a lone surrogate, which is not Unicode text")
        specials[content] = token_id
        special = reader.optional_bool(entry, "special", key, False)
        flagged.append(AddedToken(
            content, token_id, special=special,
            normalized=reader.optional_bool(entry, "normalized", key, not special),
            single_word=reader.optional_bool(entry, "single_word", key, False),
            lstrip=reader.optional_bool(entry, "lstrip", key, False),
            rstrip=reader.optional_bool(entry, "rstrip", key, False),
        ))

    vocab_obj = reader.obj(reader.member(model, "vocab", "model"), "model.vocab")
    ids: dict[str, int] = {}
    tokens: dict[int, bytes] = {}
    numbers = cast("list[int]", list(vocab_obj.values()))  # (ints when ``plain``)
    # The usual file: distinct integer ids >= 0 (checked at once here, one by one below otherwise); most files
    # number their tokens 0, 1, 2, … in order, which the C reader tells in one pass.
    counting = _counts_from_zero(numbers)
    plain = counting or (
        set(map(type, numbers)) <= {int} and min(numbers, default=0) >= 0 and len(set(numbers)) == len(numbers))
    merge_items = reader.lst(model.get("merges", []), "model.merges")
    # The merges of a vocabulary of distinct ids, read while the JSON reader's strings are fresh in the caches
    # (the table of ids below is then the vocabulary itself).
    plain_merges = (_plain_merges(merge_items, cast("dict[str, int]", vocab_obj), counting)
                    if plain and prefix is None else None)
    spelt = None
    if plain and byte_level and "" not in vocab_obj:  # the usual byte-level file: every string read at once
        # An added token in the vocabulary is its own text (read as UTF-8), every other string byte-level.
        texts = list(vocab_obj)
        each = token_strings_each_to_bytes(texts)
        own = specials.keys() & vocab_obj.keys()
        # Where the ids are 0, 1, 2, … in order, a text's id is its position: no pass over every text.
        positions = (map(cast("dict[str, int]", vocab_obj).__getitem__, own) if counting
                     else compress(range(len(texts)), map(own.__contains__, texts)))
        for position in positions if own else ():
            each[position] = texts[position].encode("utf-8")
        spelt = each if None not in each else None
    if spelt is not None:
        ids = cast("dict[str, int]", vocab_obj)  # (the file's own table, text → id: the JSON reader's, for this call)
        tokens = dict(zip(numbers, cast("list[bytes]", spelt), strict=True))
    for text, value in vocab_obj.items() if spelt is None else ():
        if plain and isinstance(value, int):
            token_id = value
        else:
            token_id = reader.integer(value, f"model.vocab[{text[:40]!r}]")
            if token_id in tokens:
                raise reader.fail(f"model.vocab[{text[:40]!r}]", f"the id {token_id} is given to two tokens")
        if text in specials and text:
            tokens[token_id] = text.encode("utf-8")
        else:
            spelled = token_string_to_bytes(text) if byte_level and text else None
            tokens[token_id] = spelled if spelled is not None else _token_bytes(reader, text, byte_level, byte_fallback)
        ids[text] = token_id
    if plain_merges is None and prefix is None and not plain:
        plain_merges = _plain_merges(merge_items, ids)
    if plain_merges is not None:
        merges = plain_merges
    else:
        merges = resolve_merges(path, _merge_pairs(reader, merge_items), ids, prefix=prefix)
    unk_token = model.get("unk_token")
    unk = ids.get(unk_token) if isinstance(unk_token, str) else None
    normalizer = root.get("normalizer")
    text_model = TextModel(
        strings=dict(zip(ids.values(), ids, strict=True)),
        byte_level=byte_level,
        prefix=prefix,
        suffix=suffix,
        normalizer=None if normalizer is None else _canonical(normalizer),
        added_tokens=_library_ids(flagged, ids),
        vocabulary_size=len(ids),
        unk_token=unk_token if isinstance(unk_token, str) else None,
        spelt=spelt is not None,
    )

    listed = list(tokens)
    if any(map(operator.gt, listed, listed[1:])):  # (the ids are most often in order already)
        tokens = dict(sorted(tokens.items()))
    return Vocab(
        tokens=tokens,
        merges=merges,
        specials=specials,
        pattern=pattern_of(steps),
        kind="hf-bpe",
        source=os.fspath(path),
        ignore_merges=ignore_merges,
        byte_fallback=byte_fallback,
        unsplit=unmerged_tokens(tokens, merges, set(specials.values())),
        pre_tokenizers=steps,
        unk=unk,
        fuse_unk=model.get("fuse_unk") is True,
        unsupported=_unsupported(root, model),
        text_model=text_model,
    )


def _optional_string(reader: JsonReader, model: dict[str, object], key: str) -> str | None:
    value = model.get(key)
    if value is None:
        return None
    text = reader.string(value, f"model.{key}")
    return text or None  # the library adds an empty prefix or suffix, which changes nothing


def _library_ids(tokens: Sequence[AddedToken], ids: dict[str, int]) -> tuple[AddedToken, ...]:
    """The added tokens as the library keeps them, with the ids it gives them (``AddedVocabulary::add_tokens``).

    The file's ids are not read: a content that is already a token (of the model, or added before) keeps that
    id, the others take the next ids from the size of the model's vocabulary on; an empty content is left out,
    and a content listed again takes the later flags.
    """
    by_content: dict[str, int] = {}
    by_id: dict[int, AddedToken] = {}
    next_id = len(ids)
    for token in tokens:
        if not token.content:
            continue
        token_id = by_content.get(token.content, ids.get(token.content))
        if token_id is None:
            token_id = next_id
            next_id += 1
        by_content[token.content] = token_id
        by_id[token_id] = token if token.id == token_id else dataclasses.replace(token, id=token_id)
    return tuple(by_id[token_id] for token_id in sorted(by_id))


#: The normalizer types the engine executes (``bpeproof.impl.normalizers.hf``).
NORMALIZER_TYPES = frozenset(
    {"NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Replace", "Prepend", "Strip", "StripAccents", "Nmt", "ByteLevel",
     "Sequence"}
)

#: The pre-tokenizer types the engine executes (``bpeproof.impl.pipelines.tokenizer_json``).
PRE_TOKENIZER_TYPES = frozenset(
    {"ByteLevel", "Split", "Digits", "Metaspace", "Whitespace", "WhitespaceSplit", "Punctuation", "Sequence"}
)


def _normalizer_types(value: object) -> list[str]:
    """The types of a normalizer and of the steps of its sequences."""
    if not isinstance(value, dict):
        return [] if value is None else ["unknown type"]
    kind = value.get("type")
    if kind == "Sequence" and isinstance(value.get("normalizers"), list):
        return [found for item in value["normalizers"] for found in _normalizer_types(item)]
    return [kind if isinstance(kind, str) else "unknown type"]


def _unsupported(root: dict[str, object], model: dict[str, object]) -> tuple[str, ...]:
    """The features of a tokenizer.json that the engine does not execute, each named."""
    found: list[str] = []
    for kind in dict.fromkeys(_normalizer_types(root.get("normalizer"))):
        if kind not in NORMALIZER_TYPES:
            found.append(f"the normalizer ({kind})")
    dropout = model.get("dropout")
    if dropout not in (None, 0, 0.0):
        found.append(f"BPE dropout ({dropout}): the library draws merges at random")
    return tuple(found)


def read_hf_json(path: str | os.PathLike[str]) -> Vocab:
    """Read a Hugging Face ``tokenizer.json`` with a BPE model (``.gz`` or gzip content is decompressed)."""
    return parse_hf_json(path, read_bytes(path))
