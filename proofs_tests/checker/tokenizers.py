"""Check a text → ids tokenizer, written in any language, against a vocabulary file's reference tokenizer.

Usage from Python::

    from bpeproof.proofs_tests.checker.tokenizers import check_tokenizer

    result = check_tokenizer("mymod:encode", vocab="cl100k_base.tiktoken", decode="mymod:decode", seconds=30)
    assert not result.found, result.report()

from the command line: ``bpeproof check --tokenizer mymod:encode --vocab FILE`` or
``bpeproof check --cmd 'node adapter.mjs' --vocab FILE``, and from pytest:
``pytest --pyargs bpeproof.proofs_tests --bpe-tokenizer mymod:encode --bpe-vocab FILE``.

The reference and the file's own library are ``library``'s; the implementation runs in another process behind
the line protocol (``protocol``).  The check is the one search loop (``search``) over one source, ``TextSource``:
batches of generated texts (``texts``), pipelined, so that while the implementation works on one batch the next
is drawn and the reference's answers computed.  A difference is replayed in fresh processes to see whether it
needs an earlier text (a cache with a wrong key; ``search.isolate_state``), shrunk to a small text
(``shrink``), and reported with its code points, both id lists aligned with their token bytes, and the layer
that differs with its cause (``diagnosis``).

Before the first text, ``startup`` starts the implementation's process while the reference loads.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bpeproof.proofs_tests.checker import shrink as shrinking
from bpeproof.proofs_tests.checker.diagnosis import align, analyse
from bpeproof.proofs_tests.checker.library import Library
from bpeproof.proofs_tests.checker.process import Gone
from bpeproof.proofs_tests.checker.progress import Progress
from bpeproof.proofs_tests.checker.protocol import BATCH, Answer, ErrorAnswer, Implementation
from bpeproof.proofs_tests.checker.result import RunResult
from bpeproof.proofs_tests.checker.sandbox import DEFAULT_MEMORY_MB
from bpeproof.proofs_tests.checker.search import Search, isolate_state, run
from bpeproof.proofs_tests.checker.startup import prepare
from bpeproof.proofs_tests.checker.texts import TextGenerator, read_corpus
from bpeproof.proofs_tests.checker.worker import Target, TargetError

__all__ = ["TargetError", "TokenizerCheckResult", "check_tokenizer"]

#: Kinds of finding where the process gave no answer at all: replaying costs a whole time limit.
NO_ANSWER = ("timeout", "crashed", "protocol")
#: Candidates per request while shrinking: a slow implementation stops early.
SHRINK_CHUNK = 16
#: The first turn of the text source, in seconds (each later one is twice as long).
FIRST_SLICE = 1.0


# ---------------------------------------------------------------------------
# The result
# ---------------------------------------------------------------------------


def _codepoints(text: str, limit: int = 40) -> str:
    shown = " ".join(f"U+{ord(c):04X}" for c in text[:limit])
    return shown + (" …" if len(text) > limit else "")


@dataclass(kw_only=True)
class TokenizerCheckResult(RunResult):
    """The outcome of ``check_tokenizer``: a difference found or not, and if so where and in which layer."""

    implementation: str
    vocab: str
    reference: str
    per_source: dict[str, int] = field(default_factory=dict)
    library: str | None = None
    kind: str | None = None  # "encode", "decode", "timeout", "crashed", "protocol", "memory"
    text: str | None = None
    allowed_special: str | None = None
    earlier: list[str] = field(default_factory=list)
    expected: Any = None
    actual: Any = None
    library_answer: Any = None
    claim: str | None = None
    layer: str | None = None
    detail: str | None = None
    piece: str | None = None
    piece_index: int | None = None
    alternative: str | None = None
    variants: list[str] = field(default_factory=list)
    aligned: list[tuple[bytes, list[str], list[str]]] = field(default_factory=list)
    source: str | None = None
    ids: list[int] | None = None  # a decode finding: the implementation's ids for the text, which it decoded

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable keys."""
        return {
            "found": self.found, "ran": self.ran, "kind": self.kind, "layer": self.layer, "claim": self.claim,
            "detail": self.detail, "text": self.text,
            "codepoints": [ord(c) for c in self.text] if self.text is not None else None,
            "allowed_special": self.allowed_special, "earlier_texts": list(self.earlier),
            "expected": self.expected, "actual": self.actual if not isinstance(self.actual, ErrorAnswer)
            else repr(self.actual), "library_answer": self.library_answer, "library": self.library,
            "piece": self.piece, "piece_index": self.piece_index, "alternative": self.alternative,
            "variants": list(self.variants),
            "aligned": [{"bytes": list(data), "reference": ref, "implementation": impl}
                        for data, ref, impl in self.aligned],
            "source": self.source, "ids": self.ids, "implementation": self.implementation, "vocab": self.vocab,
            "reference": self.reference, "examples": self.examples, "seconds": round(self.seconds, 3),
            "seconds_to_find": None if self.seconds_to_find is None else round(self.seconds_to_find, 3),
            "examples_per_second": round(self.examples_per_second, 1), "per_source": dict(self.per_source),
            "seed": self.seed, "note": self.note,
        }

    def report(self) -> str:
        """A human-readable report."""
        head = f"bpeproof check: tokenizer={self.implementation}, vocab={self.vocab} (reference: {self.reference}"
        head += f"; library: {self.library})" if self.library else ")"
        if not self.found:
            return self.nothing_found(head, self.per_source)
        assert self.text is not None
        lines = [head, f"FOUND a difference ({self.kind}) after {self.stats()}{self.first_seen()}"
                 + (f" (source {self.source})" if self.source else "")]
        if self.layer:
            lines.append(f"  layer    : {self.layer}")
        if self.claim:
            lines.append(f"  claim    : {self.claim}")
        if self.detail:
            lines.append(f"  detail   : {self.detail}")
        lines.append(f"  text     : {self.text!r}")
        lines.append(f"  code pts : {_codepoints(self.text)}")
        if self.allowed_special is not None:
            lines.append(f"  special  : allowed_special={self.allowed_special!r}")
        if self.earlier:
            lines.append(f"  earlier  : in the same process, after encoding {self.earlier!r} (state kept between"
                         " calls: alone in a fresh process this text is answered correctly)")
        if self.piece is not None:
            lines.append(f"  piece    : #{self.piece_index} {self.piece!r}"
                         + (f" (pattern alternative {self.alternative})" if self.alternative else ""))
        if self.kind == "decode":  # texts as texts, ids as ids
            lines += self._decode_lines()
            if self.note:
                lines.append(f"  note     : {self.note}")
            return "\n".join(lines)
        lines.append(f"  reference: {self.expected!r}")
        if self.library:
            verdict = ""
            if self.library_answer is not None:
                verdict = (" (= reference)" if self.library_answer == self.expected else
                           " (= implementation)" if self.library_answer == self.actual else " (differs from both)")
            lines.append(f"  library  : {self.library_answer!r}{verdict}")
        lines.append(f"  impl     : {self.actual!r}")
        if self.aligned:
            lines.append("  aligned  : bytes | reference tokens | implementation tokens")
            for data, ref, impl in self.aligned[:40]:
                mark = "  " if ref == impl else "≠ "
                lines.append(f"   {mark}{data!r:<16} | {', '.join(ref):<30} | {', '.join(impl)}")
        if self.note:
            lines.append(f"  note     : {self.note}")
        return "\n".join(lines)

    def _decode_lines(self) -> list[str]:
        """A decode finding: the ids the implementation gave for the text, and the text it decoded them to."""
        lines = []
        if self.ids is not None:
            lines.append(f"  ids      : {self.ids!r} (the implementation's encoding of the text)")
        lines.append(f"  decoded  : {self.actual!r} (the implementation's decode of those ids; expected the text)")
        return lines


