"""The text the audit reads and the words it compares: the corpora (or a built-in sample), chunks of them taken
at random, the words drawn from their pre-tokens, the vocabulary's own tokens, and generated strings."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bpeproof.audit.corpus_tasks import EngineCorpus, engine_corpora
from bpeproof.audit.file_view import FileView, pieces, sample_starts
from bpeproof.audit.libraries import Library
from bpeproof.impl.io.corpus import read_text
from bpeproof.impl.models.variants import MergeTable

if TYPE_CHECKING:
    from bpeproof.impl.parallel import TaskEngine

__all__ = [
    "BUILTIN_TEXT",
    "DEFAULT_SAMPLES",
    "MAX_WORD_BYTES",
    "SAMPLE_TEXT_CHARS",
    "SampledWords",
    "corpus_texts",
    "draw_words",
    "generated_words",
    "read_corpus",
    "sample_corpus",
    "sample_text",
    "sample_words",
]

#: Words longer than this (in bytes) are not compared (some libraries merge a word in quadratic time).
MAX_WORD_BYTES = 50
#: Distinct corpus words compared by default.
DEFAULT_SAMPLES = 4000
#: Text taken from each corpus for word sampling, in characters.
SAMPLE_TEXT_CHARS = 1 << 20

#: The built-in sample used when no corpus is given: English, Japanese, code, emoji and a few more scripts.
BUILTIN_TEXT = """\
Byte-pair encoding starts from the 256 bytes and learns merges: the most frequent adjacent pair becomes a new
token, again and again. It's simple, it's fast, and it never loses a byte — every text round-trips.
The quick brown fox jumps over the lazy dog; 1234567890 numbers, 3.14159 and 2,718 are split by the pattern.

トークン化は、テキストを小さな単位に分ける処理です。バイト対符号化（BPE）は、よく現れる隣り合う組を
新しいトークンとして登録していきます。日本語の文字は UTF-8 で三バイトなので、トークンの境界が文字の途中に
来ることもあります。東京、大阪、京都。カタカナ、ひらがな、漢字。

def encode(rules: list[tuple[int, int, int]], data: bytes) -> list[int]:
    tokens = list(data)
    for a, b, c in rules:
        tokens = merge(tokens, a, b, c)  # M_r, left to right
    return tokens

if __name__ == "__main__":
    print(encode([(97, 98, 256)], b"abab"))   # [256, 256]

Emoji: 😀 😃 😄 👍🏽 👩‍💻 🇯🇵 🏳️‍🌈 ❤️ — family: 👨‍👩‍👧‍👦.
Français : « Où est la bibliothèque ? » Deutsch: Größe, Straße, Übermäßig. Español: ¿Dónde está? ¡Olé!
Русский: Привет, мир! Ελληνικά: Καλημέρα κόσμε. 中文：字节对编码是一种压缩算法。한국어: 안녕하세요 세계.
العربية: مرحبا بالعالم. हिन्दी: नमस्ते दुनिया।
\t\tindented\tline   with   spaces\r\nwindows line\n\n\n
"""


def read_corpus(path: str) -> str:
    """A UTF-8 text file, plain or gzip (``bpeproof.impl.io.corpus.read_text``: ``FormatError`` naming the file)."""
    return read_text(path)


def corpus_texts(corpora: Sequence[str], engine: TaskEngine | None, path: str, pattern: str | None,
                 library: Library | None, view: FileView, progress: bool) -> list[tuple[str, str | EngineCorpus]]:
    """Each corpus by its file name: measured by the engine's tasks when there is an engine
    (``bpeproof.audit.corpus_tasks``, never read whole here), else read; the built-in sample when none is given."""
    if corpora and engine is not None:
        measured = engine_corpora(engine, corpora, path, pattern, library, frozenset(view.missing_byte_ids), progress)
        return [(Path(name).name, corpus) for name, corpus in zip(corpora, measured, strict=True)]
    if corpora:
        return [(Path(name).name, read_corpus(name)) for name in corpora]
    return [("built-in sample", BUILTIN_TEXT)]


def sample_text(text: str, limit: int, rng: random.Random) -> str:
    """At most ``limit`` characters of ``text``: all of it, or a few chunks taken at random places."""
    drawn = sample_starts(len(text), limit, rng)
    if drawn is None:
        return text
    starts, size = drawn
    return "\n".join(text[start : start + size] for start in starts)


def sample_corpus(text: str | EngineCorpus, limit: int, rng: random.Random) -> str:
    """``sample_text`` of a corpus read here or measured by an engine's tasks (the same characters)."""
    return sample_text(text, limit, rng) if isinstance(text, str) else text.sample(limit, rng)


