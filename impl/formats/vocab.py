"""The common in-memory model of a BPE tokenizer file, and its conversion to the spec's rules.

Every reader in ``bpeproof.impl.formats`` returns a ``Vocab``; every writer takes one.
A ``Vocab`` keeps the file's own token ids.  ``convert`` and ``to_rules`` turn
it into the specification's convention (the bytes are ids 0..255, every other
token is made by a rule ``(a, b ↦ c)`` over the ids made before it) and report
every merge that does not fit that convention.
"""

from __future__ import annotations

import codecs
import functools
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from bpeproof.impl.io.c_readers import c_readers, cut_at
from bpeproof.impl.io.errors import FormatError
from bpeproof.spec.types import ALPHABET_SIZE, Rule

#: The pre-tokenization pattern of GPT-2 (r50k_base), which Hugging Face's ``ByteLevel``
#: pre-tokenizer applies when ``use_regex`` is true.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

#: The values ``Vocab.kind`` takes.
KINDS = ("tiktoken", "hf-bpe", "gpt2", "sentencepiece-bpe", "bpeproof", "clip", "gguf")


#: The largest id Hugging Face's ``tokenizers`` reads from a ``tokenizer.json`` or a GPT-2 ``encoder.json``: it
#: reads ids as 32-bit unsigned integers.
U32_ID_LIMIT = 2**32 - 1
#: The largest rank a tiktoken rank file can give a token: tiktoken reads ranks as 32-bit unsigned integers, and
#: takes 2**32 - 1 for "no rank" (a token of that rank is loaded but never made by a merge).
TIKTOKEN_RANK_LIMIT = 2**32 - 2


def id_text(token_id: int) -> str:
    """``token_id`` in decimal, or its size in bits when it has more digits than Python converts."""
    try:
        return str(token_id)
    except ValueError:
        return f"of {token_id.bit_length()} bits"


def refuse_ids_above(source: str, ids: Iterable[int], limit: int, reader: str, limit_text: str | None = None) -> None:
    """Raise one ``FormatError`` naming the smallest of ``ids`` above ``limit`` (and how many more there are) and
    the limit, where ``reader`` says whose limit it is; nothing when every id fits.  Writers call it before they
    write anything."""
    above = sorted(token_id for token_id in ids if token_id > limit)
    if above:
        shown = id_text(above[0])
        more = f" (and {len(above) - 1} more)" if len(above) > 1 else ""
        problem = f"the id is above {limit_text or limit}, the largest {reader}{more}"
        raise FormatError(source, f"token {shown}", problem)


