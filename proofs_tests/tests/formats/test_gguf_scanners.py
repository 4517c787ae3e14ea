"""llama.cpp's hand-written splitters on the C scanners (``impl/pre_tokenizers/llama_cpp_scan.py``): the scanner of
GPT-2's, Llama 3's or Qwen2's expression, reading llama.cpp's classes, cuts every text as the reproduction of
llama.cpp's code does; a GGUF file of such a kind then cuts and merges in C, with the ids of the Python path, its
special and user-defined tokens cut out first, on threads too."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeproof.impl.encoder import HAVE_C_LOOP
from bpeproof.impl.formats import gguf_tokenizer
from bpeproof.impl.pipelines.gguf import gguf_parts
from bpeproof.impl.pre_tokenizers import llama_cpp_unicode
from bpeproof.impl.pre_tokenizers.llama_cpp import LLAMA_CPP_REGEXES, LlamaCppPreTokenizer
from bpeproof.impl.pre_tokenizers.llama_cpp_scan import llama_cpp_scanner, llama_cpp_table
from bpeproof.impl.tokenizer import Tokenizer

pytestmark = pytest.mark.skipif(not HAVE_C_LOOP, reason="the C extension bpeproof.impl._c._fastenc is not built")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "llama_cpp"
SCANNED_KINDS = sorted(kind for kind in LLAMA_CPP_REGEXES if llama_cpp_scanner(kind) >= 0)

#: The code points on both sides of every boundary of llama.cpp's table, and every ASCII one.
_BOUNDARIES = sorted({code for entry in llama_cpp_unicode.RANGES.split() for start in [int(entry[:-1], 16)]
                      for code in (start - 1, start, start + 1) if 0 <= code < 0x110000
                      and not 0xD800 <= code < 0xE000} | set(range(128)))
TEXTS = st.lists(st.sampled_from(_BOUNDARIES).map(chr) | st.sampled_from(list("'sStTlLvVeErRmMdD \n\r\t1a")),
                 max_size=40).map("".join)


def test_the_scanned_kinds() -> None:
    """The kinds llama.cpp runs by GPT-2's, Llama 3's and Qwen2's hand-written code alone have scanners."""
    assert {"gpt2", "llama3", "qwen2", "dbrx", "smaug", "chatglm4", "stablelm2"} <= set(SCANNED_KINDS)
    assert llama_cpp_scanner("falcon") == -1 and llama_cpp_scanner("deepseek-llm") == -1


@pytest.mark.parametrize("kind", SCANNED_KINDS)
@settings(max_examples=400, deadline=None)
@given(text=TEXTS)
def test_scanner_on_llama_cpp_classes_is_the_reproduction(kind: str, text: str) -> None:
    from bpeproof.impl._c import _fastenc  # type: ignore[attr-defined]

    expected = LlamaCppPreTokenizer(kind).split(text)
    assert _fastenc.split_pattern(text, llama_cpp_table(), llama_cpp_scanner(kind)) == expected


def _fixture(name: str) -> Path:
    return FIXTURES / f"ggml-vocab-{name}.gguf.gz"


@pytest.fixture(scope="module", params=["llama-bpe", "qwen2", "gpt-2", "mpt"])
def both_paths(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Tokenizer, Tokenizer]:
    """A GGUF fixture's tokenizer on the scanner, and the same file on the Python loops."""
    path = tmp_path_factory.mktemp("gguf") / f"{request.param}.gguf"
    path.write_bytes(gzip.decompress(_fixture(request.param).read_bytes()))
    read = gguf_tokenizer.read_gguf_tokenizer(str(path))
    scanned = Tokenizer.from_parts(gguf_parts(read))
    python_loops = Tokenizer.from_parts(gguf_parts(read, c_loop=False))
    assert scanned.pipeline.c_scanner >= 0, "the kind of this fixture has a scanner"
    return scanned, python_loops


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(TEXTS | st.sampled_from(["<s>", "<|endoftext|>", "<|im_start|>", "Hello world", " 12345"]),
                      min_size=1, max_size=5).map(lambda parts: ["".join(parts)] + parts),
       allowed=st.sampled_from([None, "all"]))
def test_a_scanned_gguf_file_encodes_as_its_python_path(both_paths: tuple[Tokenizer, Tokenizer], texts: list[str],
                                                        allowed: str | None) -> None:
    scanned, python_loops = both_paths
    expected = [python_loops.encode(text, allowed_special=allowed) for text in texts]
    assert [scanned.encode(text, allowed_special=allowed) for text in texts] == expected
    assert scanned.encode_on_threads(texts, 2, allowed_special=allowed) == expected
