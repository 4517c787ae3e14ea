"""The tokenizer files of the format benchmark (``bench_formats.py``) and the peers that read each one.

Each case is a real file, or a file written from a real one for a shape no file of ``../shared/vocabs`` has:
``tokenizer.json`` files of cl100k's ranks behind Llama 3's and Qwen2's pre-tokenizers (Qwen2's with NFC), a
``tokenizer.json`` of GPT-2's ranks written by ``bpeproof convert`` (ByteLevel with its expression), the same
with a ``Digits`` step before it, DeepSeek's file as published (Split steps, then ByteLevel without its
expression), with an NFC normalizer, and on a text holding its added tokens, a ``Metaspace`` file written from
Mistral's sentencepiece model, the model itself, llama.cpp GGUF vocabularies of the BPE family, CLIP's merges, and
the cl100k and o200k rank files (with a ``tokenizer.json`` of the same ranks for the Rust peers).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
import sys
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from bpeproof.impl.pre_tokenizers.patterns import PATTERNS

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
VOCABS = SHARED / "vocabs"
GGUF = ROOT / "proofs_tests" / "fixtures" / "llama_cpp"
CLIP = ROOT / "proofs_tests" / "fixtures" / "bpe_simple_vocab_16e6.txt.gz"


@dataclass(frozen=True)
class Case:
    """One file: what bpeproof loads, what each peer loads, and which text it is given."""

    name: str
    shape: str
    #: The file bpeproof loads (written into the work folder when ``build`` is set).
    impl_file: str
    #: Each peer's name and the file it loads.
    peers: dict[str, str] = field(default_factory=dict)
    #: Each peer that is not run, and why.
    skipped: dict[str, str] = field(default_factory=dict)
    #: ``added``: the documents get the file's added tokens between some lines.
    text: str = "plain"


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _convert(source: Path, out: Path) -> None:
    """``bpeproof convert SOURCE OUT --to hf`` (the command a user runs)."""
    subprocess.run([sys.executable, "-m", "bpeproof", "convert", str(source), str(out), "--to", "hf"],
                   check=True, capture_output=True)


def _write_json(value: object, out: Path) -> None:
    out.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")


def _metaspace_from_sentencepiece(model: Path, out: Path) -> None:
    """A ``tokenizer.json`` of the model's pieces with a ``Metaspace`` pre-tokenizer, the merges taken from the
    pieces as ``transformers`` converts a sentencepiece BPE model (every split of a piece into two pieces, ranked by
    the piece's id)."""
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_file=str(model))
    vocab = {processor.id_to_piece(index): index for index in range(processor.get_piece_size())}
    merges: list[tuple[int, int, int, str, str]] = []
    for piece, index in vocab.items():
        if processor.is_control(index) or processor.is_unknown(index) or processor.is_byte(index):
            continue
        merges.extend((index, vocab[piece[:cut]], vocab[piece[cut:]], piece[:cut], piece[cut:])
                      for cut in range(1, len(piece)) if piece[:cut] in vocab and piece[cut:] in vocab)
    merges.sort()
    specials = [index for index in range(processor.get_piece_size())
                if processor.is_control(index) or processor.is_unknown(index)]
    _write_json({
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": index, "content": processor.id_to_piece(index), "single_word": False,
                          "lstrip": False, "rstrip": False, "normalized": False, "special": True}
                         for index in specials],
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
        "post_processor": None,
        "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": processor.id_to_piece(processor.unk_id()),
                  "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
                  "byte_fallback": True, "ignore_merges": False, "vocab": vocab,
                  "merges": [[left, right] for *_, left, right in merges]},
    }, out)


def _edited(source: Path, out: Path, **changes: object) -> None:
    """``source`` (a ``tokenizer.json``, gzip or not) with some top-level entries replaced."""
    data = source.read_bytes()
    value = json.loads(gzip.decompress(data) if source.suffix == ".gz" else data)
    value.update(changes)
    _write_json(value, out)


def _rust_peers(path: Path) -> dict[str, str]:
    return {peer: str(path) for peer in ("tokenizers", "fastokens") if _installed(peer)}


def _rust_skipped() -> dict[str, str]:
    return {peer: f"`{peer}` is not installed" for peer in ("tokenizers", "fastokens") if not _installed(peer)}


GGUF_FILES = ("llama-bpe", "qwen2")
NO_LLAMA_CPP = ("llama-cpp-python is not installed (PyPI has only its source, a C++ build of llama.cpp)"
                if not _installed("llama_cpp") else "")
NO_CLIP = ("no CLIP reference is installed (open-clip-torch and OpenAI's clip need torch)"
           if not (_installed("open_clip") or _installed("clip")) else "")


