"""Texts that stress a tokenizer's two layers: pre-tokenization (the split) and merging (inside a piece).

Plain seeded generators (``random.Random``), not Hypothesis: a text → ids check
needs thousands of texts a second, and its shrinking is done by the checker on the
text itself (``shrink``).  ``TextGenerator.draw()`` returns one
text and the name of the source it came from:

* ``pretok``: fragments of every Unicode general category and the main scripts
  (Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai, CJK, Hangul, kana),
  combining marks, digits of other scripts and runs of 1–10 digits, contractions
  in every case variant and with U+2019 (alone or followed by letters), whitespace
  runs mixing ' ', '\\t', '\\n', '\\r\\n', U+00A0, U+3000, U+2028 (leading and
  trailing too), punctuation runs followed by newlines, NUL and the first and last
  code point of each UTF-8 length, emoji with ZWJ, skin-tone modifiers, flags and keycaps;
* ``tokens``: concatenations of the vocabulary's own tokens (near ties, tokens
  reached only by the whole-piece lookup), sometimes one token alone;
* ``runs``: long runs (``"a" * n``, ``" " * n``, ``"\\n" * n``, digit and pair runs);
* ``corpus``: lines of real text: the files given (``--corpus FILE…``, ``read_corpus``), else the multilingual
  sample shipped with the package (``data/sample.txt``: short lines in many scripts, and code, written for this
  project);
* ``special``: special-token names inside text;
* drawn apart, in place of some of the above: texts with a lone surrogate (``surrogate``) and with a code point
  that Unicode versions classify otherwise (``unicode_change``).
"""

from __future__ import annotations

import json
import os
import random
import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import open_binary
from bpeproof.proofs_tests.checker.reruns import token_table
from bpeproof.proofs_tests.checker.worker import TargetError

#: A lone surrogate: a half of a UTF-16 pair alone (or a pair written as two halves), not Unicode text.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@lru_cache(maxsize=1)
def changed_chars() -> tuple[str, ...]:
    """The code points whose general category differs between the Unicode versions a port may be built on: the
    version the reference pins (that of tiktoken's and tokenizers' engines), the ``regex`` module's newer one
    (Node's and ICU's are between them), and Python's older ``unicodedata`` (code points assigned since)."""
    from bpeproof.impl.pre_tokenizers.unicode_classes import changed_code_points, class_ranges

    changed = set(changed_code_points())
    # Assigned in the pinned version (private use and surrogates aside), unassigned in Python's.
    assigned = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe",
                          "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf"})
    for first, last in class_ranges(assigned):
        changed.update(code for code in range(first, last + 1) if unicodedata.category(chr(code)) == "Cn")
    return tuple(chr(code) for code in sorted(changed))


@lru_cache(maxsize=1)
def changed_kinds() -> dict[tuple[str, str, str], str]:
    """One code point of each kind of change among ``changed_chars``: its general category in the pinned version,
    in the ``regex`` module's tables and in Python's ``unicodedata`` → the first code point of that kind (some
    thirty kinds for 28,000 code points: a port on other tables goes wrong by kind, not by code point)."""
    import regex

    from bpeproof.impl.pre_tokenizers.unicode_classes import category_of

    # One match per code point names its category in the regex module's tables (Cn last: unassigned there).
    names = ["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf",
             "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cs", "Cn"]
    classify = regex.compile("|".join(f"(?P<{name}>\\p{{{name}}})" for name in names))
    kinds: dict[tuple[str, str, str], str] = {}
    for char in changed_chars():
        match = classify.match(char)
        newer = match.lastgroup if match is not None and match.lastgroup else "Cn"
        kinds.setdefault((category_of(ord(char)), newer, unicodedata.category(char)), char)
    return kinds


#: Where a code point's class decides a cut of the pattern (``TextGenerator.unicode_change``, the known-answer
#: suite): before a contraction, after a space, between digits, after a letter and a mark, doubled, between
#: letters, after an apostrophe, before a space, a newline, a digit.
UNICODE_POSITIONS = ("{c}'s", "{c}'T", " {c}", "1{c}2", "e\u0301{c}", "{c}{c}", "a{c}b", "{c}a", "'{c}", "{c} ",
                     "{c}\n", "{c}1")
