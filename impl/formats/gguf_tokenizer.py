"""The tokenizer stored in a GGUF file's metadata, read as llama.cpp reads it.

The keys of the tokenizer (``tokenizer.ggml.*``), among the key-value pairs ``bpeproof.impl.formats.gguf_container``
reads:

- ``model``: the tokenizer kind (``MODEL_KINDS``); read here: ``gpt2`` (byte-level BPE), ``llama`` (llama.cpp's
  SPM tokenizer, sentencepiece's BPE by scores) and ``gemma4`` (BPE over raw UTF-8 with spaces written as
  U+2581); refused: ``bert`` WordPiece, ``t5`` Unigram, ``rwkv``, ``plamo2``, …;
- ``pre``: the name of the pre-tokenizer (``GGUFTokenizer.pre_type`` maps it to the kind llama.cpp runs; a
  ``gemma4`` model always runs ``gemma4``, an SPM one none);
- ``tokens``: the token strings, index = id (byte-level tokens in GPT-2's byte-to-character spelling; control
  and user-defined tokens as their plain text; SPM and ``gemma4`` tokens as UTF-8 text with U+2581 for the
  space and byte tokens ``<0xXX>``); ``token_type``: per token 1 normal, 2 unknown, 3 control, 4 user-defined,
  5 unused, 6 byte; ``scores``: per token a float (or an int, which llama.cpp makes a float), the merge
  priority of SPM; ``merges``: "left right" strings, one per merge, in rank order (BPE models only);
- the flags ``add_space_prefix`` (SPM: a space before the text and after each special token; default true
  for SPM, false otherwise), ``remove_extra_whitespaces`` (read, but only llama.cpp's Unigram tokenizer uses
  it), ``add_bos_token`` / ``add_eos_token``;
- the ids of the special tokens (``bos_token_id``, ``eos_token_id``, ``fim_pre_token_id``, …).

``read_gguf_tokenizer`` checks the types as llama.cpp's loader does (a key of the wrong type makes llama.cpp
refuse the file, so it is refused here too) and derives each token's attributes exactly as llama.cpp's
``llama_vocab::impl::load`` does: token types, then the control flags it adds to tokens recognised by their
text (end-of-generation and fill-in-the-middle tokens), the user-defined exceptions, and the strip flags.
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress, repeat
from typing import Any, ClassVar

from bpeproof.impl.formats.gguf_container import GGUFMetadata, read_gguf_metadata
from bpeproof.impl.io.errors import FormatError
from bpeproof.impl.io.packed_state import PackedState, packed_attributes, restored, unpacked_later

__all__ = [
    "EXECUTED_MODELS",
    "MODEL_KINDS",
    "PRE_TYPES",
    "RAW_UTF8_PRE_TYPES",
    "SPECIAL_ID_KEYS",
    "TOKEN_TYPES",
    "GGUFTokenizer",
    "read_gguf_tokenizer",
]

#: ``tokenizer.ggml.token_type`` values (llama.cpp's ``llama_token_type``).
TOKEN_TYPES = {0: "undefined", 1: "normal", 2: "unknown", 3: "control", 4: "user-defined", 5: "unused", 6: "byte"}

# llama.cpp's token attributes (``llama_token_attr``), the bits that matter for encoding.
UNKNOWN, UNUSED, NORMAL, CONTROL, USER_DEFINED, BYTE = 1 << 1, 1 << 2, 1 << 3, 1 << 4, 1 << 5, 1 << 6
LSTRIP, RSTRIP = 1 << 8, 1 << 9
_ATTR_OF_TYPE = {1: NORMAL, 2: UNKNOWN, 3: CONTROL, 4: USER_DEFINED, 5: UNUSED, 6: BYTE}
_UNDEFINED_ATTR = 1 << 0

#: ``tokenizer.ggml.pre`` names → (llama.cpp's pre-tokenizer kind, whether it sets ``ignore_merges``), as
#: ``llama_vocab::impl::load`` maps them for BPE tokenizers.  A missing name is "default".
PRE_TYPES: dict[str, tuple[str, bool]] = {
    "default": ("default", False),
    "minicpm5": ("minicpm5", True),
    **{name: ("llama3", True) for name in ("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
                                           "midm-2.0", "lfm2", "jina-v5-nano")},
    "deepseek-llm": ("deepseek-llm", False),
    "deepseek-coder": ("deepseek-coder", False),
    "deepseek-v3": ("deepseek3-llm", False),
    "spark2_5": ("spark2_5", False),
    "youtu": ("youtu", True),
    "falcon": ("falcon", False),
    "mpt": ("mpt", False),
    "starcoder": ("starcoder", False),
    **{name: ("gpt2", False) for name in ("gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es",
                                          "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "jina-v1-en",
                                          "jina-v2-code", "roberta-bpe", "exaone4")},
    "jais-2": ("jais2", False),
    "gemma4": ("gemma4", False),
    "granite-embed-multi-311m": ("gemma4", False),
    "sarvam-moe": ("sarvam-moe", False),
    "whitespace": ("whitespace", False),
    "refact": ("refact", False),
    "command-r": ("command-r", False),
    **{name: ("qwen2", False) for name in ("qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez")},
    "qwen35": ("qwen35", False),
    "stablelm2": ("stablelm2", False),
    "olmo": ("olmo", False),
    "dbrx": ("dbrx", False),
    "smaug-bpe": ("smaug", False),
    "poro-chat": ("poro", False),
    "chatglm-bpe": ("chatglm4", False),
    "glm4": ("chatglm4", True),
    "glm5": ("chatglm4", True),
    "viking": ("viking", False),
    "jais": ("jais", False),
    "tekken": ("tekken", True),
    "smollm": ("smollm", False),
    "codeshell": ("codeshell", False),
    "bloom": ("bloom", False),
    "gpt3-finnish": ("gpt3-finnish", False),
    "exaone": ("exaone", False),
    "exaone-moe": ("exaone-moe", False),
    "chameleon": ("chameleon", False),
    "minerva-7b": ("minerva", False),
    **{name: ("gpt4o", False) for name in ("gpt-4o", "llama4", "kanana2", "talkie")},
    "granite-embed-multi-97m": ("granite-emb-multi", True),
    "tiny_aya": ("tiny-aya", False),
    "cohere2moe": ("tiny-aya", False),
    "superbpe": ("superbpe", False),
    "trillion": ("trillion", False),
    "granite-docling": ("granite-docling", False),
    **{name: ("bailingmoe", False) for name in ("bailingmoe", "bailingmoe2", "llada-moe")},
    "seed-coder": ("seed-coder", False),
    "hunyuan": ("hunyuan", False),
    "hunyuan-dense": ("hunyuan-dense", False),
    "hy_v4": ("hy-v4", False),
    "joyai-llm": ("joyai-llm", False),
    "kimi-k2": ("kimi-k2", False),
    "ufakzeka": ("ufakzeka", False),
    "grok-2": ("grok-2", False),
    "afmoe": ("afmoe", False),
    "laguna": ("laguna", False),
    "minimax-m2": ("minimax-m2", False),
    "solar-open": ("solar-open", False),
    "mellum2": ("mellum2", False),
}

#: What each ``tokenizer.ggml.model`` is, for refusals.
MODEL_KINDS = {
    "gpt2": "byte-level BPE",
    "llama": "sentencepiece BPE (SPM)",
    "bert": "WordPiece (WPM)",
    "t5": "Unigram (UGM)",
    "rwkv": "RWKV's greedy tokenizer",
    "plamo2": "PLaMo-2's Aho-Corasick tokenizer",
    "gemma4": "BPE over raw UTF-8 with spaces written as U+2581",
    "hybriddna": "DNA k-mer BPE",
    "whitespace": "whitespace-split BPE over raw UTF-8",
    "no_vocab": "no tokenizer",
    "none": "no tokenizer",
    "test": "llama.cpp's test tokenizer",
}

#: The tokenizer models this engine executes as llama.cpp does.
EXECUTED_MODELS = ("gpt2", "llama", "gemma4")

#: The pre-tokenizer kinds llama.cpp runs over raw UTF-8 with every space written U+2581 (``escape_whitespaces``),
#: tokens spelt as text and bytes as ``<0xXX>`` tokens, like a ``gemma4`` model.
RAW_UTF8_PRE_TYPES = frozenset({"gemma4", "sarvam-moe"})

#: llama.cpp's default special ids by model (role → id; -1 for none), before the file's keys replace them.
_DEFAULT_IDS = {"gpt2": {"bos": 11, "eos": 11}, "llama": {"bos": 1, "eos": 2, "unk": 0}, "gemma4": {}}

#: The keys of special token ids llama.cpp reads (each a u32), in its order; the deprecated fill-in-the-middle
#: names last.  Value: the role the id takes.
SPECIAL_ID_KEYS = {
    "tokenizer.ggml.bos_token_id": "bos",
    "tokenizer.ggml.eos_token_id": "eos",
    "tokenizer.ggml.eot_token_id": "eot",
    "tokenizer.ggml.eom_token_id": "eom",
    "tokenizer.ggml.unknown_token_id": "unk",
    "tokenizer.ggml.seperator_token_id": "sep",
    "tokenizer.ggml.padding_token_id": "pad",
    "tokenizer.ggml.mask_token_id": "mask",
    "tokenizer.ggml.fim_pre_token_id": "fim_pre",
    "tokenizer.ggml.fim_suf_token_id": "fim_suf",
    "tokenizer.ggml.fim_mid_token_id": "fim_mid",
    "tokenizer.ggml.fim_pad_token_id": "fim_pad",
    "tokenizer.ggml.fim_rep_token_id": "fim_rep",
    "tokenizer.ggml.fim_sep_token_id": "fim_sep",
    "tokenizer.ggml.prefix_token_id": "fim_pre",
    "tokenizer.ggml.suffix_token_id": "fim_suf",
    "tokenizer.ggml.middle_token_id": "fim_mid",
}

# The token texts llama.cpp recognises (``llama_vocab::impl::load``), for the special ids a file does not set.
_EOT_TEXTS = ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>",
              "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>")
_FIM_TEXTS = {
    "fim_pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
                "<|code_prefix|>", "<|prefix|>"),
    "fim_suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
                "<|code_suffix|>", "<|suffix|>"),
    "fim_mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
                "<|code_middle|>", "<|middle|>"),
    "fim_pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "fim_rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "fim_sep": ("<|file_sep|>",),
}
_EOG_TEXTS = frozenset((
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~[",
))
_ALWAYS_USER_DEFINED = ("<|channel|>", "<|message|>", "<|start|>", "<|constrain|>")

#: The code points ``surrogateescape`` gives the bytes of a string that is not UTF-8.
_ESCAPED = re.compile("[\udc80-\udcff]")

#: The keys ``read_gguf_tokenizer`` keeps (every other value is skipped, not decoded).
_KEPT_PREFIXES = ("tokenizer.", "general.")


@dataclass(frozen=True)
class GGUFTokenizer:
    """The tokenizer of a GGUF file with what llama.cpp derives from it.

    ``texts``: each token's string as llama.cpp keeps it (an empty one becomes ``[EMPTY_<id>]``, as llama.cpp
    renames it); ``attrs``: each token's attribute bits (``NORMAL``, ``CONTROL``, ``USER_DEFINED``, ``UNKNOWN``,
    ``LSTRIP``, ``RSTRIP``, …) after llama.cpp's adjustments; ``merges``: the merge strings in order (none for
    SPM, which llama.cpp does not read them for); ``scores``: each token's score as the float32 llama.cpp keeps
    (0.0 without the key); ``pre``: ``tokenizer.ggml.pre`` ("" when absent), ``pre_type``: llama.cpp's
    pre-tokenizer kind for it (``gemma4`` for a ``gemma4`` model, None for SPM); ``ignore_merges``: a word that
    is a token is that token; ``special_ids``: role → id after llama.cpp's defaults and recognition by text;
    ``eog``: the end-of-generation ids; ``add_bos`` / ``add_eos``: what llama.cpp adds when asked to add special
    tokens; ``add_space_prefix``: SPM's space before the text (and llama.cpp's detokenizer drops one from the
    first token); ``remove_extra_whitespaces``: the file's flag, which no model read here uses (llama.cpp's
    SPM tokenizer ignores it); ``escape_whitespaces``: every space is written U+2581 before a BPE model runs
    (``RAW_UTF8_PRE_TYPES``).
    """

    path: str
    model: str
    pre: str
    pre_type: str | None
    texts: list[str]
    attrs: list[int]
    merges: list[str]
    ignore_merges: bool = False
    special_ids: dict[str, int] = field(default_factory=dict)
    eog: frozenset[int] = frozenset()
    add_bos: bool = False
    add_eos: bool = False
    name: str = ""
    architecture: str = ""
    scores: list[float] = field(default_factory=list)
    add_space_prefix: bool = False
    remove_extra_whitespaces: bool = False
    escape_whitespaces: bool = False

    #: What the compiled-vocabulary cache unpacks only when read: the texts, merges and scores go into the model,
    #: which the cache keeps built (the special tokens, read from the texts, are kept found).
    _LATER: ClassVar[tuple[str, ...]] = ("texts", "merges", "scores")

    def packed(self) -> dict[str, Any]:
        """What the compiled-vocabulary cache stores (``bpeproof.impl.io.packed_state.Packable``): every field and
        the special tokens once found, not the index of the texts (made again from them)."""
        return packed_attributes(self, derived=("_index_of",), later=self._LATER)

    @classmethod
    def from_packed(cls, state: PackedState) -> GGUFTokenizer:
        return restored(_StoredGGUFTokenizer, state, later=cls._LATER)

    @property
    def index_of(self) -> dict[str, int]:
        """text → id of every token (the texts are distinct), made once: not to be changed."""
        found: dict[str, int] | None = self.__dict__.get("_index_of")
        if found is None:  # made by hand or by the cache, not by read_gguf_tokenizer: not a field (frozen)
            found = dict(zip(self.texts, range(len(self.texts)), strict=True))
            object.__setattr__(self, "_index_of", found)
        return found

    @property
    def special_tokens(self) -> dict[str, int]:
        """The tokens llama.cpp matches in the text before pre-tokenizing (control, user-defined, unknown):
        text → id, in id order (found once, kept: a tokenizer reads them several times)."""
        found: dict[str, int] | None = self.__dict__.get("_special_tokens")
        if found is None:
            mask = CONTROL | USER_DEFINED | UNKNOWN
            texts = self.texts
            found = {texts[i]: i for i in compress(range(len(self.attrs)), map(mask.__and__, self.attrs))}
            object.__setattr__(self, "_special_tokens", found)  # not a field: a frozen dataclass's own cache
        return dict(found)

    def parsed_always(self, token: int) -> bool:
        """True for a token cut out of the text even when special tokens are not parsed (user-defined tokens
        that are neither control nor unknown, as ``tokenizer_st_partition`` does)."""
        attr = self.attrs[token]
        return bool(attr & (CONTROL | USER_DEFINED | UNKNOWN)) and not attr & (CONTROL | UNKNOWN)


class _StoredGGUFTokenizer(GGUFTokenizer):
    """A GGUF file's tokenizer as the compiled-vocabulary cache makes it: its texts, merges and scores, which went
    into the model the cache keeps built, unpacked when first read (a dataclass field has no place for that)."""

    @cached_property
    def texts(self) -> list[str]:
        found: list[str] = unpacked_later(self, "texts")
        return found

    @cached_property
    def merges(self) -> list[str]:
        found: list[str] = unpacked_later(self, "merges")
        return found

    @cached_property
    def scores(self) -> list[float]:
        found: list[float] = unpacked_later(self, "scores")
        return found


def _typed(metadata: GGUFMetadata, key: str, expected: tuple[str, ...]) -> Any:
    """The value of ``key`` or None when absent; ``FormatError`` when of another type (llama.cpp refuses it)."""
    found = metadata.types.get(key)
    if found is None:
        return None
    if found not in expected:
        raise FormatError(metadata.path, f"key {key!r}", f"has the type {found}, but llama.cpp reads it as"
                          f" {' or '.join(expected)}")
    return metadata.values.get(key)


def _model_refusal(model: str) -> str:
    kind = MODEL_KINDS.get(model)
    if kind is None:
        return f"the tokenizer model {model!r} is unknown to llama.cpp"
    return (f"the tokenizer model is {model!r} ({kind}); this engine executes 'gpt2' (byte-level BPE), 'llama'"
            " (SPM) and 'gemma4' only")


def _kind(metadata: GGUFMetadata, model: str, pre: str | None) -> tuple[str | None, bool]:
    """llama.cpp's pre-tokenizer kind and ``ignore_merges`` for the model and ``tokenizer.ggml.pre``."""
    if model == "llama":
        return None, False  # SPM runs no pre-tokenizer: llama.cpp does not look at the name
    if model == "gemma4":
        return "gemma4", False  # llama.cpp replaces the file's name by "gemma4"
    pre_name = "default" if pre is None or pre == "" else pre
    if pre_name not in PRE_TYPES:
        raise FormatError(metadata.path, "key 'tokenizer.ggml.pre'", f"the pre-tokenizer {pre_name!r} is unknown to"
                          " llama.cpp (and to this engine)")
    return PRE_TYPES[pre_name]


