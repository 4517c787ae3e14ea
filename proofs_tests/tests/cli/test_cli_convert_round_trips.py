"""Every file ``bpeproof convert`` writes loads back, in bpeproof and in its own library, with the source's ids on
real text; and a tokenizer file's format is told by its content, never by its name.

The sources are one small trained tokenizer written in each format the command reads, each by its own library
where it has a writer (tokenizers for tokenizer.json and GPT-2's pair, tiktoken for the rank file), and Mistral's
real tekken file from mistral-common's package data when it is installed.  The text is the package's own sample
(``proofs_tests/checker/data/sample.txt``), line by line and whole.
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import regex

from bpeproof.cli import main
from bpeproof.impl import formats
from bpeproof.impl.formats.vocab import GPT2_PATTERN, bytes_to_token_string
from bpeproof.impl.pre_tokenizers.hf_splits import to_oniguruma
from bpeproof.impl.pre_tokenizers.patterns import PATTERNS
from bpeproof.impl.tokenizer import Tokenizer, load_tokenizer
from bpeproof.impl.trainer import train
from bpeproof.proofs_tests import checker

Encode = Callable[[str], list[int]]

SAMPLE = Path(checker.__file__).resolve().parent / "data" / "sample.txt"
#: The special token every source but the rank file holds (tekken's are its own).
END = "<|endoftext|>"
#: mistral-common's tekken files and the number of special tokens of the small tekken file made here.
TEKKEN_SPECIALS = ["<unk>", "<s>", "</s>"]
TEKKEN_COUNT = 10


def _texts() -> list[str]:
    sample = SAMPLE.read_text(encoding="utf-8")
    return [*sample.splitlines(keepends=True), sample]


TEXTS = _texts()


def _library(name: str) -> Any:
    return pytest.importorskip(name, reason=f"{name} is not installed: the round trip compares with it")


@functools.cache
def _trained() -> tuple[list[tuple[int, int, int]], dict[int, bytes]]:
    """300 merges trained on the sample's cl100k pieces, and every token's bytes."""
    words = [match.group().encode("utf-8") for match in regex.finditer(PATTERNS["cl100k"], SAMPLE.read_text("utf-8"))]
    rules = [(a, b, c) for a, b, c in train(words, 300)]
    tokens = {byte: bytes([byte]) for byte in range(256)}
    for a, b, c in rules:
        tokens[c] = tokens[a] + tokens[b]
    return rules, tokens


@dataclass(frozen=True)
class Source:
    """A tokenizer file to convert: where it is, the pattern its users give it (None: it holds its own), the
    options ``convert`` needs, and its own library's ids."""

    path: Path
    pattern: str | None
    options: tuple[str, ...]
    reference: Encode


def _project(directory: Path) -> Source:
    rules, _ = _trained()
    path = directory / "trained.bpeproof.json"
    tokenizer = Tokenizer(rules, "cl100k", {END: 256 + len(rules)})
    tokenizer.save(path)
    return Source(path, None, (), tokenizer.encode)  # the project's format: bpeproof is its library


def _rank_file(directory: Path) -> Source:
    tiktoken = _library("tiktoken")
    _, tokens = _trained()
    path = directory / "small.tiktoken"
    ranks = {data: token for token, data in tokens.items()}
    # As tiktoken's dump_tiktoken_bpe writes it (which needs blobfile): base64, a space, the rank, by rank.
    path.write_text("".join(f"{base64.b64encode(data).decode()} {rank}\n" for data, rank in ranks.items()))
    encoding = tiktoken.Encoding(name="small", pat_str=PATTERNS["cl100k"], mergeable_ranks=ranks, special_tokens={})
    return Source(path, PATTERNS["cl100k"], ("--pattern", "cl100k"), encoding.encode_ordinary)


def _hf_model() -> tuple[dict[str, int], list[tuple[str, str]]]:
    rules, tokens = _trained()
    vocab = {bytes_to_token_string(data): token for token, data in tokens.items()}
    merges = [(bytes_to_token_string(tokens[a]), bytes_to_token_string(tokens[b])) for a, b, _ in rules]
    return vocab, merges


