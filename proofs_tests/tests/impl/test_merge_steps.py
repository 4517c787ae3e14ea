"""The merge models' reports of one word (``impl.models.steps``): the file's semantics end in ``encode_word``'s ids,
the joins rebuild them, the traced loop is the engine's loop, and the article's replay is def-bpe."""

from __future__ import annotations

import functools
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpeproof import spec
from bpeproof.impl.explain import explain
from bpeproof.impl.formats.tiktoken_file import load_tiktoken_ranks, tiktoken_rules
from bpeproof.impl.merge_loop import merge, merge_traced
from bpeproof.impl.models.hugging_face import HuggingFaceModel
from bpeproof.impl.models.steps import PieceSteps, StepReporter, replay
from bpeproof.impl.models.tiktoken import TiktokenModel
from bpeproof.impl.tokenizer import Tokenizer, load_tokenizer
from bpeproof.proofs_tests.fixtures.vocab import UNREACHABLE, write_rank_file
from bpeproof.proofs_tests.fixtures.vocab_files import FORMATS, write_vocab
from bpeproof.spec.types import Rule

ALPHABET = b"ab c"
words = st.binary(max_size=24).map(lambda b: bytes(ALPHABET[x % 4] for x in b))
TEXT = "It's the best of times, it was THE END: 12345 words\n    def encode(self): Hello world!"


def rebuilt(steps: PieceSteps) -> list[int | None]:
    """The parts' ids after the joins, as ``PieceSteps.parts`` and the positions say."""
    return [part.token for part in steps.parts()]


@pytest.fixture(scope="module")
def every_format(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Tokenizer]:
    folder = tmp_path_factory.mktemp("formats")
    return {kind: load_tokenizer(str(write_vocab(kind, folder / kind))) for kind in FORMATS}


@pytest.mark.parametrize("kind", FORMATS)
def test_every_model_reports_its_own_ids(every_format: dict[str, Tokenizer], kind: str) -> None:
    tokenizer = every_format[kind]
    model = tokenizer.model
    assert isinstance(model, StepReporter)
    pieces = [piece for text in (TEXT, "the best of times, it was the worst") for piece in tokenizer.pre_tokenize(
        text.lower() if kind == "clip" else text)]
    compared = 0
    for piece in pieces:
        word = piece.encode("utf-8")
        steps = model.merge_steps(word)
        assert steps.ids == model.encode_word(word), piece
        parts = rebuilt(steps)
        if steps.whole is not None and parts != [steps.whole.token]:
            assert list(steps.ids) == [steps.whole.token], piece  # the look-up decides
        elif all(note.startswith("normalized") for note in steps.notes):
            assert parts == list(steps.ids), piece  # nothing but the merges decides
        article = model.article_steps(word)
        if article is None:  # def-bpe starts from the units' tokens: here one has none
            assert any(part.token is None for part in steps.units), piece
            continue
        compared += 1
        assert list(article.ids) == [part.token for part in article.parts()]
        assert list(article.ids) == list(steps.ids), piece  # the small files are proper: the two agree
    assert compared


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=60), st.dictionaries(st.tuples(st.integers(0, 3), st.integers(0, 3)),
                                                              st.integers(0, 20), max_size=10))
def test_traced_loop_is_the_engines_loop(units: list[int], table: dict[tuple[int, int], int]) -> None:
    def code(x: tuple[int, ...], y: tuple[int, ...]) -> int | None:
        return table.get((x[-1], y[0]))

    def join(x: tuple[int, ...], y: tuple[int, ...], value: int) -> tuple[int, ...]:
        return x + y

    start: list[tuple[int, ...]] = [(unit,) for unit in units]
    final, joins = merge_traced(list(start), code, join)
    assert final == merge(list(start), code, join)
    replayed = list(start)
    for position, value, joined in joins:  # each join: the lowest code, the leftmost among equals
        codes = [code(x, y) for x, y in pairwise(replayed)]
        lowest = min(c for c in codes if c is not None)
        assert (value, position) == (lowest, codes.index(lowest))
        replayed[position : position + 2] = [joined]
    assert replayed == final and all(code(x, y) is None for x, y in pairwise(final))


@st.composite
def merge_lists(draw: st.DrawFn) -> tuple[list[int], list[tuple[int, int, int]]]:
    """Units over four ids and merges (a, b, c) in any order, pairs repeated, results fresh ids."""
    merges: list[tuple[int, int, int]] = []
    known = [0, 1, 2, 3]
    for c in range(4, 4 + draw(st.integers(0, 12))):
        a, b = draw(st.sampled_from(known)), draw(st.sampled_from(known))
        merges.append((a, b, c))
        known.append(c)
    if merges:
        merges += draw(st.lists(st.sampled_from(merges), max_size=4))
    order = draw(st.permutations(range(len(merges))))
    return draw(st.lists(st.integers(0, 3), max_size=20)), [merges[i] for i in order]