def _scores(metadata: GGUFMetadata, count: int) -> list[float]:
    """Each token's score as llama.cpp keeps it: a float32 (an int score made one, rounded as C rounds it)."""
    scores = _typed(metadata, "tokenizer.ggml.scores", ("array[f32]", "array[i32]"))
    if scores is None:
        return [0.0] * count
    if len(scores) < count:
        raise FormatError(metadata.path, "key 'tokenizer.ggml.scores'", f"{len(scores)} scores for {count} tokens")
    if metadata.types["tokenizer.ggml.scores"] == "array[i32]":
        return list(struct.unpack(f"<{count}f", struct.pack(f"<{count}f", *scores[:count])))
    return list(scores[:count])


def _flags(metadata: GGUFMetadata, model: str, pre_type: str | None) -> tuple[bool, bool, bool, bool]:
    """``add_bos``, ``add_eos``, ``add_space_prefix``, ``remove_extra_whitespaces``: llama.cpp's defaults for
    the model and pre-tokenizer, replaced by the file's keys (and ``add_bos`` forced on for Gemma 4)."""
    spm = model == "llama"
    flags = {"tokenizer.ggml.add_bos_token": spm or pre_type in ("llama3", "tekken", "chameleon"),
             "tokenizer.ggml.add_eos_token": False,
             "tokenizer.ggml.add_space_prefix": spm,
             "tokenizer.ggml.remove_extra_whitespaces": False}
    for key in flags:
        value = _typed(metadata, key, ("bool",))
        if value is not None:
            flags[key] = value
    add_bos, add_eos, add_space_prefix, remove_extra_whitespaces = flags.values()
    return add_bos or pre_type == "gemma4", add_eos, add_space_prefix, remove_extra_whitespaces