@functools.cache
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table from each byte to the printable character that stands for it in vocabulary files.

    Printable Latin-1 bytes stand for themselves; the other 68 bytes (controls,
    space, DEL, NBSP, soft hyphen, …) are given the characters U+0100, U+0101, …
    in byte order.  So the space 0x20 is written ``Ġ`` (U+0120).
    """
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table: dict[int, str] = {byte: chr(byte) for byte in printable}
    extra = 0
    for byte in range(ALPHABET_SIZE):
        if byte not in table:
            table[byte] = chr(ALPHABET_SIZE + extra)
            extra += 1
    return dict(sorted(table.items()))


@functools.cache
def unicode_to_bytes() -> dict[str, int]:
    """The inverse of ``bytes_to_unicode``."""
    return {char: byte for byte, char in bytes_to_unicode().items()}


def bytes_to_token_string(data: bytes) -> str:
    """The GPT-2 / Hugging Face byte-level spelling of ``data`` (one character per byte)."""
    # Latin-1 gives each byte the code point of its value, which the table (indexed by it) replaces: in C.
    return data.decode("latin-1").translate(_byte_level_table())


@functools.cache
def _byte_level_table() -> tuple[str, ...]:
    """The character of each byte, indexed by the byte (``str.translate``'s table)."""
    return tuple(bytes_to_unicode()[byte] for byte in range(ALPHABET_SIZE))


@functools.cache
def byte_level_alphabet() -> str:
    """GPT-2's byte-to-character table as one string: the character of each byte, in byte order."""
    return "".join(bytes_to_unicode()[byte] for byte in range(ALPHABET_SIZE))


@functools.cache
def byte_level_codec() -> Any:
    """The charmap encoding table of GPT-2's byte-to-character table (``codecs.charmap_encode``): each character
    of the table to its byte, every other character unencodable."""
    return codecs.charmap_build(byte_level_alphabet())


def token_string_to_bytes(text: str) -> bytes | None:
    """The bytes a byte-level token string stands for, or None when a character is not in the table."""
    try:
        data: bytes = codecs.charmap_encode(text, "strict", byte_level_codec())[0]
    except UnicodeEncodeError:
        return None
    return data


@functools.cache
def _outside_table() -> re.Pattern[str]:
    """A character that GPT-2's byte-to-character table does not hold."""
    return re.compile("[^" + "".join(map(re.escape, bytes_to_unicode().values())) + "]")


def token_strings_each_to_bytes(texts: list[str]) -> list[bytes | None]:
    """``token_string_to_bytes`` of every string, in one pass in C, or in whole-list passes: the strings joined
    are encoded at once (a character outside the table as one ``?`` byte, so that every string keeps its length)
    and cut where each starts; the few strings that hold such a character are then None."""
    fast = c_readers()
    if fast is not None:
        spelt: list[bytes | None] = fast.spelt_bytes(texts, byte_level_alphabet())
        return spelt
    joined = "".join(texts)
    data: bytes = codecs.charmap_encode(joined, "replace", byte_level_codec())[0]
    if len(data) != len(joined):  # pragma: no cover - the replacement is one byte per character
        return [token_string_to_bytes(text) for text in texts]
    offsets = list(accumulate(map(len, texts), initial=0))
    found: list[bytes | None] = cut_at(data, offsets)  # type: ignore[assignment]
    for match in _outside_table().finditer(joined):
        found[bisect_right(offsets, match.start()) - 1] = None
    return found


def token_strings_to_bytes(texts: Sequence[str]) -> list[bytes] | None:
    """``token_string_to_bytes`` of every string at once (one encoding of them all, then cut: each character
    is one byte; or one pass in C), or None when a character of one of them is not in the table."""
    fast = c_readers()
    if fast is not None:
        found: list[bytes | None] = fast.spelt_bytes(list(texts), byte_level_alphabet())
        return None if None in found else found  # type: ignore[return-value]
    joined = token_string_to_bytes("".join(texts))
    if joined is None:
        return None
    return cut_at(joined, accumulate(map(len, texts), initial=0))


@dataclass(frozen=True)
class PreTokenizerStep:
    """One step of a Hugging Face pre-tokenizer (a ``Sequence`` is recorded as its steps, in order).

    ``raw`` is the step's JSON, canonical (sorted keys), so a writer can put it
    back unchanged; the other fields are the parts a checker needs.
    ``pattern`` is the regex of a ``Split`` step with a ``Regex`` pattern, the
    escaped literal of one with a ``String`` pattern, and ``GPT2_PATTERN`` for a
    ``ByteLevel`` step with ``use_regex`` true.
    """

    type: str
    raw: str
    pattern: str | None = None
    behavior: str | None = None
    invert: bool = False
    add_prefix_space: bool = False
    use_regex: bool = False


@dataclass(frozen=True)
class AddedToken:
    """A Hugging Face added token with its flags, and the id the library gives it.

    The library does not take the id written in the file: a token whose content is in the model's vocabulary
    gets that id, the others the next ids from the vocabulary's size on, in the order of the list
    (``bpeproof.impl.formats.hf_json``).  ``normalized``: matched in the normalized text (else in the original text);
    ``special``: not matched when special tokens are encoded as text; ``single_word``: only between non-word
    characters; ``lstrip`` / ``rstrip``: takes the white space before / after it."""

    content: str
    id: int
    special: bool = True
    normalized: bool = False
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False


@dataclass(frozen=True)
class TextModel:
    """A vocabulary as its file spells it, and what turns text into its words (Hugging Face, CLIP).

    - ``strings``: id → the token's string in the file (byte-level characters in a byte-level file);
    - ``byte_level``: each character of a string stands for one byte by GPT-2's table;
    - ``prefix`` / ``suffix``: the BPE model's ``continuing_subword_prefix`` / ``end_of_word_suffix``;
    - ``normalizer``: the file's normalizer as canonical JSON (None: none);
    - ``added_tokens``: the added tokens, as the library keeps them (one per content, its last flags);
    - ``vocabulary_size``: the number of entries of the model's vocabulary (the library's first added id);
    - ``unk_token``: the model's unknown token as the file names it (it need not be in the vocabulary);
    - ``spelt``: every string but the added tokens' is known to be spelt in GPT-2's table (the reader found it so;
      False: not known).
    """

    strings: dict[int, str]
    byte_level: bool = True
    prefix: str | None = None
    suffix: str | None = None
    normalizer: str | None = None
    added_tokens: tuple[AddedToken, ...] = ()
    vocabulary_size: int = 0
    unk_token: str | None = None
    spelt: bool = False


@dataclass(frozen=True)
class Vocab:
    """A BPE tokenizer as a file describes it, with the file's own ids.

    Fields:

    - ``tokens``: id → the bytes the token stands for (ordinary tokens only for
      tiktoken, sentencepiece and the project's file; for Hugging Face and GPT-2 files, every entry
      of the model's vocabulary, which may include special tokens as well).
    - ``merges``: ``(a, b, c)`` = "the adjacent pair a, b becomes c", in
      priority order (rank order).  Read from the file where it has them
      (Hugging Face, GPT-2); derived from the ranks or scores where it does not
      (tiktoken, sentencepiece — see ``bpeproof.impl.formats.derive``).
    - ``specials``: special token text → id (Hugging Face ``added_tokens``,
      GPT-2's ``<|endoftext|>``, sentencepiece control, unknown and
      user-defined pieces, the project file's ``special_tokens``).  Rank files hold none.
    - ``pattern``: the pre-tokenization regex when the file states exactly one.
    - ``kind``: one of ``KINDS``.
    - ``source``: the path the model was read from ("" when built in memory).
    - ``ignore_merges``: Hugging Face's flag: a word that is itself a token is
      not split and merged.
    - ``byte_fallback``: unknown characters become byte tokens (sentencepiece,
      Hugging Face ``byte_fallback``).
    - ``unsplit``: ids of tokens of two or more units (bytes; characters for
      sentencepiece) that are neither special nor made by any merge — for the
      derived formats, the tokens whose bytes have no split into two earlier
      tokens.  Reported, not dropped: they stay in ``tokens``.
    - ``pre_tokenizers``: the Hugging Face pre-tokenizer steps, in order.
    - ``scores``: sentencepiece piece scores (id → score).
    - ``add_dummy_prefix``: sentencepiece adds a space before the text.
    - ``remove_extra_whitespaces``: sentencepiece squeezes runs of spaces.
    - ``unk``, ``fuse_unk``: Hugging Face's unknown token (id) and whether consecutive unknowns become one.
    - ``unsupported``: the features of the file that the engine does not execute (a normalizer it does not
      have, BPE dropout, …), each named; a tokenizer is refused for encoding while this is not empty.
    - ``text_model``: for Hugging Face and CLIP files, the vocabulary's strings and what cuts text into words
      (``TextModel``); None for the other formats.

    Two models are equal when all fields are equal; compare
    ``dataclasses.replace(a, source="")`` to ignore where they came from.
    """

    tokens: dict[int, bytes]
    merges: list[tuple[int, int, int]]
    specials: dict[str, int] = field(default_factory=dict)
    pattern: str | None = None
    kind: str = "tiktoken"
    source: str = ""
    ignore_merges: bool = False
    byte_fallback: bool = False
    unsplit: list[int] = field(default_factory=list)
    pre_tokenizers: tuple[PreTokenizerStep, ...] = ()
    scores: dict[int, float] = field(default_factory=dict)
    add_dummy_prefix: bool = False
    remove_extra_whitespaces: bool = False
    unk: int | None = None
    fuse_unk: bool = False
    unsupported: tuple[str, ...] = ()
    text_model: TextModel | None = None

    def __repr__(self) -> str:
        return (
            f"Vocab(kind={self.kind!r}, source={self.source!r}, tokens={len(self.tokens)},"
            f" merges={len(self.merges)}, specials={len(self.specials)}, unsplit={len(self.unsplit)})"
        )


# ---------------------------------------------------------------------------
# Conversion to the specification's rules
# ---------------------------------------------------------------------------

#: Kinds of ``MergeProblem``.  The first six make a merge improper (it is left out of the rules);
#: the last two are about tokens, not merges.
PROBLEM_KINDS = (
    "unknown-id",  # a, b or c is not a token of the model
    "not-concatenation",  # the bytes of c are not the bytes of a followed by the bytes of b
    "result-is-byte",  # c stands for a single byte, which every vocabulary has from the start
    "result-is-special",  # c is a special token
    "part-not-built",  # a or b is not made by an earlier merge (nor a byte)
    "duplicate-result",  # c is already made by an earlier merge
    "unreachable-token",  # a token of two or more bytes that no proper merge makes
    "missing-byte",  # a byte value that no token of the model stands for
)


@dataclass(frozen=True)
class MergeProblem:
    """Something in a model that does not fit the specification's rule list.

    ``index`` is the merge's position in ``Vocab.merges`` (None for token
    problems), ``merge`` the merge itself, ``token`` the token concerned, and
    ``kind`` one of ``PROBLEM_KINDS``; ``detail`` says it in words.
    """

    kind: str
    detail: str
    index: int | None = None
    merge: tuple[int, int, int] | None = None
    token: int | None = None

    @property
    def improper_merge(self) -> bool:
        """True when the problem makes a merge improper (as opposed to a token-level remark)."""
        return self.index is not None


@dataclass(frozen=True)
class Conversion:
    """The result of ``convert``: the proper merges as rules, the id map, and every problem found.

    ``id_map`` maps each file id that the rules can produce to its rule id:
    tokens of one byte to that byte (0..255; several file ids may map to the
    same byte, e.g. sentencepiece's ``a`` and ``<0x61>``), every token made by a
    proper merge to its new id.  Tokens absent from ``id_map`` are special,
    unreachable, or made only by improper merges.
    """

    rules: list[Rule]
    id_map: dict[int, int]
    problems: list[MergeProblem]

    @property
    def improper(self) -> list[MergeProblem]:
        """The problems that make a merge improper."""
        return [problem for problem in self.problems if problem.improper_merge]


def _new_ids(vocab: Vocab, byte_ids: set[int]) -> dict[int, int]:
    """Rule ids for the tokens of two or more bytes: the file's id when ≥ 256, else a fresh one.

    Bytes take 0..255.  A multi-byte token whose file id is 256 or more keeps
    it: no other token can have it (file ids are unique) and bytes are below
    256.  One whose file id is below 256 (a file that does not put the bytes
    first) gets the next id above every id of the file, in file-id order.
    """
    special_ids = set(vocab.specials.values())
    mapping: dict[int, int] = {}
    fresh = max([ALPHABET_SIZE - 1, *vocab.tokens, *special_ids]) + 1
    for token_id in sorted(vocab.tokens):
        if token_id in byte_ids or token_id in special_ids:
            continue
        if token_id >= ALPHABET_SIZE:
            mapping[token_id] = token_id
        else:
            mapping[token_id] = fresh
            fresh += 1
    return mapping


def convert(vocab: Vocab) -> Conversion:
    """Map ``vocab`` to the specification's convention and check that its merge list is proper.

    Never raises.  The tokens standing for one byte map to that byte; the other
    tokens get ids as ``_new_ids`` says.  The merges are walked in order,
    starting from the 256 bytes; a merge is proper when a, b and c are tokens,
    ⟨⟨c⟩⟩ = ⟨⟨a⟩⟩⟨⟨b⟩⟩, c is not a byte or special token, a and b are already
    built, and c is not built yet.  Proper merges become rules; each improper
    one gives a ``MergeProblem`` and is left out, so later merges that need
    its result are improper too (and say so).  Finally, tokens no rule builds
    and byte values no token stands for are reported.
    """
    special_ids = set(vocab.specials.values())
    byte_ids = {token_id for token_id, data in vocab.tokens.items() if len(data) == 1 and token_id not in special_ids}
    id_map: dict[int, int] = {token_id: vocab.tokens[token_id][0] for token_id in byte_ids}
    new_ids = _new_ids(vocab, byte_ids)
    built: dict[int, int] = {}  # file id of a built token -> index of the merge that built it
    rules: list[Rule] = []
    problems: list[MergeProblem] = []

    def improper(kind: str, index: int, merge: tuple[int, int, int], detail: str) -> None:
        problems.append(MergeProblem(kind, f"merge {index} {merge}: {detail}", index, merge, merge[2]))

    for index, merge in enumerate(vocab.merges):
        a, b, c = merge
        unknown = [name for name, part in (("a", a), ("b", b), ("c", c)) if part not in vocab.tokens]
        if unknown:
            improper("unknown-id", index, merge, f"{', '.join(unknown)} not a token of the model")
            continue
        if vocab.tokens[a] + vocab.tokens[b] != vocab.tokens[c]:
            improper(
                "not-concatenation",
                index,
                merge,
                f"{vocab.tokens[a]!r} + {vocab.tokens[b]!r} is not token {c} = {vocab.tokens[c]!r}",
            )
            continue
        if c in special_ids:
            improper("result-is-special", index, merge, f"the result {c} is a special token")
            continue
        if c in byte_ids:
            improper("result-is-byte", index, merge, f"the result {c} stands for a single byte")
            continue
        missing = [
            f"{name} = {part} ({vocab.tokens[part]!r})"
            for name, part in (("a", a), ("b", b))
            if part not in byte_ids and part not in built
        ]
        if missing:
            improper("part-not-built", index, merge, f"{' and '.join(missing)} not built by an earlier merge")
            continue
        if c in built:
            improper("duplicate-result", index, merge, f"the result {c} is already built by merge {built[c]}")
            continue
        built[c] = index
        id_map[c] = new_ids[c]
        rules.append(Rule(id_map[a], id_map[b], id_map[c]))

    for token_id in sorted(vocab.tokens):
        if token_id not in id_map and token_id not in special_ids and len(vocab.tokens[token_id]) >= 2:
            problems.append(
                MergeProblem(
                    "unreachable-token",
                    f"token {token_id} {vocab.tokens[token_id]!r} is built by no proper merge",
                    token=token_id,
                )
            )
    present = {vocab.tokens[token_id][0] for token_id in byte_ids}
    for byte in range(ALPHABET_SIZE):
        if byte not in present:
            problems.append(MergeProblem("missing-byte", f"no token stands for the byte 0x{byte:02X}"))
    return Conversion(rules, id_map, problems)


def to_rules(vocab: Vocab, *, strict: bool = True) -> tuple[list[Rule], dict[int, int]]:
    """The model's merges as the specification's rules, and the map from file ids to rule ids.

    See ``convert`` for the id convention.  With ``strict`` (the default), any
    improper merge raises ``FormatError`` naming the file, how many merges are
    improper and the first few; with ``strict=False`` improper merges are left
    out (use ``convert`` to see them).  Unreachable tokens and missing bytes
    never raise: the rules are still a proper list without them.
    """
    conversion = convert(vocab)
    improper = conversion.improper
    if strict and improper:
        shown = "; ".join(problem.detail for problem in improper[:5])
        more = f" (and {len(improper) - 5} more)" if len(improper) > 5 else ""
        raise FormatError(
            vocab.source or "<in memory>",
            "merges",
            f"{len(improper)} of {len(vocab.merges)} merges are improper: {shown}{more}",
        )
    return conversion.rules, conversion.id_map
