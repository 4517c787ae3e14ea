"""The BPE encodings found in real tokenizers, as small executable definitions beside the article's.

(i)   ``enc_sequential``: def-bpe's enc_R: the rules applied one after another, in order (the article).
(ii)  ``enc_rule_rank``: repeatedly merge the adjacent pair whose rule comes first in the list, leftmost among
      equals, until no adjacent pair is a rule's pair (Hugging Face ``tokenizers``' BPE model).
(iii) ``enc_bytes_rank``: repeatedly merge the two adjacent parts whose *joined bytes* are the earliest token,
      whatever pair that token was made from (tiktoken; sentencepiece's BPE by piece score).
(iv)  ``enc_whole_word_first``: if the word's bytes are a token, that token; otherwise another variant
      (tiktoken's lookup of a whole pre-token, Hugging Face's ``ignore_merges``).

The same semantics over the tables the libraries read, which need not be valid rule lists at all:

``enc_tiktoken(ranks, data)``  tiktoken on any rank file (token bytes → rank, the rank being the id): (iv) with
      (iii), the rank of two parts being the rank of their joined bytes, whatever tokens came before;
``enc_pair_rank(merges, data)``  a Hugging Face BPE model: (ii) on a merge table (a, b) → (rank, c), where c
      need not be new and a rank need not exceed the ranks of the merges that made a and b;
``enc_hf_bpe(vocab, merges, word, …)``  the same model from its file's strings, with what changes the table and
      the initial units: the word prefix of continuing characters (part of a merge's right string, not of the
      result), the end-of-word suffix, byte fallback, unknown tokens.

Where they agree and where they do not (``proofs_tests/tests/spec/test_variants.py``):
(i) = (ii) on every valid rule list: a rule's pair involves only ids made before it, and after rule j no
(a_j, b_j) pair is left, so merging the earliest rule first replays the rules in order.  (iii) can differ, by
reaching tokens whose bytes (i) never encodes to them ("unreachable" tokens): with r1 = (b, c), r2 = (a, b),
r3 = (ab, c), (i) encodes abc as (a, bc) but (iii) joins a and bc into abc because abc is a token.

Like ``spec.enc``, the public functions check their arguments: a rule list must pass ``validate_rules`` (its
tokens at most ``MAX_RULE_DEPTH`` merges deep), and the bytes or units to encode number at most
``MAX_SPEC_LENGTH``, else ``InputTooLongError``.  Each merge loop recurses once per merge, at most n − 1 times on n
bytes, and (iii) spells every token with ``symbols`` at every level.  Measured as in ``spec.merge`` (frames for n
bytes and tokens of depth d): (i) those of ``enc``; (ii) n + 5, (iv) with (ii) n + 6; (iii) n + d + 4, (iv) with
(iii) n + d + 6, the frames of ``dec``; ``enc_tiktoken`` and ``enc_pair_rank`` n + 3.  ``reachable`` and
``unreachable_tokens`` encode a token's own bytes, up to 2^64 of them: they refuse a token of more than
``MAX_SPEC_LENGTH`` bytes (counted without spelling it), and take ℓ + 6 frames for ℓ bytes, d + 7 to spell a
token.  The ``merge_by_*`` loops are the definitions on arguments already checked, as ``spec.merge.merge`` is for
``apply_rule``.  ``hf_merge_table`` and ``hf_initial_units`` do not recurse and need no bound.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from bpeproof.spec.bpe import enc_tokens
from bpeproof.spec.merge import check_tokens, symbols, validate_rules
from bpeproof.spec.types import BPETypeError, Rule, RuleTriple, is_int

Encoder = Callable[[Sequence[RuleTriple], bytes], list[int]]


def _check_data(data: bytes) -> bytes:
    """``data`` checked as ``spec.enc`` checks it: bytes, at most ``MAX_SPEC_LENGTH`` of them."""
    if not isinstance(data, (bytes, bytearray)):
        raise BPETypeError(f"data must be bytes, not {type(data).__name__}")
    return bytes(check_tokens(list(data), "data"))


def enc_sequential(rules: Sequence[RuleTriple], data: bytes) -> list[int]:
    """(i) def-bpe: M_{r_m}(… M_{r_1}(s) …)."""
    checked = validate_rules(rules)
    return enc_tokens(checked, list(_check_data(data)))


def _first_rule_of_pair(rules: Sequence[Rule], a: int, b: int) -> int | None:
    """The index of the first rule joining (a, b), or None."""
    for index, rule in enumerate(rules):
        if (rule.a, rule.b) == (a, b):
            return index
    return None


def merge_by_rule_rank(rules: Sequence[Rule], tokens: list[int]) -> list[int]:
    """(ii) on a token list: merge the pair of the earliest rule, leftmost first, until none is left."""
    best: tuple[int, int] | None = None  # (rule index, position)
    for position in range(len(tokens) - 1):
        index = _first_rule_of_pair(rules, tokens[position], tokens[position + 1])
        if index is not None and (best is None or index < best[0]):
            best = (index, position)
    if best is None:
        return tokens
    index, position = best
    return merge_by_rule_rank(rules, tokens[:position] + [rules[index].c] + tokens[position + 2 :])


def enc_rule_rank(rules: Sequence[RuleTriple], data: bytes) -> list[int]:
    """(ii) lowest-rank pair first, by rule identity."""
    checked = validate_rules(rules)
    return merge_by_rule_rank(checked, list(_check_data(data)))


def _earliest_token_with_bytes(rules: Sequence[Rule], string: bytes) -> tuple[int, int] | None:
    """(rank, id) of the earliest token standing for ``string``: bytes rank before every rule; None if none."""
    if len(string) == 1:
        return (-1, string[0])
    for index, rule in enumerate(rules):
        if symbols(rules, rule.c) == string:
            return (index, rule.c)
    return None


def merge_by_bytes_rank(rules: Sequence[Rule], parts: list[bytes]) -> list[bytes]:
    """(iii) on a list of byte strings: join the adjacent two whose joined bytes are the earliest token."""
    best: tuple[int, int] | None = None  # (rank, position)
    for position in range(len(parts) - 1):
        found = _earliest_token_with_bytes(rules, parts[position] + parts[position + 1])
        if found is not None and (best is None or found[0] < best[0]):
            best = (found[0], position)
    if best is None:
        return parts
    _, position = best
    joined = parts[position] + parts[position + 1]
    return merge_by_bytes_rank(rules, parts[:position] + [joined] + parts[position + 2 :])


def enc_bytes_rank(rules: Sequence[RuleTriple], data: bytes) -> list[int]:
    """(iii) lowest rank of the concatenated bytes (tiktoken): ids are the earliest token for each part's bytes."""
    checked = validate_rules(rules)
    parts = merge_by_bytes_rank(checked, [bytes([byte]) for byte in _check_data(data)])
    ids: list[int] = []
    for part in parts:
        found = _earliest_token_with_bytes(checked, part)
        assert found is not None  # every part was joined because it is a token, or is one byte
        ids.append(found[1])
    return ids


