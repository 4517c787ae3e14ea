"""The report's ``vocabulary`` section: the file's vocabulary and merge list checked against the article's
definitions (the checks are listed in ``bpeproof.audit.report``'s docstring).

A token is *unreachable* under a variant when its own bytes do not encode to it alone: ``sequential`` is (i),
``declared`` is the file's merge procedure without a whole-word look-up (bytes-rank for tiktoken and sentencepiece,
rule-rank otherwise), ``library`` is the library itself given the token's bytes as one pre-token.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bpeproof.audit.entries import EXAMPLES, examples, show, token_entry
from bpeproof.audit.file_view import FileView
from bpeproof.audit.libraries import Library
from bpeproof.audit.progress import PhaseTimer, progress_bar
from bpeproof.audit.variants_section import DECLARED
from bpeproof.proofs_tests.libraries import SentencepieceLibrary
from bpeproof.spec.types import ALPHABET_SIZE

__all__ = ["library_unreachable", "vocabulary_section"]


def vocabulary_section(view: FileView, timer: PhaseTimer, progress: bool) -> dict[str, Any]:
    """The ``vocabulary`` section of the file seen by ``view`` (the ``unreachable`` count of the library
    itself is added by ``library_unreachable`` once the library is open); ``timer`` times the unreachable
    tokens as the phase ``unreachable``."""
    vocab = view.vocab
    conversion = view.conversion
    size = len(view.ordinary)
    improper = conversion.improper
    by_kind = Counter(problem.kind for problem in improper)
    pair_seen: dict[tuple[int, int], list[int]] = {}
    for index, (a, b, _) in enumerate(vocab.merges):
        pair_seen.setdefault((a, b), []).append(index)
    duplicate_pairs = [
        {"pair": [a, b], "text": [show(vocab.tokens.get(a, b"")), show(vocab.tokens.get(b, b""))], "merges": indices}
        for (a, b), indices in pair_seen.items()
        if len(indices) > 1
    ]
    by_bytes: dict[bytes, list[int]] = {}
    for token, data in view.ordinary.items():
        by_bytes.setdefault(data, []).append(token)
    same = [{"text": show(data), "hex": data.hex(), "ids": ids} for data, ids in by_bytes.items() if len(ids) > 1]
    not_utf8: list[dict[str, Any]] = []
    single = 0
    for token, data in sorted(view.ordinary.items(), key=lambda item: (len(item[1]) < 2, item[0])):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            not_utf8.append(token_entry(token, data))
            single += len(data) == 1
    lengths = Counter(len(data) for data in view.ordinary.values())

    with timer.phase("unreachable"):
        declared = "bytes-rank" if "bytes-rank" in DECLARED[vocab.kind] else "rule-rank"
        table = view.table
        encode = table.bytes_rank if declared == "bytes-rank" else table.rule_rank
        unreachable_sequential: list[int] = []
        unreachable_declared: list[int] = []
        encoder = view.encoder
        to_rule = conversion.id_map
        items = sorted(view.ordinary.items())
        for token, data in progress_bar(items, len(items), "unreachable tokens", progress, "token"):
            if len(data) < 2:
                continue
            rule_id = to_rule.get(token)
            if rule_id is None or not encoder.is_reachable(rule_id):
                unreachable_sequential.append(token)
            if encode(data) != [token]:
                unreachable_declared.append(token)
        both = sorted(set(unreachable_sequential) & set(unreachable_declared))

    def entries(tokens: Sequence[int]) -> list[dict[str, Any]]:
        return [token_entry(token, view.ordinary[token]) for token in tokens[:EXAMPLES]]

    return {
        "size": size,
        "expected_size": ALPHABET_SIZE + len(vocab.merges),
        "size_matches": size == ALPHABET_SIZE + len(vocab.merges),
        "missing_bytes": sorted(view.missing_byte_ids),
        "proper": not improper,
        "improper_merges": {
            "count": len(improper),
            "by_kind": dict(sorted(by_kind.items())),
            "examples": [
                {"index": problem.index, "merge": list(problem.merge or ()), "kind": problem.kind,
                 "detail": problem.detail}
                for problem in improper[:EXAMPLES]
            ],
        },
        "duplicate_merges": examples(duplicate_pairs),
        "same_bytes": examples(same),
        "unreachable": {
            "declared_variant": declared,
            "sequential": {"count": len(unreachable_sequential), "examples": entries(unreachable_sequential)},
            "declared": {"count": len(unreachable_declared), "examples": entries(unreachable_declared)},
            "both": {"count": len(both), "examples": entries(both)},
        },
        "not_utf8": {**examples(not_utf8), "single_bytes": single},
        "specials": examples([{"text": text, "id": token} for text, token in sorted(vocab.specials.items(),
                                                                                     key=lambda item: item[1])]),
        "token_lengths": {str(length): lengths[length] for length in sorted(lengths)},
        "max_token_bytes": max(lengths, default=0),
        "bits_per_token": math.log2(size) if size >= 2 else 0.0,
    }


def library_unreachable(view: FileView, library: Library | None) -> dict[str, Any] | None:
    """The tokens of two or more bytes that the library itself, given their bytes as one pre-token, does not
    encode to them alone; None when it cannot be asked (no library; sentencepiece always adds its dummy prefix)."""
    if library is None or isinstance(library, SentencepieceLibrary):
        return None
    missing = frozenset(view.missing_byte_ids)
    found: list[int] = []
    for token, data in sorted(view.ordinary.items()):
        if len(data) >= 2 and missing.isdisjoint(data) and library.encode_word(data) != [token]:
            found.append(token)
    return {"count": len(found), "examples": [token_entry(token, view.ordinary[token]) for token in found[:EXAMPLES]]}