#: The lone surrogates texts hold (``TextGenerator.surrogate``, the known-answer suite): the first and last high
#: and low halves, a high and a low of an emoji's pair alone, its pair swapped, two highs.
SURROGATE_HALVES = ("\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00", "\ude00\ud83d", "\ud800\ud800")
#: What stands around a lone surrogate.
SURROGATE_AROUND = ("", "a", " ", "1", "\u00e9", "\u4e2d", "'s", "\n", " a", "\U0001f600")


def replace_surrogates(text: str) -> str:
    """``text`` as tiktoken makes it before encoding a lone surrogate: through UTF-16, so that a pair written as
    two halves becomes its character and every other half U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


#: The text sample installed with the package: the corpus when no other is given.
SAMPLE = Path(__file__).resolve().parent / "data" / "sample.txt"
#: How much of each file given with ``--corpus`` is read (its start), and how many of its lines are kept.
CORPUS_BYTES = 4 * 1024 * 1024
CORPUS_LINES = 20_000

SCRIPTS: dict[str, str] = {
    "latin": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZàéîõüçñßÆøÅŁžİıſǅ",
    "cyrillic": "абвгдежзийклмнопрстуфхцчшщъыьэюяАБВГДЕЖЗИЙЁё",
    "greek": "αβγδεζηθικλμνξοπρστυφχψωΑΒΓΔΣΩάέήίϊΐς",
    "arabic": "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
    "hebrew": "אבגדהוזחטיכלמנסעפצקרשת",
    "devanagari": "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशषसह",
    "thai": "กขคงจฉชซญดตถทนบปผพฟภมยรลวศษสหอฮ",
    "cjk": "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年漢字",
    "hangul": "가나다라마바사아자차카타파하한국어글",
    "kana": "あいうえおかきくけこさしすせそアイウエオカキクケコー",
}
COMBINING = "\u0300\u0301\u0302\u0303\u0308\u0327\u0328\u030a\u0651\u093c\u094d\u0e31\u0e48\u05b7\u20dd\u3099"
DIGITS = ["0123456789", "٠١٢٣٤٥٦٧٨٩", "۰۱۲۳۴۵۶۷۸۹", "०१२३४५६७८९", "๐๑๒๓๔๕๖๗๘๙", "０１２３４５６７８９", "²³¹¼½¾ⅠⅡⅫ①⑩"]
CONTRACTIONS = ["s", "t", "re", "ve", "m", "ll", "d"]
SPACES = [" ", " ", " ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2028", "\u2029", "\x0b", "\x0c", "\u2009",
          "\u0085", "\u200b", "\x1c"]
PUNCTUATION = "!?.,;:-_()[]{}\"'/\\@#$%^&*+=<>|~`…—–“”‘’«»¿¡。、「」・"
EMOJI = ["😀", "👍", "👨", "👩", "👧", "❤", "🏳", "🌈", "🤷", "🧑", "💻", "🔥", "✨", "☕"]
SKIN = [chr(c) for c in range(0x1F3FB, 0x1F400)]
FLAGS = ["🇯🇵", "🇺🇸", "🇫🇷", "🇩🇪", "🇺🇦", "🇧🇷"]
KEYCAPS = ["1\ufe0f\u20e3", "#\ufe0f\u20e3", "*\u20e3"]
#: The first and last code point of each UTF-8 length, and other controls: where byte tables go wrong.
EDGES = ["\x00", "\x01", "\x1b", "\x7f", "\x80", "\x9f", "\xff", "\u07ff", "\u0800", "\ufeff", "\uffff",
         "\U00010000", "\U0010ffff"]
WORDS = ["the", "The", "THE", "hello", "world", "I", "you", "don", "can", "It", "we", "x", "ab", "abc", "aaaa",
         "naïve", "café", "Straße", "日本", "Привет", "print", "def", "return", "self", "0x1F", "1,000", "3.14"]


@lru_cache(maxsize=1)
def category_samples() -> dict[str, list[str]]:
    """Up to 400 assigned code points of each general category (surrogates left out: they are not text)."""
    found: dict[str, list[str]] = {}
    rng = random.Random(0)
    for code in [*range(0, 0x3400), *range(0xA000, 0x10000), *rng.sample(range(0x10000, 0x30000), 6000),
                 0xE0001, 0xE0041, 0xF0000]:
        char = chr(code)
        category = unicodedata.category(char)
        if category == "Cs":
            continue
        bucket = found.setdefault(category, [])
        if len(bucket) < 400:
            bucket.append(char)
    return found


@lru_cache(maxsize=1)
def corpus_lines() -> tuple[str, ...]:
    """Lines of real text when no ``--corpus`` is given: those of ``SAMPLE``, installed with the package, so that a
    check runs the same texts wherever it runs (a folder beside the checkout never changes them)."""
    text = SAMPLE.read_text(encoding="utf-8") if SAMPLE.is_file() else ""
    return tuple(line for line in text.splitlines(keepends=True) if line.strip())


def read_corpus(paths: Sequence[str]) -> tuple[str, ...]:
    """The lines of the text files ``paths`` (UTF-8, plain or gzip-compressed ``.gz``): of each, the lines in its
    first ``CORPUS_BYTES``, at most ``CORPUS_LINES`` of them (a seeded sample).  ``TargetError`` names a file that
    cannot be read, is not UTF-8 text, or holds no line."""
    rng = random.Random(1)
    lines: list[str] = []
    for path in paths:
        if not os.path.exists(path):
            raise TargetError(f"--corpus {path}: no such file")
        try:
            with open_binary(path) as handle:  # the one reader of compressed input (impl.io.files)
                data = handle.read(CORPUS_BYTES)
        except FormatError as error:
            raise TargetError(f"--corpus {path}: cannot be read: {error.problem}") from None
        except OSError as error:
            raise TargetError(f"--corpus {path}: cannot be read: {error}") from None
        if len(data) == CORPUS_BYTES:  # cut at the last whole line (and whole character)
            data = data[: data.rfind(b"\n") + 1] or data
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise TargetError(f"--corpus {path}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset"
                              f" {error.start})") from None
        chosen = [line for line in text.splitlines(keepends=True) if line.strip()]
        if not chosen:
            raise TargetError(f"--corpus {path}: holds no line of text")
        lines += chosen if len(chosen) <= CORPUS_LINES else rng.sample(chosen, CORPUS_LINES)
    return tuple(lines)


def token_texts(reference: Any, limit: int = 8_000, checked: int = 2_000) -> tuple[list[str], list[str]]:
    """The texts of (a sample of) the reference's tokens, and those of them that merging their bytes by the
    lowest rank does not reach (only a whole-piece lookup gives them).

    The second list is looked for among ``checked`` of the sampled tokens (all of them in a vocabulary that
    small): merging in Python costs a start-up of half a second for 8,000 tokens, and a rank file with such
    tokens has many (the planted ``unreachable`` file) or none (tiktoken's own)."""
    texts: list[str] = []
    whole_only: list[str] = []
    try:
        table = token_table(reference)
    except Exception:
        return texts, whole_only
    items = list(table.items())
    # The rank of a token's bytes: its id, the smallest where two ids have the same bytes (as
    # ``diagnosis.Variants`` ranks them without a rule list).
    keys = list(table)
    ascending = items if keys == sorted(keys) else sorted(items)
    rank = {data: token for token, data in reversed(ascending)}
    step = max(1, len(items) // limit)
    sample = items[::step]
    every = max(1, len(sample) // checked)
    for index, (token, data) in enumerate(sample):
        if len(data) > 1:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            texts.append(text)
            if index % every == 0 and _merged_by_rank(data, rank) != [token]:
                whole_only.append(text)
    return texts, whole_only


def _merged_by_rank(data: bytes, rank: dict[bytes, int]) -> list[int] | None:
    """``data``'s bytes merged by the lowest rank of the joined bytes (tiktoken's merge, no whole-piece
    lookup); None when a byte has no rank."""
    parts = [data[i : i + 1] for i in range(len(data))]
    while len(parts) > 1:
        best = -1
        best_rank = 0
        for i in range(len(parts) - 1):
            found = rank.get(parts[i] + parts[i + 1])
            if found is not None and (best < 0 or found < best_rank):
                best, best_rank = i, found
        if best < 0:
            break
        parts[best : best + 2] = [parts[best] + parts[best + 1]]
    try:
        return [rank[part] for part in parts]
    except KeyError:
        return None


class TextGenerator:
    """Seeded texts for a text → ids check (see the module docstring)."""

    def __init__(self, seed: int, token_texts: Sequence[str] = (), specials: Sequence[str] = (),
                 weights: dict[str, float] | None = None, whole_only: Sequence[str] = (),
                 corpus: Sequence[str] | None = None) -> None:
        self.rng = random.Random(seed)
        # Lone surrogates and code points that Unicode versions classify otherwise come from a generator of their
        # own: the other sources draw the same texts whether these are drawn or not.
        self.side_rng = random.Random(seed + 0x5D800)
        self.token_texts = list(token_texts)
        self.whole_only = list(whole_only)  # tokens that only the whole-piece lookup reaches
        self.specials = list(specials)
        self.lines = corpus_lines() if corpus is None else tuple(corpus)
        self.categories = category_samples()
        self.category_names = sorted(self.categories)
        sources: dict[str, float] = {"pretok": 5.0, "tokens": 3.0, "runs": 1.0}
        if self.lines:
            sources["corpus"] = 1.5
        if not self.token_texts:
            sources.pop("tokens")
        if weights:
            sources.update({k: v for k, v in weights.items() if k in sources})
        self.sources = list(sources)
        self.weights = [sources[name] for name in self.sources]
        self._fragments: list[Callable[[], str]] = [
            self.word, self.word, self.script, self.category, self.combining, self.digits, self.digits,
            self.contraction, self.contraction, self.spaces, self.spaces, self.spaces, self.punctuation,
            self.emoji, self.edge,
        ]

    # -- fragments --------------------------------------------------------------------------------------

    def word(self) -> str:
        word = self.rng.choice(WORDS)
        return word if self.rng.random() < 0.6 else " " + word

    def script(self) -> str:
        letters = SCRIPTS[self.rng.choice(sorted(SCRIPTS))]
        return "".join(self.rng.choice(letters) for _ in range(self.rng.randint(1, 8)))

    def category(self) -> str:
        name = self.rng.choice(self.category_names)
        return "".join(self.rng.choice(self.categories[name]) for _ in range(self.rng.randint(1, 3)))

    def combining(self) -> str:
        base = self.rng.choice(SCRIPTS["latin"] + SCRIPTS["devanagari"] + SCRIPTS["thai"] + " 1")
        return base + "".join(self.rng.choice(COMBINING) for _ in range(self.rng.randint(1, 3)))

    def digits(self) -> str:
        digits = self.rng.choice(DIGITS) if self.rng.random() < 0.4 else DIGITS[0]
        run = "".join(self.rng.choice(digits) for _ in range(self.rng.randint(1, 10)))
        return run if self.rng.random() < 0.7 else self.rng.choice(["", " ", "x", "$"]) + run

    def contraction(self) -> str:
        apostrophe = "'" if self.rng.random() < 0.7 else "\u2019"
        ending = "".join(c.upper() if self.rng.random() < 0.5 else c for c in self.rng.choice(CONTRACTIONS))
        before = self.rng.choice(["", "I", "you", "he", "don", "It", "THEY", " we", "1", " "])
        # Letters right after the ending decide whether the contraction is a piece of its own.
        after = self.rng.choice(["", "", "", "he", "x", "S", "é", "的"])
        return before + apostrophe + ending + after

    def edge(self) -> str:
        return "".join(self.rng.choice(EDGES) for _ in range(self.rng.randint(1, 2)))

    def spaces(self) -> str:
        return "".join(self.rng.choice(SPACES) for _ in range(self.rng.randint(1, 6)))

    def punctuation(self) -> str:
        run = "".join(self.rng.choice(PUNCTUATION) for _ in range(self.rng.randint(1, 4)))
        if self.rng.random() < 0.5:
            run += self.rng.choice(["\n", "\r\n", "\n\n", " \n", "\r"])
        return run

    def emoji(self) -> str:
        kind = self.rng.randint(0, 4)
        if kind == 0:
            return self.rng.choice(EMOJI) + self.rng.choice(SKIN)
        if kind == 1:
            return "\u200d".join(self.rng.choice(EMOJI) for _ in range(self.rng.randint(2, 4)))
        if kind == 2:
            return self.rng.choice(FLAGS) * self.rng.randint(1, 2)
        if kind == 3:
            return self.rng.choice(KEYCAPS)
        return self.rng.choice(EMOJI) + "\ufe0f"

    # -- sources ----------------------------------------------------------------------------------------

    def pretok(self) -> str:
        parts = [self.rng.choice(self._fragments)() for _ in range(self.rng.randint(1, 8))]
        if self.rng.random() < 0.2:
            parts.insert(0, self.spaces())
        if self.rng.random() < 0.2:
            parts.append(self.spaces())
        return "".join(parts)

    def tokens(self) -> str:
        count = 1 if self.rng.random() < 0.2 else self.rng.randint(2, 6)
        pool = self.whole_only if self.whole_only and self.rng.random() < 0.3 else self.token_texts
        parts = [self.rng.choice(pool) for _ in range(count)]
        if self.rng.random() < 0.3:
            parts.insert(self.rng.randint(0, len(parts)), self.rng.choice([" ", "  ", "\n", "'s", "1"]))
        return "".join(parts)

    def runs(self) -> str:
        unit = self.rng.choice(["a", " ", "\n", "ab", "1", "\t", "aa ", " a", "é", "的", "!", "\u00a0"])
        n = self.rng.choice([self.rng.randint(1, 20), self.rng.randint(20, 300)])
        text = unit * n
        if self.rng.random() < 0.4:
            text = self.rng.choice(["", "x", " "]) + text + self.rng.choice(["", "b", " x", "\n"])
        return text

    def corpus(self) -> str:
        index = self.rng.randrange(len(self.lines))
        text = "".join(self.lines[index : index + self.rng.randint(1, 3)])
        return text[:2000]

    def special(self) -> str:
        name = self.rng.choice(self.specials)
        return self.pretok()[:10] + name + self.pretok()[:10]

    def surrogate(self) -> str:
        """A text with a lone surrogate (U+D800–U+DFFF alone, which JSON and Python strings carry though it is
        not Unicode text): a high or low half, two highs, or a pair's halves swapped, between short fragments.  It
        is the text as a program reads it from the protocol's JSON, where a high half just before a low one
        is the pair's character."""
        rng = self.side_rng
        halves = rng.choice(SURROGATE_HALVES)
        text: str = json.loads(json.dumps(rng.choice(SURROGATE_AROUND) + halves + rng.choice(SURROGATE_AROUND)))
        return text

    def unicode_change(self) -> str:
        """A code point whose general category differs between the Unicode versions in use (``changed_chars``),
        where a pattern's classes decide a cut (``UNICODE_POSITIONS``)."""
        rng = self.side_rng
        char = rng.choice(changed_chars())
        return rng.choice(UNICODE_POSITIONS).format(c=char)

    def draw(self) -> tuple[str, str]:
        """One text and the name of its source."""
        source = self.rng.choices(self.sources, self.weights)[0]
        return getattr(self, source)(), source
