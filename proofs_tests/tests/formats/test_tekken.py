"""Mistral's tekken files and tiktoken rank files with the empty token, against their libraries.

The oracle for a tekken file is ``mistral-common``'s own ``Tekkenizer`` (``encode(text, bos=False, eos=False)``)
when it is installed, else tiktoken built the way ``Tekkenizer`` builds it: the file's live ranks and pattern,
each id shifted by the number of special tokens.  Files are generated here (small vocabularies in any rank
order, with and without a special token list, entries past the live part); the real ``tekken_*.json`` of
``mistral-common``'s package data are compared when the package is there.  A rank file with the line
``= N`` (tiktoken reads it as the empty token) must give tiktoken's ids.
"""

from __future__ import annotations

import base64
import gzip
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpeproof.impl.formats import load
from bpeproof.impl.formats.tekken import DEFAULT_SPECIAL_TOKENS, parse_tekken
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.pre_tokenizers.unicode_classes import changed_code_points
from bpeproof.impl.tokenizer import Tokenizer, load_tokenizer

tiktoken: Any = pytest.importorskip("tiktoken")

SHARED = Path(__file__).resolve().parents[4] / "shared"
#: The pattern of mistral-common's tekken files.
TEKKEN_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?"
    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|"
    r"\s+(?!\S)|\s+"
)

ALPHABET = list("ab AB x1239 \n\r\t'.,!-_/日本語あアé\u0301😀\u3000\u00a0٣¹½\u200d+")
_NEWER = st.sampled_from([chr(code) for code in changed_code_points()] or ["\u0cdc"])
texts = st.one_of(
    st.text(st.sampled_from(ALPHABET), max_size=40),
    st.text(st.characters(exclude_categories=["Cs"]) | _NEWER, max_size=30),
)


def _mistral() -> Any | None:
    """mistral-common's ``Tekkenizer`` class, or None when the package is not installed."""
    if importlib.util.find_spec("mistral_common") is None:
        return None
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    return Tekkenizer


def reference(path: Path) -> Callable[[str], list[int]]:
    """The ids the file's own library gives: mistral-common's, else tiktoken's as mistral-common builds it."""
    tekkenizer = _mistral()
    if tekkenizer is not None:
        model = tekkenizer.from_file(path)
        return lambda text: list(model.encode(text, bos=False, eos=False))
    document = json.loads(path.read_text(encoding="utf-8"))
    config = document["config"]
    offset = config["default_num_special_tokens"]
    live = document["vocab"][: config["default_vocab_size"] - offset]
    ranks = {base64.b64decode(entry["token_bytes"]): entry["rank"] for entry in live}
    encoding = tiktoken.Encoding(name=path.stem, pat_str=config["pattern"], mergeable_ranks=ranks, special_tokens={})
    return lambda text: [token + offset for token in encoding.encode(text)]


# ---------------------------------------------------------------------------
# Generated files
# ---------------------------------------------------------------------------


def tekken_document(tokens: list[bytes], *, specials: list[str] | None, count: int, version: str,
                    dead: tuple[bytes, ...] = ()) -> dict[str, Any]:
    """A tekken file: the 256 bytes, then ``tokens``, then ``dead`` entries past the live part."""
    entries = [bytes([byte]) for byte in range(256)] + tokens
    vocab = [{"rank": rank, "token_bytes": base64.b64encode(data).decode("ascii"),
              "token_str": data.decode("utf-8", "replace")} for rank, data in enumerate(entries + list(dead))]
    document: dict[str, Any] = {
        "config": {"pattern": TEKKEN_PATTERN, "num_vocab_tokens": len(vocab),
                   "default_vocab_size": len(entries) + count, "default_num_special_tokens": count,
                   "version": version},
        "vocab": vocab,
    }
    if specials is not None:
        document["special_tokens"] = [{"rank": rank, "token_str": name, "is_control": True}
                                      for rank, name in enumerate(specials)]
    return document


WORD = st.binary(min_size=2, max_size=5).map(lambda data: bytes(b"ab \n\xc3\xa9"[x % 6] for x in data))


