"""Writing a Hugging Face ``tokenizer.json`` with a byte-level BPE model, which the ``tokenizers`` library loads
(``bpeproof convert --to hf``); ``bpeproof.impl.formats.hf_json`` reads them."""

from __future__ import annotations

import json
import os

from bpeproof.impl.formats.vocab import (
    GPT2_PATTERN,
    U32_ID_LIMIT,
    Vocab,
    bytes_to_token_string,
    refuse_ids_above,
)
from bpeproof.impl.io.atomic import atomic_write_bytes
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.files import compress_if_gz
from bpeproof.impl.pre_tokenizers.hf_splits import to_oniguruma

__all__ = ["hf_json_bytes", "write_hf_json"]


def _byte_level_step(use_regex: bool) -> dict[str, object]:
    return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": use_regex}


def _pre_tokenizer(vocab: Vocab) -> dict[str, object]:
    """The pre-tokenizer to write: the recorded steps (with a ``ByteLevel`` step added if none), or one built
    from ``vocab.pattern`` (``ByteLevel`` alone for GPT-2's pattern or none, else ``Split`` then ``ByteLevel``)."""
    if vocab.pre_tokenizers:
        steps: list[object] = [json.loads(step.raw) for step in vocab.pre_tokenizers]
        if not any(step.type == "ByteLevel" for step in vocab.pre_tokenizers):
            steps.append(_byte_level_step(False))
    elif vocab.pattern is None or vocab.pattern == GPT2_PATTERN:
        steps = [_byte_level_step(True)]
    else:
        # The pattern is the regex module's; the file's is read by Oniguruma.
        split = {"type": "Split", "pattern": {"Regex": to_oniguruma(vocab.pattern)}, "behavior": "Isolated",
                 "invert": False}
        steps = [split, _byte_level_step(False)]
    if len(steps) == 1:
        only = steps[0]
        assert isinstance(only, dict)
        return only
    return {"type": "Sequence", "pretokenizers": steps}


def hf_json_bytes(vocab: Vocab) -> bytes:
    """The ``tokenizer.json`` content for ``vocab``: a byte-level BPE model that ``tokenizers`` loads.

    Raises ``FormatError`` when the model cannot be written: two tokens with
    the same bytes (the vocabulary maps strings to ids), an empty token, a
    merge whose result is not the join of its parts (the file names only the
    parts), or an id (of a token or a special token) that is negative or above
    ``U32_ID_LIMIT``.
    """
    source = vocab.source or "<in memory>"
    refuse_ids_above(source, [*vocab.tokens, *vocab.specials.values()], U32_ID_LIMIT,
                     "id the tokenizers library reads (a 32-bit unsigned integer)")
    for content, token_id in vocab.specials.items():
        if token_id < 0:
            raise FormatError(source, f"special token {content[:40]!r}", "a token id cannot be negative")
    strings: dict[str, int] = {}
    spelled: dict[int, str] = {}  # each token's byte-level string, which the merges name it by
    special_text = {token_id: content for content, token_id in vocab.specials.items()}
    for token_id in sorted(vocab.tokens):
        data = vocab.tokens[token_id]
        if not data:
            raise FormatError(source, f"token {token_id}", "an empty token cannot be written")
        if token_id < 0:
            raise FormatError(source, f"token {token_id}", "a token id cannot be negative")
        spelled[token_id] = bytes_to_token_string(data)
        text = special_text.get(token_id, "")
        if text.encode("utf-8") != data:
            # an added token in the model's vocabulary is spelled as its text; every other token byte-level
            text = spelled[token_id]
        if text in strings:
            raise FormatError(
                source, f"token {token_id}", f"stands for the same bytes {data!r} as token {strings[text]}"
            )
        strings[text] = token_id
    _add_special_strings(source, vocab, strings)
    merges: list[str] = []
    for index, (a, b, c) in enumerate(vocab.merges):
        if a not in vocab.tokens or b not in vocab.tokens or c not in vocab.tokens:
            raise FormatError(source, f"merge {index}", f"{(a, b, c)} names an id that is not a token")
        if vocab.tokens[a] + vocab.tokens[b] != vocab.tokens[c]:
            raise FormatError(source, f"merge {index}", f"{(a, b, c)}: token {c} is not the join of tokens {a} and {b}")
        merges.append(f"{spelled[a]} {spelled[b]}")
    # A tokenizer.json's added tokens keep the flags they had (read in any text, as the library does, with them);
    # those of another format are special tokens with none.
    flags = {token.content: token for token in vocab.text_model.added_tokens} if vocab.text_model else {}
    added = []
    for content, token_id in sorted(vocab.specials.items(), key=lambda item: (item[1], item[0])):
        flagged = flags.get(content)
        added.append({
            "id": token_id,
            "content": content,
            "single_word": flagged.single_word if flagged else False,
            "lstrip": flagged.lstrip if flagged else False,
            "rstrip": flagged.rstrip if flagged else False,
            "normalized": flagged.normalized if flagged else False,
            "special": flagged.special if flagged else True,
        })
    normalizer = vocab.text_model.normalizer if vocab.text_model else None
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None if normalizer is None else json.loads(normalizer),
        "pre_tokenizer": _pre_tokenizer(vocab),
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": vocab.byte_fallback,
            "ignore_merges": vocab.ignore_merges,
            "vocab": strings,
            "merges": merges,
        },
    }
    return (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _add_special_strings(source: str, vocab: Vocab, strings: dict[str, int]) -> None:
    """Put each special token into the model's vocabulary ``strings`` (text → id) under its own id, when it is not
    there already.

    The tokenizers library reads no added token's id from the file: one whose text the model has takes that
    token's id, the others the ids from the model's size on, in order (``AddedVocabulary::add_tokens``).  So an
    added token outside the model keeps its id only when the ids are 0, 1, 2, … and it comes next; beside a model
    whose ids start past the special tokens (tekken's, at 1,000) or have gaps, it would take an ordinary token's
    id.  In the vocabulary it keeps its own, and no merge makes it (no merge's parts join into its text, which is
    checked to be no other token's).
    """
    taken = {token_id: text for text, token_id in strings.items()} if vocab.specials else {}
    for content, token_id in sorted(vocab.specials.items(), key=lambda item: (item[1], item[0])):
        where = f"special token {content[:40]!r}"
        if strings.get(content) == token_id:
            continue  # (an added token in the model's vocabulary, spelled as its text)
        if token_id in taken:
            raise FormatError(source, where, f"its id {token_id} is also {taken[token_id][:40]!r}'s; a tokenizer.json"
                              " gives each id one text")
        if content in strings:
            raise FormatError(source, where, f"its text is token {strings[content]}'s; the tokenizers library would"
                              f" give it that id, not {token_id}")
        strings[content] = token_id
        taken[token_id] = content


def write_hf_json(vocab: Vocab, path: str | os.PathLike[str]) -> None:
    """Write ``vocab`` as a Hugging Face ``tokenizer.json``, gzip-compressed when ``path`` ends in ``.gz``,
    atomically."""
    atomic_write_bytes(path, compress_if_gz(path, hf_json_bytes(vocab)))
