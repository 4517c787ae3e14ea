"""The search of a text → ids check: texts judged against the reference in batches, every wrong answer grouped by
cause, and each group's smallest text confirmed and shrunk.

``TextSource`` is the one source of the search loop (``search.run``): batches of generated texts (``texts``),
pipelined, so that while the implementation works on one batch the next is drawn and the reference's answers
computed.  Every text answered wrongly, and every text whose ids the implementation's own decode does not turn
back into it, goes into its group (``groups``); the search goes on until the budget is spent.  A batch on which
the process hangs or ends is run again text by text (``TextSource.locate``): the text that does it is a finding,
a fresh process takes over, and the search goes on.

After the search ``settle`` takes each group once: its smallest text is replayed in fresh processes to see
whether it needs an earlier text (a cache with a wrong key; ``confirm``, with ``search.isolate_state``), then
shrunk (``shrink``) while it still fails *in the same group*, so that another bug's text never takes its place.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bpeproof.proofs_tests.checker import shrink as shrinking
from bpeproof.proofs_tests.checker.groups import NO_ANSWER, Finding, Group, Groups
from bpeproof.proofs_tests.checker.process import Gone
from bpeproof.proofs_tests.checker.protocol import Answer, ErrorAnswer, Implementation
from bpeproof.proofs_tests.checker.search import Search, isolate_state
from bpeproof.proofs_tests.checker.texts import LONE_SURROGATE, TextGenerator, replace_surrogates
from bpeproof.proofs_tests.checker.worker import TargetError

#: Candidates per request while shrinking: a slow implementation stops early.
SHRINK_CHUNK = 16
#: Groups shrunk for their full time; the ones after them share what is left of that much time.
SHRINK_GROUPS = 3

#: Whether a finding still belongs to the group being shrunk.
SameGroup = Callable[[Finding], bool]
#: The reference's answer to a text its file's own library refuses (tokenizers raises on a lone surrogate).
REFUSED = ErrorAnswer("the file's own library refuses a text with a lone surrogate")


class Judge:
    """Runs texts on the implementation and compares its answers with the reference's.

    A text with a lone surrogate is not Unicode text, and each library does its own thing with it: tiktoken
    replaces each with U+FFFD (``surrogates="replace"``), tokenizers and sentencepiece raise (``"refuse"``).  The
    reference does what the file's own library does; only ids against other ids is a difference, and what each
    side did is counted (``surrogate_outcomes``) for the report."""

    def __init__(self, impl: Implementation, reference: Any, table: dict[int, bytes],
                 library_decode: Callable[[list[int]], str | None] | None = None,
                 surrogates: str = "refuse") -> None:
        self.impl = impl
        self.reference = reference
        self.table = table  # id → token bytes: whether an implementation's ids spell the text
        self.library_decode = library_decode
        self.special_ids = frozenset(reference.special_tokens.values())
        self.surrogates = surrogates
        self.surrogate_outcomes: Counter[str] = Counter()

    def decoded(self, text: str, ids: list[int]) -> str:
        """What a decode of ``ids`` (which spell ``text``, or are the reference's ids of it) must give: the file's
        own library's decode of them where it is installed (a normalizer can make that differ from the text:
        with NFC, U+F98A encodes to the token of U+529B), else the text (thm-bpe-roundtrip)."""
        back = None if self.library_decode is None else self.library_decode(ids)
        return text if back is None else back

    def spells(self, text: str, ids: Answer) -> bool:
        """Whether ``ids`` are tokens of the vocabulary whose bytes are the text's UTF-8."""
        if not isinstance(ids, list) or any(token not in self.table for token in ids):
            return False
        return b"".join(self.table[token] for token in ids) == text.encode("utf-8")

    def expected(self, text: str, allowed: str | None) -> list[int] | ErrorAnswer:
        """The reference's ids of ``text``; ``REFUSED`` for a lone surrogate where the library refuses it."""
        if LONE_SURROGATE.search(text) is not None:
            if self.surrogates == "refuse":
                return REFUSED
            text = replace_surrogates(text)
        if allowed is None:
            return list(self.reference.encode(text))
        return list(self.reference.encode(text, allowed_special=allowed))

    def _surrogate_outcome(self, want: Answer, got: Answer) -> str:
        """What the implementation did with a text holding a lone surrogate, beside what the library does."""
        if isinstance(want, ErrorAnswer):
            return "refused them, as the library does" if isinstance(got, ErrorAnswer) else \
                "gave ids where the library refuses them"
        if isinstance(got, ErrorAnswer):
            return "refused them (not a difference: they are not Unicode text)"
        return "gave the library's ids" if got == want else "gave other ids than the library"

    def differences(self, texts: Sequence[str], expected: Sequence[list[int] | ErrorAnswer],
                    answers: Sequence[Answer], allowed: str | None, sources: Sequence[str]) -> list[Finding]:
        """Every text of a batch whose answer differs, each with the texts before it in the same request."""
        out: list[Finding] = []
        for index, (text, want, got) in enumerate(zip(texts, expected, answers, strict=True)):
            if LONE_SURROGATE.search(text) is not None:
                outcome = self._surrogate_outcome(want, got)
                self.surrogate_outcomes[outcome] += 1
                if not (isinstance(want, list) and isinstance(got, list) and got != want):
                    continue
            if got != want:
                memory = isinstance(got, ErrorAnswer) and "memory cap" in got.message
                out.append(Finding("memory" if memory else "encode", text, allowed, want, got, list(texts[:index]),
                                   sources[index]))
        return out

    def roundtrips(self, texts: Sequence[str], expected: Sequence[list[int] | ErrorAnswer], answers: Sequence[Answer],
                   sources: Sequence[str]) -> list[Finding]:
        """Every text whose ids the implementation's own decode does not turn back into it: of the texts
        answered right, and of those answered otherwise with ids that still spell the text (a decode bug is
        not hidden behind an encode bug; ids that spell another text are the encode's fault alone).  Ids with a
        special token are left out: whether a decode spells them or skips them is each library's own choice."""
        specials = self.special_ids
        spelled = [(i, got) for i, (text, want, got) in enumerate(zip(texts, expected, answers, strict=True))
                   if isinstance(got, list) and LONE_SURROGATE.search(text) is None
                   and (got == want or self.spells(text, got)) and specials.isdisjoint(got)]
        if not spelled:
            return []
        try:
            decoded = self.impl.decode([ids for _, ids in spelled])
        except Gone:
            decoded = []
            for _, ids in spelled:  # the one that ends or hangs the process, each in turn (a fresh one after it)
                try:
                    decoded += self.impl.decode([ids])
                except Gone as gone:
                    decoded.append(ErrorAnswer(f"no answer: {gone}"))
        out: list[Finding] = []
        for (i, ids), back in zip(spelled, decoded, strict=True):
            if back != texts[i] and back != (want := self.decoded(texts[i], ids)):
                out.append(Finding("decode", texts[i], None, want, back, [], sources[i], ids=list(ids)))
        return out

    def probe(self, piece: str) -> Answer:
        """The implementation's ids of one piece, in the running process (for the diagnosis)."""
        try:
            return self.impl.encode([piece])[0]
        except (Gone, TargetError):
            return ErrorAnswer("no answer")

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
                if back == text or back == (library_back := self.decoded(text, got)):
                    return None
                return Finding("decode", text, None, library_back, back, list(earlier), finding.source, ids=got)
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

    def first_failing(self, finding: Finding, candidates: Sequence[str], until: float, same: SameGroup
                      ) -> tuple[str, Finding] | None:
        """The first candidate text that still fails in the group of ``finding`` (see ``shrink.Attempt``)."""
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
                        again = Finding(finding.kind, candidate, finding.allowed_special, want, got, [],
                                        finding.source)
                        if same(again):
                            return candidate, again
            else:
                return None
        fresh = bool(finding.earlier) or finding.kind in NO_ANSWER
        for candidate in candidates:
            if time.monotonic() >= until:
                return None
            replayed = self.replay(finding, candidate, finding.earlier, fresh)
            if replayed is not None and same(replayed):
                return candidate, replayed
        return None