def read_gguf_tokenizer(path: str | os.PathLike[str]) -> GGUFTokenizer:
    """The tokenizer of a GGUF file, for the models this engine executes (``EXECUTED_MODELS``).

    Every other model, an unknown ``pre`` name, a key of the wrong type, token strings that are not UTF-8 or
    occur twice (llama.cpp stops on both), a missing merge list (BPE): ``FormatError`` naming it.
    """
    metadata = read_gguf_metadata(path, lambda key: key.startswith(_KEPT_PREFIXES))
    name = metadata.path
    model = _typed(metadata, "tokenizer.ggml.model", ("string",))
    if model is None:
        raise FormatError(name, "key 'tokenizer.ggml.model'", "missing: the file holds no tokenizer")
    if model not in EXECUTED_MODELS:
        raise FormatError(name, "key 'tokenizer.ggml.model'", _model_refusal(model))
    pre = _typed(metadata, "tokenizer.ggml.pre", ("string",))
    pre_type, ignore_merges = _kind(metadata, model, pre)
    merges: list[str] = []
    if model != "llama":
        merges = _typed(metadata, "tokenizer.ggml.merges", ("array[string]",))
        if merges is None:
            raise FormatError(name, "key 'tokenizer.ggml.merges'", "missing: llama.cpp needs the merges of a BPE"
                              " tokenizer")
    for key, expected in (("tokenizer.ggml.token_type_count", ("u32",)), ("general.name", ("string",)),
                          ("general.architecture", ("string",))):
        _typed(metadata, key, expected)
    add_bos, add_eos, add_space_prefix, remove_extra_whitespaces = _flags(metadata, model, pre_type)
    texts = _typed(metadata, "tokenizer.ggml.tokens", ("array[string]",))
    if texts is None:
        raise FormatError(name, "key 'tokenizer.ggml.tokens'", "missing: the file holds no vocabulary")
    count = len(texts)
    scores = _scores(metadata, count)
    types = _typed(metadata, "tokenizer.ggml.token_type", ("array[i32]",))
    if types is not None and len(types) < count:
        raise FormatError(name, "key 'tokenizer.ggml.token_type'", f"{len(types)} token types for {count} tokens")
    try:  # (encoding them all at once is the quick way to know that none holds such a code point)
        "".join(texts).encode("utf-8")
        not_utf8 = False
    except UnicodeEncodeError:
        not_utf8 = _ESCAPED.search("\0".join(texts)) is not None
    if not_utf8:
        index = next(i for i, text in enumerate(texts) if _ESCAPED.search(text))
        raise FormatError(name, f"key 'tokenizer.ggml.tokens', token {index}", "the string is not UTF-8")
    if "" in texts:
        for index, text in enumerate(texts):
            if not text:
                texts[index] = f"[EMPTY_{index}]"
    index_of = dict(zip(texts, range(count), strict=True))
    if len(index_of) != count:
        first: dict[str, int] = {}
        for index, text in enumerate(texts):
            if text in first:
                raise FormatError(name, f"key 'tokenizer.ggml.tokens', token {index}",
                                  f"the string {text!r} is also token {first[text]} (llama.cpp stops on this)")
            first[text] = index
    attrs = list(map(_ATTR_OF_TYPE.get, types, repeat(_UNDEFINED_ATTR))) if types is not None else [NORMAL] * count
    del attrs[count:]
    special_ids = _special_ids(metadata, model, count)
    general_name = metadata.values.get("general.name") or ""
    architecture = metadata.values.get("general.architecture") or ""
    eog = _adjust_attributes(name, texts, index_of, attrs, special_ids)
    _strip_attributes(name, pre or "default", general_name, architecture, index_of, attrs)
    tokenizer = GGUFTokenizer(name, model, pre or "", pre_type, texts, attrs, merges, ignore_merges,
                              {role: token for role, token in special_ids.items() if token >= 0}, frozenset(eog),
                              add_bos, add_eos, general_name, architecture, scores, add_space_prefix,
                              remove_extra_whitespaces, pre_type in RAW_UTF8_PRE_TYPES)
    object.__setattr__(tokenizer, "_index_of", index_of)  # made here anyway: ``index_of`` need not make it again
    return tokenizer


