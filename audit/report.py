"""``bpeproof audit``: what a real BPE vocabulary file holds, and which BPE its own library computes.

This module is the audit itself, its findings and the report's schema (below); the fast variants and the
shortest-length DP are in ``bpeproof.audit.variants``, the adapters of the reference libraries in
``bpeproof.audit.libraries``.

The audit reads a tokenizer file with ``bpeproof.impl.formats``, checks it against the
article's definitions, runs the file's reference library (tiktoken,
``tokenizers``, sentencepiece, or for the project's own file its ``Tokenizer``)
and compares it with each BPE variant of ``bpeproof.spec.variants``:

- the vocabulary: |V| against 256 + m (prop-bpe-vocab-size), missing byte
  tokens, whether the merge list is proper (each merge over the vocabulary built
  so far: def-merge, via ``bpeproof.impl.formats.convert``), merges of a pair already
  merged, tokens that stand for the same bytes (ex-same-string), tokens their
  own bytes never encode to, tokens whose bytes alone are not UTF-8
  (prop-utf8-boundary), special tokens (def-utf8);
- the variant the library follows: the library encodes sampled words (pre-tokens
  of the corpora, token strings of the vocabulary, generated strings) and each
  variant encodes them too; the verdict lists the variants that agree on every
  word.  The variants are fast versions of ``bpeproof.spec.variants``
  (``bpeproof.audit.variants``: the specification recurses and is for small
  inputs); for small rule lists the audit also runs the specification's own and
  counts any difference;
- compression per corpus (def-utf8's bytes per token) by the library (``tokenizers``
  in pieces cut at line starts, see ``bpeproof.audit.libraries.TokenizersLibrary.count_tokens``), the
  information bound of prop-token-information (log2 |V| bits per token against
  8 · bytes/token raw bits per token);
- the greedy-against-shortest gap of prop-bpe-greedy-not-optimal on sampled words;
- the project's own ``Tokenizer`` against the library on a sample of the text.

How the variants are run.  On a file the fast variants work in the file's own ids over its own merge list:
rule-rank takes the first merge of each pair in the file's order (improper merges included, as the libraries
do), bytes-rank ranks the tokens as the file does (tiktoken: the rank = id; sentencepiece: the score; the
other formats: the merge that makes the token), whole-word looks the word's bytes up among those tokens, and
sequential is (i) on the proper merges (``bpeproof.impl.formats.convert``) with the project's ``Encoder``.  Words start
as bytes, except for sentencepiece, whose units are its one-character pieces (bytes by ``<0xNN>`` fallback),
and whose words are compared in the library's normalized form (▁ read as a space).  A token is *unreachable*
under a variant when its own bytes do not encode to it alone: ``sequential`` is (i), ``declared`` is the file's
merge procedure without a whole-word look-up (bytes-rank for tiktoken and sentencepiece, rule-rank otherwise).

The JSON report (``audit`` returns it as a dict; ``--json FILE`` writes it).  Keys are stable; a key may gain
siblings, never change meaning.

- ``format``: "bpeproof-audit"; ``version``: 1.
- ``file``: ``path``, ``kind`` (``bpeproof.impl.formats.KINDS``), ``tokens`` (entries of the file's token table),
  ``merges``, ``specials`` (counts), ``specials_in_tokens`` (special tokens that are also entries of the token
  table, as a ``tokenizer.json`` may list them: ``tokens`` − ``specials_in_tokens`` are ordinary),
  ``pattern`` (the regex used, or null), ``pattern_name``, ``pattern_source`` ("option", "file", "guessed": a rank
  file's pattern by its name or size, o200k when neither tells, "library": the library's own pre-tokenizer,
  "none"), ``ignore_merges``, ``byte_fallback``.
- ``vocabulary``: ``size`` (ordinary tokens |V|), ``expected_size`` (256 + merges, prop-bpe-vocab-size),
  ``size_matches``, ``missing_bytes`` (byte values without a token), ``proper`` (no improper merge),
  ``improper_merges`` {``count``, ``by_kind``, ``examples`` [{``index``, ``merge``, ``kind``, ``detail``}]},
  ``duplicate_merges`` (pairs merged twice) {``count``, ``examples`` [{``pair``, ``text``, ``merges``}]},
  ``same_bytes`` (ex-same-string) {``count``, ``examples`` [{``text``, ``hex``, ``ids``}]},
  ``unreachable`` {``declared_variant``, ``sequential``, ``declared``, ``both``, ``library`` (the library
  itself on the token's bytes as one pre-token; null when it cannot be asked): each {``count``, ``examples``
  [{``id``, ``text``, ``hex``}]}}, ``not_utf8`` (prop-utf8-boundary) {``count``,
  ``single_bytes`` (those of one byte ≥ 0x80), ``examples`` (longer tokens first)}, ``specials`` {``count``,
  ``examples`` [{``text``, ``id``}]}, ``token_lengths`` {byte length as a string: count},
  ``max_token_bytes``, ``bits_per_token`` (log2 |V|, prop-token-information).
- ``library``: ``name`` ("tiktoken", "tokenizers", "sentencepiece", "bpeproof"), ``version``, ``available``, ``error``.
- ``variants``: ``declared`` (the variants the library documents), ``words`` (compared), ``skipped_long``
  (distinct corpus words over ``MAX_WORD_BYTES``), ``sources`` {``corpus``, ``tokens``, ``generated``},
  ``results`` {variant: {``compared``, ``agree``, ``disagreements`` [{``word``, ``hex``, ``library``,
  ``variant``}]}}, ``verdict`` (the variants agreeing on every word), ``follows_declared`` (null when nothing
  was compared), ``spec_checked`` (words also run through ``bpeproof.spec.variants``: small rule lists only),
  ``spec_mismatches`` [{``word``, ``variant``, ``ids``}] (a fast variant ≠ the specification; expected empty).
- ``project``: the project's tokenizer for the file (``bpeproof.impl.pipelines.registry``, the file's own library's
semantics) against
  the library: ``compared``, ``reason`` (how, or why not), ``semantics``, ``bytes``, ``library_tokens``,
  ``project_tokens`` (on sample text), ``token_texts``, ``token_texts_differing`` (the vocabulary's own tokens
  as texts, tokens no merge makes first), ``lines_left_out`` (sample lines with a byte the vocabulary has no
  token for, which neither can encode), ``agree``, ``first_difference`` {``index``, ``library``,
  ``project``, and ``text`` for a token text} or null (all null when not compared).
- ``corpora``: [{``name``, ``bytes``, ``tokens``, ``bytes_per_token`` (def-utf8's compression rate),
  ``raw_bits_per_token`` (8 · bytes/token), ``bits_per_token`` (log2 |V|), ``encoded_by``}].
- ``greedy_gap`` (prop-bpe-greedy-not-optimal, over the sampled corpus words weighted by their counts):
  ``words``, ``occurrences``, ``bpe_tokens``, ``shortest_tokens``, ``saved_percent``, ``words_shorter``,
  ``worst`` [{``word``, ``count``, ``bpe``, ``shortest``, ``bpe_pieces``, ``shortest_pieces``}].
- ``timings``: {phase: seconds} (``unreachable`` is part of ``vocabulary``, see ``SUBPHASES``; ``total`` is
  the sum of the other phases); ``findings``: one-line statements, the most important first.

Words and token bytes are shown as text where they are UTF-8, with ``\\xNN`` escapes elsewhere.
"""

