"""The audit's findings: the report's main statements, one line each, the most important first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bpeproof.impl.io.wording import count
from bpeproof.impl.models.variants import VARIANT_NAMES

__all__ = ["findings"]


def findings(report: Mapping[str, Any]) -> list[str]:
    """The report's main statements, one line each, the most important first."""
    out: list[str] = []
    vocabulary = report["vocabulary"]
    variants = report["variants"]
    library = report["library"]
    if library["available"] and variants["words"]:
        verdict = variants["verdict"]
        compared = f"{'the' if variants['words'] == 1 else 'all'} {count(variants['words'], 'word')} compared"
        if verdict:
            out.append(f"{library['name']} follows {', '.join(verdict)} on {compared}")
        else:
            out.append(f"no variant agrees with {library['name']} on {compared}")
        if set(verdict) == set(VARIANT_NAMES):
            out.append("the five variants give the same ids on every word compared: on these words the file cannot"
                       " tell them apart")
        if variants["follows_declared"] is False:
            out.append(f"{library['name']} disagrees with its declared semantics ({', '.join(variants['declared'])})")
    elif not library["available"]:
        out.append(f"the reference library did not run: {library['error']}")
    if not vocabulary["proper"]:
        out.append(f"the merge list is not proper: {count(vocabulary['improper_merges']['count'], 'improper merge')}"
                   f" ({', '.join(f'{k} {v}' for k, v in vocabulary['improper_merges']['by_kind'].items())})")
        if report["file"]["kind"] == "sentencepiece-bpe":
            out.append("sentencepiece merges characters, not bytes: a character of several bytes is a unit, so seen"
                       " byte by byte its merges are not built from bytes; expect (i) to differ on such text")
    if vocabulary["missing_bytes"]:
        missing = len(vocabulary["missing_bytes"])
        out.append(f"{count(missing, 'byte value')} {'has' if missing == 1 else 'have'} no token")
    if not vocabulary["size_matches"]:
        merges = count(report["file"]["merges"], "merge")
        out.append(f"|V| = {count(vocabulary['size'], 'ordinary token')}, not 256 + {merges}"
                   f" = {vocabulary['expected_size']}")
    for key, what in (("duplicate_merges", "pairs merged more than once"),
                      ("same_bytes", "groups of tokens standing for the same bytes (ex-same-string)")):
        if vocabulary[key]["count"]:
            out.append(f"{what}: {vocabulary[key]['count']}")
    unreachable = vocabulary["unreachable"]
    by_library = unreachable.get("library")
    out.append(f"unreachable tokens: {unreachable['sequential']['count']} under (i) sequential,"
               f" {unreachable['declared']['count']} under {unreachable['declared_variant']},"
               f" {unreachable['both']['count']} under both"
               + (f", {by_library['count']} by {library['name']} itself" if by_library is not None else ""))
    not_utf8 = vocabulary["not_utf8"]["count"]
    out.append(f"{count(not_utf8, 'token')} {'is' if not_utf8 == 1 else 'are'} not valid UTF-8 alone"
               " (prop-utf8-boundary)")
    if variants["spec_mismatches"]:
        out.append(f"{count(len(variants['spec_mismatches']), 'word')} where a fast variant differs from"
                   " bpeproof.spec.variants")
    project = report["project"]
    if project.get("compared"):
        state = "agrees" if project["agree"] else "DISAGREES"
        out.append(f"the project's tokenizer ({project['semantics']} semantics) {state} with {library['name']} on"
                   f" {count(project['bytes'], 'byte')} of text and {project['token_texts']} of the vocabulary's own"
                   f" tokens as texts ({project['token_texts_differing']} differ)")
    elif project.get("reason"):
        out.append(f"the project's tokenizer was not compared: {project['reason']}")
    return out