# ---------------------------------------------------------------------------
# Judging texts
# ---------------------------------------------------------------------------


@dataclass
class Finding:
    """A text answered wrongly: the kind of difference, both answers, and the earlier texts it needs."""

    kind: str  # "encode", "decode", "memory", or one of NO_ANSWER
    text: str
    allowed_special: str | None
    expected: Any
    actual: Any
    earlier: list[str] = field(default_factory=list)
    source: str | None = None
    ids: list[int] | None = None  # a decode finding: the ids that decoded to ``actual``


class Judge:
    """Runs texts on the implementation and compares its answers with the reference's."""

    def __init__(self, impl: Implementation, reference: Any) -> None:
        self.impl = impl
        self.reference = reference

    def expected(self, text: str, allowed: str | None) -> list[int]:
        if allowed is None:
            return list(self.reference.encode(text))
        return list(self.reference.encode(text, allowed_special=allowed))

    def batch(self, texts: Sequence[str], expected: Sequence[list[int]], answers: Sequence[Answer],
              allowed: str | None) -> Finding | None:
        """The first text of a batch whose answer differs, with the texts before it in the same request."""
        for index, (text, want, got) in enumerate(zip(texts, expected, answers, strict=True)):
            if got != want:
                memory = isinstance(got, ErrorAnswer) and "memory cap" in got.message
                return Finding("memory" if memory else "encode", text, allowed, want, got, list(texts[:index]))
        return None

    def roundtrip(self, texts: Sequence[str], answers: Sequence[Answer]) -> Finding | None:
        """The first text whose ids the implementation's own decode does not turn back into it."""
        pairs = [(t, a) for t, a in zip(texts, answers, strict=True) if isinstance(a, list)]
        if not pairs:
            return None
        decoded = self.impl.decode([a for _, a in pairs if isinstance(a, list)])
        for (text, ids), back in zip(pairs, decoded, strict=True):
            if back != text:
                return Finding("decode", text, None, text, back, [], ids=list(ids) if isinstance(ids, list) else None)
        return None

    def replay(self, finding: Finding, text: str, earlier: Sequence[str], fresh: bool) -> Finding | None:
        """Run ``text`` again (after ``earlier``, in a fresh process when ``fresh``); the finding if it fails."""
        if fresh:
            self.impl.restart()
        texts = [*earlier, text]
        try:
            if finding.kind == "decode":
                got = self.impl.encode(texts)[-1]
                if not isinstance(got, list):
                    return None
                back = self.impl.decode([got])[0]
                return Finding("decode", text, None, text, back, list(earlier), finding.source, ids=got) \
                    if back != text else None
            answers = self.impl.encode(texts, finding.allowed_special)
        except Gone as gone:
            if finding.kind in NO_ANSWER:
                return Finding(gone.kind, text, finding.allowed_special, None, str(gone), list(earlier),
                               finding.source)
            return None
        if finding.kind in NO_ANSWER:
            return None
        want = self.expected(text, finding.allowed_special)
        got = answers[-1]
        if got != want and finding.kind in ("encode", "memory"):
            return Finding(finding.kind, text, finding.allowed_special, want, got, list(earlier), finding.source)
        return None

    def first_failing(self, finding: Finding, candidates: Sequence[str], until: float) -> tuple[str, Finding] | None:
        """The first candidate text that still fails as ``finding`` does (see ``shrink.Attempt``)."""
        stateless = not finding.earlier and finding.kind in ("encode", "memory")
        if stateless:  # one request for many candidates
            for chunk in range(0, len(candidates), SHRINK_CHUNK):
                if time.monotonic() >= until:
                    return None
                part = candidates[chunk : chunk + SHRINK_CHUNK]
                try:
                    answers = self.impl.encode(part, finding.allowed_special)
                except Gone:
                    break  # the process is gone: try the candidates one by one, each in a fresh process
                for candidate, got in zip(part, answers, strict=True):
                    want = self.expected(candidate, finding.allowed_special)
                    if got != want and isinstance(got, type(finding.actual)):
                        return candidate, Finding(finding.kind, candidate, finding.allowed_special, want, got, [],
                                                  finding.source)
            else:
                return None
        fresh = bool(finding.earlier) or finding.kind in NO_ANSWER
        for candidate in candidates:
            if time.monotonic() >= until:
                return None
            again = self.replay(finding, candidate, finding.earlier, fresh)
            if again is not None:
                return candidate, again
        return None


