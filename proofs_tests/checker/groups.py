"""The differences a text → ids check finds, grouped by cause: one group per bug, each counted, each with its
smallest text.

A check does not stop at its first difference: one bug (JavaScript's ``\\s`` in a port) would hide every other
one (a decode that drops a leading U+FEFF, a token missing from a bundled vocabulary).  Every wrong answer is
put in a group named by its *key*, a short stable string from the diagnosis (``diagnosis.analyse``): the layer,
and for a split the pattern variant that explains it or the pattern alternative and character class where the
cuts differ, for a merge the variants or the token, and ``decode``, ``special:…``, ``error:…``, ``timeout``,
``crashed``, ``protocol``, ``memory``.  Keys given to ``--ignore`` (or a prefix of them up to a colon) set
their groups aside: still reported, but not a failure.

Diagnosing costs more than judging, so a wrong answer is first given a *pre-key*, cheap to compute (the kind of
answer, the kinds of the characters where the id lists part); only a new pre-key is diagnosed, and a known one
again when its count reaches a power of two (a pre-key that two bugs share is then split).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bpeproof.impl.models.variants import MergeTable
from bpeproof.proofs_tests.checker.diagnosis import Analysis, analyse
from bpeproof.proofs_tests.checker.protocol import Answer, ErrorAnswer
from bpeproof.proofs_tests.checker.reruns import Reruns, same_kind
from bpeproof.proofs_tests.checker.texts import LONE_SURROGATE

#: Kinds of finding where the process gave no answer at all: replaying costs a whole time limit.
NO_ANSWER = ("timeout", "crashed", "protocol")
#: A known pre-key is diagnosed again when its count is a power of two up to this.
RECHECK_UP_TO = 64


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


def error_name(message: str) -> str:
    """The group key of an error answer: ``error:`` and the exception's name when the message starts with one."""
    match = re.match(r"\s*([A-Za-z_][\w.]{0,40})(?::|$)", message)
    return f"error:{match.group(1)}" if match else "error"


def ignored_by(key: str, patterns: Iterable[str]) -> str | None:
    """The first of ``patterns`` that sets the group ``key`` aside: the key itself, or a prefix of it that ends
    where a colon follows (``split`` sets aside ``split:js-whitespace``)."""
    for pattern in patterns:
        if key == pattern or key.startswith(pattern + ":"):
            return pattern
    return None