def cases(work: Path, wanted: Collection[str] = ()) -> list[Case]:
    """Every case whose files are present (of ``wanted``, by name, when given), their derived files written into
    ``work``."""
    out: list[Case] = []

    def want(*names: str) -> bool:
        return not wanted or any(name in wanted for name in names)

    deepseek = VOCABS / "deepseek_tokenizer.json.gz"
    for rank in ("cl100k", "o200k"):
        path = VOCABS / f"{rank}_base.tiktoken.gz"
        if path.exists() and want(rank):
            _convert(path, work / f"{rank}.json")
            peers = {"tiktoken": str(path)} if _installed("tiktoken") else {}
            out.append(Case(rank, "rank file", str(path), {**peers, **_rust_peers(work / f"{rank}.json")},
                            _rust_skipped()))
    cl100k = VOCABS / "cl100k_base.tiktoken.gz"
    if cl100k.exists() and want("llama3", "qwen2-nfc"):
        # cl100k's ranks behind the pre-tokenizers of Llama 3's and Qwen2's files (the ranks of neither are here).
        ranks = work / "cl100k-ranks.json"
        _convert(cl100k, ranks)
        for name, normalizer, shape in (("llama3", None, "Split with Llama 3's expression, then ByteLevel"),
                                        ("qwen2-nfc", {"type": "NFC"}, "NFC, Split with Qwen2's expression, then "
                                         "ByteLevel")):
            path = work / f"{name}.json"
            _edited(ranks, path, normalizer=normalizer, pre_tokenizer={"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": PATTERNS[name.split("-")[0]]}, "behavior": "Isolated",
                 "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]})
            out.append(Case(name, f"tokenizer.json: {shape}", str(path), _rust_peers(path), _rust_skipped()))
    if (VOCABS / "gpt2_encoder.json.gz").exists() and want("gpt2", "gpt2-digits"):
        gpt2 = work / "gpt2.json"
        _convert(VOCABS / "gpt2_encoder.json.gz", gpt2)
        out.append(Case("gpt2", "tokenizer.json: ByteLevel with its expression", str(gpt2), _rust_peers(gpt2),
                        _rust_skipped()))
        digits = work / "gpt2-digits.json"
        _edited(gpt2, digits, pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]})
        out.append(Case("gpt2-digits", "tokenizer.json: Digits, then ByteLevel", str(digits), _rust_peers(digits),
                        _rust_skipped()))
    if deepseek.exists() and want("deepseek", "deepseek-nfc", "deepseek-added"):
        out.append(Case("deepseek", "tokenizer.json: Split steps, then ByteLevel without its expression",
                        str(deepseek), _rust_peers(deepseek), _rust_skipped()))
        nfc = work / "deepseek-nfc.json"
        _edited(deepseek, nfc, normalizer={"type": "NFC"})
        out.append(Case("deepseek-nfc", "tokenizer.json: NFC normalizer, Split steps, ByteLevel", str(nfc),
                        _rust_peers(nfc), _rust_skipped()))
        out.append(Case("deepseek-added", "tokenizer.json: DeepSeek's, its added tokens in the text", str(deepseek),
                        _rust_peers(deepseek), _rust_skipped(), text="added"))
    mistral = VOCABS / "mistral_tokenizer.model.v1"
    if mistral.exists() and want("mistral-metaspace", "mistral-sp"):
        metaspace = work / "mistral-metaspace.json"
        _metaspace_from_sentencepiece(mistral, metaspace)
        out.append(Case("mistral-metaspace", "tokenizer.json: Metaspace, byte fallback (Mistral's pieces)",
                        str(metaspace), _rust_peers(metaspace), _rust_skipped()))
        peers = {"sentencepiece": str(mistral)} if _installed("sentencepiece") else {}
        out.append(Case("mistral-sp", "sentencepiece model, BPE", str(mistral), peers,
                        {} if peers else {"sentencepiece": "`sentencepiece` is not installed"}))
    for name in GGUF_FILES:
        path = GGUF / f"ggml-vocab-{name}.gguf.gz"
        if path.exists() and want(f"gguf-{name}"):
            skipped = {"llama.cpp": NO_LLAMA_CPP} if NO_LLAMA_CPP else {}
            out.append(Case(f"gguf-{name}", "llama.cpp GGUF vocabulary, BPE", str(path),
                            {} if skipped else {"llama.cpp": str(path)}, skipped))
    if CLIP.exists() and want("clip"):
        out.append(Case("clip", "CLIP's merges", str(CLIP), {}, {"CLIP": NO_CLIP} if NO_CLIP else {}))
    return out


def added_tokens(case: Case) -> list[str]:
    """The added tokens that ``deepseek-added`` puts in its text: the file's, in the file's order."""
    value = json.loads(gzip.decompress(Path(case.impl_file).read_bytes()))
    return [token["content"] for token in value["added_tokens"]]
