"""The report's ``variants`` section: which BPE variant the file's library follows, and the fast variants checked
against the specification's.

The library encodes the sampled words (``bpeproof.audit.sampling``) and each variant encodes them too; the verdict
lists the variants that agree on every word.  The variants are fast versions of ``bpeproof.spec.variants``
(``bpeproof.impl.models.variants``: the specification recurses and is for small inputs); for small rule lists the audit
also runs the specification's own and counts any difference.

How the variants are run.  On a file the fast variants work in the file's own ids over its own merge list:
rule-rank takes the first merge of each pair in the file's order (improper merges included, as the libraries
do), bytes-rank ranks the tokens as the file does (tiktoken: the rank = id; sentencepiece: the score; the
other formats: the merge that makes the token), whole-word looks the word's bytes up among those tokens, and
sequential is (i) on the proper merges (``bpeproof.impl.formats.convert``) with the project's ``Encoder``.  Words start
as bytes, except for sentencepiece, whose units are its one-character pieces (bytes by ``<0xNN>`` fallback),
and whose words are compared in the library's normalized form (▁ read as a space).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bpeproof.audit.entries import EXAMPLES, show
from bpeproof.audit.file_view import FileView
from bpeproof.audit.libraries import Library
from bpeproof.audit.progress import progress_bar
from bpeproof.audit.sampling import MAX_WORD_BYTES, SampledWords
from bpeproof.impl.formats import Vocab
from bpeproof.impl.models.variants import fast_variants
from bpeproof.proofs_tests.libraries import SentencepieceLibrary

__all__ = [
    "DECLARED",
    "DISAGREEMENTS",
    "SPEC_RULES_LIMIT",
    "SPEC_WORDS",
    "SPEC_WORD_BYTES",
    "compare_variants",
    "declared_variants",
    "spec_check",
    "variants_section",
    "word_input",
]

#: Disagreements kept per variant.
DISAGREEMENTS = 5
#: Rule lists up to this size are also run through the specification's variants (recursive, slow), on at most
#: SPEC_WORDS words of at most SPEC_WORD_BYTES bytes: a few seconds at most.
SPEC_RULES_LIMIT = 64
SPEC_WORDS = 200
SPEC_WORD_BYTES = 16

#: What each file kind's library is documented to compute.
DECLARED: dict[str, tuple[str, ...]] = {
    "tiktoken": ("bytes-rank", "whole-word+bytes-rank"),
    "hf-bpe": ("rule-rank", "sequential"),
    "gpt2": ("rule-rank", "sequential"),
    "sentencepiece-bpe": ("bytes-rank",),
    "bpeproof": ("sequential",),
}


def declared_variants(vocab: Vocab) -> tuple[str, ...]:
    """The variants a file's library is documented to compute: ``DECLARED`` by kind; a Hugging Face file with
    ``ignore_merges`` looks a whole pre-token up first."""
    if vocab.kind == "hf-bpe" and vocab.ignore_merges:
        return ("whole-word+rule-rank",)
    return DECLARED[vocab.kind]


def word_input(view: FileView, library: Library | None) -> Callable[[bytes], bytes | None]:
    """What the variants encode for a word the library is given: sentencepiece's normalized form, else the word;
    None for a word with a byte that has no token (the library cannot encode it)."""
    normalize = library.normalized if isinstance(library, SentencepieceLibrary) else None
    missing = frozenset(view.missing_byte_ids)

    def prepare(word: bytes) -> bytes | None:
        target = normalize(word) if normalize is not None else word
        if target is None or (missing and not missing.isdisjoint(target)) or not target:
            return None
        return target

    return prepare


def variants_section(view: FileView, library: Library | None, words: SampledWords,
                     library_input: Callable[[bytes], bytes | None],
                     progress: bool) -> tuple[dict[str, Any], dict[bytes, list[int]]]:
    """The ``variants`` section, and the library's ids of each word it encoded (``library_input``: ``word_input``)."""
    vocab = view.vocab
    section: dict[str, Any] = {
        "declared": list(declared_variants(vocab)),
        "words": 0,
        "skipped_long": sum(1 for word in words.counts if len(word) > MAX_WORD_BYTES),
        "sources": {"corpus": len(words.corpus), "tokens": len(words.tokens), "generated": len(words.generated)},
        "results": {},
        "verdict": [],
        "follows_declared": None,
        "spec_checked": 0,
        "spec_mismatches": [],
    }
    library_ids: dict[bytes, list[int]] = {}
    if library is not None:
        results, library_ids = compare_variants(library, view.variants(), words.compared, progress, library_input)
        section["results"] = results
        compared = max((entry["compared"] for entry in results.values()), default=0)
        section["words"] = compared
        verdict = [name for name, entry in results.items() if compared and entry["agree"] == entry["compared"]]
        section["verdict"] = verdict
        declared = set(declared_variants(vocab))
        section["follows_declared"] = bool(set(verdict) & declared) if compared else None
    if len(view.conversion.rules) <= SPEC_RULES_LIMIT and vocab.kind != "sentencepiece-bpe":
        checked, mismatches = spec_check(view, [w for w in words.compared if len(w) <= SPEC_WORD_BYTES][:SPEC_WORDS])
        section["spec_checked"] = checked
        section["spec_mismatches"] = mismatches[:EXAMPLES]
    return section, library_ids