from __future__ import annotations

import math
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bpeproof.audit.corpus_tasks import EngineCorpus, engine_corpora
from bpeproof.audit.file_view import FileView, count_tokens, pieces, sample_starts
from bpeproof.audit.libraries import Library, SentencepieceLibrary, open_library
from bpeproof.audit.variants import VARIANT_NAMES, MergeTable, fast_variants, shortest_length
from bpeproof.impl.formats import Vocab, convert, load
from bpeproof.impl.io.corpus import read_text
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.wording import count
from bpeproof.impl.pipelines.registry import load_tokenizer
from bpeproof.impl.pre_tokenizers import patterns
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, compile_pattern, pattern_name, resolve_pattern
from bpeproof.spec.types import ALPHABET_SIZE

if TYPE_CHECKING:
    from bpeproof.impl.parallel import TaskEngine

__all__ = [
    "DEFAULT_SAMPLES",
    "MAX_WORD_BYTES",
    "audit",
    "findings",
    "show",
]

FORMAT_NAME = "bpeproof-audit"
FORMAT_VERSION = 1

#: Words longer than this (in bytes) are not compared (some libraries merge a word in quadratic time).
MAX_WORD_BYTES = 50
#: Distinct corpus words compared by default.
DEFAULT_SAMPLES = 4000
#: Examples kept per finding.
EXAMPLES = 10
#: Disagreements kept per variant.
DISAGREEMENTS = 5
#: Text taken from each corpus for word sampling and for the project comparison, in characters.
SAMPLE_TEXT_CHARS = 1 << 20
PROJECT_TEXT_CHARS = 1 << 17
#: Rule lists up to this size are also run through the specification's variants (recursive, slow), on at most
#: SPEC_WORDS words of at most SPEC_WORD_BYTES bytes: a few seconds at most.
SPEC_RULES_LIMIT = 64
SPEC_WORDS = 200
SPEC_WORD_BYTES = 16

