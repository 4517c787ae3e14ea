"""A GGUF tokenizer's tokens as bytes: the byte-level tables, the merges as bytes, the pieces of text-spelt
tokens, and the project's ``Vocab`` built from them.

The tokens of a byte-level BPE GGUF file (``bpeproof.impl.formats.gguf_tokenizer``) are strings in GPT-2's
byte-to-character spelling: ``byte_level_tables`` gives their bytes, the look-up llama.cpp's merge loop makes
and the bytes its detokenizer gives; ``vocab_from_gguf`` gives the project's common ``Vocab`` (kind ``gguf``).
The tokens of an SPM or ``gemma4`` file are text with U+2581 for the space and ``<0xXX>`` byte tokens:
``text_pieces`` gives the bytes llama.cpp's detokenizer gives for them.
"""

from __future__ import annotations

import codecs
import functools
import operator
import os
from dataclasses import dataclass
from itertools import accumulate, compress, repeat

from bpeproof.impl.formats.gguf_tokenizer import (
    BYTE,
    CONTROL,
    NORMAL,
    UNKNOWN,
    USER_DEFINED,
    GGUFTokenizer,
    read_gguf_tokenizer,
)
from bpeproof.impl.formats.vocab import (
    GPT2_PATTERN,
    Vocab,
    byte_level_codec,
    bytes_to_unicode,
    token_strings_each_to_bytes,
)
from bpeproof.impl.io.c_readers import c_readers, cut_at
from bpeproof.impl.io.errors import FormatError

__all__ = [
    "ByteLevelTables",
    "byte_level_bytes",
    "byte_level_tables",
    "byte_token_value",
    "merge_bytes",
    "merge_sides",
    "text_pieces",
    "vocab_from_gguf",
]


@dataclass(frozen=True)
class ByteLevelTables:
    """A GGUF tokenizer's strings as bytes, and its merges as the merge loop needs them.

    ``token_bytes``: per id, the bytes its string stands for in GPT-2's byte-to-character table, None when a
    character is outside the table (such a string is never built by merging: llama.cpp looks the merged,
    byte-encoded pieces up among all token strings, and the pieces are always spelt in the table);
    ``lookup``: those bytes → id; ``decoded``: id → the bytes llama.cpp's detokenizer gives for each
    non-special token (a character outside the table becomes ``[UNK_BYTE_0x..]`` text, as in llama.cpp);
    ``merge_ids``: the merges as three columns of ids (left, right, result), first occurrence of a pair only
    (llama.cpp keeps
    the first rank of a pair), when every merge that can ever apply joins two tokens into a token — else None,
    and ``merge_bytes`` gives them as byte pairs instead.
    """

    token_bytes: list[bytes | None]
    lookup: dict[bytes, int]
    decoded: dict[int, bytes]
    merge_ids: tuple[list[int], list[int], list[int]] | None


def byte_level_bytes(text: str) -> bytes | None:
    """The bytes a GPT-2-spelt string stands for, or None when a character is not in the table."""
    try:
        data: bytes = codecs.charmap_encode(text, "strict", byte_level_codec())[0]
    except UnicodeEncodeError:
        return None
    return data


@functools.cache
def _character_bytes() -> dict[str, int]:
    """GPT-2's byte-to-character table, character → byte."""
    return {char: byte for byte, char in bytes_to_unicode().items()}


def _llama_decode_text(text: str) -> bytes:
    """llama.cpp's ``llama_decode_text``: each character's byte, or ``[UNK_BYTE_0x<hex>`` text ``]``."""
    table = _character_bytes()
    out = bytearray()
    for char in text:
        byte = table.get(char)
        if byte is not None:
            out.append(byte)
        else:
            out += b"[UNK_BYTE_0x" + char.encode("utf-8", "surrogatepass").hex().encode() + text.encode(
                "utf-8", "surrogatepass") + b"]"
    return bytes(out)


def merge_sides(merges: list[str]) -> list[str]:
    """[left0, right0, left1, right1, …] of the merge strings, each cut at its first space after the first
    character, as llama.cpp cuts them; a string without such a space gives two empty sides."""
    joined = "\n".join(merges)
    flat = joined.replace("\n", " ").split(" ")
    if len(flat) == 2 * len(merges) and not joined.startswith(" ") and "\n " not in joined:
        return flat
    sides: list[str] = []
    for line in merges:
        cut = line.find(" ", 1)
        sides += [line[:cut], line[cut + 1 :]] if cut >= 0 else ["", ""]
    return sides