@dataclass(frozen=True)
class SampledWords:
    """The words the audit compares: ``counts`` (every pre-token of the sampled text, by its count), ``corpus``
    (those drawn from it), ``tokens`` (the vocabulary's own tokens, unreachable ones among them), ``generated``
    (``generated_words``), and ``compared`` (the three, each word once, in that order)."""

    counts: Counter[bytes]
    corpus: list[bytes]
    tokens: list[bytes]
    generated: list[bytes]
    compared: list[bytes]


def sample_words(texts: Sequence[tuple[str, str | EngineCorpus]], view: FileView, library: Library | None,
                 pattern: str | None, unreachable: Mapping[str, Any], samples: int, rng: random.Random) -> SampledWords:
    """The words compared: ``samples`` distinct words of the texts (cut by the library, or without one by
    ``pattern``), a quarter as many of the vocabulary's tokens with the unreachable examples of the vocabulary
    section (``unreachable``), and an eighth as many generated strings."""
    counts: Counter[bytes] = Counter()
    for _, text in texts:
        part = sample_corpus(text, SAMPLE_TEXT_CHARS, rng)
        if library is not None:
            counts.update(library.pretokenize(part))
        else:
            counts.update(pieces(pattern, part))
    corpus_words = draw_words(counts, samples, rng)
    token_words = [view.ordinary[token] for token in
                   rng.sample(sorted(view.ordinary), min(len(view.ordinary), max(samples // 4, 1)))]
    token_words += [bytes.fromhex(entry["hex"]) for key in ("sequential", "declared")
                    for entry in unreachable[key]["examples"]]
    token_words = [word for word in token_words if len(word) <= MAX_WORD_BYTES]
    generated = generated_words(view.table, rng, max(samples // 8, 20))
    words = list(dict.fromkeys(corpus_words + token_words + generated))
    return SampledWords(counts, corpus_words, token_words, generated, words)


def draw_words(counts: Counter[bytes], samples: int, rng: random.Random) -> list[bytes]:
    """Half the most frequent distinct words, half drawn at random from the rest, all of at most MAX_WORD_BYTES."""
    eligible = [word for word, _ in counts.most_common() if 0 < len(word) <= MAX_WORD_BYTES]
    top = eligible[: samples // 2]
    rest = eligible[samples // 2 :]
    drawn = rng.sample(rest, min(len(rest), samples - len(top)))
    return top + drawn


def generated_words(table: MergeTable, rng: random.Random, count: int) -> list[bytes]:
    """Strings that reach unusual merges: two tokens joined, a token repeated, runs, random bytes and text."""
    tokens = [data for data in table.token_bytes.values() if data]
    words: list[bytes] = []
    alphabet = "ab aあ😀é1\n"
    for index in range(count):
        kind = index % 5
        if kind == 0:
            words.append(rng.choice(tokens) + rng.choice(tokens))
        elif kind == 1:
            words.append(rng.choice(tokens) * rng.randint(2, 4))
        elif kind == 2:
            words.append(bytes([rng.randrange(97, 100)]) * rng.randint(2, 12))
        elif kind == 3:
            words.append(bytes(rng.randrange(256) for _ in range(rng.randint(1, 8))))
        else:
            words.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8))).encode("utf-8"))
    return [word[:MAX_WORD_BYTES] for word in words if word]
