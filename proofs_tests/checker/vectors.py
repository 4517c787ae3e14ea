"""A known-answer suite: short texts covering every behaviour the checker knows, with the reference's ids.

A port's own CI runs the suite without Python (``bpeproof vectors`` writes it; docs/check-a-port.md has runners):
each vector is a text, the ids the vocabulary file's own semantics give it (the reference,
``bpeproof.impl.tokenizer.load_tokenizer``), and whether special tokens are allowed; every vector is also
a decode round trip (``decode(ids) == text``).

The texts are the checker's own (``texts.TextGenerator`` and its sources, the short examples of each pattern
variant of ``impl/pre_tokenizers/pattern_variants.py``, one text of each edge character, category, token and special
token); each is judged by the *behaviours* it exercises (``Behaviours.of``):

- ``alt<n>:<category>``: the pattern's top-level alternative n (``diagnosis.matched_alternative``) matched a piece
  holding a character of that Unicode general category; ``cut:alt<n>:<kind>|<kind>``: a piece of alternative n
  ended where a character of the second kind follows (a quantifier's bound, a lookahead);
- ``split:<variant>`` / ``merge:<variant>``: a known way a port encodes otherwise (``PATTERN_VARIANTS``,
  ``MERGE_VARIANTS``, so the whole-piece lookup against merging) gives other ids on it;
  ``merge:tie``: merging one of its pieces meets two equal lowest ranks;
- ``long-piece:alt<n>`` / ``long-run:<category>``: a piece of 32 bytes or more, a run of 16 equal characters;
- ``edge:U+XXXX`` (and ``first:``, ``last:``): a code point where byte tables and decoders go wrong (the first and
  last of each UTF-8 length, NUL, U+0085, U+FEFF, U+2028…), anywhere or at either end of the text;
- ``category:<Xx>``, ``normalisation:<form>`` (the text changes under NFC, NFD, NFKC or NFKD);
- ``special:<name>:allowed`` / ``special:<name>:text``: a special token read as one, or its name as ordinary text;
- ``token:<id>``: a token of the vocabulary in the ids (a bundled vocabulary may lack it).

``choose`` keeps, shortest text first, each candidate that covers a behaviour not yet covered (every kind but
tokens), cut down while it still covers them.  Then the *shapes* where ports are known to go wrong, each once and
whatever the candidates covered (``shapes``):

- ``space:U+XXXX:<position>``: each character some engine's ``\\s`` holds (``WHITE_SPACE``) after and before a
  run of spaces, before a word, between letters, before a newline (``SPACE_POSITIONS``): 192 texts;
- ``category:<Xx>:<position>``: one code point of each general category, not ASCII, in each position of
  ``texts.UNICODE_POSITIONS`` (where a file's pre-tokenizer is a list of steps, no alternative tells them apart):
  348 texts;
- ``unicode:<pinned>><newer>><older>:<position>``: one code point of each kind of change of general category
  between the Unicode versions in use (``texts.changed_kinds``: 29 kinds for 28,000 code points) in each
  position where a pattern's classes decide a cut (``texts.UNICODE_POSITIONS``): 348 short texts;
- ``surrogate:<text>``: a lone surrogate, alone and between neighbours, where the file's library has an answer
  (tiktoken replaces each half with U+FFFD; tokenizers and sentencepiece raise: none there);
- ``long:<shape>:<length>``: a run of each kind of space, letter, digit, mark, punctuation, CJK and emoji, and a
  piece of several characters of each class (``LONG_SHAPES``), just past 64, 256 and 1,000 bytes, where ports
  switch algorithms; the runs of ``LONGEST_SHAPES`` past 10,000 bytes too.

Then the tokens, up to ``maximum`` vectors and ``MAX_BYTES`` bytes.  Everything is seeded: the same file gives
the same vectors (the Unicode kinds depend on the installed ``regex`` module's tables and Python's).
"""

from __future__ import annotations