def read_ignore_file(path: str) -> list[str]:
    """The group keys of a file of known differences: one a line, ``#`` starting a comment, blank lines skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"--ignore-file {path}: {error}") from None
    return [key for key in (line.split("#", 1)[0].strip() for line in lines) if key]


class Classifier:
    """The group key of a finding: from its pre-key when that is known, else diagnosed (see the module
    docstring).  ``probe(piece)`` asks the implementation for one piece's ids (None: never)."""

    def __init__(self, reference: Any, probe: Callable[[str], Answer] | None = None) -> None:
        self.reference = reference
        self.probe = probe
        self.reruns = Reruns(reference)
        self.variants: MergeTable | None = None
        try:
            self.variants = self.reruns.variants
            table = self.variants.token_bytes
        except Exception:  # a model without the tables: every finding is diagnosed from its pieces
            table = {}
        self.lengths = {token: len(data) for token, data in table.items()}
        self.special_ids = frozenset(reference.special_tokens.values())
        self.special_names = tuple(reference.special_tokens)
        self.known: dict[tuple[object, ...], str] = {}
        self.seen: Counter[tuple[object, ...]] = Counter()
        self.diagnosed = 0
        self.fits: dict[tuple[object, ...], tuple[str, ...]] = {}  # pre-key → the keys its last diagnosis fits
        self.last_fits: tuple[str, ...] = ()  # the keys the finding ``key`` last named fits

    def pre_key(self, finding: Finding) -> tuple[object, ...]:
        """What a finding looks like, cheaply (see the module docstring)."""
        actual = finding.actual
        if finding.kind == "decode":
            return ("decode", isinstance(actual, ErrorAnswer))
        if finding.kind != "encode":
            return (finding.kind, str(actual)[:40] if finding.kind == "protocol" else "")
        if LONE_SURROGATE.search(finding.text) is not None:
            return ("surrogate",)
        named = any(name in finding.text for name in self.special_names)
        if isinstance(actual, ErrorAnswer):
            return ("error", error_name(actual.message), named)
        expected = finding.expected
        if self.special_ids and not (self.special_ids.isdisjoint(expected) and self.special_ids.isdisjoint(actual)):
            return ("special", finding.allowed_special)
        index = next((i for i, (x, y) in enumerate(zip(expected, actual, strict=False)) if x != y),
                     min(len(expected), len(actual)))
        lengths = self.lengths
        offset = sum(lengths.get(token, 0) for token in expected[:index])
        start = len(finding.text.encode("utf-8")[:offset].decode("utf-8", "ignore"))
        window = tuple(same_kind(char) for char in finding.text[max(0, start - 1) : start + 2])
        unknown = any(token not in lengths for token in actual[index : index + 3])
        return ("encode", finding.allowed_special is not None, window, unknown)

    def diagnose(self, finding: Finding) -> Analysis:
        """The layer, the cause and the group key of one finding."""
        self.diagnosed += 1
        actual = finding.actual
        surrogate = LONE_SURROGATE.search(finding.text)
        if finding.kind == "encode" and surrogate is not None:
            return Analysis("surrogate", "def-utf8", f"the text holds a lone surrogate (U+{ord(surrogate.group()):04X}"
                            f" at character {surrogate.start()}), which is not Unicode text; the file's own library"
                            " replaces each with U+FFFD (a pair written as two halves becomes its character) and"
                            f" encodes that: {finding.expected!r}; the implementation gave {actual!r}",
                            "surrogate:other-ids")
        if finding.kind == "encode" and isinstance(actual, list):
            return analyse(self.reference, finding.text, finding.expected, actual,
                           finding.allowed_special is not None, self.probe, self.reruns)
        if finding.kind == "encode":
            message = actual.message if isinstance(actual, ErrorAnswer) else str(actual)
            names = [name for name in self.special_names if name in finding.text]
            if names and finding.allowed_special is None:
                return Analysis("special", "def-utf8", f"the text holds the special token name {names[0]!r}, which"
                                " without allowed_special is ordinary text, but the implementation answered"
                                f" {message!r} (tiktoken's encode raises on it unless disallowed_special=() is"
                                " passed)", "special:raised")
            return Analysis("error", "def-bpe", f"encoding is defined on every text, but the implementation"
                            f" answered {actual!r}", error_name(message))
        if finding.kind == "decode":
            if isinstance(actual, ErrorAnswer):
                return Analysis("decode", "thm-bpe-roundtrip", f"decode(encode(t)) must give t back; decode"
                                f" answered {actual!r}", "decode:error")
            if finding.expected not in (None, finding.text):
                return Analysis("decode", "thm-bpe-roundtrip", "decode must give what the file's own library's"
                                f" decode gives for the same ids, {finding.expected!r}; it gave {actual!r}",
                                "decode")
            return Analysis("decode", "thm-bpe-roundtrip", f"decode(encode(t)) must give t back; it gave"
                            f" {actual!r}", "decode")
        if finding.kind == "memory" or "memory cap" in str(actual):
            return Analysis("memory", "def-bpe", "the implementation hit the worker's memory cap on this text",
                            "memory")
        return Analysis(finding.kind, "def-bpe", f"encoding is defined on every text, but the implementation"
                        f" {actual}", finding.kind)

    def key(self, finding: Finding, existing: Collection[str] = ()) -> tuple[str, bool]:
        """The group key of ``finding``, and whether it was diagnosed (not taken from its pre-key)."""
        pre = self.pre_key(finding)
        self.seen[pre] += 1
        count = self.seen[pre]
        known = self.known.get(pre)
        if known is not None and not (count <= RECHECK_UP_TO and count & (count - 1) == 0):
            self.last_fits = self.fits.get(pre, (known,))
            return known, False
        analysis = self.diagnose(finding)
        chosen = self.choose(analysis, existing)
        self.fits[pre] = self.last_fits = tuple(analysis.keys or [analysis.key])
        self.known.setdefault(pre, chosen)
        return chosen, True

    @staticmethod
    def choose(analysis: Analysis, existing: Collection[str]) -> str:
        """Among the keys that fit a diagnosis, one of a group that ``existing`` already has (the largest, when it
        maps keys to groups: a text two causes explain alike joins the cause with more texts), else the first."""
        keys = analysis.keys or [analysis.key]
        present = [key for key in keys if key in existing]
        if not present:
            return keys[0]
        if isinstance(existing, Mapping):
            return max(present, key=lambda key: getattr(existing[key], "count", 0))
        return present[0]