def enc_whole_word_first(rules: Sequence[RuleTriple], data: bytes, fallback: Encoder = enc_rule_rank) -> list[int]:
    """(iv) the earliest token whose bytes are the whole word, if there is one; else ``fallback``."""
    checked = validate_rules(rules)
    data = _check_data(data)
    if data:
        found = _earliest_token_with_bytes(checked, data)
        if found is not None:
            return [found[1]]
    return fallback(checked, data)


def _own_bytes(rules: Sequence[Rule], token: int) -> bytes:
    """⟨⟨token⟩⟩, at most MAX_SPEC_LENGTH bytes (``validate_rules`` refuses longer tokens), so that
    ``enc_tokens``, which recurses once per byte, can encode it."""
    if not is_int(token):
        raise BPETypeError(f"token must be an int, not {type(token).__name__}")
    return symbols(rules, token)


def _reachable(rules: Sequence[Rule], token: int) -> bool:
    return enc_tokens(rules, list(_own_bytes(rules, token))) == [token]


def reachable(rules: Sequence[RuleTriple], token: int) -> bool:
    """Whether a token's own bytes encode to it under (i): an unreachable token never appears in enc_R's output."""
    checked = validate_rules(rules)
    return _reachable(checked, token)


def unreachable_tokens(rules: Sequence[RuleTriple]) -> list[int]:
    """The new ids of ``rules`` that (i) never produces on their own bytes."""
    checked = validate_rules(rules)
    return [rule.c for rule in checked if not _reachable(checked, rule.c)]


def merge_by_joined_rank(ranks: Mapping[bytes, int], parts: list[bytes]) -> list[bytes]:
    """(iii) on a rank table: join the leftmost adjacent two whose joined bytes have the lowest rank, until none."""
    best: tuple[int, int] | None = None  # (rank, position)
    for position in range(len(parts) - 1):
        rank = ranks.get(parts[position] + parts[position + 1])
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, position)
    if best is None:
        return parts
    _, position = best
    joined = parts[position] + parts[position + 1]
    return merge_by_joined_rank(ranks, parts[:position] + [joined] + parts[position + 2 :])


def enc_tiktoken(ranks: Mapping[bytes, int], data: bytes) -> list[int]:
    """tiktoken's encoding of one pre-token: its rank if it is a token, else (iii) on its bytes, ids = ranks.

    A part that is a byte without a rank has no id: ``KeyError`` names it (tiktoken fails there too).
    """
    data = _check_data(data)
    if data in ranks:
        return [ranks[data]]
    return [ranks[part] for part in merge_by_joined_rank(ranks, [bytes([byte]) for byte in data])]