import json
import math
import random
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bpeproof.impl.io.atomic import atomic_write_files
from bpeproof.impl.models.variants import MERGE_VARIANTS
from bpeproof.impl.pre_tokenizers.pattern_variants import PATTERN_VARIANTS
from bpeproof.proofs_tests.checker.diagnosis import matched_alternative, top_level_alternatives
from bpeproof.proofs_tests.checker.reruns import CONTESTED_SPACES, Reruns, same_kind
from bpeproof.proofs_tests.checker.shrink import deletions, greedy
from bpeproof.proofs_tests.checker.texts import (
    COMBINING,
    DIGITS,
    EDGES,
    EMOJI,
    FLAGS,
    LONE_SURROGATE,
    PUNCTUATION,
    SAMPLE,
    SCRIPTS,
    SPACES,
    SURROGATE_AROUND,
    SURROGATE_HALVES,
    UNICODE_POSITIONS,
    TextGenerator,
    category_samples,
    changed_chars,
    changed_kinds,
    replace_surrogates,
    token_texts,
)

#: The files of a suite: JSON lines, and llama.cpp's pair (``tests/test-tokenizer-0.cpp``).
JSONL, INP, OUT = "vectors.jsonl", "vectors.inp", "vectors.out"
#: The line after each text of a ``.inp`` file.
SEPARATOR = "\n__ggml_vocab_test__\n"
#: Code points where byte tables, white space classes and decoders go wrong.
EDGE_CHARS = tuple(dict.fromkeys([*EDGES, "\u0085", "\u00a0", "\u2028", "\u2029", "\u3000", "\ufffd",
                                  *sorted(CONTESTED_SPACES)]))
#: The seed of the generated candidates, and how many are drawn.
SEED = 22
DRAWN = 6000
#: A piece this long (bytes) or a run of one character this long is a long one.
LONG_PIECE = 32
LONG_RUN = 16
#: Ties are looked for in pieces up to this many bytes (merging in Python is quadratic).
TIE_BYTES = 64
#: Special tokens' names are also drawn inside other text, three texts for each of this many names.
SPECIALS_IN_TEXT = 16
#: Texts up to this many characters are minimized (``minimized``); longer ones are kept whole.
SHRUNK_CHARS = 64
#: Lengths (bytes) past which ports are known to switch algorithms (a cache's bound, a second merge loop, a regular
#: expression engine's stack or backtracking limits): each long shape is written once just past each of them.
LONG_LENGTHS = (64, 256, 1000)
#: And the runs of ``LONGEST_SHAPES`` past this many too: every shape past it would take a suite past
#: ``MAX_BYTES`` (a run of one space costs 10 kB, one of U+0085 on cl100k 140 kB: each byte is an id).
LONGEST = 10_000
#: The long shapes: a name, what is repeated (one string: a run of it; several: drawn in turn, seeded, a piece of
#: one class that is no run), and what follows (a letter after spaces: the lookahead of ``\s+(?!\S)``).  Every
#: class a pattern treats apart: each kind of space, letters ASCII and not, upper case (o200k's pieces), a letter
#: with marks, digits, marks, punctuation, CJK, emoji.
LONG_SHAPES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    *((f"run of U+{ord(char):04X}", (char,), "") for char in " \u00a0\u3000\u2028\u0085\t\n"),
    ("run of CR LF", ("\r\n",), ""),
    ("spaces of every kind", tuple(" \t\u00a0\u3000\u2028\u0085\u2009\u200a\u202f\x0b\x0c"), ""),
    *((f"run of U+{ord(char):04X} before a letter", (char,), "a") for char in " \u00a0\u3000"),
    ("spaces and newlines", tuple(" \t\u00a0\n\r\n\u3000"), ""),
    ("run of U+0061", ("a",), ""), ("run of U+0041", ("A",), ""),
    ("ASCII letters", tuple("abcdefghijklmnopqrstuvwxyz"), ""),
    ("run of U+00E9", ("\u00e9",), ""),
    # Lower case only: o200k cuts a piece before each upper-case letter.
    ("letters", tuple(c for c in SCRIPTS["cyrillic"] + SCRIPTS["greek"] + SCRIPTS["latin"] if c.islower()
                      and not c.isascii()), ""),
    ("letters and marks", tuple(f"{base}{mark}" for base in "aeou" for mark in "\u0300\u0301\u0308"), ""),
    ("run of U+0031", ("1",), ""), ("digits", tuple("".join(DIGITS)), ""),
    ("run of U+0301", ("\u0301",), ""), ("marks", tuple(COMBINING), ""),
    ("run of U+0021", ("!",), ""), ("punctuation", tuple(PUNCTUATION), ""),
    ("run of U+7684", ("\u7684",), ""), ("CJK", tuple(SCRIPTS["cjk"]), ""),
    ("run of U+1F600", ("\U0001f600",), ""),
    ("emoji", (*EMOJI, *FLAGS, "\U0001f468\u200d\U0001f469\u200d\U0001f467"), ""),
)
#: The shapes also written past ``LONGEST``: every run of one space, and one run of each other class.
LONGEST_SHAPES = frozenset({
    *(name for name, parts, end in LONG_SHAPES if name.startswith("run of") and parts[0].isspace() and not end),
    "run of U+0020 before a letter", "run of U+0061", "run of U+00E9", "run of U+0031", "run of U+0301",
    "run of U+0021", "run of U+7684", "run of U+1F600"})