def byte_level_tables(tokenizer: GGUFTokenizer) -> ByteLevelTables:
    """The ``ByteLevelTables`` of a GGUF tokenizer."""
    texts = tokenizer.texts
    count = len(texts)
    token_bytes = token_strings_each_to_bytes(texts)
    # Spelt outside the table (found at C speed: the list holds few None).
    outside = list(compress(range(count), map(operator.is_, token_bytes, repeat(None))))
    lookup: dict[bytes, int] = dict(zip(token_bytes, range(count), strict=True))  # type: ignore[arg-type]
    lookup.pop(None, None)  # type: ignore[call-overload]
    decoded: dict[int, bytes] = dict(zip(range(count), token_bytes, strict=True))  # type: ignore[arg-type]
    for token in outside:
        decoded[token] = _llama_decode_text(texts[token])
    special = CONTROL | USER_DEFINED | UNKNOWN
    for token in list(compress(range(count), map(special.__and__, tokenizer.attrs))):
        del decoded[token]
    fast = c_readers()
    if fast is not None:  # the usual file: every merge joins two tokens into one, each pair once
        excluded = bytearray(count)
        for token in outside:
            excluded[token] = 1
        found = fast.merge_ids(texts, excluded, tokenizer.merges)
        if found is not None:
            return ByteLevelTables(token_bytes, lookup, decoded, found)
    # Ids of the strings BPE can build (tokens spelt in the table); the others are never a piece.
    buildable = tokenizer.index_of
    if outside:
        buildable = dict(buildable)
        for token in outside:
            del buildable[texts[token]]
    sides = merge_sides(tokenizer.merges)
    lefts, rights = sides[0::2], sides[1::2]
    a_ids = list(map(buildable.get, lefts))
    b_ids = list(map(buildable.get, rights))
    c_ids = list(map(buildable.get, map(operator.add, lefts, rights)))
    odd: list[int] = []
    complete = None not in a_ids and None not in b_ids and None not in c_ids
    stride = len(texts)
    columns: tuple[list[int], list[int], list[int]]
    if complete and len(set(map(operator.add, map(operator.mul, a_ids, repeat(stride)), b_ids))) == len(a_ids):
        columns = (a_ids, b_ids, c_ids)  # type: ignore[assignment]
    else:
        columns = ([], [], [])
        seen: set[tuple[int, int]] = set()
        for index, (a, b, c) in enumerate(zip(a_ids, b_ids, c_ids, strict=True)):
            if a is None or b is None or c is None:
                odd.append(index)
                continue
            if (a, b) not in seen:
                seen.add((a, b))
                columns[0].append(a)
                columns[1].append(b)
                columns[2].append(c)
    if odd and _odd_merges_apply(lefts, rights, odd):
        return ByteLevelTables(token_bytes, lookup, decoded, None)
    return ByteLevelTables(token_bytes, lookup, decoded, columns)


def _odd_merges_apply(lefts: list[str], rights: list[str], odd: list[int]) -> bool:
    """True when some merge that is not "token + token → token" may apply: both its sides are strings merging
    can form (single bytes, and the results of merges over such strings), spelt in the byte table."""
    formable = set(bytes_to_unicode().values())
    changed = True
    while changed:
        changed = False
        for left, right in zip(lefts, rights, strict=True):
            if left in formable and right in formable and left + right not in formable:
                formable.add(left + right)
                changed = True
    return any(lefts[index] in formable and rights[index] in formable for index in odd)


def merge_bytes(tokenizer: GGUFTokenizer) -> list[tuple[bytes, bytes]]:
    """The merges as byte pairs in rank order, first occurrence of a pair only, leaving out those that never
    apply (a side empty or spelt outside the byte table)."""
    sides = merge_sides(tokenizer.merges)
    pairs: dict[tuple[bytes, bytes], None] = {}
    for left, right in zip(sides[0::2], sides[1::2], strict=True):
        left_bytes, right_bytes = byte_level_bytes(left), byte_level_bytes(right)
        if left_bytes and right_bytes:
            pairs.setdefault((left_bytes, right_bytes), None)
    return list(pairs)


#: The characters C's ``strtol`` skips before a number (``isspace`` in the C locale).
_C_SPACE = b" \t\n\v\f\r"


def byte_token_value(text: str) -> int:
    """The byte llama.cpp's detokenizer gives for a byte token: the characters 3 and 4 of its text read as
    ``strtol(…, 16)`` reads them, cast to a byte (``<0x41>`` gives 0x41; any other text gives what C gives)."""
    digits = text.encode("utf-8")[3:5].lstrip(_C_SPACE)
    negative = digits[:1] == b"-"
    if digits[:1] in (b"-", b"+"):
        digits = digits[1:]
    value = 0
    for digit in digits:
        position = b"0123456789abcdef".find(bytes([digit]).lower())
        if position < 0:
            break
        value = value * 16 + position
    return (-value if negative else value) & 0xFF


