"""The report's ``corpora`` section: the compression of each corpus by the file's library.

Compression per corpus (def-utf8's bytes per token) by the library (``tokenizers`` in pieces cut at line starts, see
``bpeproof.proofs_tests.libraries.TokenizersLibrary.count_tokens``), and the information bound of prop-token-information
(log2 |V| bits per token against 8 · bytes/token raw bits per token).  Without the library, or for a corpus with a
byte the vocabulary has no token for, the project's encoder counts (it takes every byte).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bpeproof.audit.corpus_tasks import EngineCorpus
from bpeproof.audit.file_view import FileView, count_tokens
from bpeproof.audit.libraries import Library
from bpeproof.audit.progress import progress_bar

__all__ = ["compression_section"]


def compression_section(view: FileView, library: Library | None, corpora: Sequence[tuple[str, str | EngineCorpus]],
                        pattern: str | None, bits_per_token: float, progress: bool) -> list[dict[str, Any]]:
    """One row per corpus (``bits_per_token``: the vocabulary's, log2 |V|); ``progress``: a bar over the corpora."""
    rows: list[dict[str, Any]] = []
    missing = frozenset(view.missing_byte_ids)
    for name, text in progress_bar(corpora, len(corpora), "compression", progress, "corpus"):
        if not isinstance(text, str):  # measured by the engine's tasks
            tokens, encoded_by = text.tokens(library)
            size = text.bytes
        else:
            data = text.encode("utf-8")
            # no library, or bytes it has no token for: the project's encoder, which takes every byte
            use = library if library is not None and missing.isdisjoint(data) else None
            tokens = count_tokens(use, view, pattern, text)
            encoded_by = use.name if use is not None else "project"
            size = len(data)
        rate = size / tokens if tokens else 0.0
        rows.append({"name": name, "bytes": size, "tokens": tokens, "bytes_per_token": rate,
                     "raw_bits_per_token": 8 * rate, "bits_per_token": bits_per_token, "encoded_by": encoded_by})
    return rows