#: Every character some engine's ``\s`` holds (Unicode's White_Space, Python's and JavaScript's ``\s``, older
#: Unicode's U+180E, U+200B) and the positions where whether it is white space decides a cut: after a run of
#: spaces (``\s+(?!\S)`` looks ahead), before one, before a word (a letter's prefix), between letters, before a
#: newline (``\s*[\r\n]``).
WHITE_SPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u180e" + "".join(map(chr, range(0x2000, 0x200C)))
               + "\u2028\u2029\u202f\u205f\u3000\ufeff")
SPACE_POSITIONS = ("  {c}", "{c}  ", " {c}a", "{c}a", "a{c}b", "{c}\n")
#: The most a suite may take (its three files together): a vector that would take it further is left out.
MAX_BYTES = 2_000_000
#: Vectors at most (``--max``): room for the tokens after DeepSeek's 1,500 behaviours (1,283 added tokens) and
#: 450 shapes.
MAXIMUM = 3000


@dataclass(frozen=True)
class Vector:
    """A text, its ids, whether special tokens are allowed (``allowed_special="all"``), and what a decode of the
    ids gives when that is not the text (``decoded``: a normalizer changed it)."""

    text: str
    ids: tuple[int, ...]
    allowed_special: bool = False
    decoded: str | None = None

    def json_line(self) -> str:
        """One line of ``vectors.jsonl``: ASCII only, so that any reader may cut the file at ``\\n``.  A text
        with a lone surrogate says so first (``"lone_surrogate": true``): a reader whose strings cannot hold one
        (Rust's) sees it before parsing the text, and skips the line."""
        document: dict[str, object] = {"lone_surrogate": True} if self.lone_surrogate else {}
        document |= {"text": self.text, "ids": list(self.ids)}
        if self.allowed_special:
            document["allowed_special"] = "all"
        if self.decoded is not None:
            document["decoded"] = self.decoded
        return json.dumps(document)

    def size(self) -> int:
        """The bytes the vector takes in a suite (``write``): its line of ``vectors.jsonl``, and its text and ids
        in llama.cpp's pair unless it is left out there."""
        size = len(self.json_line()) + 1
        if not self.allowed_special and not self.lone_surrogate:
            size += len(self.text.encode("utf-8")) + len(SEPARATOR) + sum(len(str(t)) + 1 for t in self.ids) + 1
        return size

    @property
    def lone_surrogate(self) -> bool:
        """Whether the text holds a lone surrogate: not Unicode text, so a port may refuse it (``failures``)."""
        return LONE_SURROGATE.search(self.text) is not None

    @property
    def back(self) -> str:
        """What ``decode(ids)`` must give."""
        return self.text if self.decoded is None else self.decoded