def merge_by_pair_rank(merges: Mapping[tuple[int, int], tuple[int, int]], units: list[int]) -> list[int]:
    """(ii) on a merge table (a, b) → (rank, c): merge the leftmost pair of the lowest rank, until none is left."""
    best: tuple[int, int] | None = None  # (rank, position)
    for position in range(len(units) - 1):
        found = merges.get((units[position], units[position + 1]))
        if found is not None and (best is None or found[0] < best[0]):
            best = (found[0], position)
    if best is None:
        return units
    _, position = best
    joined = merges[(units[position], units[position + 1])][1]
    return merge_by_pair_rank(merges, units[:position] + [joined] + units[position + 2 :])


def enc_pair_rank(merges: Mapping[tuple[int, int], tuple[int, int]], units: Sequence[int]) -> list[int]:
    """A Hugging Face BPE model on a word's initial units (ids): (ii) on its merge table."""
    return merge_by_pair_rank(merges, check_tokens(units, "units"))


def hf_merge_table(
    vocab: Mapping[str, int], merges: Sequence[tuple[str, str]], prefix: str = ""
) -> dict[tuple[int, int], tuple[int, int]]:
    """A Hugging Face BPE model's merge table from its file: merge line r (a, b) joins the ids of a and b into the
    id of a followed by b less the first len(prefix) bytes (the ``continuing_subword_prefix`` the right part
    carries), with rank r; a pair listed again takes its later line."""
    cut = len(prefix.encode("utf-8"))
    table: dict[tuple[int, int], tuple[int, int]] = {}
    for rank, (a, b) in enumerate(merges):
        joined = a + b.encode("utf-8")[cut:].decode("utf-8")
        table[(vocab[a], vocab[b])] = (rank, vocab[joined])
    return table


def hf_initial_units(
    vocab: Mapping[str, int],
    word: str,
    prefix: str = "",
    suffix: str = "",
    unk: str | None = None,
    fuse_unk: bool = False,
    byte_fallback: bool = False,
) -> list[int]:
    """The ids a word starts as in a Hugging Face BPE model: each character's string, the prefix before every one
    but the first and the suffix after the last; one without a token becomes its string's ``<0xAB>`` byte tokens
    (``byte_fallback``, when all are tokens), else the unknown token, one per run with ``fuse_unk``.  An unknown
    token is placed when the next character with a token comes or the word ends: byte tokens met before then
    come first.  (``KeyError`` when the unknown token is needed and is no token.)"""
    units: list[int] = []
    waiting: list[int] = []  # the unknown tokens not placed yet
    for index, char in enumerate(word):
        text = (prefix if index > 0 else "") + char + (suffix if index == len(word) - 1 else "")
        if text in vocab:
            units += waiting + [vocab[text]]
            waiting = []
            continue
        fallback = [f"<0x{byte:02X}>" for byte in text.encode("utf-8")]
        if byte_fallback and all(name in vocab for name in fallback):
            units += [vocab[name] for name in fallback]
            continue
        if unk is not None and not (fuse_unk and waiting):
            units += waiting
            waiting = [vocab[unk]]
    return units + waiting


def enc_hf_bpe(
    vocab: Mapping[str, int],
    merges: Sequence[tuple[str, str]],
    word: str,
    *,
    prefix: str = "",
    suffix: str = "",
    unk: str | None = None,
    fuse_unk: bool = False,
    byte_fallback: bool = False,
    ignore_merges: bool = False,
) -> list[int]:
    """A Hugging Face BPE model on one word, from the file's vocabulary (string → id) and merge lines: the whole
    word's token with ``ignore_merges``, else ``enc_pair_rank`` on ``hf_initial_units`` with ``hf_merge_table``."""
    if not word:
        return []
    if ignore_merges and word in vocab:
        return [vocab[word]]
    units = hf_initial_units(vocab, word, prefix, suffix, unk, fuse_unk, byte_fallback)
    return enc_pair_rank(hf_merge_table(vocab, merges, prefix), units)


VARIANTS: dict[str, Encoder] = {
    "sequential": enc_sequential,
    "rule-rank": enc_rule_rank,
    "bytes-rank": enc_bytes_rank,
    "whole-word+rule-rank": enc_whole_word_first,
    "whole-word+bytes-rank": lambda rules, data: enc_whole_word_first(rules, data, enc_bytes_rank),
}

__all__ = [
    "VARIANTS",
    "enc_bytes_rank",
    "enc_hf_bpe",
    "enc_pair_rank",
    "enc_rule_rank",
    "enc_sequential",
    "enc_tiktoken",
    "enc_whole_word_first",
    "hf_initial_units",
    "hf_merge_table",
    "reachable",
    "unreachable_tokens",
]