def shrink(judge: Judge, finding: Finding, until: float) -> Finding:
    """The failing text made smaller while it still fails (chunks cut out, then simpler characters), then the
    earlier text it needs, until ``until``."""
    def attempt(candidates: Sequence[str]) -> tuple[str, Finding] | None:
        return judge.first_failing(finding, candidates, until)

    best = finding
    for candidates in (shrinking.deletions, shrinking.simpler_characters):
        finding = best
        _text, best = shrinking.greedy(best.text, best, candidates, attempt, until)
    if best.earlier:  # shrink the earlier text too
        needed = best

        def attempt_earlier(candidates: Sequence[str]) -> tuple[str, Finding] | None:
            for candidate in candidates:
                if time.monotonic() >= until:
                    return None
                again = judge.replay(needed, needed.text, [candidate], fresh=True)
                if again is not None:
                    return candidate, again
            return None

        _earlier, best = shrinking.greedy(best.earlier[-1], best, shrinking.deletions, attempt_earlier, until)
    return best


def confirm(judge: Judge, finding: Finding, until: float) -> Finding:
    """Replay the text in fresh processes: alone, else after the earlier texts (``search.isolate_state``)."""
    if finding.kind in NO_ANSWER:
        return Finding(finding.kind, finding.text, finding.allowed_special, finding.expected, finding.actual, [],
                       finding.source)
    again, _needed, _state = isolate_state(
        lambda before: judge.replay(finding, finding.text, before, fresh=True), finding.earlier, until)
    return finding if again is None else again


# ---------------------------------------------------------------------------
# The search
# ---------------------------------------------------------------------------