class Behaviours:
    """What a text exercises of the reference (see the module docstring)."""

    def __init__(self, reference: Any) -> None:
        self.reference = reference
        self.reruns = Reruns(reference)
        self.pattern = self.reruns.pattern
        self.alternatives = len(top_level_alternatives(self.pattern)) if self.pattern is not None else 0
        self.specials = dict(reference.special_tokens)
        self.special_ids = frozenset(self.specials.values())
        # The file's own library reads special tokens in every text (a tokenizer.json): no vector holds a name as
        # ordinary text, which that library never gives.
        self.always = reference.library_allowed_special == "all"
        self._piece_merges: dict[str, frozenset[str]] = {}

    def ids(self, text: str, allowed: bool) -> list[int]:
        return list(self.reference.encode(text, allowed_special="all" if allowed or self.always else None))

    def of(self, text: str, ids: Sequence[int], allowed: bool) -> tuple[set[str], set[str]]:
        """The behaviours ``text`` exercises (its ids ``ids``): every kind but tokens, and its tokens."""
        found: set[str] = set()
        for name in self.specials:
            if name in text:
                found.add(f"special:{name}:{'allowed' if allowed else 'text'}")
        tokens = {f"token:{token}" for token in ids if token not in self.special_ids}
        if allowed:
            return found, tokens
        for char in text:
            found.add(f"category:{unicodedata.category(char)}")
            if char in EDGE_CHARS:
                found.add(f"edge:U+{ord(char):04X}")
        for where, char in (("first", text[:1]), ("last", text[-1:])):
            if char in EDGE_CHARS and char:
                found.add(f"{where}:U+{ord(char):04X}")
        for form in ("NFC", "NFD", "NFKC", "NFKD"):
            if unicodedata.normalize(form, text) != text:
                found.add(f"normalisation:{form}")
        found |= self._runs(text)
        pieces = self.reference.pre_tokenize(text)
        found |= self._pieces(text, pieces)
        found |= self._variants(text, ids, pieces)
        return found, tokens

    @staticmethod
    def _runs(text: str) -> set[str]:
        found: set[str] = set()
        start = 0
        for index in range(1, len(text) + 1):
            if index == len(text) or text[index] != text[start]:
                if index - start >= LONG_RUN:
                    found.add(f"long-run:{unicodedata.category(text[start])}")
                start = index
        return found

    def _pieces(self, text: str, pieces: Sequence[str]) -> set[str]:
        """The alternatives matched, with the categories they matched and the kind of character that ended them."""
        found: set[str] = set()
        offset = 0
        for index, piece in enumerate(pieces):
            alternative = "alt?"
            if self.pattern is not None:
                matched = matched_alternative(self.pattern, text, offset)
                if matched is not None:
                    alternative = f"alt{matched[0]}"
            found |= {f"{alternative}:{unicodedata.category(char)}" for char in piece}
            if index + 1 < len(pieces) and piece and pieces[index + 1]:
                found.add(f"cut:{alternative}:{same_kind(piece[-1])}|{same_kind(pieces[index + 1][0])}")
            if len(piece.encode("utf-8")) >= LONG_PIECE:
                found.add(f"long-piece:{alternative}")
            offset += len(piece)
        return found

    def _variants(self, text: str, ids: Sequence[int], pieces: Sequence[str]) -> set[str]:
        """The known variants (pattern and merge) that give other ids on ``text``, and ties met in merging."""
        found: set[str] = set()
        for variant in PATTERN_VARIANTS:
            other = self.reruns.pieces(variant, text)
            if other is not None and other != list(pieces) and self._merged(other) != list(ids):
                found.add(f"split:{variant.name}")
        for piece in dict.fromkeys(pieces):
            found |= self._merges(piece)
        return found

    def _merges(self, piece: str) -> frozenset[str]:
        """The merge variants that give other ids on ``piece``, and a tie met in merging it; each piece once (the
        same words recur in thousands of candidates)."""
        known = self._piece_merges.get(piece)
        if known is not None:
            return known
        found: set[str] = set()
        data = piece.encode("utf-8")
        own = self.reruns.own(data)
        for name in MERGE_VARIANTS:
            try:
                other_ids = self.reruns.variants.encode(name, data)
            except Exception:  # a model whose tables the variants cannot be built from
                continue
            if other_ids is not None and other_ids != own:
                found.add(f"merge:{name}")
        if len(data) <= TIE_BYTES and self._tied(data):
            found.add("merge:tie")
        self._piece_merges[piece] = frozenset(found)
        return self._piece_merges[piece]

    def _merged(self, pieces: Iterable[str]) -> list[int] | None:
        out: list[int] = []
        for piece in pieces:
            ids = self.reruns.own(piece.encode("utf-8"))
            if ids is None:
                return None
            out += ids
        return out

    def _tied(self, data: bytes) -> bool:
        """Whether merging ``data`` by the lowest rank of the joined bytes meets two equal lowest ranks."""
        try:
            rank = self.reruns.variants.earliest
        except Exception:
            return False
        parts = [data[i : i + 1] for i in range(len(data))]
        while len(parts) > 1:
            ranks = [rank.get(parts[i] + parts[i + 1]) for i in range(len(parts) - 1)]
            present = [(r[0], i) for i, r in enumerate(ranks) if r is not None]
            if not present:
                return False
            best = min(present)
            if sum(1 for r, _ in present if r == best[0]) > 1:
                return True
            i = best[1]
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        return False


