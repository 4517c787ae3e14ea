"""``bpeproof convert IN OUT``: rewrite a tokenizer file in another format, keeping the file's own ids.

The input is anything ``bpeproof.impl.formats.load`` reads, its format told by its content.  The output format
is ``--to``, or else OUT's name decides:

- ``*.tiktoken``, ``*.tiktoken.gz``: a tiktoken rank file (``tiktoken``);
- ``*.bpeproof.json``, ``*.bpeproof.json.gz``: the project's tokenizer file (``bpeproof``);
- ``*encoder*.json[.gz]``: GPT-2's ``encoder.json``, with ``vocab.bpe`` written beside it (``gpt2``);
- any other ``*.json[.gz]``: a Hugging Face ``tokenizer.json`` (``hf``).

For ``gpt2`` the merges go to OUT's name with ``encoder.json`` replaced by
``vocab.bpe`` (``vocab.bpe`` in OUT's directory when the name does not hold
``encoder.json``).  Every file is written atomically, and loads back, in bpeproof and in its own library, with
the ids the source's library gives on text (given the pattern a rank file does not hold, or GPT-2's files
imply).  What cannot be converted so is refused with one line and exit 2, writing nothing: a source whose
library does to the text what no format written here holds (``_lost_in_conversion``), a model without a token
for every byte (to a rank file or the project's file), a model the target format cannot hold (the writers say
why), a project file without a pattern.  The conversion keeps tokens, ids, merges, special tokens and the
pattern as far as the target holds them; it does not keep the source library's merge procedure (a rank file is
merged by rank, the project's file rule after rule), which gives other ids only on a vocabulary whose merges are
not those of training, and which ``bpeproof audit`` compares.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from bpeproof.commands import EXIT_OK, UsageError
from bpeproof.commands._vocab import guess_pattern
from bpeproof.impl import formats
from bpeproof.impl.io.wording import count, token_count

#: The values of ``--to``.
TARGETS = ("tiktoken", "hf", "gpt2", "bpeproof")


def target_of(out: str) -> str | None:
    """The output format OUT's name asks for, or None when the name does not tell."""
    name = Path(out).name.lower()
    if name.endswith((".tiktoken", ".tiktoken.gz")):
        return "tiktoken"
    if name.endswith((".bpeproof.json", ".bpeproof.json.gz")):
        return "bpeproof"
    if name.endswith((".json", ".json.gz")):
        return "gpt2" if "encoder" in name else "hf"
    return None


def merges_path(encoder: str) -> Path:
    """Where ``vocab.bpe`` goes for GPT-2 output named ``encoder``."""
    path = Path(encoder)
    if "encoder.json" in path.name:
        return path.with_name(path.name.replace("encoder.json", "vocab.bpe"))
    return path.with_name("vocab.bpe.gz" if path.name.endswith(".gz") else "vocab.bpe")


def _missing_bytes(vocab: formats.Vocab) -> list[int]:
    special_ids = set(vocab.specials.values())
    present = {data[0] for token_id, data in vocab.tokens.items() if len(data) == 1 and token_id not in special_ids}
    return [byte for byte in range(256) if byte not in present]


def run(args: argparse.Namespace) -> int:
    from bpeproof.impl.pre_tokenizers.patterns import PATTERNS, compile_pattern, resolve_pattern

    target = args.to or target_of(args.output)
    if target is None:
        raise UsageError(f"{args.output}: cannot tell the output format from the name; use --to"
                         f" ({'|'.join(TARGETS)}) or name it *.tiktoken, *.bpeproof.json, *encoder.json, *.json")
    if Path(args.input).resolve() == Path(args.output).resolve():
        raise UsageError(f"{args.output}: the output would replace the input; choose another name")
    pattern = None
    if args.pattern is not None:
        pattern = resolve_pattern(args.pattern)
        try:
            compile_pattern(pattern)
        except ValueError as error:
            raise UsageError(f"--pattern: {error}") from None
    vocab = formats.load(args.input, pattern=pattern)
    refusal = _lost_in_conversion(vocab, target)
    if refusal is not None:
        raise UsageError(f"{args.input}: {refusal}")
    notes: list[str] = []
    if pattern is not None:
        vocab = dataclasses.replace(vocab, pattern=pattern)
    elif vocab.pattern is None and vocab.kind == "tiktoken" and target != "tiktoken":
        guessed = guess_pattern(vocab)
        if guessed is not None:
            vocab = dataclasses.replace(vocab, pattern=PATTERNS[guessed])
            notes.append(f"pattern {guessed} guessed from the name or size")
    missing = _missing_bytes(vocab)
    if missing and target in ("tiktoken", "bpeproof"):
        raise UsageError(f"{args.input}: no token stands for the byte 0x{missing[0]:02X} ({count(len(missing), 'byte')}"
                         f" missing); a {'rank' if target == 'tiktoken' else 'project'} file needs every byte")
    if target == "bpeproof" and vocab.pattern is None and not vocab.pre_tokenizers:
        raise UsageError(f"{args.input}: the file states no pre-tokenization pattern; pass --pattern"
                         f" ({', '.join(PATTERNS)} or a regex)")
    written = [args.output]
    if target == "tiktoken":
        formats.write_tiktoken(vocab, args.output)
        if vocab.specials:
            notes.append(f"{count(len(vocab.specials), 'special token')} left out")
        notes.append(_pattern_lost(vocab))
    elif target == "hf":
        formats.write_hf_json(vocab, args.output)
        if vocab.pattern is None and not vocab.pre_tokenizers:
            notes.append("no pattern known: the file splits text with GPT-2's")
    elif target == "gpt2":
        merges = merges_path(args.output)
        formats.write_gpt2(vocab, args.output, merges)
        written.append(str(merges))
        if vocab.pattern not in (None, formats.GPT2_PATTERN):
            notes.append(f"the pattern is not kept: GPT-2 files imply GPT-2's; pass --pattern {_given(vocab.pattern)}"
                         " when you use them")
    else:
        formats.write_project(vocab, args.output)
    note = f" ({'; '.join(notes)})" if notes else ""
    tokens = token_count(len(vocab.tokens), len(set(vocab.specials.values()) & vocab.tokens.keys()))
    print(f"{args.input} ({vocab.kind}) -> {' + '.join(written)} ({target}): {tokens},"
          f" {count(len(vocab.merges), 'merge')}, {count(len(vocab.specials), 'special token')}{note}")
    return EXIT_OK