def text_pieces(tokenizer: GGUFTokenizer) -> dict[int, bytes]:
    """id → the bytes llama.cpp's ``token_to_piece`` gives for each non-special token of a tokenizer spelt as
    text (SPM, or BPE with ``escape_whitespaces``): a normal token's text with U+2581 as the space, a byte
    token's byte, nothing for any other (unused, undefined).  ``FormatError`` for a byte token of fewer than
    three bytes, on which llama.cpp's loader fails (it builds these pieces when it loads the file)."""
    texts, attrs = tokenizer.texts, tokenizer.attrs
    special = CONTROL | USER_DEFINED | UNKNOWN
    spaced = cut_at("".join(texts).replace("\u2581", " "), accumulate(map(len, texts), initial=0))
    try:  # every text as a normal token's, in whole-list passes; then the few others, one by one
        pieces = dict(zip(range(len(texts)), map(str.encode, spaced), strict=True))
    except UnicodeEncodeError:  # (a text that is not Unicode: read one by one, below)
        pieces = {}
    else:
        for token in compress(range(len(texts)), map(operator.not_, map(NORMAL.__and__, attrs))):
            attr = attrs[token]
            if attr & special:
                del pieces[token]
            elif attr & BYTE:
                pieces[token] = _byte_piece(tokenizer, token)
            else:
                pieces[token] = b""
        for token in compress(range(len(texts)), map(special.__and__, attrs)):
            pieces.pop(token, None)  # (a normal token that is also special)
        return pieces
    for token, (text, attr) in enumerate(zip(texts, attrs, strict=True)):
        if attr & special:
            continue
        if attr & NORMAL:
            pieces[token] = text.replace("\u2581", " ").encode("utf-8")
        elif attr & BYTE:
            pieces[token] = _byte_piece(tokenizer, token)
        else:
            pieces[token] = b""
    return pieces


def _byte_piece(tokenizer: GGUFTokenizer, token: int) -> bytes:
    """The byte of a byte token (``text_pieces``)."""
    text = tokenizer.texts[token]
    if len(text.encode("utf-8")) < 3:
        raise FormatError(tokenizer.path, f"key 'tokenizer.ggml.tokens', token {token}",
                          f"the byte token {text!r} is shorter than '<0xXX>': llama.cpp fails to load it")
    return bytes([byte_token_value(text)])


def vocab_from_gguf(path: str | os.PathLike[str]) -> Vocab:
    """The project's ``Vocab`` (kind ``gguf``) of a byte-level BPE GGUF file; ``FormatError`` for the other
    models (their tokens are text, not GPT-2's byte spelling, and they have no merge list of byte pairs).

    ``tokens``: the non-special tokens' bytes and the special tokens' texts (UTF-8); ``merges``: the merges
    whose sides and result are tokens, as id triples, in rank order; ``specials``: the control, user-defined
    and unknown tokens; ``ignore_merges`` as llama.cpp sets it for the pre-tokenizer; ``pattern``: GPT-2's when
    the pre-tokenizer is GPT-2's expression alone (llama.cpp's ``gpt2`` kind), None for the others, which are
    llama.cpp's own sequences of expressions (``bpeproof.impl.pre_tokenizers.llama_cpp``), no one pattern.
    """
    tokenizer = read_gguf_tokenizer(path)
    if tokenizer.model != "gpt2" or tokenizer.escape_whitespaces:
        kind = "SPM" if tokenizer.model == "llama" else "BPE over raw UTF-8 with spaces written as U+2581"
        raise FormatError(tokenizer.path, "key 'tokenizer.ggml.model'", f"the tokenizer is {kind}, not byte-level"
                          " BPE: the project's vocabulary holds byte-level ones only ('bpeproof encode --vocab'"
                          " encodes it as llama.cpp does)")
    tables = byte_level_tables(tokenizer)
    specials = tokenizer.special_tokens
    tokens: dict[int, bytes] = dict(tables.decoded)
    for text, token in specials.items():
        tokens[token] = text.encode("utf-8")
    merges = list(zip(*tables.merge_ids, strict=True)) if tables.merge_ids is not None else None
    if merges is None:
        lookup = tables.lookup
        merges = []
        for left, right in merge_bytes(tokenizer):
            a, b, c = lookup.get(left), lookup.get(right), lookup.get(left + right)
            if a is not None and b is not None and c is not None:
                merges.append((a, b, c))
    pattern = GPT2_PATTERN if tokenizer.pre_type == "gpt2" else None
    return Vocab(tokens=dict(sorted(tokens.items())), merges=merges, specials=specials, kind="gguf",
                 source=os.fspath(path), ignore_merges=tokenizer.ignore_merges, pattern=pattern)