#: What each file kind's library is documented to compute.
DECLARED: dict[str, tuple[str, ...]] = {
    "tiktoken": ("bytes-rank", "whole-word+bytes-rank"),
    "hf-bpe": ("rule-rank", "sequential"),
    "gpt2": ("rule-rank", "sequential"),
    "sentencepiece-bpe": ("bytes-rank",),
    "bpeproof": ("sequential",),
}


def declared_variants(vocab: Vocab) -> tuple[str, ...]:
    """The variants a file's library is documented to compute: ``DECLARED`` by kind; a Hugging Face file with
    ``ignore_merges`` looks a whole pre-token up first."""
    if vocab.kind == "hf-bpe" and vocab.ignore_merges:
        return ("whole-word+rule-rank",)
    return DECLARED[vocab.kind]


def show(data: bytes, limit: int = 60) -> str:
    """Bytes as readable text: UTF-8 where valid, ``\\xNN`` elsewhere; newlines and tabs escaped."""
    text = data.decode("utf-8", errors="backslashreplace")
    text = text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------
# Inputs: pattern, corpora, words
# ---------------------------------------------------------------------------

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


def guess_pattern(vocab: Vocab) -> str | None:
    """The pattern of a rank file by its name (r50k/gpt2, cl100k, o200k) or its size; None when unknown."""
    return patterns.guess_pattern(vocab.source, len(vocab.tokens))


def read_corpus(path: str) -> str:
    """A UTF-8 text file, plain or gzip (``bpeproof.impl.io.corpus.read_text``: ``FormatError`` naming the file)."""
    return read_text(path)


def sample_text(text: str, limit: int, rng: random.Random) -> str:
    """At most ``limit`` characters of ``text``: all of it, or a few chunks taken at random places."""
    drawn = sample_starts(len(text), limit, rng)
    if drawn is None:
        return text
    starts, size = drawn
    return "\n".join(text[start : start + size] for start in starts)


def _sample(text: str | EngineCorpus, limit: int, rng: random.Random) -> str:
    return sample_text(text, limit, rng) if isinstance(text, str) else text.sample(limit, rng)


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


# ---------------------------------------------------------------------------
# The audit
# ---------------------------------------------------------------------------


@dataclass
class _Timer:
    timings: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round(self.timings.get(name, 0.0) + time.perf_counter() - start, 3)


#: Phases timed inside another one: ``timings[name]`` is part of ``timings[SUBPHASES[name]]``, not added to the total.
SUBPHASES = {"unreachable": "vocabulary"}
#: Seconds between two redraws of the status line (``_status``).
STATUS_INTERVAL = 0.25


@contextmanager
def _status(text: str, enabled: bool) -> Iterator[Callable[[str], None]]:
    """While the block runs, one line on stderr saying what the audit does and for how long (redrawn by a thread
    every ``STATUS_INTERVAL`` s, for steps that have no progress bar); erased at the end.  Yields a function that
    changes the text for the next step.  Nothing is written unless ``enabled``."""
    if not enabled:
        yield lambda _text: None
        return
    stream = sys.stderr
    start = time.perf_counter()
    current = [text]
    lock = threading.Lock()
    stop = threading.Event()

    def draw() -> None:
        with lock:
            stream.write(f"\r\x1b[K{current[0]} … {time.perf_counter() - start:.1f} s")
            stream.flush()

    def step(new: str) -> None:
        current[0] = new
        draw()

    def tick() -> None:
        while not stop.wait(STATUS_INTERVAL):
            draw()

    draw()
    thread = threading.Thread(target=tick, name="audit-status", daemon=True)
    thread.start()
    try:
        yield step
    finally:
        stop.set()
        thread.join()
        with lock:
            stream.write("\r\x1b[K")
            stream.flush()


def _progress(items: Iterable[Any], total: int, description: str, enabled: bool, unit: str = "word") -> Iterable[Any]:
    """``items``, with a tqdm progress bar on stderr when ``enabled``."""
    if not enabled:
        return items
    from tqdm import tqdm

    return tqdm(items, total=total, desc=description, unit=unit, leave=False, mininterval=0.5)


def _examples(items: Sequence[Any], limit: int = EXAMPLES) -> dict[str, Any]:
    return {"count": len(items), "examples": list(items[:limit])}


def _token_entry(token: int, data: bytes) -> dict[str, Any]:
    return {"id": token, "text": show(data), "hex": data.hex()}