def _lost_in_conversion(vocab: formats.Vocab, target: str) -> str | None:
    """Why ``vocab`` cannot be written as ``target`` with the ids its own library gives on text, or None.

    Every format written is byte-level BPE after a pre-tokenizer, with a normalizer in a tokenizer.json only: a
    file whose library does more to the text (or otherwise) would be written as one that gives other ids."""
    text = vocab.text_model
    if vocab.kind == "sentencepiece-bpe":
        return "a sentencepiece model merges characters, not bytes; it converts to no byte-level format"
    if vocab.kind == "clip":
        return ("CLIP's tokenizer cleans and lowercases the text and marks each word's end (</w>); it converts to no"
                " byte-level format")
    if vocab.kind == "gguf" and vocab.pattern is None:
        return ("llama.cpp cuts this file's text with its own code for its pre-tokenizer (tokenizer.ggml.pre), which"
                " no other format holds; only GGUF files cut with GPT-2's expression convert")
    if vocab.unsupported:
        return (f"the engine does not execute {'; '.join(vocab.unsupported)}, so the converted file could not be"
                " read with the same ids")
    if text is not None and not text.byte_level:
        return ("its tokens are text, not bytes (it has no ByteLevel pre-tokenizer, normalizer or decoder); it"
                " converts to no byte-level format")
    if text is not None and (text.prefix or text.suffix):
        return ("its model marks where words go on (continuing_subword_prefix) or end (end_of_word_suffix), which"
                " no format written here holds")
    if text is not None and text.normalizer is not None and target != "hf" and _normalizes(text.normalizer):
        kind = json.loads(text.normalizer).get("type", "?")
        return f"its normalizer ({kind}) would be lost: only a tokenizer.json holds one"
    return None


def _normalizes(normalizer: str) -> bool:
    """Whether a tokenizer.json's normalizer (canonical JSON) changes any text: an empty ``Sequence`` (DeepSeek's)
    changes none, and is not lost."""
    from bpeproof.impl.normalizers.hf import Normalizer

    try:
        return bool(Normalizer.from_json(json.loads(normalizer)))
    except ValueError:
        return True


def _given(pattern: str) -> str:
    """How to pass ``pattern`` to ``--pattern``: its name, or the expression quoted."""
    from bpeproof.impl.pre_tokenizers.patterns import pattern_name

    name = pattern_name(pattern)
    return name if name is not None else repr(pattern)


def _pattern_lost(vocab: formats.Vocab) -> str:
    """What a rank file, which holds no pre-tokenizer, loses of ``vocab``'s, and what to pass when using it."""
    if vocab.pattern is not None:
        return f"a rank file holds no pattern: pass --pattern {_given(vocab.pattern)} when you use it"
    if vocab.pre_tokenizers:
        steps = ", ".join(step.type for step in vocab.pre_tokenizers)
        return (f"a rank file holds no pre-tokenizer: this file's ({steps}) is lost and is no single pattern, so the"
                " rank file will not cut text as the library does")
    return "a rank file holds no pattern, and this file states none: pass --pattern when you use it"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "convert",
        help="rewrite a tokenizer file in another format, keeping its ids",
        description="Read a tokenizer file (the project's own, tiktoken rank file, tokenizer.json, GPT-2"
        " encoder.json + vocab.bpe, Mistral's tekken file, a GGUF file cut by GPT-2's expression; its format told by"
        " its content) and write it as a rank file, tokenizer.json, GPT-2 files or the project's file, which loads"
        " back with the same ids. The format is --to, or OUT's name: *.tiktoken[.gz] tiktoken, *.bpeproof.json[.gz]"
        " bpeproof, *encoder*.json[.gz] gpt2 (vocab.bpe beside it), other *.json[.gz] hf.",
    )
    parser.add_argument("input", metavar="IN", help="the tokenizer file to read (or a directory holding one)")
    parser.add_argument("output", metavar="OUT", help="the file to write (atomically)")
    parser.add_argument("--to", choices=TARGETS, default=None, help="the output format (default: by OUT's name)")
    parser.add_argument("--pattern", default=None, metavar="NAME|REGEX",
                        help="pre-tokenization pattern to record (rank files hold none: by default guessed from the"
                        " name or size); r50k, cl100k, o200k, llama3, qwen2, words, or a regex")
    parser.set_defaults(handler=run)