@settings(max_examples=400, deadline=None)
@given(merge_lists())
def test_replay_is_def_bpe_on_any_rule_list(case: tuple[list[int], list[tuple[int, int, int]]]) -> None:
    """The rules in list order, each replacing every occurrence of its pair left to right (def-merge), for any
    list: repeated pairs, rules whose parts come later."""
    units, merges = case
    grouped: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for index, (a, b, c) in enumerate(merges):
        grouped.setdefault((a, b), []).append((index, c))
    expected = functools.reduce(lambda tokens, rule: spec.apply_rule(Rule(*rule), tokens), merges, list(units))
    ids = list(units)
    for position, index, c in replay(units, grouped):
        assert (ids[position], ids[position + 1], c) == merges[index]
        ids[position : position + 2] = [c]
    assert ids == expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), max_size=12), st.lists(words, max_size=5))
def test_sequential_steps_are_the_specs_enc(pairs: list[tuple[int, int]], texts: list[bytes]) -> None:
    rules: list[Rule] = []
    for x, y in pairs:
        known = [*ALPHABET, *(256 + j for j in range(len(rules)))]
        rules.append(Rule(known[x % len(known)], known[y % len(known)], 256 + len(rules)))
    model = Tokenizer(rules).model
    assert isinstance(model, StepReporter)
    for text in texts:
        steps = model.merge_steps(text)
        assert list(steps.ids) == spec.enc(rules, text) == rebuilt(steps)
        labels = [join.label for join in steps.joins]
        assert labels == sorted(labels, key=lambda label: int(label[1:]))  # rule after rule, in list order


def test_tiktoken_whole_piece_lookup_and_the_article(tmp_path: Path) -> None:
    """A token that only the whole-piece look-up gives: tiktoken's ids are it, the article's rules do not make
    it; on every other piece the recovered rules are tiktoken_rules' own."""
    path = write_rank_file(tmp_path / "r.tiktoken", merges=80, unreachable=True)
    ranks = load_tiktoken_ranks(path)
    model = TiktokenModel(ranks)
    word = UNREACHABLE[-1]
    steps = model.merge_steps(word)
    assert steps.whole is not None and steps.ids == (ranks[word],) and rebuilt(steps) != [ranks[word]]
    article = model.article_steps(word)
    assert article is not None and list(article.ids) == rebuilt(steps) != list(steps.ids)
    proper = {token: rank for token, rank in ranks.items() if token not in UNREACHABLE}
    rules, byte_ids = tiktoken_rules(proper)
    sequential = Tokenizer(rules, byte_ids=byte_ids)
    proper_model = TiktokenModel(proper)
    for text in [b"the best of times", b"It's", b"  12345", b"encode(self)"]:
        article = proper_model.article_steps(text)
        assert article is not None and list(article.ids) == list(sequential.model.encode_word(text))


def test_hugging_face_repeated_pair_keeps_its_last_line_the_article_its_first() -> None:
    tokens = {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"bc", 258: b"abc"}
    a, b, c = ord("a"), ord("b"), ord("c")
    merges = [(a, b, 256), (b, c, 257), (256, c, 258), (a, b, 256)]  # (a, b) again after (b, c)
    model = HuggingFaceModel(tokens, merges)
    steps = model.merge_steps(b"abc")
    assert steps.ids == (a, 257) and [join.label for join in steps.joins] == ["merge 2"]
    article = model.article_steps(b"abc")
    assert list(article.ids) == [258] and [join.label for join in article.joins] == ["merge 1", "merge 3"]


LLAMA_CPP_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "llama_cpp"


@pytest.mark.parametrize("name", ["llama-spm", "phi-3", "gemma-4"])
def test_llama_cpp_text_models_report_their_own_ids_on_the_vectors(name: str) -> None:
    """llama.cpp's SPM and its BPE over text (Gemma 4), on the inputs of llama.cpp's vectors: the joins rebuild
    the parts, the steps end in ``encode_word``'s ids, explain's ids are encode's, and where the article's def-bpe
    applies its joins rebuild its own ids."""
    path = LLAMA_CPP_FIXTURES / f"ggml-vocab-{name}.gguf.gz"
    tokenizer = load_tokenizer(str(path))
    model = tokenizer.model
    assert isinstance(model, StepReporter) and tokenizer.semantics in {"llama.cpp-spm", "llama.cpp"}
    texts = path.with_name(f"ggml-vocab-{name}.gguf.inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    compared = joined = 0
    for text in texts:
        explanation = explain(tokenizer, text)
        assert (explanation.encoded or explanation.ids) == tokenizer.encode(text), text
        for piece in tokenizer.pre_tokenize(text):
            word = piece.encode("utf-8")
            steps = model.merge_steps(word)
            assert steps.ids == model.encode_word(word), piece
            joined += len(steps.joins)
            parts = rebuilt(steps)
            if steps.whole is not None and parts != [steps.whole.token]:
                assert list(steps.ids) == [steps.whole.token], piece
            elif None not in parts:
                assert parts == list(steps.ids), piece  # nothing but the merges decides
            else:
                assert steps.notes, piece  # the byte fallback is said
            article = model.article_steps(word)
            if article is None:
                assert None in [part.token for part in steps.units], piece
                continue
            compared += 1
            assert list(article.ids) == [part.token for part in article.parts()], piece
    assert compared and joined
