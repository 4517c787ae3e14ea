"""``bpeproof demo``: the article's worked results from this project's own code, then the spec beside the engine.

The first four parts print what the article's §7 program prints (the five
trace rules, slowest → [slow, est], 2,000 random round trips, the greedy
encoding against the shortest one, the あ boundary case), computed by the
specification.  The last part runs the fast implementation on the same inputs
and shows that it gives the specification's answers.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from bpeproof import spec
from bpeproof.spec.types import Rule

TRACE_CORPUS = [b"slow"] * 4 + [b"slower"] * 2 + [b"lowest"] * 3 + [b"newest"] * 3
GREEDY_CORPUS = [b"ab"] * 4 + [b"bcd"] * 2 + [b"bc"]

Print = Callable[[str], None]


def _strings(rules: list[Rule], tokens: list[int]) -> list[bytes]:
    return [spec.symbols(rules, token) for token in tokens]


def show_training(out: Print) -> list[Rule]:
    """ex-training-trace: the five rules learned from the small corpus, and slowest encoded with them."""
    out("== def-bpe / ex-training-trace: 5 merges on slow×4, slower×2, lowest×3, newest×3")
    rules = spec.train(TRACE_CORPUS, 5)
    for rule in rules:
        a, b, c = (spec.symbols(rules, t) for t in rule)
        out(f"{rule.c} {a!r} + {b!r} -> {c!r}")
    out(str(_strings(rules, spec.enc(rules, b"slowest"))))
    return rules


def random_roundtrips(rules: list[Rule], trials: int = 2000, seed: int = 0) -> int:
    """thm-bpe-roundtrip and prop-bpe-length-monotone on random byte strings of length 0–39.

    Half of them use the corpus's seven letters, so that the rules apply; half use all 256 bytes.
    """
    generator = random.Random(seed)
    ok = 0
    for trial in range(trials):
        alphabet = b"elnostw" if trial % 2 == 0 else bytes(range(256))
        data = bytes(generator.choice(alphabet) for _ in range(generator.randrange(40)))
        tokens = spec.enc(rules, data)
        if spec.dec(rules, tokens) != data or len(tokens) > len(data):
            raise AssertionError(f"round trip failed on {data!r}")
        ok += 1
    return ok


def show_greedy(out: Print) -> None:
    """prop-bpe-greedy-not-optimal: BPE's encoding of abcd against the shortest segmentation."""
    out("== prop-bpe-greedy-not-optimal: ab×4, bcd×2, bc×1, m = 3")
    rules = spec.train(GREEDY_CORPUS, 3)
    out(f"merges: {[(spec.symbols(rules, r.a), spec.symbols(rules, r.b)) for r in rules]}")
    vocab = sorted({s for s, token in spec.token_strings(rules) if token in set(b"abcd") | {r.c for r in rules}})
    out(f"vocab : {vocab}")
    greedy = _strings(rules, spec.enc(rules, b"abcd"))
    best = _strings(rules, spec.shortest(rules, b"abcd"))
    out(f"BPE   : {greedy} {len(greedy)}")
    out(f"DP    : {best} {len(best)}")


def show_boundary(out: Print) -> None:
    """prop-utf8-boundary: a learned token that cuts あ in the middle."""
    out("== prop-utf8-boundary: あい×2, m = 1")
    rules = spec.train(["あい".encode()] * 2, 1)
    out(f"あ = {'あ'.encode().hex(' ')} / い = {'い'.encode().hex(' ')}")
    rule = rules[0]
    out(f"merge: {spec.symbols(rules, rule.a).hex()} + {spec.symbols(rules, rule.b).hex()}")
    ids = spec.enc(rules, "あ".encode())
    out(f"ids  : {ids} {[spec.symbols(rules, t).hex() for t in ids]}")
    for token in ids:
        try:
            out(f"{token} -> {spec.symbols(rules, token).decode('utf-8')}")
        except UnicodeDecodeError as error:
            out(f"{token} -> UnicodeDecodeError: {error.reason}")
    out(f"whole: {spec.dec_text(rules, ids)}")


def show_engine(out: Print) -> None:
    """The fast implementation beside the specification, on the same inputs."""
    from bpeproof.impl.encoder import dec as impl_dec
    from bpeproof.impl.encoder import enc as impl_enc
    from bpeproof.impl.trainer import train as impl_train

    out("== the implementation (impl) against the specification (spec)")
    same_rules = impl_train(TRACE_CORPUS, None) == spec.train(TRACE_CORPUS, None)
    out(f"unbounded training on the trace corpus: 11 merges, same rules as the spec: {same_rules}")
    generator = random.Random(1)
    corpus = [bytes(generator.choice(b"abc ") for _ in range(generator.randrange(1, 12))) for _ in range(300)]
    started = time.perf_counter()
    spec_rules = spec.train(corpus, 40)
    spec_seconds = time.perf_counter() - started
    started = time.perf_counter()
    impl_rules = impl_train(corpus, 40)
    impl_seconds = time.perf_counter() - started
    out(f"40 merges on 300 random words: same rules: {impl_rules == spec_rules}"
        f" (spec {spec_seconds * 1000:.0f} ms, impl {impl_seconds * 1000:.1f} ms)")
    agree = 0
    for _ in range(500):
        data = bytes(generator.choice(b"abc ") for _ in range(generator.randrange(60)))
        ids = impl_enc(spec_rules, data)
        if ids == spec.enc(spec_rules, data) and impl_dec(spec_rules, ids) == data:
            agree += 1
    out(f"500 random strings: impl.enc = spec.enc and impl.dec round-trips on {agree}/500")


def run(out: Print = print) -> None:
    rules = show_training(out)
    out(f"roundtrip ok: {random_roundtrips(rules)}")
    show_greedy(out)
    show_boundary(out)
    try:
        show_engine(out)
    except ImportError as error:  # the engine is optional for the article's part
        out(f"(the implementation is not available: {error})")