def _tokenizer_json(directory: Path) -> Source:
    """A tokenizer.json made by the tokenizers library: GPT-2's byte-level pre-tokenizer, one added token."""
    tokenizers = _library("tokenizers")
    vocab, merges = _hf_model()
    library = tokenizers.Tokenizer(tokenizers.models.BPE(vocab, merges))
    library.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    library.decoder = tokenizers.decoders.ByteLevel()
    library.add_special_tokens([END])
    path = directory / "tokenizer.json"
    library.save(str(path))
    return Source(path, None, (), lambda text: library.encode(text, add_special_tokens=False).ids)


def _gpt2_library(vocab: Path, merges: Path, pattern: str) -> Encode:
    """GPT-2's pair as the tokenizers library reads it, cut by ``pattern`` (GPT-2's own: its ByteLevel step)."""
    tokenizers = _library("tokenizers")
    library = tokenizers.Tokenizer(tokenizers.models.BPE.from_file(str(vocab), str(merges)))
    pre = tokenizers.pre_tokenizers
    if pattern == GPT2_PATTERN:
        library.pre_tokenizer = pre.ByteLevel(add_prefix_space=False)
    else:
        split = pre.Split(tokenizers.Regex(to_oniguruma(pattern)), "isolated")
        library.pre_tokenizer = pre.Sequence([split, pre.ByteLevel(add_prefix_space=False, use_regex=False)])
    return lambda text: library.encode(text, add_special_tokens=False).ids


def _gpt2_pair(directory: Path) -> Source:
    """``vocab.json`` and ``merges.txt`` as the tokenizers library saves a BPE model (GPT-2's pair by content)."""
    tokenizers = _library("tokenizers")
    vocab, merges = _hf_model()
    tokenizers.models.BPE(vocab, merges).save(str(directory))
    path = directory / "vocab.json"
    return Source(path, GPT2_PATTERN, (), _gpt2_library(path, directory / "merges.txt", GPT2_PATTERN))


def _tekken(directory: Path) -> Source:
    from bpeproof.proofs_tests.tests.formats.test_tekken import reference, tekken_document

    _, tokens = _trained()
    document = tekken_document([tokens[token] for token in sorted(tokens) if token >= 256],
                               specials=TEKKEN_SPECIALS, count=TEKKEN_COUNT, version="v11")
    path = directory / "tekken_small.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return Source(path, None, (), reference(path))


def _gguf(directory: Path) -> Source:
    from bpeproof.proofs_tests.tests.formats.test_gguf import gguf_bytes, tokenizer_pairs

    rules, tokens = _trained()
    path = directory / "small.gguf"
    path.write_bytes(gguf_bytes(tokenizer_pairs([(tokens[a], tokens[b]) for a, b, _ in rules], specials={END: 3})))
    own = load_tokenizer(str(path))  # llama.cpp's tokenizer, which the GGUF tests check against llama.cpp's vectors
    return Source(path, GPT2_PATTERN, (), own.encode)


SOURCES: dict[str, Callable[[Path], Source]] = {
    "bpeproof": _project, "tiktoken": _rank_file, "tokenizer.json": _tokenizer_json, "gpt2": _gpt2_pair,
    "tekken": _tekken, "gguf": _gguf,
}


def _converted(source: Source, target: str, directory: Path) -> Path:
    """``bpeproof convert`` of the source to ``target`` in ``directory``; the file to load."""
    names = {"tiktoken": "out.tiktoken", "hf": "out.json", "gpt2": "encoder.json", "bpeproof": "out.bpeproof.json"}
    out = directory / names[target]
    code = main(["convert", str(source.path), str(out), "--to", target, *source.options])
    assert code == 0, f"convert to {target} exited {code}"
    return out


def _tiktoken_ranks(path: Path) -> dict[bytes, int]:
    """A rank file read as tiktoken's ``load_tiktoken_bpe`` reads it (which needs blobfile for a local file)."""
    lines = [line.split() for line in path.read_text().splitlines() if line]
    return {base64.b64decode(token): int(rank) for token, rank in lines}


