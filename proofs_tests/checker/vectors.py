"""A known-answer suite: short texts covering every behaviour the checker knows, with the reference's ids.

A port's own CI runs the suite without Python (``bpeproof vectors`` writes it; docs/check-a-port.md has runners):
each vector is a text, the ids the vocabulary file's own semantics give it (the reference,
``bpeproof.impl.pipelines.registry.load_tokenizer``), and whether special tokens are allowed; every vector is also
a decode round trip (``decode(ids) == text``).

The texts are the checker's own (``texts.TextGenerator`` and its sources, the short examples of each pattern
variant of ``variants.py``, one text of each edge character, category, token and special token); each is judged
by the *behaviours* it exercises (``Behaviours.of``):

- ``alt<n>:<category>``: the pattern's top-level alternative n (``diagnosis.matched_alternative``) matched a piece
  holding a character of that Unicode general category; ``cut:alt<n>:<kind>|<kind>``: a piece of alternative n
  ended where a character of the second kind follows (a quantifier's bound, a lookahead);
- ``split:<variant>`` / ``merge:<variant>``: a known way a port encodes otherwise (``variants.PATTERN_VARIANTS``,
  ``variants.MERGE_VARIANTS``, so the whole-piece lookup against merging) gives other ids on it;
  ``merge:tie``: merging one of its pieces meets two equal lowest ranks;
- ``long-piece:alt<n>`` / ``long-run:<category>``: a piece of 32 bytes or more, a run of 16 equal characters;
- ``edge:U+XXXX`` (and ``first:``, ``last:``): a code point where byte tables and decoders go wrong (the first and
  last of each UTF-8 length, NUL, U+0085, U+FEFF, U+2028…), anywhere or at either end of the text;
- ``category:<Xx>``, ``normalisation:<form>`` (the text changes under NFC, NFD, NFKC or NFKD);
- ``special:<name>:allowed`` / ``special:<name>:text``: a special token read as one, or its name as ordinary text;
- ``token:<id>``: a token of the vocabulary in the ids (a bundled vocabulary may lack it).

``choose`` keeps, shortest text first, each candidate that covers a behaviour not yet covered: first every kind
but tokens, then tokens, up to ``maximum`` vectors.  Everything is seeded: the same file gives the same vectors.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bpeproof.impl.io.atomic import atomic_write_files
from bpeproof.proofs_tests.checker.diagnosis import matched_alternative, top_level_alternatives
from bpeproof.proofs_tests.checker.shrink import deletions, greedy
from bpeproof.proofs_tests.checker.texts import (
    EDGES,
    SAMPLE,
    SPACES,
    TextGenerator,
    category_samples,
    token_texts,
)
from bpeproof.proofs_tests.checker.variants import (
    CONTESTED_SPACES,
    MERGE_VARIANTS,
    PATTERN_VARIANTS,
    Reruns,
    same_kind,
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


@dataclass(frozen=True)
class Vector:
    """A text, its ids, whether special tokens are allowed (``allowed_special="all"``), and what a decode of the
    ids gives when that is not the text (``decoded``: a normalizer changed it)."""

    text: str
    ids: tuple[int, ...]
    allowed_special: bool = False
    decoded: str | None = None

    def json_line(self) -> str:
        """One line of ``vectors.jsonl``: ASCII only, so that any reader may cut the file at ``\\n``."""
        document: dict[str, object] = {"text": self.text, "ids": list(self.ids)}
        if self.allowed_special:
            document["allowed_special"] = "all"
        if self.decoded is not None:
            document["decoded"] = self.decoded
        return json.dumps(document)

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
        """The known variants (``variants.py``) that give other ids on ``text``, and ties met in merging."""
        found: set[str] = set()
        for variant in PATTERN_VARIANTS:
            other = self.reruns.pieces(variant, text)
            if other is not None and other != list(pieces) and self._merged(other) != list(ids):
                found.add(f"split:{variant.name}")
        for piece in dict.fromkeys(pieces):
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
        return found

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
            rank = self.reruns.variants.bytes_rank
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


def choose(reference: Any, maximum: int = 2000, seed: int = SEED, drawn: int = DRAWN,
           decode: Callable[[list[int]], str | None] | None = None) -> list[Vector]:
    """The vectors (see the module docstring): shortest first, each covering a behaviour not yet covered, each
    text cut down to what covers its new behaviours; every kind but tokens first, then the tokens.  ``decode``:
    the file's own library's decode (``library.Library.decode``), which a vector's ``decoded`` records where it
    is not the text."""
    chosen = _choose(reference, maximum, seed, drawn)
    if decode is None:
        return chosen
    out: list[Vector] = []
    for vector in chosen:
        back = None if vector.allowed_special else decode(list(vector.ids))
        out.append(vector if back is None or back == vector.text else
                   Vector(vector.text, vector.ids, vector.allowed_special, back))
    return out


def _choose(reference: Any, maximum: int, seed: int, drawn: int) -> list[Vector]:
    behaviours = Behaviours(reference)
    judged = [judge(behaviours, text, allowed) for text, allowed in dict.fromkeys(candidates(reference, seed, drawn))
              if SEPARATOR.strip() not in text]
    judged.sort(key=Judged.order)
    chosen: dict[tuple[str, bool], Vector] = {}
    covered: set[str] = set()
    for item in judged:
        if len(chosen) >= maximum:
            return list(chosen.values())
        new = item.core - covered
        if new:
            item = minimized(behaviours, item, new)
            covered |= item.core
            chosen.setdefault((item.text, item.allowed), Vector(item.text, tuple(item.ids), item.allowed))
    for item in judged:
        if len(chosen) >= maximum:
            break
        new = item.tokens - covered
        if new and (item.text, item.allowed) not in chosen:
            covered |= item.tokens
            chosen[(item.text, item.allowed)] = Vector(item.text, tuple(item.ids), item.allowed)
    return list(chosen.values())


def write(vectors: Sequence[Vector], folder: str | Path) -> list[Path]:
    """Write ``vectors.jsonl`` (every vector) and llama.cpp's ``vectors.inp`` / ``vectors.out`` (those without
    special tokens: llama.cpp's test does not parse them) into ``folder``, all at once; the paths written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    plain = [vector for vector in vectors if not vector.allowed_special]
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
             decode: Callable[[list[int]], str] | None = None) -> list[str]:
    """What a port gets wrong on the vectors: ``encode(text)`` (``encode(text, allowed_special="all")`` where special
    tokens are allowed) against the ids, and ``decode(ids)`` against the text; an exception counts as wrong."""
    out: list[str] = []
    for vector in vectors:
        got: object
        try:
            got = list(encode(vector.text, allowed_special="all") if vector.allowed_special else encode(vector.text))
        except Exception as error:
            got = f"{type(error).__name__}: {error}"
        if got != list(vector.ids):
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