@st.composite
def tekken_files(draw: st.DrawFn) -> dict[str, Any]:
    tokens = draw(st.lists(WORD, max_size=14, unique=True))
    listed = draw(st.booleans())
    specials = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]"][: draw(st.integers(3, 5))] if listed else None
    count = draw(st.integers(len(specials) if specials else len(DEFAULT_SPECIAL_TOKENS), 40))
    version = draw(st.sampled_from(["v11", "v13"])) if listed else draw(st.sampled_from(["v3", "v7"]))
    dead = (b"a", b"ab")  # past the live part: mistral-common never reads them (they repeat live tokens)
    return tekken_document(tokens, specials=specials, count=count, version=version, dead=dead)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tekken")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tekken_files(), st.lists(texts, min_size=1, max_size=6))
def test_generated_tekken_files_give_the_librarys_ids(workdir: Path, document: dict[str, Any],
                                                      samples: list[str]) -> None:
    path = workdir / "tekken_generated.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    ours = load_tokenizer(str(path))
    theirs = reference(path)
    assert ours.semantics == "tiktoken"
    for text in samples:
        assert ours.encode(text) == theirs(text)


def test_special_tokens_and_ids(workdir: Path) -> None:
    document = tekken_document([b"ab", b"abab"], specials=None, count=1000, version="v3")
    path = workdir / "tekken_specials.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    tokenizer = load_tokenizer(str(path))
    specials = tokenizer.special_tokens
    assert len(specials) == 1000 and specials["<s>"] == 1 and specials["[TOOL_CONTENT]"] == 19
    assert specials["<SPECIAL_20>"] == 20 and specials["<SPECIAL_999>"] == 999
    assert tokenizer.encode("abab") == [1000 + 257]
    assert tokenizer.encode("<s>ab", allowed_special="all") == [1, 1000 + 256]
    tekkenizer = _mistral()
    if tekkenizer is not None:
        model = tekkenizer.from_file(path)
        assert model.get_special_token("<s>") == 1 and model.num_special_tokens == 1000
        assert model.encode("abab", bos=True, eos=False) == [1, *tokenizer.encode("abab")]
    vocab = load(path)
    assert vocab.kind == "tiktoken" and vocab.pattern == TEKKEN_PATTERN and min(vocab.tokens) == 1000
    compressed = workdir / "tekken_specials.json.gz"
    compressed.write_bytes(gzip.compress(path.read_bytes()))
    assert load_tokenizer(str(compressed)).encode("abab ab") == tokenizer.encode("abab ab")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bpeproof.cli", *args], capture_output=True, text=True, timeout=120,
                          check=False)