def shrink(judge: Judge, finding: Finding, until: float, same: SameGroup) -> Finding:
    """The failing text made smaller while it still fails in its group (chunks cut out, then simpler
    characters), then the earlier text it needs, until ``until``."""
    def attempt(candidates: Sequence[str]) -> tuple[str, Finding] | None:
        return judge.first_failing(finding, candidates, until, same)

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
                if again is not None and same(again):
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


def settle(judge: Judge, groups: Groups, shrink_for: float, end: float | None = None
           ) -> dict[str, tuple[Finding, bool]]:
    """Each group's smallest text confirmed and shrunk once, at most ``shrink_for`` seconds each,
    ``SHRINK_GROUPS`` times that in all, and never past ``end``: group key → the finding to report, and whether it
    was settled (a group left over is reported as seen, without the texts sent before it)."""
    out: dict[str, tuple[Finding, bool]] = {}
    last = time.monotonic() + shrink_for * SHRINK_GROUPS
    if end is not None:
        last = min(last, end)
    for group in groups.ordered():
        now = time.monotonic()
        seen = group.finding
        if now >= last:
            out[group.key] = (Finding(seen.kind, seen.text, seen.allowed_special, seen.expected, seen.actual, [],
                                      seen.source), False)
            continue
        until = min(now + shrink_for, last)
        try:
            out[group.key] = (shrink(judge, confirm(judge, seen, until), until, _same(groups, group)), True)
        except TargetError:  # the implementation no longer starts: report what was seen
            out[group.key] = (seen, False)
    return out


def _same(groups: Groups, group: Group) -> SameGroup:
    def same(finding: Finding) -> bool:
        analysis = groups.classifier.diagnose(finding)
        return group.key in (analysis.keys or [analysis.key])

    return same


@dataclass
class Batch:
    """Texts sent in one request: their sources, the reference's ids, and allowed_special."""

    texts: list[str]
    sources: list[str]
    expected: list[list[int] | ErrorAnswer]
    allowed: str | None