def _loaded_back(out: Path, target: str, pattern: str | None) -> tuple[Encode, Encode]:
    """The converted file in bpeproof and in its own library, given the pattern its format does not hold."""
    if target == "tiktoken":
        tiktoken = _library("tiktoken")
        assert pattern is not None
        encoding = tiktoken.Encoding(name="back", pat_str=pattern, mergeable_ranks=_tiktoken_ranks(out),
                                     special_tokens={})
        return load_tokenizer(str(out), pattern).encode, encoding.encode_ordinary
    if target == "hf":
        tokenizers = _library("tokenizers")
        library = tokenizers.Tokenizer.from_file(str(out))
        return load_tokenizer(str(out)).encode, lambda text: library.encode(text, add_special_tokens=False).ids
    if target == "gpt2":
        given = None if pattern in (None, GPT2_PATTERN) else pattern
        return load_tokenizer(str(out), given).encode, _gpt2_library(out, out.parent / "vocab.bpe",
                                                                     pattern or GPT2_PATTERN)
    return load_tokenizer(str(out)).encode, Tokenizer.load(out).encode  # the project's own reader


def _pattern_of(source: Source) -> str:
    """The pattern the source cuts text with: the one its users give it, or the one it holds."""
    if source.pattern is not None:
        return source.pattern
    vocab = formats.load(source.path)
    if vocab.pattern is not None:
        return vocab.pattern
    assert [step.type for step in vocab.pre_tokenizers] == ["ByteLevel"], vocab.pre_tokenizers
    return GPT2_PATTERN


def _differences(name: str, reference: Encode, encodings: dict[str, Encode]) -> list[str]:
    """Where the loaded-back encodings differ from the source's library on the sample (the first text each)."""
    found: list[str] = []
    for who, encode in encodings.items():
        for text in TEXTS:
            if encode(text) != reference(text):
                found.append(f"{name}: {who} differs from the source's library on {text[:50]!r}")
                break
    return found


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Source]:
    directory = tmp_path_factory.mktemp("sources")
    made: dict[str, Source] = {}
    for name, make in SOURCES.items():
        (directory / name).mkdir()
        made[name] = make(directory / name)
    return made


@pytest.mark.parametrize("target", ["tiktoken", "hf", "gpt2", "bpeproof"])
def test_every_source_converts_to_every_target_with_its_ids(sources: dict[str, Source], target: str,
                                                           tmp_path: Path) -> None:
    """Each source converted to ``target`` loads back in bpeproof and in the target's library (the rank file and
    GPT-2's pair given the source's pattern, which they do not hold) with the source's own ids on the sample."""
    problems: list[str] = []
    for name, source in sources.items():
        directory = tmp_path / name
        directory.mkdir()
        try:
            out = _converted(source, target, directory)
            ours, theirs = _loaded_back(out, target, _pattern_of(source))
        except (AssertionError, formats.FormatError) as error:
            problems.append(f"{name} -> {target}: {error}")
            continue
        problems += _differences(f"{name} -> {target}", source.reference,
                                 {"bpeproof": ours, f"{target}'s library": theirs})
    assert not problems, "\n".join(problems)


def _real_tekken() -> Path | None:
    spec = importlib.util.find_spec("mistral_common")
    if spec is None or spec.origin is None:
        return None
    found = sorted((Path(spec.origin).parent / "data").glob("tekken_*.json"))
    return found[0] if found else None


def test_mistral_tekken_file_converts_to_a_tokenizer_json_with_its_ids(tmp_path: Path) -> None:
    """The real tekken file (130,072 tokens after 1,000 special ones) as a tokenizer.json: the tokenizers library
    and bpeproof both give mistral-common's ids, and its special tokens keep their ids 0..999."""
    path = _real_tekken()
    if path is None:
        pytest.skip("mistral-common (with its tekken_*.json package data) is not installed")
    tokenizers = _library("tokenizers")
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    tekkenizer = Tekkenizer.from_file(str(path))
    out = tmp_path / "tokenizer.json"
    assert main(["convert", str(path), str(out)]) == 0
    library = tokenizers.Tokenizer.from_file(str(out))
    assert library.token_to_id("<s>") == tekkenizer.bos_id == 1 and library.token_to_id("<unk>") == 0
    assert library.id_to_token(130072) not in ("<unk>", None)
    ours = load_tokenizer(str(out))
    assert ours.special_tokens["<s>"] == 1
    problems = _differences("tekken -> tokenizer.json", lambda text: tekkenizer.encode(text, bos=False, eos=False),
                            {"bpeproof": ours.encode,
                             "tokenizers": lambda text: library.encode(text, add_special_tokens=False).ids})
    assert not problems, "\n".join(problems)


