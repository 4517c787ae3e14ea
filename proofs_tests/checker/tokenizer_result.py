"""The text → ids checker's result: every group of differences, each with its cause, its count and its smallest text.

``TokenizerCheckResult`` is what ``check_tokenizer`` returns (and ``bpeproof check --tokenizer/--cmd`` prints, or
writes as JSON).  ``groups`` holds one ``Divergence`` per cause (``groups``), those not set aside first; the
top-level fields (``kind``, ``text``, ``layer``…) repeat the first group not set aside, so that a reader of a
single finding keeps working, and ``found`` is true only when some group is not set aside.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from bpeproof.impl.io.wording import count
from bpeproof.proofs_tests.checker.protocol import ErrorAnswer
from bpeproof.proofs_tests.checker.result import RunResult


def _codepoints(text: str, limit: int = 40) -> str:
    shown = " ".join(f"U+{ord(c):04X}" for c in text[:limit])
    return shown + (" …" if len(text) > limit else "")


@dataclass(kw_only=True)
class Divergence:
    """One group of differences: its key, how many texts, and its smallest text with the layer and cause."""

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
    key: str | None = None
    count: int = 0
    ignored_by: str | None = None  # the --ignore entry that sets it aside
    seconds_to_find: float | None = None
    settled: bool = True  # replayed in a fresh process and shrunk (else reported as seen: time ran out)

    def fields_dict(self) -> dict[str, Any]:
        """The JSON fields of this group (those a single finding always had, and the group's own)."""
        return {
            "key": self.key, "count": self.count, "set_aside": self.ignored_by is not None,
            "ignored_by": self.ignored_by, "kind": self.kind, "layer": self.layer, "claim": self.claim,
            "detail": self.detail, "text": self.text,
            "codepoints": [ord(c) for c in self.text] if self.text is not None else None,
            "allowed_special": self.allowed_special, "earlier_texts": list(self.earlier),
            "expected": self.expected, "actual": self.actual if not isinstance(self.actual, ErrorAnswer)
            else repr(self.actual), "library_answer": self.library_answer,
            "piece": self.piece, "piece_index": self.piece_index, "alternative": self.alternative,
            "variants": list(self.variants),
            "aligned": [{"bytes": list(data), "reference": ref, "implementation": impl}
                        for data, ref, impl in self.aligned],
            "source": self.source, "ids": self.ids, "settled": self.settled,
            "seconds_to_find": None if self.seconds_to_find is None else round(self.seconds_to_find, 3),
        }

    def lines(self, library: str | None) -> list[str]:
        """The report's lines of this group's smallest text: the layer, the cause, both answers, aligned."""
        assert self.text is not None
        lines: list[str] = []
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
            if self.ids is not None:
                lines.append(f"  ids      : {self.ids!r} (the implementation's encoding of the text)")
            lines.append(f"  decoded  : {self.actual!r} (the implementation's decode of those ids; expected "
                         + ("the text)" if self.expected in (None, self.text) else
                            f"{self.expected!r}, the file's own library's decode of them)"))
            return lines + self._settled_lines()
        lines.append(f"  reference: {self.expected!r}")
        if library:  # the library's answer is ids: beside a decode's texts it has no place
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
        return lines + self._settled_lines()

    def _settled_lines(self) -> list[str]:
        if self.settled:
            return []
        return ["  note     : the smallest text as seen in the search, not replayed in a fresh process nor shrunk"
                " (the time for that went to the groups before)"]

    def summary(self) -> str:
        """"KEY (N texts[, set aside])"."""
        return f"{self.key} ({count(self.count, 'text')}" + (", set aside)" if self.ignored_by else ")")


#: The fields a result shares with its first group (the layout of a single finding).
_SHARED = tuple(f.name for f in fields(Divergence) if f.name not in ("key", "count", "ignored_by",
                                                                      "seconds_to_find", "settled"))


@dataclass(kw_only=True)
class TokenizerCheckResult(Divergence, RunResult):
    """The outcome of ``check_tokenizer``: the groups of differences, and the first one not set aside."""

    implementation: str
    vocab: str
    reference: str
    per_source: dict[str, int] = field(default_factory=dict)
    library: str | None = None
    groups: list[Divergence] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    special_tokens: str | None = None  # what the run did with special tokens, and why
    lone_surrogates: str | None = None  # what each side did with texts holding a lone surrogate

    def adopt(self) -> None:
        """Set ``found`` and the top-level fields from the groups (the first not set aside)."""
        first = next((group for group in self.groups if group.ignored_by is None), None)
        self.found = first is not None
        if first is not None:
            for name in _SHARED:
                setattr(self, name, getattr(first, name))
            self.seconds_to_find = first.seconds_to_find

    @property
    def set_aside(self) -> list[Divergence]:
        return [group for group in self.groups if group.ignored_by is not None]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable keys."""
        top = Divergence.fields_dict(self)
        for name in ("key", "count", "set_aside", "ignored_by", "settled"):
            top.pop(name)
        return {
            "found": self.found, "ran": self.ran, **top, "library": self.library,
            "implementation": self.implementation, "vocab": self.vocab,
            "reference": self.reference, "examples": self.examples, "seconds": round(self.seconds, 3),
            "examples_per_second": round(self.examples_per_second, 1), "per_source": dict(self.per_source),
            "seed": self.seed, "note": self.note, "special_tokens": self.special_tokens,
            "lone_surrogates": self.lone_surrogates,
            "groups": [group.fields_dict() for group in self.groups], "ignore": list(self.ignore),
        }

    def report(self) -> str:
        """A human-readable report: the run, then a section per group (those set aside last)."""
        head = f"bpeproof check: tokenizer={self.implementation}, vocab={self.vocab} (reference: {self.reference}"
        head += f"; library: {self.library})" if self.library else ")"
        if self.special_tokens:
            head += f"\nspecial tokens: {self.special_tokens}"
        if self.lone_surrogates:
            head += f"\nlone surrogates: {self.lone_surrogates}"
        aside = self.set_aside
        if not self.found:
            text = self.nothing_found(head, self.per_source)
            if not aside:
                return text
            lines = [text.replace("no difference found:", f"no difference found outside the"
                                  f" {count(len(aside), 'group')} set aside:", 1)]
        else:
            active = len(self.groups) - len(aside)
            what = (f"a difference ({self.kind})" if active == 1 else f"differences of {active} causes")
            lines = [head, f"FOUND {what} after {self.stats()}{self.first_seen()}"
                     + (f" (source {self.source})" if self.source and active == 1 else "")]
            if self.note:
                lines.append(f"note: {self.note}")
        lines.append("groups   : " + ", ".join(group.summary() for group in self.groups))
        for number, group in enumerate(self.groups, start=1):
            seen = "" if group.seconds_to_find is None else f", first seen at {group.seconds_to_find:.2f} s"
            source = f" (source {group.source})" if group.source else ""
            aside_note = f", set aside by --ignore {group.ignored_by}" if group.ignored_by else ""
            lines.append("")
            lines.append(f"group {number} of {len(self.groups)}: {group.key}: {count(group.count, 'text')}"
                         f" ({group.kind}){seen}{source}{aside_note}")
            lines += group.lines(self.library)
        return "\n".join(lines)