@dataclass
class Group:
    """The findings of one cause: how many, the smallest, when first seen, and whether it is set aside."""

    key: str
    finding: Finding
    count: int
    first_seen: float
    ignored_by: str | None = None
    fits: frozenset[str] = frozenset()  # the keys every text of the group fits (its own among them)

    @property
    def ignored(self) -> bool:
        return self.ignored_by is not None


class Groups:
    """Every group of a check, in the order first seen."""

    def __init__(self, classifier: Classifier, ignore: Sequence[str] = ()) -> None:
        self.classifier = classifier
        self.ignore = list(ignore)
        self.by_key: dict[str, Group] = {}
        self.on_new_group: Callable[[], None] | None = None  # told of each new group (the search keeps time)

    def __len__(self) -> int:
        return len(self.by_key)

    def add(self, finding: Finding) -> Group:
        """Count ``finding`` in its group (a new one when its key is new); keep the group's smallest text, which
        is always diagnosed itself (a pre-key that two causes share does not make it another cause's text)."""
        key, diagnosed = self.classifier.key(finding, self.by_key)
        fits = frozenset(self.classifier.last_fits) | {key}
        group = self.by_key.get(key)
        if group is not None and not diagnosed and len(finding.text) < len(group.finding.text):
            analysis = self.classifier.diagnose(finding)
            fits = frozenset(analysis.keys or [analysis.key])
            if key not in fits:
                key = self.classifier.choose(analysis, self.by_key)
                group = self.by_key.get(key)
        if group is None:
            group = Group(key, finding, 0, time.monotonic(), ignored_by(key, self.ignore), fits | {key})
            self.by_key[key] = group
            if self.on_new_group is not None:
                self.on_new_group()
        else:
            group.fits &= fits | {key}
            if len(finding.text) < len(group.finding.text):
                group.finding = finding
        group.count += 1
        return group

    def fold(self) -> None:
        """Count each group every text of which fits another group's key too (a text two causes explain alike:
        white space that a greedy merge and a wrong cut both leave in pieces) in the largest such group, when that
        is larger: the group was made by whichever cause's text came first, its texts belong to the cause with
        more.  Smallest groups first; groups set aside and not stay apart."""
        for group in sorted(self.by_key.values(), key=lambda g: g.count):
            others = [self.by_key[key] for key in sorted(group.fits) if key != group.key and key in self.by_key
                      and self.by_key[key].ignored == group.ignored]
            if not others:
                continue
            target = max(others, key=lambda g: g.count)
            if target.count < group.count:
                continue
            target.count += group.count
            target.first_seen = min(target.first_seen, group.first_seen)
            if len(group.finding.text) < len(target.finding.text):
                target.finding = group.finding
            del self.by_key[group.key]

    def ordered(self) -> list[Group]:
        """The groups not set aside first, each part in the order first seen."""
        groups = list(self.by_key.values())
        return [g for g in groups if not g.ignored] + [g for g in groups if g.ignored]