def compare_variants(
    library: Library,
    variants: Mapping[str, Callable[[bytes], list[int]]],
    words: Sequence[bytes],
    progress: bool,
    library_input: Callable[[bytes], bytes | None] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[bytes, list[int]]]:
    """Each variant against the library on the words (each given to the variants as ``library_input`` makes it;
    a word it makes None, or the library cannot encode, is left out): per variant the words compared, those
    agreeing and the first disagreements; and the library's ids of each word compared."""
    results: dict[str, dict[str, Any]] = {
        name: {"compared": 0, "agree": 0, "disagreements": []} for name in variants
    }
    library_ids: dict[bytes, list[int]] = {}
    for word in progress_bar(words, len(words), "variants", progress):
        target = library_input(word) if library_input is not None else word
        if target is None:
            continue
        expected = library.encode_word(word)
        if expected is None:
            continue
        library_ids[word] = expected
        for name, encode in variants.items():
            got = encode(target)
            entry = results[name]
            entry["compared"] += 1
            if got == expected:
                entry["agree"] += 1
            elif len(entry["disagreements"]) < DISAGREEMENTS:
                entry["disagreements"].append({"word": show(word), "hex": word.hex(), "library": expected,
                                               "variant": got})
    return results, library_ids


def spec_check(view: FileView, words: Sequence[bytes]) -> tuple[int, list[dict[str, Any]]]:
    """Run the specification's variants on the words and list where a fast variant differs.

    Checked: ``fast_variants`` on the converted rules (rule ids), and, when the merge list is proper, the
    variants the audit reports (file ids, over the file's own merge list and ranks) against the specification's
    results mapped to file ids — when the rules hold every token of the file (no improper merge, no token that
    no merge builds), so that both describe the same vocabulary.
    """
    from bpeproof.spec.variants import VARIANTS

    rules = view.conversion.rules
    fast = fast_variants(rules)
    complete = not any(problem.kind != "missing-byte" for problem in view.conversion.problems)
    on_file = view.variants() if complete else {}
    checked = 0
    mismatches: list[dict[str, Any]] = []
    for word in words:
        checked += 1
        for name, slow in VARIANTS.items():
            expected = slow(rules, word)
            if fast[name](word) != expected:
                mismatches.append({"word": show(word), "variant": name, "ids": "rule"})
            if name in on_file and on_file[name](word) != view.file_ids(expected):
                mismatches.append({"word": show(word), "variant": name, "ids": "file"})
    return checked, mismatches