def test_malformed_tekken_files_are_refused_in_one_line(workdir: Path) -> None:
    def broken(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        document = tekken_document([b"ab"], specials=["<unk>", "<s>"], count=4, version="v11")
        change(document)
        return document

    cases: dict[str, dict[str, Any]] = {
        "pattern": broken(lambda d: d["config"].pop("pattern")),
        "rank": broken(lambda d: d["vocab"][256].update(rank=7)),
        "base64": broken(lambda d: d["vocab"][256].update(token_bytes="a?b=")),
        "byte": broken(lambda d: d["vocab"][3].update(token_bytes=base64.b64encode(b"x").decode())),
        "twice": broken(lambda d: d["vocab"][256].update(token_bytes=base64.b64encode(b"a").decode())),
        "keys": broken(lambda d: d["vocab"][10].update(extra=1)),
        "size": broken(lambda d: d["config"].update(default_vocab_size=10_000)),
        "specials": broken(lambda d: d["config"].update(default_num_special_tokens=1)),
        "special rank": broken(lambda d: d["special_tokens"][1].update(rank=5)),
        "special name": broken(lambda d: d["special_tokens"][1].update(token_str="<unk>")),
        "no specials": broken(lambda d: d.pop("special_tokens")),
        "version": broken(lambda d: d["config"].update(version="3")),
        "regex": broken(lambda d: d["config"].update(pattern="(\\p{L")),
    }
    for name, document in cases.items():
        path = workdir / f"tekken_{name.replace(' ', '_')}.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        with pytest.raises(FormatError) as caught:
            load_tokenizer(str(path))
        assert "\n" not in str(caught.value) and str(path) in str(caught.value), name
    path = workdir / "tekken_truncated.json"
    path.write_text(json.dumps(cases["pattern"])[:-40], encoding="utf-8")
    result = _cli("encode", "ab", "--vocab", str(path))
    assert result.returncode == 2 and result.stdout == "" and len(result.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------
# mistral-common's own files
# ---------------------------------------------------------------------------


def real_files() -> list[Path]:
    spec = importlib.util.find_spec("mistral_common")
    folder = Path(spec.origin).parent / "data" if spec is not None and spec.origin is not None else None
    return sorted(folder.glob("tekken_*.json")) if folder is not None and folder.is_dir() else []


def corpus_lines(per_corpus: int = 100) -> list[str]:
    lines: list[str] = []
    for path in sorted((SHARED / "corpora").glob("*.gz")):
        found = gzip.decompress(path.read_bytes()).decode("utf-8").splitlines(keepends=True)
        step = max(1, len(found) // per_corpus)
        lines += found[: per_corpus // 2] + found[::step][: per_corpus // 2]
    return lines


def test_real_tekken_files_give_mistral_commons_ids() -> None:
    """Every tekken file of mistral-common's package data; files that read the same (ranks, pattern, special
    tokens: the two published ones differ only in their image settings) are compared with the library once."""
    paths = real_files()
    if not paths:
        pytest.skip("mistral-common (with its tekken_*.json package data) is not installed")
    checked: list[Any] = []
    for path in paths:
        content = parse_tekken(path, path.read_bytes())
        if content in checked:
            continue
        checked.append(content)
        _compare(load_tokenizer(str(path)), reference(path))


def _compare(ours: Tokenizer, theirs: Callable[[str], list[int]]) -> None:
    """The same ids on generated text, on the lines of the shared corpora and on all of them at once."""

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(texts)
    def check(text: str) -> None:
        assert ours.encode(text) == theirs(text)

    check()
    lines = corpus_lines()
    for line in lines:
        assert ours.encode(line) == theirs(line), line
    assert ours.encode("".join(lines)) == theirs("".join(lines))


# ---------------------------------------------------------------------------
# The empty token of rank files
# ---------------------------------------------------------------------------


def _tiktoken_file(path: Path) -> Any:
    """The rank file as tiktoken reads it (``load_tiktoken_bpe``), not from tiktoken's cache, which is keyed by the
    path alone (a file rewritten at one path would be read as it was)."""
    from tiktoken.load import load_tiktoken_bpe

    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = ""  # tiktoken's way to turn its cache off
    try:
        return load_tiktoken_bpe(str(path))
    finally:
        if saved is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = saved


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(WORD, max_size=10, unique=True), st.integers(0, 12), st.lists(texts, min_size=1, max_size=5))
def test_rank_file_with_the_empty_token(workdir: Path, tokens: list[bytes], where: int, samples: list[str]) -> None:
    """'= N' is the empty token to tiktoken: an id that decodes to nothing and that no text produces."""
    entries = [bytes([byte]) for byte in range(256)] + tokens
    entries.insert(256 + min(where, len(tokens)), b"")
    lines = [f"{base64.b64encode(data).decode('ascii') or '='} {rank}" for rank, data in enumerate(entries)]
    path = workdir / "empty.tiktoken"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    ranks = _tiktoken_file(path)
    assert b"" in ranks
    library = tiktoken.Encoding(name="empty", pat_str=TEKKEN_PATTERN, mergeable_ranks=ranks, special_tokens={})
    ours = load_tokenizer(str(path), TEKKEN_PATTERN)
    assert ours.decode_bytes([ranks[b""]]) == b""
    for text in samples:
        assert ours.encode(text) == library.encode_ordinary(text)


def test_real_rank_file_with_the_empty_token(workdir: Path) -> None:
    source = SHARED / "vocabs" / "r50k_base.tiktoken.gz"
    if not source.is_file():
        pytest.skip(f"{source} is not there")
    path = workdir / "r50k_base.tiktoken"
    path.write_bytes(gzip.decompress(source.read_bytes()) + b"= 50256\n")
    ranks = _tiktoken_file(path)
    assert ranks[b""] == 50256
    ours = load_tokenizer(str(path), "r50k")
    library = tiktoken.Encoding(name="r50k", pat_str=ours.pattern, mergeable_ranks=ranks, special_tokens={})
    for line in corpus_lines(60) or ["hello world  ", "\t12 345"]:
        assert ours.encode(line) == library.encode_ordinary(line), line
