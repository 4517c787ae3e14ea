"""Texts a port meets and old checks never sent: lone surrogates, and code points Unicode versions classify otherwise.

A lone surrogate (U+D800–U+DFFF alone) is not Unicode text, but JSON and Python strings carry it and ports meet
it.  tiktoken replaces each with U+FFFD; tokenizers and sentencepiece raise.  A port that refuses one is never a
difference (the report says what it did); a port that gives other ids than the library is.  A port built on
newer (or older) Unicode tables than the reference pins cuts a text otherwise only where such a code point stands
next to what the pattern cares about: those texts are drawn on purpose.
"""

from __future__ import annotations

import pytest

from bpeproof.proofs_tests.checker.texts import LONE_SURROGATE, TextGenerator, changed_chars, replace_surrogates
from bpeproof.proofs_tests.checker.tokenizer_check import check_tokenizer
from bpeproof.proofs_tests.fixtures.vocab import write_rank_file

PORTS = "bpeproof.proofs_tests.planted.ports"
BOUND_SECONDS = 120.0


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_rank_file(tmp_path_factory.mktemp("vocab") / "trained.tiktoken"))


def test_surrogate_texts_are_what_a_program_reads() -> None:
    """Each text holds a lone surrogate as JSON carries it (no pair written as two halves, which JSON joins)."""
    import json

    generator = TextGenerator(7)
    texts = [generator.surrogate() for _ in range(200)]
    assert all(LONE_SURROGATE.search(text) for text in texts)
    assert all(json.loads(json.dumps(text)) == text for text in texts)
    assert replace_surrogates("a\ud800b") == "a\ufffdb" and replace_surrogates("\ude00\ud83d") == "\ufffd\ufffd"


def test_the_library_and_a_refusing_port_pass(vocab: str) -> None:
    pytest.importorskip("tiktoken")
    library = check_tokenizer(f"{PORTS}:encode_tiktoken", vocab=vocab, pattern="cl100k", seconds=BOUND_SECONDS,
                              examples=3000, seed=5)
    assert library.ran and not library.found, library.report()
    assert library.lone_surrogates is not None and "replaces each with U+FFFD" in library.lone_surrogates
    assert "gave the library's ids" in library.lone_surrogates
    refusing = check_tokenizer(f"{PORTS}:encode_reference", vocab=vocab, pattern="cl100k", seconds=BOUND_SECONDS,
                               examples=3000, seed=5)  # the project's Tokenizer raises InvalidTextError on one
    assert refusing.ran and not refusing.found, refusing.report()
    assert refusing.lone_surrogates is not None and "refused them (not a difference" in refusing.lone_surrogates


def test_a_port_that_drops_them_is_caught(vocab: str) -> None:
    pytest.importorskip("tiktoken")
    result = check_tokenizer(f"{PORTS}:encode_tiktoken_surrogates_dropped", vocab=vocab, pattern="cl100k",
                             seconds=BOUND_SECONDS, examples=3000, seed=5, shrink_seconds=2)
    assert result.found and [group.key for group in result.groups] == ["surrogate:other-ids"], result.report()
    assert result.text is not None and LONE_SURROGATE.search(result.text)
    assert result.library_answer == result.expected != result.actual


def test_a_port_on_newer_unicode_tables_is_caught(vocab: str) -> None:
    """Classified by the ``regex`` module's own tables, the port is found as one group named by its cause."""
    result = check_tokenizer(f"{PORTS}:encode_newer_unicode", vocab=vocab, pattern="cl100k", seconds=BOUND_SECONDS,
                             examples=3000, seed=3, shrink_seconds=3)
    assert result.found and [group.key for group in result.groups] == ["split:unicode-version"], result.report()
    assert result.text is not None and any(char in changed_chars() for char in result.text)