def _vocabulary_section(view: FileView, timer: _Timer, progress: bool) -> dict[str, Any]:
    vocab = view.vocab
    conversion = view.conversion
    size = len(view.ordinary)
    improper = conversion.improper
    by_kind = Counter(problem.kind for problem in improper)
    pair_seen: dict[tuple[int, int], list[int]] = {}
    for index, (a, b, _) in enumerate(vocab.merges):
        pair_seen.setdefault((a, b), []).append(index)
    duplicate_pairs = [
        {"pair": [a, b], "text": [show(vocab.tokens.get(a, b"")), show(vocab.tokens.get(b, b""))], "merges": indices}
        for (a, b), indices in pair_seen.items()
        if len(indices) > 1
    ]
    by_bytes: dict[bytes, list[int]] = {}
    for token, data in view.ordinary.items():
        by_bytes.setdefault(data, []).append(token)
    same = [{"text": show(data), "hex": data.hex(), "ids": ids} for data, ids in by_bytes.items() if len(ids) > 1]
    not_utf8: list[dict[str, Any]] = []
    single = 0
    for token, data in sorted(view.ordinary.items(), key=lambda item: (len(item[1]) < 2, item[0])):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            not_utf8.append(_token_entry(token, data))
            single += len(data) == 1
    lengths = Counter(len(data) for data in view.ordinary.values())

    with timer.phase("unreachable"):
        declared = "bytes-rank" if "bytes-rank" in DECLARED[vocab.kind] else "rule-rank"
        table = view.table
        encode = table.bytes_rank if declared == "bytes-rank" else table.rule_rank
        unreachable_sequential: list[int] = []
        unreachable_declared: list[int] = []
        encoder = view.encoder
        to_rule = conversion.id_map
        items = sorted(view.ordinary.items())
        for token, data in _progress(items, len(items), "unreachable tokens", progress, "token"):
            if len(data) < 2:
                continue
            rule_id = to_rule.get(token)
            if rule_id is None or not encoder.is_reachable(rule_id):
                unreachable_sequential.append(token)
            if encode(data) != [token]:
                unreachable_declared.append(token)
        both = sorted(set(unreachable_sequential) & set(unreachable_declared))

    def entries(tokens: Sequence[int]) -> list[dict[str, Any]]:
        return [_token_entry(token, view.ordinary[token]) for token in tokens[:EXAMPLES]]

    return {
        "size": size,
        "expected_size": ALPHABET_SIZE + len(vocab.merges),
        "size_matches": size == ALPHABET_SIZE + len(vocab.merges),
        "missing_bytes": sorted(view.missing_byte_ids),
        "proper": not improper,
        "improper_merges": {
            "count": len(improper),
            "by_kind": dict(sorted(by_kind.items())),
            "examples": [
                {"index": problem.index, "merge": list(problem.merge or ()), "kind": problem.kind,
                 "detail": problem.detail}
                for problem in improper[:EXAMPLES]
            ],
        },
        "duplicate_merges": _examples(duplicate_pairs),
        "same_bytes": _examples(same),
        "unreachable": {
            "declared_variant": declared,
            "sequential": {"count": len(unreachable_sequential), "examples": entries(unreachable_sequential)},
            "declared": {"count": len(unreachable_declared), "examples": entries(unreachable_declared)},
            "both": {"count": len(both), "examples": entries(both)},
        },
        "not_utf8": {**_examples(not_utf8), "single_bytes": single},
        "specials": _examples([{"text": text, "id": token} for text, token in sorted(vocab.specials.items(),
                                                                                     key=lambda item: item[1])]),
        "token_lengths": {str(length): lengths[length] for length in sorted(lengths)},
        "max_token_bytes": max(lengths, default=0),
        "bits_per_token": math.log2(size) if size >= 2 else 0.0,
    }


def _library_unreachable(view: FileView, library: Library | None) -> dict[str, Any] | None:
    """The tokens of two or more bytes that the library itself, given their bytes as one pre-token, does not
    encode to them alone; None when it cannot be asked (no library; sentencepiece always adds its dummy prefix)."""
    if library is None or isinstance(library, SentencepieceLibrary):
        return None
    missing = frozenset(view.missing_byte_ids)
    found: list[int] = []
    for token, data in sorted(view.ordinary.items()):
        if len(data) >= 2 and missing.isdisjoint(data) and library.encode_word(data) != [token]:
            found.append(token)
    return {"count": len(found), "examples": [_token_entry(token, view.ordinary[token]) for token in found[:EXAMPLES]]}