def _special_ids(metadata: GGUFMetadata, model: str, count: int) -> dict[str, int]:
    """Role → id (-1 for none): llama.cpp's defaults for the model (``_DEFAULT_IDS``), replaced by the file's
    keys."""
    ids = {role: -1 for role in ("bos", "eos", "eot", "eom", "unk", "sep", "pad", "mask", "fim_pre", "fim_suf",
                                 "fim_mid", "fim_pad", "fim_rep", "fim_sep")}
    ids.update(_DEFAULT_IDS[model])
    if model == "gpt2" and metadata.values.get("tokenizer.ggml.pre") in ("chatglm-bpe", "glm4", "glm5"):
        ids["bos"] = -1
    for key, role in SPECIAL_ID_KEYS.items():
        if ids[role] >= count:
            ids[role] = -1
        value = _typed(metadata, key, ("u32",))
        if value is not None and value < count:
            ids[role] = value
    return ids


def _adjust_attributes(path: str, texts: list[str], index_of: dict[str, int], attrs: list[int],
                       ids: dict[str, int]) -> set[int]:
    """llama.cpp's changes to the token types (in place), in its order; returns the end-of-generation ids."""

    def mark_control(token: int) -> None:
        attrs[token] |= CONTROL

    if ids["eot"] < 0:
        found = [index_of[text] for text in _EOT_TEXTS if text in index_of]
        if found:
            ids["eot"] = min(found)  # which one is llama.cpp's hash order; all of them become control below
            for token in found:
                mark_control(token)
    if ids["eom"] < 0 and "<|eom_id|>" in index_of:
        ids["eom"] = index_of["<|eom_id|>"]
        mark_control(ids["eom"])
    for role, candidates in _FIM_TEXTS.items():
        if ids[role] >= 0:
            continue
        found = sorted(index_of[text] for text in candidates if text in index_of)
        if len(found) > 1 and any(not attrs[token] & CONTROL for token in found):
            shown = ", ".join(repr(texts[token]) for token in found)
            raise FormatError(path, f"key 'tokenizer.ggml.{role}_token_id'",
                              f"absent, and the tokens {shown} all qualify: llama.cpp marks the first one its hash"
                              " table yields as control, so which tokens are control is unspecified")
        if found:
            ids[role] = found[0]
            mark_control(found[0])
    for token in compress(range(len(attrs)), map(CONTROL.__and__, attrs)):  # the few control tokens
        if not attrs[token] & UNUSED and "unused" in texts[token]:
            attrs[token] |= UNUSED
    eog: set[int] = {ids[role] for role in ("fim_pad", "fim_rep", "fim_sep") if ids[role] >= 0}
    for text in _EOG_TEXTS:
        listed = index_of.get(text)
        if listed is not None:
            eog.add(listed)
            mark_control(listed)
    for text in _ALWAYS_USER_DEFINED:
        listed = index_of.get(text)
        if listed is not None:
            attrs[listed] = USER_DEFINED
    eog.update(ids[role] for role in ("eos", "eot", "eom") if ids[role] >= 0)
    eog_texts = {texts[token]: token for token in eog if 0 <= token < len(texts)}
    has_call = "<|call|>" in eog_texts or "<|calls|>" in eog_texts
    if "<|end|>" in eog_texts and has_call and ("<|return|>" in eog_texts or "<|flush|>" in eog_texts):
        end = eog_texts["<|end|>"]
        eog.discard(end)
        attrs[end] = USER_DEFINED
    if "</s>" in eog_texts and ("<|tool_response>" in eog_texts or "<|plamo:eos|>" in eog_texts):
        eog.discard(eog_texts["</s>"])
        attrs[eog_texts["</s>"]] = NORMAL
    return eog