class TextSource:
    """Batches of generated texts, pipelined: the next batch is drawn and judged by the reference while the
    implementation answers the current one."""

    name = "texts"
    weight = 1.0

    def __init__(self, judge: Judge, generator: TextGenerator, batch: int, special: bool) -> None:
        self.judge = judge
        self.generator = generator
        self.batch = batch
        self.special = special

    def draw(self, search: Search[Finding]) -> tuple[list[str], list[str], list[list[int]], str | None] | None:
        """The next batch (texts, their sources, the reference's ids, allowed_special); None when none is left."""
        allowed = "all" if self.special and self.generator.rng.random() < 0.15 else None
        size = search.take(self.batch)
        if size == 0:
            return None
        texts: list[str] = []
        sources: list[str] = []
        for _ in range(size):
            if allowed:
                texts.append(self.generator.special())
                sources.append("special")
            elif self.special and self.generator.rng.random() < 0.05:  # special names as ordinary text
                texts.append(self.generator.special())
                sources.append("special_as_text")
            else:
                text, source = self.generator.draw()
                texts.append(text)
                sources.append(source)
        return texts, sources, [self.judge.expected(t, allowed) for t in texts], allowed

    def turn(self, search: Search[Finding], until: float, round_no: int, index: int) -> None:
        impl = self.judge.impl
        current = self.draw(search)
        if current is None:
            return
        try:
            impl.send_encode(current[0], current[3])
        except Gone as gone:
            search.record(Finding(gone.kind, current[0][0], current[3], None, str(gone), [], current[1][0]),
                          self.name)
            return
        while True:
            texts, sources, expected, allowed = current
            upcoming = self.draw(search) if time.monotonic() < until else None
            try:
                answers = impl.receive_encode(len(texts))
            except Gone as gone:
                search.record(self.locate(texts, sources, allowed, gone), self.name)
                return
            search.counts.update(sources)
            finding = self.judge.batch(texts, expected, answers, allowed)
            if finding is None and impl.has_decode and allowed is None:
                try:
                    finding = self.judge.roundtrip(texts, answers)
                except Gone as gone:
                    search.record(self.locate(texts, sources, allowed, gone), self.name)
                    return
            if finding is not None:
                finding.source = sources[texts.index(finding.text)]
                search.record(finding, self.name)
                return
            if upcoming is None or time.monotonic() >= search.deadline:
                return
            current = upcoming
            try:
                impl.send_encode(current[0], current[3])
            except Gone as gone:
                search.record(self.locate(current[0], current[1], current[3], gone), self.name)
                return

    def locate(self, texts: Sequence[str], sources: Sequence[str], allowed: str | None, gone: Gone) -> Finding:
        """The text of a batch on which the process hung or ended: each text alone, in a fresh process."""
        for text, source in zip(texts, sources, strict=True):
            try:
                self.judge.impl.restart()
                self.judge.impl.encode([text], allowed)
            except Gone as again:
                return Finding(again.kind, text, allowed, None, str(again), [], source)
            except TargetError:
                break
        return Finding(gone.kind, texts[0], allowed, None, str(gone), [], sources[0])