class TextSource:
    """Batches of generated texts, pipelined: the next batch is drawn and judged by the reference while the
    implementation answers the current one.  ``special_names``: how the implementation reads special tokens'
    names (``protocol.SPECIAL_NAMES``): "allowed", some batches allow them; "always", every batch does (the
    implementation reads them in any text); "text", never.  ``names``: the vocabulary has special tokens, whose
    names come among the texts."""

    name = "texts"
    weight = 1.0

    def __init__(self, judge: Judge, generator: TextGenerator, batch: int, groups: Groups, special_names: str,
                 names: bool) -> None:
        self.judge = judge
        self.generator = generator
        self.batch = batch
        self.groups = groups
        self.special_names = special_names
        self.names = names
        self.surrogates = True  # texts with lone surrogates are drawn (until the program ends on one)

    def draw(self, search: Search[Finding]) -> Batch | None:
        """The next batch; None when no example is left."""
        reads = self.special_names
        allowed = "all" if reads == "always" or (reads == "allowed" and self.generator.rng.random() < 0.15) else None
        # A batch that allows them holds only texts with names in "allowed" (the rest are in the other batches).
        only_names = allowed is not None and reads == "allowed"
        size = search.take(self.batch)
        if size == 0:
            return None
        texts: list[str] = []
        sources: list[str] = []
        for _ in range(size):
            if only_names or (self.names and self.generator.rng.random() < 0.05):
                texts.append(self.generator.special())
                sources.append("special" if allowed else "special_as_text")
                continue
            text, source = self.generator.draw()
            # A few texts are replaced by the side sources', drawn apart: the others stay those of the seed.
            side = self.generator.side_rng.random()
            if side < 0.01 and self.surrogates:
                text, source = self.generator.surrogate(), "surrogate"
            elif side < 0.03:
                text, source = self.generator.unicode_change(), "unicode"
            texts.append(text)
            sources.append(source)
        return Batch(texts, sources, [self.judge.expected(t, allowed) for t in texts], allowed)

    def send(self, search: Search[Finding], batch: Batch) -> bool:
        """Send a batch; when that fails, run it text by text instead (False: there is no answer to read)."""
        try:
            self.judge.impl.send_encode(batch.texts, batch.allowed)
        except Gone as gone:
            self.locate(search, batch, gone)
            return False
        except TargetError as error:
            search.halted = str(error)
            return False
        return True

    def turn(self, search: Search[Finding], until: float, round_no: int, index: int) -> None:
        current = self.draw(search)
        if current is None:
            return
        sent = self.send(search, current)
        while True:
            upcoming = self.draw(search) if time.monotonic() < until else None
            if sent:
                try:
                    answers = self.judge.impl.receive_encode(len(current.texts))
                except Gone as gone:
                    self.locate(search, current, gone)
                else:
                    self.judge_batch(search, current, answers)
            if upcoming is None or time.monotonic() >= search.deadline or search.halted is not None:
                return
            current = upcoming
            sent = self.send(search, current)

    def judge_batch(self, search: Search[Finding], batch: Batch, answers: Sequence[Answer]) -> None:
        """Count a batch, and put each wrong answer (and wrong round trip) in its group."""
        search.counts.update(batch.sources)
        findings = self.judge.differences(batch.texts, batch.expected, answers, batch.allowed, batch.sources)
        if self.judge.impl.has_decode:
            try:
                findings += self.judge.roundtrips(batch.texts, batch.expected, answers, batch.sources)
            except TargetError as error:
                search.halted = str(error)
        for finding in findings:
            self.groups.add(finding)

    def locate(self, search: Search[Finding], batch: Batch, gone: Gone) -> None:
        """The texts of a batch on which the process hung or ended, each alone (a fresh process after each that
        does it again): those are findings, the others judged as usual."""
        impl = self.judge.impl
        located = False
        for text, source, want in zip(batch.texts, batch.sources, batch.expected, strict=True):
            if time.monotonic() >= search.deadline:  # each text alone may cost a time limit: the budget bounds it
                located = True
                break
            try:
                got = impl.encode([text], batch.allowed)
            except Gone as again:
                located = True
                if LONE_SURROGATE.search(text) is not None:
                    # Not Unicode text: a program that ends or hangs on it refused it, harshly.  None is sent
                    # again, or every other batch would cost a fresh process.
                    self.judge.surrogate_outcomes[f"{'hung' if again.kind == 'timeout' else 'ended'} on them (not"
                                                  " a difference: they are not Unicode text; no more were sent)"] += 1
                    self.surrogates = False
                    continue
                self.groups.add(Finding(again.kind, text, batch.allowed, None, str(again), [], source))
                continue
            except TargetError as error:
                search.halted = str(error)
                return
            finally:
                search.counts[source] += 1
            for finding in self.judge.differences([text], [want], got, batch.allowed, [source]):
                self.groups.add(finding)
        if not located:  # the batch as a whole, not one text of it
            self.groups.add(Finding(gone.kind, batch.texts[0], batch.allowed, None, str(gone), [], batch.sources[0]))