def _strip_attributes(path: str, pre: str, name: str, architecture: str, index_of: dict[str, int],
                      attrs: list[int]) -> None:
    """The strip flags llama.cpp sets by model name (``_set_token_attr``), in place."""

    def token(text: str) -> int:
        found = index_of.get(text)
        if found is None:
            raise FormatError(path, "key 'general.name'", f"names a Phi-3 model, and llama.cpp stops loading one"
                              f" without the token {text!r}")
        return found

    lowered = name.lower()
    if any(part in pre for part in ("jina-v2-de", "jina-v2-es", "jina-v2-code")) or any(
            part in architecture for part in ("nomic-bert-moe", "jina-bert-v3")):
        if "<mask>" in index_of:
            attrs[index_of["<mask>"]] |= LSTRIP
    elif "phi-3" in lowered or "phi3" in lowered:
        for index, attr in enumerate(attrs):
            if attr & (CONTROL | USER_DEFINED | UNKNOWN):
                attrs[index] |= RSTRIP
        attrs[token("</s>")] |= RSTRIP
        for text in ("<unk>", "<s>", "<|endoftext|>"):
            attrs[token(text)] &= ~RSTRIP
    elif "modern-bert" in lowered and "[MASK]" in index_of:
        attrs[index_of["[MASK]"]] |= LSTRIP
