"""``bpeproof audit``: what a real BPE vocabulary file holds, and which BPE its own library computes.

This module is the audit's run, a short sequence of named steps.  Each section
of the report is made by its own module (named below); the words compared are sampled by
``bpeproof.audit.sampling``, the findings drawn by ``bpeproof.audit.findings``; the fast variants are
``bpeproof.impl.models.variants``'s, the adapters of the reference libraries in
``bpeproof.audit.libraries``.

The audit reads a tokenizer file with ``bpeproof.impl.formats``, checks it against the
article's definitions, runs the file's reference library (tiktoken,
``tokenizers``, sentencepiece, or for the project's own file its ``Tokenizer``)
and compares it with each BPE variant of ``bpeproof.spec.variants``:

- the vocabulary (``bpeproof.audit.vocabulary_section``): |V| against 256 + m (prop-bpe-vocab-size), missing byte
  tokens, whether the merge list is proper (each merge over the vocabulary built
  so far: def-merge, via ``bpeproof.impl.formats.convert``), merges of a pair already
  merged, tokens that stand for the same bytes (ex-same-string), tokens their
  own bytes never encode to, tokens whose bytes alone are not UTF-8
  (prop-utf8-boundary), special tokens (def-utf8);
- the variant the library follows (``bpeproof.audit.variants_section``): the library encodes sampled words
  (pre-tokens of the corpora, token strings of the vocabulary, generated strings) and each
  variant encodes them too; the verdict lists the variants that agree on every
  word.  The variants are fast versions of ``bpeproof.spec.variants``
  (``bpeproof.impl.models.variants``: the specification recurses and is for small
  inputs); for small rule lists the audit also runs the specification's own and
  counts any difference;
- compression per corpus (``bpeproof.audit.compression_section``; def-utf8's bytes per token) by the library
  (``tokenizers`` in pieces cut at line starts, see ``bpeproof.proofs_tests.libraries.TokenizersLibrary.count_tokens``),
  the information bound of prop-token-information (log2 |V| bits per token against
  8 · bytes/token raw bits per token);
- the greedy-against-shortest gap of prop-bpe-greedy-not-optimal on sampled words
  (``bpeproof.audit.greedy_gap_section``);
- the project's own ``Tokenizer`` against the library on a sample of the text (``bpeproof.audit.project_section``).

The report is a JSON document (``audit`` returns it as a dict; ``--json FILE`` writes it) whose keys the manual
lists (``docs/audit.md``, "The JSON report").
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bpeproof.audit.compression_section import compression_section
from bpeproof.audit.file_view import FileView
from bpeproof.audit.findings import findings
from bpeproof.audit.greedy_gap_section import greedy_gap_section
from bpeproof.audit.libraries import Library, open_library
from bpeproof.audit.progress import PhaseTimer, status_line
from bpeproof.audit.project_section import project_section
from bpeproof.audit.sampling import DEFAULT_SAMPLES, corpus_texts, sample_words
from bpeproof.audit.variants_section import variants_section, word_input
from bpeproof.audit.vocabulary_section import library_unreachable, vocabulary_section
from bpeproof.impl.formats import Vocab, convert, load
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.pipelines.registry import guess_pattern
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, compile_pattern, pattern_name, resolve_pattern

if TYPE_CHECKING:
    from bpeproof.impl.parallel import TaskEngine

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "audit"]

FORMAT_NAME = "bpeproof-audit"
FORMAT_VERSION = 1


def audit(
    path: str,
    *,
    pattern: str | None = None,
    corpora: Sequence[str] = (),
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    progress: bool = False,
    engine: TaskEngine | None = None,
) -> dict[str, Any]:
    """Audit a tokenizer file; returns the JSON report whose keys docs/audit.md lists.

    ``pattern``: a name of ``bpeproof.impl.pre_tokenizers.patterns.PATTERNS`` or a regex (rank files hold none; by
    default it is guessed from the name).  ``corpora``: UTF-8 text files (``.gz`` allowed); none = the built-in sample.
    ``samples``: distinct corpus words compared.  Bad files raise ``FormatError`` / ``OSError``.  ``engine``: the
    corpora are measured by its tasks, range by range, never read whole here (``bpeproof.audit.corpus_tasks``);
    the same report.
    """
    timer = PhaseTimer()
    rng = random.Random(seed)  # one generator, drawn from in this order: words, then the project's sample
    with timer.phase("load"):
        audited = _read_file(path, pattern, progress)
    view, resolved = audited.view, audited.pattern
    report: dict[str, Any] = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "file": _file_section(path, audited)}
    with timer.phase("vocabulary"):
        report["vocabulary"] = vocabulary_section(view, timer, progress)
    unreachable = report["vocabulary"]["unreachable"]
    with timer.phase("library"), status_line("audit: opening the file's library", progress):
        library, report["library"] = _open_library(view.vocab, resolved)
        unreachable["library"] = library_unreachable(view, library)
    with timer.phase("corpora"):
        texts = corpus_texts(corpora, engine, path, resolved, library, view, progress)
    with timer.phase("words"):
        words = sample_words(texts, view, library, resolved, unreachable, samples, rng)
    with timer.phase("variants"):
        library_input = word_input(view, library)
        report["variants"], library_ids = variants_section(view, library, words, library_input, progress)
    with timer.phase("project"), status_line("audit: comparing the project's tokenizer with the library", progress):
        report["project"] = project_section(view, library, texts, resolved, rng)
    counting = "audit: counting the tokens of the corpus"
    with timer.phase("compression"), status_line(counting, progress and len(texts) == 1):  # else a bar over them
        report["corpora"] = compression_section(view, library, texts, resolved, report["vocabulary"]["bits_per_token"],
                                                progress and len(texts) > 1)
    with timer.phase("greedy_gap"):
        report["greedy_gap"] = greedy_gap_section(view, words.corpus, words.counts, library_ids, library_input)
    report["timings"] = timer.section()
    report["findings"] = findings(report)
    return report


@dataclass(frozen=True)
class _AuditedFile:
    """The file under audit: its ``view``, the ``pattern`` its text is cut with (None: the library's own
    pre-tokenizer, or none) and where that pattern comes from (the report's ``pattern_source``)."""

    view: FileView
    pattern: str | None
    pattern_source: str


def _read_file(path: str, pattern: str | None, progress: bool) -> _AuditedFile:
    """Read the file, refuse the kinds the audit does not cover, settle the pattern, check the merge list."""
    with status_line(f"audit: reading {Path(path).name}", progress) as step:
        resolved = resolve_pattern(pattern) if pattern is not None else None
        vocab = load(path, pattern=resolved)
        if vocab.kind == "gguf":
            raise FormatError(path, None, "the audit does not cover GGUF files (llama.cpp, their library, is not"
                              " run here to compare with); 'bpeproof encode --vocab' encodes them as llama.cpp does")
        if vocab.kind == "clip":
            raise FormatError(path, None, "the audit does not cover CLIP's merges file (CLIP's own tokenizer, its"
                              " library, is not run here to compare with); 'bpeproof encode --vocab' encodes as CLIP"
                              " does")
        resolved, source = _file_pattern(path, vocab, pattern, resolved)
        step(f"audit: checking the {len(vocab.merges)} merges of {Path(path).name}")
        conversion = convert(vocab)
        step("audit: building the merge tables")
        return _AuditedFile(FileView(vocab, conversion), resolved, source)


def _file_pattern(path: str, vocab: Vocab, pattern: str | None,
                  resolved: str | None) -> tuple[str | None, str]:
    """The pattern the file's text is cut with, and where it comes from: the option (``pattern``, ``resolved``),
    the file, a guess for a rank file (o200k when neither its name nor its size tells), else none (the library's
    own pre-tokenizer for the files that carry one)."""
    source = "option" if pattern is not None else "file"
    if resolved is None and vocab.pattern is not None:
        resolved = vocab.pattern
    if resolved is None and vocab.kind == "tiktoken":
        guessed = guess_pattern(vocab)
        resolved = PATTERNS[guessed] if guessed else PATTERNS["o200k"]
        source = "guessed"
    if resolved is None:
        source = "library" if vocab.kind in ("hf-bpe", "sentencepiece-bpe") else "none"
    if resolved is not None:
        compile_pattern(resolved)
    if pattern is not None and vocab.kind in ("hf-bpe", "sentencepiece-bpe"):
        raise ValueError(f"{path}: --pattern applies to rank files and GPT-2 files; this {vocab.kind} file"
                         " carries its own pre-tokenization")
    return resolved, source


def _file_section(path: str, audited: _AuditedFile) -> dict[str, Any]:
    """The report's ``file`` section."""
    vocab = audited.view.vocab
    return {
        "path": str(path),
        "kind": vocab.kind,
        "tokens": len(vocab.tokens),
        "merges": len(vocab.merges),
        "specials": len(vocab.specials),
        "specials_in_tokens": len(set(vocab.specials.values()) & vocab.tokens.keys()),
        "pattern": audited.pattern,
        "pattern_name": pattern_name(audited.pattern) if audited.pattern is not None else None,
        "pattern_source": audited.pattern_source,
        "ignore_merges": vocab.ignore_merges,
        "byte_fallback": vocab.byte_fallback,
    }


def _open_library(vocab: Vocab, pattern: str | None) -> tuple[Library | None, dict[str, Any]]:
    """The file's reference library, and the report's ``library`` section: None when it is not installed or
    refuses a file the project's readers accept (a finding, not an error)."""
    try:
        library = open_library(vocab, pattern)
    except ImportError as error:
        return None, {"name": None, "version": None, "available": False, "error": str(error)}
    except Exception as error:  # the library refuses a file the project's readers accept: a finding
        return None, {"name": None, "version": None, "available": False,
                      "error": f"the library cannot load the file: {type(error).__name__}: {error}"}
    return library, {"name": library.name, "version": library.version, "available": True, "error": None}