def check_tokenizer(
    tokenizer: Target | None = None,
    *,
    vocab: str,
    pattern: str | None = None,
    decode: Target | None = None,
    cmd: str | None = None,
    seconds: float = 10.0,
    seed: int | None = None,
    examples: int | None = None,
    call_timeout: float = 5.0,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    shrink_seconds: float | None = None,
    batch: int = BATCH,
    weights: dict[str, float] | None = None,
    corpus: Sequence[str] | None = None,
    progress: float | None = None,
) -> TokenizerCheckResult:
    """Check ``tokenizer(text) -> list[int]`` (a callable or ``MOD:FUNC``), or the program ``cmd`` speaking the
    line protocol, against the reference tokenizer of the vocabulary file ``vocab``, for ``seconds``.

    ``examples`` also ends the search after that many texts: the same seed and count try the same texts on
    any machine, however loaded (``seconds`` then only bounds the run).

    ``decode(ids) -> str`` (or the program's decode) is checked as decode(encode(t)) == t.  Raises
    ``TargetError`` for a function that cannot be imported, a program that does not speak the protocol or a
    file that is not a vocabulary.  ``result.ran`` is false when no example ran (never a pass).

    ``corpus``: text files (UTF-8, plain or ``.gz``) whose lines are the ``corpus`` source (``texts.read_corpus``)
    instead of the sample shipped with the package.  ``progress``: seconds between progress lines on stderr
    (``progress.Progress``; None: none).
    """
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
        raise TargetError(f"seconds must be a positive number, not {seconds!r}")
    if examples is not None and (isinstance(examples, bool) or not isinstance(examples, int) or examples <= 0):
        raise TargetError(f"examples must be a positive whole number, not {examples!r}")
    if (tokenizer is None) == (cmd is None):
        raise TargetError("give one of a tokenizer function (MOD:FUNC) and a program (cmd)")
    run_seed = secrets.randbelow(2**31) if seed is None else seed
    start = time.monotonic()
    search: Search[Finding] = Search(start=start, deadline=start + seconds, examples=examples)
    lines = None if corpus is None else read_corpus(list(corpus))
    ready = prepare(tokenizer, decode, cmd, vocab, pattern, call_timeout, memory_mb, search.deadline)
    reference, impl = ready.reference, ready.impl
    semantics = getattr(reference, "semantics", None)
    reference_name = "bpeproof Tokenizer" + (f", semantics {semantics}" if semantics else "")
    judge = Judge(impl, reference)
    specials = sorted(reference.special_tokens) if impl.special else []
    source = TextSource(judge, TextGenerator(run_seed, ready.token_texts, specials, weights, ready.whole_only,
                                             lines), batch, bool(specials))
    try:
        with Progress(lambda: (sum(list(search.counts.values())), int(search.finding is not None)), progress):
            run(search, [source], FIRST_SLICE)
        finding = search.finding
        if finding is not None:
            shrink_for = max(1.0, min(5.0, 0.2 * seconds)) if shrink_seconds is None else shrink_seconds
            until = time.monotonic() + shrink_for
            finding = shrink(judge, confirm(judge, finding, until), until)
        result = TokenizerCheckResult(
            found=finding is not None, implementation=impl.name, vocab=vocab, reference=reference_name,
            examples=sum(search.counts.values()), seconds=time.monotonic() - start, seed=run_seed,
            per_source=dict(search.counts),
            seconds_to_find=None if search.found_at is None else search.found_at - start,
        )
        if finding is None and not search.counts:
            result.note = "no example ran within the budget: give more seconds"
        if finding is not None:
            _describe(result, finding, judge, vocab)
    finally:
        impl.stop()
    return result


def _describe(result: TokenizerCheckResult, finding: Finding, judge: Judge, vocab: str) -> None:
    reference = judge.reference
    result.kind = finding.kind
    result.text = finding.text
    result.allowed_special = finding.allowed_special
    result.earlier = list(finding.earlier)
    result.expected = finding.expected
    result.actual = finding.actual.message if isinstance(finding.actual, ErrorAnswer) else finding.actual
    result.source = finding.source
    library = Library(vocab, reference)
    result.library = library.name
    if library.name is not None:
        result.library_answer = library.encode(finding.text, finding.allowed_special is not None)
    if finding.kind == "encode" and isinstance(finding.actual, list):
        result.aligned = align(reference, finding.expected, finding.actual)

        def alone(piece: str) -> Answer:
            try:
                judge.impl.restart()
                return judge.impl.encode([piece])[0]
            except (Gone, TargetError):
                return ErrorAnswer("no answer")

        analysis = analyse(reference, finding.text, finding.expected, finding.actual,
                           finding.allowed_special is not None, None if finding.earlier else alone)
        result.layer, result.claim, result.detail = analysis.layer, analysis.claim, analysis.detail
        result.piece, result.piece_index = analysis.piece, analysis.piece_index
        result.alternative, result.variants = analysis.alternative, analysis.variants
    elif finding.kind == "encode":
        result.layer, result.claim = "error", "def-bpe"
        result.detail = (f"encoding is defined on every text, but the implementation answered"
                         f" {finding.actual!r}")
    elif finding.kind == "decode":
        result.layer, result.claim = "decode", "thm-bpe-roundtrip"
        result.ids = finding.ids
        result.library_answer = None  # an encoding: not comparable with a decoded text
        same = finding.ids is not None and finding.ids == list(reference.encode(finding.text))
        result.detail = (f"decode(encode(t)) must give t back; it gave {finding.actual!r}"
                         + (" (its ids are the reference's: the decode is wrong)" if same else ""))
    elif finding.kind == "memory":
        result.layer, result.claim = "memory", "def-bpe"
        result.detail = "the implementation hit the worker's memory cap on this text"
    else:
        result.layer, result.claim = finding.kind, "def-bpe"
        result.detail = f"encoding is defined on every text, but the implementation {finding.actual}"
    if finding.earlier:
        result.note = ("the wrong answer needs the earlier text in the same process (state kept between calls,"
                       " e.g. a cache with a wrong key)")