def candidates(reference: Any, seed: int = SEED, drawn: int = DRAWN) -> list[tuple[str, bool]]:
    """The texts judged (and whether special tokens are allowed): one of each edge character, category, token and
    special token, each pattern variant's examples, and ``drawn`` texts of the checker's generator."""
    texts: list[str] = list(EDGE_CHARS) + SPACES + [char * 2 for char in EDGE_CHARS]
    texts += [f"{char}a" for char in EDGE_CHARS] + [f"a{char}" for char in EDGE_CHARS]
    for samples in category_samples().values():
        texts += samples[:3] + [f"a{samples[0]}", f" {samples[0]}", f"{samples[0]}1"]
    for variant in PATTERN_VARIANTS:
        try:
            texts += variant.examples()
        except Exception:  # a table the variant needs is not installed
            continue
    tokens, whole_only = token_texts(reference)
    texts += whole_only + tokens
    lines = SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True) if SAMPLE.is_file() else []
    specials = sorted(reference.special_tokens)
    generator = TextGenerator(seed, tokens, specials, None, whole_only, [line for line in lines if line.strip()])
    texts += [generator.draw()[0] for _ in range(drawn)]
    out = [(text, False) for text in texts]
    for name in specials:
        out += [(name, False), (name, True)]
    # Names among other text: a few of them (a file may have a thousand added tokens, each covered alone above).
    for _ in range(3 * min(len(specials), SPECIALS_IN_TEXT)):
        text = generator.special()
        out += [(text, False), (text, True)]
    return out


def long_texts(seed: int = SEED) -> list[tuple[str, str]]:
    """(behaviour, text) of each long shape (``LONG_SHAPES``) just past each of ``LONG_LENGTHS`` (and
    ``LONGEST`` for ``LONGEST_SHAPES``): the run or piece is the fewest characters whose UTF-8 is longer than the
    length; by length, then in the order of the shapes."""
    rng = random.Random(seed)
    out: list[tuple[int, int, str, str]] = []
    for order, (name, parts, end) in enumerate(LONG_SHAPES):
        for length in (*LONG_LENGTHS, *([LONGEST] if name in LONGEST_SHAPES else [])):
            chosen: list[str] = []
            size = 0
            while size <= length:
                part = parts[0] if len(parts) == 1 else rng.choice(parts)
                chosen.append(part)
                size += len(part.encode("utf-8"))
            out.append((length, order, f"long:{name}:{length}", "".join(chosen) + end))
    out.sort(key=lambda item: item[:2])
    return [(behaviour, text) for _, _, behaviour, text in out]


def space_texts() -> list[tuple[str, str]]:
    """(behaviour, text) of each character of ``WHITE_SPACE`` in each of ``SPACE_POSITIONS``: the engines' white
    space classes differ, and a port's shows only next to other spaces or a word."""
    return [(f"space:U+{ord(char):04X}:{position!r}", position.format(c=char))
            for char in WHITE_SPACE for position in SPACE_POSITIONS]


def category_texts() -> list[tuple[str, str]]:
    """(behaviour, text) of one code point of each general category in each of ``texts.UNICODE_POSITIONS``: the
    first of its category that is not ASCII (ports go wrong on the others' tables) and that every Unicode version
    in use classifies alike.  A file whose pre-tokenizer is a list of steps (a ``tokenizer.json``) has no
    alternatives to judge candidates by (``Behaviours._pieces``): these stand for them."""
    changed = frozenset(changed_chars())
    out: list[tuple[str, str]] = []
    for category, samples in sorted(category_samples().items()):
        char = next((c for c in samples if not c.isascii() and c not in changed), None)
        if char is not None:
            out += [(f"category:{category}:{position!r}", position.format(c=char)) for position in UNICODE_POSITIONS]
    return out


def unicode_texts() -> list[tuple[str, str]]:
    """(behaviour, text) of one code point of each kind of change between the Unicode versions in use
    (``texts.changed_kinds``: its category pinned, in newer tables, in older ones) in each position where a
    pattern's classes decide a cut (``texts.UNICODE_POSITIONS``).  Each kind, not each of the 28,000 code
    points: a port on other tables goes wrong on a kind (an unassigned code point that became a letter), and
    the code points of one kind fall into the same classes of every pattern."""
    return [(f"unicode:{'>'.join(kind)}:{position!r}", position.format(c=char))
            for kind, char in changed_kinds().items() for position in UNICODE_POSITIONS]


