"""Getting a text → ids check ready: the implementation's process starts while the checker loads the reference.

Three steps come before the first text: loading the reference (reading the vocabulary file and building the
engine's tables), starting the implementation and waiting for its hello (an adapter loads the same file), and
sampling the texts of the vocabulary's tokens.  Each takes a good part of a second on a large vocabulary, so they
overlap: the implementation runs in a process of its own, on another core, and ``prepare`` starts it first and
reads its hello last:

1. the process is started at once when the pattern it is to be handed is known before loading (given, or
   implied by a rank file's name, ``guess_pattern``);
2. the reference is loaded meanwhile; if the pattern it actually uses is not the one handed (or none could
   be handed early), the process is started (again) with the right one, so the implementation is always
   compared on the pattern it was told;
3. the token texts are sampled (``texts.token_texts``), still while the process starts;
4. then its hello is read.

The implementation is always handed the vocabulary (``BPEPROOF_CHECK_VOCAB``) and the pattern the reference
splits with (``BPEPROOF_CHECK_PATTERN``: the one given, else the reference's own, by name when it has one, else
as a regular expression); only a reference that splits by its file's own pre-tokenizer steps (a
``tokenizer.json``'s, a GGUF file's) hands no pattern, since the implementation reads the same file.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from bpeproof.impl.pipelines.text_pipeline import PatternPipeline
from bpeproof.impl.pre_tokenizers.patterns import guess_pattern
from bpeproof.proofs_tests.checker.library import load_reference, with_special_tokens
from bpeproof.proofs_tests.checker.protocol import ENV_PATTERN, ENV_VOCAB, LOAD_TIMEOUT, Implementation
from bpeproof.proofs_tests.checker.texts import token_texts
from bpeproof.proofs_tests.checker.worker import Target


@dataclass
class Prepared:
    """What a text → ids check needs before its first text: the reference, the implementation (started, its
    hello read) and the texts of the vocabulary's tokens (and those only a whole-piece lookup reaches)."""

    reference: Any
    impl: Implementation
    token_texts: list[str]
    whole_only: list[str]
    special_origin: str  # where the reference's special tokens come from (``library.with_special_tokens``)


def early_pattern(vocab: str, pattern: str | None) -> str | None:
    """The pattern to hand the implementation before the reference is loaded: the one given, else the one a rank
    file's name implies; None when only loading the file tells."""
    if pattern is not None:
        return pattern
    name = os.path.basename(vocab).lower()
    return guess_pattern(name, 0) if "tiktoken" in name else None


def handed_pattern(reference: Any, pattern: str | None) -> str | None:
    """The pattern the implementation is compared on: the one given, else the reference's own (its name when it
    has one, else its regular expression); None when the reference splits by its file's pre-tokenizer steps."""
    if pattern is not None:
        return pattern
    pipeline = getattr(reference, "pipeline", None)  # a Tokenizer's; a stand-in may have none
    if (pipeline is not None and not isinstance(pipeline, PatternPipeline)) or getattr(reference, "pretokenizer", None):
        return None
    source = getattr(reference, "pattern", None)
    return getattr(reference, "pattern_name", None) or (source if isinstance(source, str) else None)


def _hand(impl: Implementation, pattern: str | None) -> None:
    if pattern is None:
        impl.env.pop(ENV_PATTERN, None)
    else:
        impl.env[ENV_PATTERN] = pattern


def prepare(tokenizer: Target | None, decode: Target | None, cmd: str | None, vocab: str, pattern: str | None,
            call_timeout: float, memory_mb: int | None, deadline: float, special: dict[str, int] | None = None,
            load_timeout: float = LOAD_TIMEOUT) -> Prepared:
    """Load the reference and start the implementation, overlapped (see the module docstring).  Raises
    ``TargetError`` for a file that is not a vocabulary or an implementation that does not start; nothing is
    left running then."""
    impl = Implementation(tokenizer, decode, cmd, {ENV_VOCAB: os.path.abspath(vocab)}, call_timeout, memory_mb,
                          load_timeout)
    impl.deadline = deadline
    early = early_pattern(vocab, pattern)
    try:
        if early is not None:
            _hand(impl, early)
            impl.begin()
        reference, origin = with_special_tokens(load_reference(vocab, pattern), special)
        handed = handed_pattern(reference, pattern)
        if early is None or handed != early:
            _hand(impl, handed)
            impl.begin()
        texts, whole_only = token_texts(reference)
        impl.start(max(0.5, deadline - time.monotonic()))
    except BaseException:
        impl.stop()
        raise
    return Prepared(reference, impl, texts, whole_only, origin)