def test_the_format_is_told_by_the_content_not_the_name(sources: dict[str, Source], tmp_path: Path) -> None:
    """A tokenizer.json named like a tekken file is a tokenizer.json; a tekken file, a rank file, a project file and
    GPT-2's encoder under other names are what their content says; each gives its own ids."""
    renamed = {
        "tokenizer.json": ["tekken_240911.json", "my-tekken.json", "encoder.json", "x.tiktoken", "m.model"],
        "tekken": ["tokenizer.json", "mistral.tiktoken", "vocab.bin"],
        "tiktoken": ["tokenizer.json", "tekken.json"],
        "bpeproof": ["tokenizer.json", "tekken_v3.json.txt"],
        "gpt2": ["tokenizer.json", "tekken.json"],
    }
    kinds = {"tokenizer.json": "hf-bpe", "tekken": "tiktoken", "tiktoken": "tiktoken", "bpeproof": "bpeproof",
             "gpt2": "gpt2"}
    for name, copies in renamed.items():
        source = sources[name]
        for index, copy_name in enumerate(copies):
            directory = tmp_path / f"{name}-{index}"
            directory.mkdir()
            copy = directory / copy_name
            shutil.copyfile(source.path, copy)
            if name == "gpt2":
                shutil.copyfile(source.path.parent / "merges.txt", directory / "merges.txt")
            assert formats.load(copy).kind == kinds[name], copy_name
            given = source.pattern if name == "tiktoken" else None
            encode = load_tokenizer(str(copy), given).encode
            for text in TEXTS[:8]:
                assert encode(text) == source.reference(text), (name, copy_name, text)
    tekken_named = tmp_path / "tekken-named" / "tekken_240911.json"
    tekken_named.parent.mkdir()
    shutil.copyfile(sources["tokenizer.json"].path, tekken_named)
    assert main(["encode", "--vocab", str(tekken_named), "hello"]) == 0


def test_a_tokenizer_json_keeps_its_normalizer_and_added_token_flags(tmp_path: Path) -> None:
    """tokenizer.json to tokenizer.json keeps what the library reads text with: the normalizer, and each added
    token's flags."""
    tokenizers = _library("tokenizers")
    vocab, merges = _hf_model()
    library = tokenizers.Tokenizer(tokenizers.models.BPE(vocab, merges))
    library.normalizer = tokenizers.normalizers.NFC()
    library.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    library.decoder = tokenizers.decoders.ByteLevel()
    library.add_special_tokens([tokenizers.AddedToken(END, lstrip=True, normalized=False)])
    library.add_tokens([tokenizers.AddedToken("word", single_word=True)])
    source, out = tmp_path / "source.json", tmp_path / "out.json"
    library.save(str(source))
    library = tokenizers.Tokenizer.from_file(str(source))  # the file as the library reads it
    assert main(["convert", str(source), str(out)]) == 0
    back = tokenizers.Tokenizer.from_file(str(out))
    ours = load_tokenizer(str(out))
    for text in [*TEXTS[:10], f"Cafe\u0301 {END} a word, words{END}x"]:
        expected = library.encode(text, add_special_tokens=False).ids
        assert back.encode(text, add_special_tokens=False).ids == expected, text
        assert ours.encode(text, allowed_special="all") == expected, text  # (the library reads every added token)


def test_a_tokenizer_json_whose_added_tokens_take_model_ids_is_refused(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A file whose added token is not in the model's vocabulary, beside a model numbered from 1 (as convert wrote
    tekken's): the tokenizers library gives the added token the next id after the model's size, an ordinary
    token's; bpeproof says so in one line instead of loading other ids."""
    vocab = {bytes_to_token_string(bytes([byte])): byte + 1 for byte in range(256)}
    document = {"added_tokens": [{"id": 0, "content": "<s>", "special": True}],
                "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False},
                "model": {"type": "BPE", "vocab": vocab, "merges": []}}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert main(["encode", "--vocab", str(path), "hello"]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "'<s>' takes the id 256" in error and "ambiguous" in error, error