def surrogate_texts() -> list[tuple[str, str]]:
    """(behaviour, text) of each lone surrogate shape (``texts.SURROGATE_HALVES``) alone, and of a high half
    before and after each neighbour of ``texts.SURROGATE_AROUND``; none where JSON would join two halves."""
    texts = [*SURROGATE_HALVES, *(f"{around}\ud800" for around in SURROGATE_AROUND if around),
             *(f"\ud800{around}" for around in SURROGATE_AROUND if around)]
    return [(f"surrogate:{text!r}", text) for text in dict.fromkeys(texts) if json.loads(json.dumps(text)) == text]


@dataclass
class Judged:
    """A candidate with its ids and the behaviours it covers (every kind but tokens, and tokens)."""

    text: str
    allowed: bool
    ids: list[int]
    core: set[str]
    tokens: set[str]

    def order(self) -> tuple[int, str, bool]:
        return len(self.text.encode("utf-8")), self.text, self.allowed


def judge(behaviours: Behaviours, text: str, allowed: bool) -> Judged:
    ids = behaviours.ids(text, allowed)
    if behaviours.always:  # marked allowed where a special token is read, so that any runner reads it
        allowed = not behaviours.special_ids.isdisjoint(ids)
    return Judged(text, allowed, ids, *behaviours.of(text, ids, allowed))


def minimized(behaviours: Behaviours, judged: Judged, wanted: set[str]) -> Judged:
    """``judged``'s text with chunks cut out (``shrink.greedy`` over ``shrink.deletions``) while it still covers
    every behaviour of ``wanted``; texts longer than ``SHRUNK_CHARS`` are kept as they are."""
    if len(judged.text) > SHRUNK_CHARS:
        return judged
    # A text without a wanted special token's name cannot cover it: not judged (DeepSeek's 1,283 names each took
    # some forty judgements of their cut-down spellings, two thirds of the run).
    names = [item[len("special:") : item.rindex(":")] for item in wanted if item.startswith("special:")]

    def attempt(texts: Sequence[str]) -> tuple[str, Judged] | None:
        for text in texts:
            if text and SEPARATOR.strip() not in text and all(name in text for name in names):
                candidate = judge(behaviours, text, judged.allowed)
                if wanted <= candidate.core:
                    return text, candidate
        return None

    return greedy(judged.text, judged, deletions, attempt, math.inf)[1]


def choose(reference: Any, maximum: int = MAXIMUM, seed: int = SEED, drawn: int = DRAWN,
           decode: Callable[[list[int]], str | None] | None = None, surrogates: str = "refuse") -> list[Vector]:
    """The vectors (see the module docstring), up to ``maximum``: shortest first, each covering a behaviour not
    yet covered, each text cut down to what covers its new behaviours; then the shapes (``shapes``: each kind of
    Unicode change in each position, the lone surrogates where ``surrogates`` is ``"replace"``, the file's
    library's answer, ``library.Library.surrogates``, each long shape past each of its lengths); then the tokens;
    none that would take the suite past ``MAX_BYTES``.  ``decode``: the file's own library's decode
    (``library.Library.decode``), which a vector's ``decoded`` records where it is not the text."""
    behaviours = Behaviours(reference)
    judged = [judge(behaviours, text, allowed) for text, allowed in dict.fromkeys(candidates(reference, seed, drawn))
              if SEPARATOR.strip() not in text]
    judged.sort(key=Judged.order)
    chosen: dict[tuple[str, bool], Vector] = {}
    size = 0

    def add(text: str, ids: Sequence[int], allowed: bool) -> None:
        nonlocal size
        if (text, allowed) in chosen:
            return
        vector = Vector(text, tuple(ids), allowed)
        back = None if allowed or decode is None else decode(list(ids))
        if back is None and vector.lone_surrogate:
            back = replace_surrogates(text)  # the ids are those of this text, which their decode spells
        if back is not None and back != text:
            vector = Vector(text, tuple(ids), allowed, back)
        cost = vector.size()
        if size + cost <= MAX_BYTES:
            chosen[(text, allowed)] = vector
            size += cost

    covered: set[str] = set()
    for item in judged:
        if len(chosen) >= maximum:
            return list(chosen.values())
        new = item.core - covered
        if new:
            item = minimized(behaviours, item, new)
            covered |= item.core
            add(item.text, item.ids, item.allowed)
    # The shapes are not judged (``Behaviours.of`` on 10,000 bytes would merge them by every variant): each is a
    # behaviour of its own, covered by its text.
    for _behaviour, text in shapes(surrogates, seed):
        if len(chosen) >= maximum:
            return list(chosen.values())
        # A lone surrogate's ids are those of the text as the library makes it (each half U+FFFD).
        ids = behaviours.ids(replace_surrogates(text) if LONE_SURROGATE.search(text) else text, False)
        add(text, ids, behaviours.always and not behaviours.special_ids.isdisjoint(ids))
    for item in judged:
        if len(chosen) >= maximum:
            break
        new = item.tokens - covered
        if new and (item.text, item.allowed) not in chosen:
            covered |= item.tokens
            add(item.text, item.ids, item.allowed)
    return list(chosen.values())


