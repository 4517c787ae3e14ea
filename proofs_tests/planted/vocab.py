"""Small vocabulary files for checking text → ids tokenizers without downloads (``bpeproof check --tokenizer``).

``write_rank_file(path)`` trains def-bpe (``bpeproof.impl.trainer``) on words cut by cl100k's
pattern from seeded text of many scripts, digits, contractions, whitespace and emoji
(``texts``) and some English, and writes the rules as a tiktoken rank file
(bytes keep their values as ranks, the j-th merged token has rank 256 + j).
``unreachable=True`` adds the tokens "wxyz"-style of ``UNREACHABLE``: made of two lower tokens,
but never formed by merging the lowest-ranked joined bytes, so only tiktoken's whole-piece
lookup produces them.
"""

from __future__ import annotations

import base64
from collections import Counter
from pathlib import Path

import regex

from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.trainer import train_counts
from bpeproof.proofs_tests.checker.texts import TextGenerator

ENGLISH = (
    "It's the best of times, it was the worst of times. They'll say we're here, you've seen it, I'd go.\n"
    "Don't stop: the 12345 numbers and 3.14159 digits of 2024 years were THE END. Hello world!\r\n"
    "    def encode(self, text):\n        return [token for token in text.split()]\n"
)

#: Tokens added by ``unreachable=True``: (bytes, in the order added).  "qz" and "vw" come before "zv",
#: so merging "qzvw" by the lowest rank of joined bytes joins "zv" first and never forms "qzvw".
UNREACHABLE = [b"zv", b"qz", b"vw", b"qzvw"]


def train_ranks(merges: int = 700, seed: int = 0) -> dict[bytes, int]:
    """A rank table trained on seeded text (see the module docstring)."""
    generator = TextGenerator(seed, weights={"corpus": 0.0})
    texts = [generator.draw()[0] for _ in range(3000)] + [ENGLISH] * 40
    pattern = regex.compile(PATTERNS["cl100k"])
    counts: Counter[bytes] = Counter()
    for text in texts:
        counts.update(piece.encode("utf-8") for piece in pattern.findall(text))
    rules = train_counts(counts, merges)
    table = {b: bytes([b]) for b in range(256)}
    ranks = {bytes([b]): b for b in range(256)}
    for rule in rules:
        table[rule.c] = table[rule.a] + table[rule.b]
        ranks.setdefault(table[rule.c], rule.c)
    return ranks


def write_rank_file(path: Path, merges: int = 700, unreachable: bool = False) -> Path:
    """Write the trained ranks (and, with ``unreachable``, the tokens of ``UNREACHABLE``) as a rank file."""
    ranks = train_ranks(merges)
    if unreachable:
        for token in UNREACHABLE:
            ranks.setdefault(token, max(ranks.values()) + 1)
    lines = [f"{base64.b64encode(token).decode()} {rank}" for token, rank in sorted(ranks.items(), key=lambda x: x[1])]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


#: The special tokens of ``write_project_file``.
SPECIALS = {"<|endoftext|>": 100_000, "<|fim|>": 100_001}


def write_project_file(path: Path, merges: int = 700) -> Path:
    """The trained rules as the project's own tokenizer file, with cl100k's pattern and ``SPECIALS``."""
    from bpeproof.impl.tokenizer import Tokenizer

    generator = TextGenerator(0, weights={"corpus": 0.0})
    texts = [generator.draw()[0] for _ in range(3000)] + [ENGLISH] * 40
    pattern = regex.compile(PATTERNS["cl100k"])
    counts: Counter[bytes] = Counter()
    for text in texts:
        counts.update(piece.encode("utf-8") for piece in pattern.findall(text))
    Tokenizer(train_counts(counts, merges), "cl100k", SPECIALS).save(path)
    return path