def _sample_words(counts: Counter[bytes], samples: int, rng: random.Random) -> list[bytes]:
    """Half the most frequent distinct words, half drawn at random from the rest, all of at most MAX_WORD_BYTES."""
    eligible = [word for word, _ in counts.most_common() if 0 < len(word) <= MAX_WORD_BYTES]
    top = eligible[: samples // 2]
    rest = eligible[samples // 2 :]
    drawn = rng.sample(rest, min(len(rest), samples - len(top)))
    return top + drawn


def _compare(
    library: Library,
    variants: Mapping[str, Callable[[bytes], list[int]]],
    words: Sequence[bytes],
    progress: bool,
    library_input: Callable[[bytes], bytes | None] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[bytes, list[int]]]:
    results: dict[str, dict[str, Any]] = {
        name: {"compared": 0, "agree": 0, "disagreements": []} for name in variants
    }
    library_ids: dict[bytes, list[int]] = {}
    for word in _progress(words, len(words), "variants", progress):
        target = library_input(word) if library_input is not None else word
        if target is None:
            continue
        expected = library.encode_word(word)
        if expected is None:
            continue
        library_ids[word] = expected
        for name, encode in variants.items():
            got = encode(target)
            entry = results[name]
            entry["compared"] += 1
            if got == expected:
                entry["agree"] += 1
            elif len(entry["disagreements"]) < DISAGREEMENTS:
                entry["disagreements"].append({"word": show(word), "hex": word.hex(), "library": expected,
                                               "variant": got})
    return results, library_ids


def _spec_check(view: FileView, words: Sequence[bytes]) -> tuple[int, list[dict[str, Any]]]:
    """Run the specification's variants on the words and list where a fast variant differs.

    Checked: ``fast_variants`` on the converted rules (rule ids), and, when the merge list is proper, the
    variants the audit reports (file ids, over the file's own merge list and ranks) against the specification's
    results mapped to file ids — when the rules hold every token of the file (no improper merge, no token that
    no merge builds), so that both describe the same vocabulary.
    """
    from bpeproof.spec.variants import VARIANTS

    rules = view.conversion.rules
    fast = fast_variants(rules)
    complete = not any(problem.kind != "missing-byte" for problem in view.conversion.problems)
    on_file = view.variants() if complete else {}
    checked = 0
    mismatches: list[dict[str, Any]] = []
    for word in words:
        checked += 1
        for name, slow in VARIANTS.items():
            expected = slow(rules, word)
            if fast[name](word) != expected:
                mismatches.append({"word": show(word), "variant": name, "ids": "rule"})
            if name in on_file and on_file[name](word) != view.file_ids(expected):
                mismatches.append({"word": show(word), "variant": name, "ids": "file"})
    return checked, mismatches


def _not_compared(reason: str) -> dict[str, Any]:
    return {"compared": False, "reason": reason, "semantics": None, "bytes": 0, "library_tokens": None,
            "project_tokens": None, "token_texts": 0, "token_texts_differing": 0, "lines_left_out": 0,
            "agree": None, "first_difference": None}


#: How many of the vocabulary's own tokens the audit encodes, as texts, with both the project and the library.
TOKEN_TEXTS = 4000


def _token_texts(vocab: Vocab, limit: int = TOKEN_TEXTS) -> list[str]:
    """Texts made of the vocabulary's own tokens: the tokens no merge makes first, then an even spread of the rest."""
    specials = set(vocab.specials.values())
    chosen: list[int] = [token for token in vocab.unsplit if token not in specials]
    others = [token for token in vocab.tokens if token not in specials and token not in set(chosen)]
    step = max(1, len(others) // max(1, limit - len(chosen)))
    chosen += others[::step]
    texts: list[str] = []
    for token in chosen[:limit]:
        try:
            texts.append(vocab.tokens[token].decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return [text for text in texts if text]


def _project_section(
    view: FileView, library: Library, texts: Sequence[str], pattern: str | None
) -> dict[str, Any]:
    """The project's tokenizer for the file (``registry``: its own semantics) against the library, on the
    sample text and on the vocabulary's own tokens as texts (whole-piece-only tokens among them)."""
    try:
        tokenizer = load_tokenizer(view.vocab.source, pattern)
    except (FormatError, ValueError) as error:
        return _not_compared(f"the project refuses the file: {getattr(error, 'problem', error)}")
    # A byte the vocabulary has no token for cannot be encoded by either (tiktoken panics on it): such lines and
    # token texts are left out of the comparison, and counted.
    missing = frozenset(view.missing_byte_ids)

    def encodable(piece: str) -> bool:
        return missing.isdisjoint(piece.encode("utf-8"))

    lines = "".join(texts).splitlines(keepends=True)
    text = "".join(line for line in lines if encodable(line))
    left_out = len(lines) - sum(1 for line in lines if encodable(line))
    expected = library.encode_text(text)
    got = tokenizer.encode(text)
    first: dict[str, Any] | None = None
    if got != expected:
        at = next((i for i, (x, y) in enumerate(zip(got, expected, strict=False)) if x != y),
                  min(len(got), len(expected)))
        first = {"index": at, "library": expected[at : at + 5], "project": got[at : at + 5]}
    token_texts = [piece for piece in _token_texts(view.vocab) if encodable(piece)]
    differing = [piece for piece in token_texts if tokenizer.encode(piece) != library.encode_text(piece)]
    if first is None and differing:
        piece = differing[0]
        first = {"index": 0, "text": piece, "library": library.encode_text(piece), "project": tokenizer.encode(piece)}
    return {
        "compared": True,
        "reason": f"the project's tokenizer ({tokenizer.semantics} semantics)",
        "semantics": tokenizer.semantics,
        "bytes": len(text.encode("utf-8")),
        "library_tokens": len(expected),
        "project_tokens": len(got),
        "token_texts": len(token_texts),
        "token_texts_differing": len(differing),
        "lines_left_out": left_out,
        "agree": got == expected and not differing,
        "first_difference": first,
    }


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
    """Audit a tokenizer file; returns the JSON report described in the module docstring.

    ``pattern``: a name of ``bpeproof.impl.pre_tokenizers.patterns.PATTERNS`` or a regex (rank files hold none; by
    default it is
    guessed from the name).  ``corpora``: UTF-8 text files (``.gz`` allowed); none = the built-in sample.
    ``samples``: distinct corpus words compared.  Bad files raise ``FormatError`` / ``OSError``.  ``engine``: the
    corpora are measured by its tasks, range by range, never read whole here (``bpeproof.audit.corpus_tasks``);
    the same report.
    """
    timer = _Timer()
    rng = random.Random(seed)
    with timer.phase("load"), _status(f"audit: reading {Path(path).name}", progress) as step:
        source = "option" if pattern is not None else "file"
        resolved = resolve_pattern(pattern) if pattern is not None else None
        vocab = load(path, pattern=resolved)
        if vocab.kind == "gguf":
            raise FormatError(path, None, "the audit does not cover GGUF files (llama.cpp, their library, is not"
                              " run here to compare with); 'bpeproof encode --vocab' encodes them as llama.cpp does")
        if vocab.kind == "clip":
            raise FormatError(path, None, "the audit does not cover CLIP's merges file (CLIP's own tokenizer, its"
                              " library, is not run here to compare with); 'bpeproof encode --vocab' encodes as CLIP"
                              " does")
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
        step(f"audit: checking the {len(vocab.merges)} merges of {Path(path).name}")
        conversion = convert(vocab)
        step("audit: building the merge tables")
        view = FileView(vocab, conversion)
    report: dict[str, Any] = {"format": FORMAT_NAME, "version": FORMAT_VERSION}
    report["file"] = {
        "path": str(path),
        "kind": vocab.kind,
        "tokens": len(vocab.tokens),
        "merges": len(vocab.merges),
        "specials": len(vocab.specials),
        "specials_in_tokens": len(set(vocab.specials.values()) & vocab.tokens.keys()),
        "pattern": resolved,
        "pattern_name": pattern_name(resolved) if resolved is not None else None,
        "pattern_source": source,
        "ignore_merges": vocab.ignore_merges,
        "byte_fallback": vocab.byte_fallback,
    }
    with timer.phase("vocabulary"):
        report["vocabulary"] = _vocabulary_section(view, timer, progress)

    with timer.phase("library"), _status("audit: opening the file's library", progress):
        library: Library | None
        try:
            library = open_library(vocab, resolved)
            report["library"] = {"name": library.name, "version": library.version, "available": True, "error": None}
        except ImportError as error:
            library = None
            report["library"] = {"name": None, "version": None, "available": False, "error": str(error)}
        except Exception as error:  # the library refuses a file the project's readers accept: a finding
            library = None
            report["library"] = {"name": None, "version": None, "available": False,
                                 "error": f"the library cannot load the file: {type(error).__name__}: {error}"}
        report["vocabulary"]["unreachable"]["library"] = _library_unreachable(view, library)

    with timer.phase("corpora"):
        texts: list[tuple[str, str | EngineCorpus]]
        if corpora and engine is not None:
            measured = engine_corpora(engine, corpora, path, resolved, library, frozenset(view.missing_byte_ids),
                                      progress)
            texts = [(Path(name).name, corpus) for name, corpus in zip(corpora, measured, strict=True)]
        elif corpora:
            texts = [(Path(name).name, read_corpus(name)) for name in corpora]
        else:
            texts = [("built-in sample", BUILTIN_TEXT)]

    with timer.phase("words"):
        counts: Counter[bytes] = Counter()
        for _, text in texts:
            part = _sample(text, SAMPLE_TEXT_CHARS, rng)
            if library is not None:
                counts.update(library.pretokenize(part))
            else:
                counts.update(pieces(resolved, part))
        corpus_words = _sample_words(counts, samples, rng)
        token_words = [view.ordinary[token] for token in
                       rng.sample(sorted(view.ordinary), min(len(view.ordinary), max(samples // 4, 1)))]
        unreachable = report["vocabulary"]["unreachable"]
        token_words += [bytes.fromhex(entry["hex"]) for key in ("sequential", "declared")
                        for entry in unreachable[key]["examples"]]
        token_words = [word for word in token_words if len(word) <= MAX_WORD_BYTES]
        generated = generated_words(view.table, rng, max(samples // 8, 20))
        words = list(dict.fromkeys(corpus_words + token_words + generated))

    with timer.phase("variants"):
        variants_report: dict[str, Any] = {
            "declared": list(declared_variants(vocab)),
            "words": 0,
            "skipped_long": sum(1 for word in counts if len(word) > MAX_WORD_BYTES),
            "sources": {"corpus": len(corpus_words), "tokens": len(token_words), "generated": len(generated)},
            "results": {},
            "verdict": [],
            "follows_declared": None,
            "spec_checked": 0,
            "spec_mismatches": [],
        }
        library_ids: dict[bytes, list[int]] = {}
        library_input = _input_function(view, library)
        if library is not None:
            results, library_ids = _compare(library, view.variants(), words, progress, library_input)
            variants_report["results"] = results
            compared = max((entry["compared"] for entry in results.values()), default=0)
            variants_report["words"] = compared
            verdict = [name for name, entry in results.items() if compared and entry["agree"] == entry["compared"]]
            variants_report["verdict"] = verdict
            declared = set(declared_variants(vocab))
            variants_report["follows_declared"] = bool(set(verdict) & declared) if compared else None
        if len(conversion.rules) <= SPEC_RULES_LIMIT and vocab.kind != "sentencepiece-bpe":
            checked, mismatches = _spec_check(view, [w for w in words if len(w) <= SPEC_WORD_BYTES][:SPEC_WORDS])
            variants_report["spec_checked"] = checked
            variants_report["spec_mismatches"] = mismatches[:EXAMPLES]
        report["variants"] = variants_report

    with timer.phase("project"), _status("audit: comparing the project's tokenizer with the library", progress):
        if library is None:
            report["project"] = _not_compared("the library did not run")
        else:
            project_texts = [_sample(text, PROJECT_TEXT_CHARS // len(texts), rng) for _, text in texts]
            own_pattern = resolved if vocab.kind in ("tiktoken", "gpt2") else None
            report["project"] = _project_section(view, library, project_texts, own_pattern)

    with timer.phase("compression"), _status("audit: counting the tokens of the corpus", progress and len(texts) == 1):
        capacity = report["vocabulary"]["bits_per_token"]
        rows: list[dict[str, Any]] = []
        missing = frozenset(view.missing_byte_ids)
        for name, text in _progress(texts, len(texts), "compression", progress and len(texts) > 1, "corpus"):
            if not isinstance(text, str):  # measured by the engine's tasks
                tokens, encoded_by = text.tokens(library)
                size = text.bytes
            else:
                data = text.encode("utf-8")
                # no library, or bytes it has no token for: the project's encoder, which takes every byte
                use = library if library is not None and missing.isdisjoint(data) else None
                tokens = count_tokens(use, view, resolved, text)
                encoded_by = use.name if use is not None else "project"
                size = len(data)
            rate = size / tokens if tokens else 0.0
            rows.append({"name": name, "bytes": size, "tokens": tokens, "bytes_per_token": rate,
                         "raw_bits_per_token": 8 * rate, "bits_per_token": capacity, "encoded_by": encoded_by})
        report["corpora"] = rows

    with timer.phase("greedy_gap"):
        report["greedy_gap"] = _greedy_gap(view, corpus_words, counts, library_ids, library_input)

    report["timings"] = dict(timer.timings)
    report["timings"]["total"] = round(sum(value for key, value in timer.timings.items() if key not in SUBPHASES), 3)
    report["findings"] = findings(report)
    return report


def _input_function(view: FileView, library: Library | None) -> Callable[[bytes], bytes | None]:
    """What the variants encode for a word the library is given: sentencepiece's normalized form, else the word;
    None for a word with a byte that has no token (the library cannot encode it)."""
    normalize = library.normalized if isinstance(library, SentencepieceLibrary) else None
    missing = frozenset(view.missing_byte_ids)

    def prepare(word: bytes) -> bytes | None:
        target = normalize(word) if normalize is not None else word
        if target is None or (missing and not missing.isdisjoint(target)) or not target:
            return None
        return target

    return prepare


def _greedy_gap(
    view: FileView,
    words: Sequence[bytes],
    counts: Mapping[bytes, int],
    library_ids: Mapping[bytes, list[int]],
    library_input: Callable[[bytes], bytes | None],
) -> dict[str, Any]:
    """prop-bpe-greedy-not-optimal on the sampled corpus words: BPE's length (the library's where it ran, else
    (i)) against the shortest segmentation over the vocabulary's strings, weighted by the word counts."""
    strings = {data: 0 for data in view.table.token_bytes.values()}
    longest = max((len(data) for data in strings), default=1)
    bpe_total = shortest_total = occurrences = shorter = 0
    gaps: list[tuple[int, int, bytes, list[int], list[bytes]]] = []
    for word in words:
        target = library_input(word)
        if target is None:
            continue
        ids = library_ids.get(word)
        if ids is None:
            ids = view.sequential(target)
        best, pieces = shortest_length(strings, longest, target)
        if not pieces:
            continue
        count = counts.get(word, 1)
        occurrences += count
        bpe_total += len(ids) * count
        shortest_total += best * count
        if best < len(ids):
            shorter += 1
            gaps.append((len(ids) - best, count, word, ids, pieces))
    gaps.sort(key=lambda item: (-item[0], -item[1], item[2]))
    table = view.table.token_bytes
    worst = [
        {"word": show(word), "count": count, "bpe": len(ids), "shortest": len(pieces),
         "bpe_pieces": [show(table.get(t, b"?")) for t in ids], "shortest_pieces": [show(p) for p in pieces]}
        for _, count, word, ids, pieces in gaps[:EXAMPLES]
    ]
    return {
        "words": len(words),
        "occurrences": occurrences,
        "bpe_tokens": bpe_total,
        "shortest_tokens": shortest_total,
        "saved_percent": 100.0 * (bpe_total - shortest_total) / bpe_total if bpe_total else 0.0,
        "words_shorter": shorter,
        "worst": worst,
    }


def findings(report: Mapping[str, Any]) -> list[str]:
    """The report's main statements, one line each, the most important first."""
    out: list[str] = []
    vocabulary = report["vocabulary"]
    variants = report["variants"]
    library = report["library"]
    if library["available"] and variants["words"]:
        verdict = variants["verdict"]
        compared = f"{'the' if variants['words'] == 1 else 'all'} {count(variants['words'], 'word')} compared"
        if verdict:
            out.append(f"{library['name']} follows {', '.join(verdict)} on {compared}")
        else:
            out.append(f"no variant agrees with {library['name']} on {compared}")
        if set(verdict) == set(VARIANT_NAMES):
            out.append("the five variants give the same ids on every word compared: on these words the file cannot"
                       " tell them apart")
        if variants["follows_declared"] is False:
            out.append(f"{library['name']} disagrees with its declared semantics ({', '.join(variants['declared'])})")
    elif not library["available"]:
        out.append(f"the reference library did not run: {library['error']}")
    if not vocabulary["proper"]:
        out.append(f"the merge list is not proper: {count(vocabulary['improper_merges']['count'], 'improper merge')}"
                   f" ({', '.join(f'{k} {v}' for k, v in vocabulary['improper_merges']['by_kind'].items())})")
        if report["file"]["kind"] == "sentencepiece-bpe":
            out.append("sentencepiece merges characters, not bytes: a character of several bytes is a unit, so seen"
                       " byte by byte its merges are not built from bytes; expect (i) to differ on such text")
    if vocabulary["missing_bytes"]:
        missing = len(vocabulary["missing_bytes"])
        out.append(f"{count(missing, 'byte value')} {'has' if missing == 1 else 'have'} no token")
    if not vocabulary["size_matches"]:
        merges = count(report["file"]["merges"], "merge")
        out.append(f"|V| = {count(vocabulary['size'], 'ordinary token')}, not 256 + {merges}"
                   f" = {vocabulary['expected_size']}")
    for key, what in (("duplicate_merges", "pairs merged more than once"),
                      ("same_bytes", "groups of tokens standing for the same bytes (ex-same-string)")):
        if vocabulary[key]["count"]:
            out.append(f"{what}: {vocabulary[key]['count']}")
    unreachable = vocabulary["unreachable"]
    by_library = unreachable.get("library")
    out.append(f"unreachable tokens: {unreachable['sequential']['count']} under (i) sequential,"
               f" {unreachable['declared']['count']} under {unreachable['declared_variant']},"
               f" {unreachable['both']['count']} under both"
               + (f", {by_library['count']} by {library['name']} itself" if by_library is not None else ""))
    not_utf8 = vocabulary["not_utf8"]["count"]
    out.append(f"{count(not_utf8, 'token')} {'is' if not_utf8 == 1 else 'are'} not valid UTF-8 alone"
               " (prop-utf8-boundary)")
    if variants["spec_mismatches"]:
        out.append(f"{count(len(variants['spec_mismatches']), 'word')} where a fast variant differs from"
                   " bpeproof.spec.variants")
    project = report["project"]
    if project.get("compared"):
        state = "agrees" if project["agree"] else "DISAGREES"
        out.append(f"the project's tokenizer ({project['semantics']} semantics) {state} with {library['name']} on"
                   f" {count(project['bytes'], 'byte')} of text and {project['token_texts']} of the vocabulary's own"
                   f" tokens as texts ({project['token_texts_differing']} differ)")
    elif project.get("reason"):
        out.append(f"the project's tokenizer was not compared: {project['reason']}")
    return out