def shapes(surrogates: str = "refuse", seed: int = SEED) -> list[tuple[str, str]]:
    """(behaviour, text) of every shape a suite holds whatever the candidates cover: each kind of white space,
    each general category and each kind of Unicode change in each position, the lone surrogates (only where the
    library replaces them: one that raises has no answer to record), the long shapes, in that order."""
    return [*space_texts(), *category_texts(), *unicode_texts(),
            *(surrogate_texts() if surrogates == "replace" else []), *long_texts(seed)]


def write(vectors: Sequence[Vector], folder: str | Path) -> list[Path]:
    """Write ``vectors.jsonl`` (every vector) and llama.cpp's ``vectors.inp`` / ``vectors.out`` (those without
    special tokens: llama.cpp's test does not parse them, nor lone surrogates: UTF-8 cannot carry them) into
    ``folder``, all at once; the paths written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    plain = [vector for vector in vectors if not vector.allowed_special and not vector.lone_surrogate]
    files = [
        (folder / JSONL, "".join(vector.json_line() + "\n" for vector in vectors).encode("ascii")),
        (folder / INP, "".join(vector.text + SEPARATOR for vector in plain).encode("utf-8")),
        (folder / OUT, "".join("".join(f" {token}" for token in vector.ids) + "\n" for vector in plain)
         .encode("ascii")),
    ]
    atomic_write_files([(path, data) for path, data in files])
    return [path for path, _ in files]


def read(path: str | Path) -> list[Vector]:
    """The vectors of a ``vectors.jsonl`` file."""
    out: list[Vector] = []
    for line in Path(path).read_text(encoding="ascii").splitlines():
        document = json.loads(line)
        out.append(Vector(document["text"], tuple(document["ids"]), document.get("allowed_special") == "all",
                          document.get("decoded")))
    return out


def failures(vectors: Iterable[Vector], encode: Callable[..., Sequence[int]],
             decode: Callable[[list[int]], str] | None = None, limit: int | None = None) -> list[str]:
    """What a port gets wrong on the vectors: ``encode(text)`` (``encode(text, allowed_special="all")`` where special
    tokens are allowed) against the ids, and ``decode(ids)`` against the text; an exception counts as wrong, but
    on a text with a lone surrogate, which is not Unicode text and which a port may refuse (``check`` counts no
    difference there either).  ``limit``: stop after that many (a verdict needs one)."""
    out: list[str] = []
    for vector in vectors:
        if limit is not None and len(out) >= limit:
            break
        got: object
        refused = False
        try:
            got = list(encode(vector.text, allowed_special="all") if vector.allowed_special else encode(vector.text))
        except Exception as error:
            got = f"{type(error).__name__}: {error}"
            refused = vector.lone_surrogate
        if got != list(vector.ids) and not refused:
            out.append(f"encode({vector.text!r}) = {got}, expected {list(vector.ids)}")
        if decode is None:
            continue
        try:
            text: object = decode(list(vector.ids))
        except Exception as error:
            text = f"{type(error).__name__}: {error}"
        if text != vector.back:
            out.append(f"decode({list(vector.ids)}) = {text!r}, expected {vector.back!r}")
    return out
