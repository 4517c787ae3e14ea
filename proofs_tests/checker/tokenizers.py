"""Check a text → ids tokenizer, written in any language, against a vocabulary file's reference tokenizer.

Usage from Python::

    from bpeproof.proofs_tests.checker.tokenizers import check_tokenizer

    result = check_tokenizer("mymod:encode", vocab="cl100k_base.tiktoken", decode="mymod:decode", seconds=30)
    assert not result.found, result.report()

from the command line: ``bpeproof check --tokenizer mymod:encode --vocab FILE`` or
``bpeproof check --cmd 'node adapter.mjs' --vocab FILE``, and from pytest:
``pytest --pyargs bpeproof.proofs_tests --bpe-tokenizer mymod:encode --bpe-vocab FILE``.

The reference is the project's ``Tokenizer`` for the file (``bpeproof.impl.pipelines.registry.load_tokenizer``);
where the file's own library is installed (tiktoken for rank files, ``tokenizers`` for
``tokenizer.json``) its answer is shown beside the reference's and the implementation's,
so that a difference can be attributed.

The implementation runs in another process and is reached through the line protocol
(README, "Check a tokenizer in any language"): the process writes a hello line, then
answers each request line ``{"encode": [texts…]}`` (or ``{"decode": [[ids…]…]}``) with one
line ``{"results": […]}``.  A Python function given as ``MOD:FUNC`` is served by a forked
worker speaking the same protocol; a program (``--cmd``) speaks it on stdin/stdout.  Both run
isolated (``sandbox``).  Requests carry a batch of texts; while the implementation
works on one batch the checker draws the next one and computes the reference's answers.

A difference is confirmed in a fresh process (a wrong answer that needs earlier texts, a
cache with a wrong key, is reported with the earlier text), shrunk to a minimal text, and
reported with its code points, both id lists aligned with their token bytes, the first piece
where they differ and the layer that differs: the split (the reference pattern's alternative
that matched there) or the merge inside the piece (then the variants of ``spec/variants.py``
the implementation's answer agrees with).
"""

from __future__ import annotations

import contextlib
import gzip
import inspect
import itertools
import json
import math
import os
import secrets
import shlex
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bpeproof.impl.io.wording import count
from bpeproof.impl.optional_libraries import LibraryMissingError, require
from bpeproof.proofs_tests.checker.sandbox import (
    DEFAULT_MEMORY_MB,
    Channel,
    ChannelError,
    Process,
    fork_worker,
    spawn_program,
)
from bpeproof.proofs_tests.checker.texts import TextGenerator
from bpeproof.proofs_tests.checker.worker import Target, TargetError, _silence, describe, import_module_or_file

__all__ = ["PROTOCOL", "TargetError", "TokenizerCheckResult", "check_tokenizer", "serve"]

#: The protocol's name, sent in the hello line.
PROTOCOL = "bpeproof-check"
#: Texts per request.
BATCH = 64
#: Environment variables the implementation's process is given: the vocabulary file and the pattern asked for.
ENV_VOCAB = "BPEPROOF_CHECK_VOCAB"
ENV_PATTERN = "BPEPROOF_CHECK_PATTERN"


class _Raised:
    """An answer that is an error message instead of ids or text."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Raised) and other.message == self.message

    def __hash__(self) -> int:
        return hash(self.message)

    def __repr__(self) -> str:
        return f"error: {self.message}"


Answer = list[int] | str | _Raised


class ImplementationGone(Exception):
    """The implementation's process did not answer in time, ended, or broke the protocol."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # "timeout", "crashed" or "protocol"


# ---------------------------------------------------------------------------
# Serving the protocol (used for Python functions; examples/adapters/ do the same in their own process)
# ---------------------------------------------------------------------------


def _int_list(value: object) -> list[int] | _Raised:
    if isinstance(value, (str, bytes, dict)) or value is None:
        return _Raised(f"returned {type(value).__name__}, not a list of int ids")
    try:
        items = list(value)  # type: ignore[call-overload]
    except TypeError:
        return _Raised(f"returned {type(value).__name__}, not a list of int ids")
    if not all(isinstance(item, int) and not isinstance(item, bool) for item in items):
        return _Raised("returned a list that holds something other than int ids")
    return [int(item) for item in items]


def serve(
    receive: Callable[[], Any],
    send: Callable[[Any], None],
    encode: Callable[..., object],
    decode: Callable[..., object] | None,
) -> None:
    """Answer protocol requests with ``encode(text)`` and ``decode(ids)`` until ``receive`` returns None."""
    while True:
        request = receive()
        if not isinstance(request, dict):
            return
        results: list[Any] = []
        if "encode" in request:
            allowed = request.get("allowed_special")
            for text in request["encode"]:
                try:
                    value = encode(text) if allowed is None else encode(text, allowed_special=allowed)
                    answer = _int_list(value)
                    results.append(answer if isinstance(answer, list) else {"error": answer.message})
                except MemoryError:
                    results.append({"error": "MemoryError: the worker's memory cap was hit", "memory": True})
                except BaseException as error:  # the code under test may raise anything
                    results.append({"error": f"{type(error).__name__}: {error}"[:500]})
        else:
            for ids in request.get("decode", []):
                try:
                    if decode is None:
                        raise TypeError("no decode function")
                    value = decode(ids)
                    results.append(value if isinstance(value, str) else {"error": f"returned"
                                   f" {type(value).__name__}, not str"})
                except BaseException as error:
                    results.append({"error": f"{type(error).__name__}: {error}"[:500]})
        send({"results": results})


def _resolve_text_function(target: Target, option: str, arguments: int) -> Callable[..., object]:
    if isinstance(target, str):
        module_name, _, attribute = target.partition(":")
        if not module_name or not attribute:
            raise TargetError(f"{option} {target!r}: expected MODULE:FUNCTION")
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            obj: object = import_module_or_file(module_name)
        except ImportError as error:
            raise TargetError(f"{option} {target}: cannot import module {module_name!r}: {error}") from None
        except BaseException as error:
            raise TargetError(f"{option} {target}: importing {module_name!r} failed:"
                              f" {type(error).__name__}: {error}") from None
        for part in attribute.split("."):
            if not hasattr(obj, part):
                raise TargetError(f"{option} {target}: module {module_name!r} has no attribute {attribute!r}")
            obj = getattr(obj, part)
    else:
        obj = target
    if not callable(obj):
        raise TargetError(f"{option} {describe(target)}: not callable ({type(obj).__name__})")
    with contextlib.suppress(TypeError, ValueError):
        signature = inspect.signature(obj)
        try:
            signature.bind(*([None] * arguments))
        except TypeError as error:
            raise TargetError(f"{option} {describe(target)}: signature {signature} does not take one argument"
                              f" ({error})") from None
    return obj


def _takes_allowed_special(function: Callable[..., object]) -> bool:
    try:
        return "allowed_special" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _python_worker(channel: Channel, tokenizer: Target, decode: Target | None, env: dict[str, str]) -> None:
    os.environ.update(env)
    _silence()
    try:
        encode_function = _resolve_text_function(tokenizer, "--tokenizer", 1)
        decode_function = None if decode is None else _resolve_text_function(decode, "--decode", 1)
    except TargetError as error:
        channel.send({"protocol": PROTOCOL, "error": str(error)})
        return
    channel.send({"protocol": PROTOCOL, "version": 1, "name": describe(tokenizer),
                  "decode": decode_function is not None, "special": _takes_allowed_special(encode_function)})

    def receive() -> Any:
        try:
            return channel.receive(None)
        except ChannelError:
            return None

    serve(receive, channel.send, encode_function, decode_function)


# ---------------------------------------------------------------------------
# The implementation under test, behind the protocol
# ---------------------------------------------------------------------------


class Implementation:
    """A process answering encode/decode requests (see the module docstring); restarted on demand."""

    def __init__(self, tokenizer: Target | None, decode: Target | None, cmd: str | None, env: dict[str, str],
                 call_timeout: float, memory_mb: int | None) -> None:
        self.tokenizer, self.decode_target, self.cmd = tokenizer, decode, cmd
        self.env = env
        self.call_timeout = call_timeout
        self.memory_mb = memory_mb
        self.name = cmd if cmd is not None else describe(tokenizer) if tokenizer is not None else "?"
        self.has_decode = False
        self.special = False
        self.process: Process | None = None
        self.restarts = 0

    def start(self, timeout: float) -> None:
        """Start the process and read its hello line (``TargetError`` when it does not speak the protocol)."""
        if self.cmd is not None:
            try:
                argv = shlex.split(self.cmd)
            except ValueError as error:
                raise TargetError(f"--cmd {self.cmd!r}: {error}") from None
            if not argv:
                raise TargetError("--cmd is empty")
            try:
                self.process = spawn_program(argv, self.memory_mb, env={**os.environ, **self.env})
            except OSError as error:
                raise TargetError(f"--cmd {self.cmd!r}: cannot start {argv[0]!r}: {error.strerror}") from None
        else:
            assert self.tokenizer is not None
            tokenizer, decode, env = self.tokenizer, self.decode_target, self.env
            self.process = fork_worker(lambda channel: _python_worker(channel, tokenizer, decode, env),
                                       self.memory_mb)
        try:
            hello = self.process.channel.receive(timeout)
        except TimeoutError:
            self.stop()
            raise TargetError(f"{self.name}: no hello line within {timeout:.3g} s (still loading?)") from None
        except ChannelError as error:
            code = self.process.wait(1.0)
            self.stop()
            raise TargetError(f"{self.name}: {error} before its hello line (exit code {code})") from None
        if not isinstance(hello, dict) or hello.get("protocol") != PROTOCOL:
            self.stop()
            raise TargetError(f"{self.name}: the first line must be the hello object"
                              f' {{"protocol": "{PROTOCOL}", ...}}, not {json.dumps(hello)[:80]}')
        if "error" in hello:
            self.stop()
            raise TargetError(str(hello["error"]))
        self.has_decode = hello.get("decode") is True
        self.special = hello.get("special") is True
        if isinstance(hello.get("name"), str) and self.cmd is not None:
            self.name = f"{self.cmd} ({hello['name'][:80]})"

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            with contextlib.suppress(ChannelError):
                process.channel.send(None)
            process.kill()

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start(max(10.0, 5 * self.call_timeout))

    def timeout_for(self, count: int) -> float:
        return self.call_timeout * max(1.0, count / 8)

    def _request(self, request: dict[str, Any], count: int, what: str) -> list[Any]:
        if self.process is None:
            self.restart()
        assert self.process is not None
        try:
            self.process.channel.send(request)
            reply = self.process.channel.receive(self.timeout_for(count))
        except TimeoutError:
            self.stop()
            raise ImplementationGone("timeout", f"did not answer within {self.timeout_for(count):.3g} s") from None
        except ChannelError as error:
            code = self.process.wait(1.0) if self.process is not None else None
            self.stop()
            memory = " (the memory cap was hit)" if code in (-6, -9, 134, 137) else ""
            raise ImplementationGone("crashed", f"{error}: the process ended (exit code {code}){memory}") from None
        results = reply.get("results") if isinstance(reply, dict) else None
        if not isinstance(results, list) or len(results) != count:
            self.stop()
            raise ImplementationGone("protocol", f"answered a {what} request of {count} items with"
                                     f" {json.dumps(reply)[:100]}")
        return results

    def send_encode(self, texts: Sequence[str], allowed_special: str | None = None) -> None:
        """Send an encode request (its answer is read by ``receive_encode``)."""
        if self.process is None:
            self.restart()
        assert self.process is not None
        request: dict[str, Any] = {"encode": list(texts)}
        if allowed_special is not None:
            request["allowed_special"] = allowed_special
        try:
            self.process.channel.send(request)
        except ChannelError as error:
            self.stop()
            raise ImplementationGone("crashed", str(error)) from None

    def receive_encode(self, count: int) -> list[Answer]:
        assert self.process is not None
        try:
            reply = self.process.channel.receive(self.timeout_for(count))
        except TimeoutError:
            self.stop()
            raise ImplementationGone("timeout", f"did not answer within {self.timeout_for(count):.3g} s") from None
        except ChannelError as error:
            code = self.process.wait(1.0)
            self.stop()
            raise ImplementationGone("crashed", f"{error}: the process ended (exit code {code})") from None
        results = reply.get("results") if isinstance(reply, dict) else None
        if not isinstance(results, list) or len(results) != count:
            self.stop()
            raise ImplementationGone("protocol", f"answered an encode request of {count} texts with"
                                     f" {json.dumps(reply)[:100]}")
        return [self._ids(item) for item in results]

    def encode(self, texts: Sequence[str], allowed_special: str | None = None) -> list[Answer]:
        self.send_encode(texts, allowed_special)
        return self.receive_encode(len(texts))

    def decode(self, id_lists: Sequence[list[int]]) -> list[Answer]:
        results = self._request({"decode": [list(ids) for ids in id_lists]}, len(id_lists), "decode")
        out: list[Answer] = []
        for item in results:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and isinstance(item.get("error"), str):
                out.append(_Raised(item["error"][:500]))
            else:
                out.append(_Raised(f"invalid decode result {json.dumps(item)[:80]}"))
        return out

    def _ids(self, item: object) -> Answer:
        if isinstance(item, list):
            if all(isinstance(t, int) and not isinstance(t, bool) for t in item):
                return list(item)
            return _Raised(f"invalid encode result {json.dumps(item)[:80]}: not a list of int ids")
        if isinstance(item, dict) and isinstance(item.get("error"), str):
            return _Raised(item["error"][:500])
        return _Raised(f"invalid encode result {json.dumps(item)[:80]}")


# ---------------------------------------------------------------------------
# The reference, the file's own library, and the analysis of a difference
# ---------------------------------------------------------------------------


def _load_reference(vocab: str, pattern: str | None) -> Any:
    from bpeproof.impl.pipelines.registry import load_tokenizer

    try:
        return load_tokenizer(vocab, pattern)
    except Exception as error:  # a file that is not a vocabulary
        raise TargetError(f"{vocab}: not a vocabulary file this project reads: {type(error).__name__}: {error}"
                          ) from None


class Library:
    """The vocabulary file's own library (tiktoken, tokenizers, sentencepiece), when it is installed."""

    def __init__(self, vocab: str, reference: Any) -> None:
        self.name: str | None = None
        self.note: str | None = None
        self._encode: Callable[[str, bool], list[int]] | None = None
        with contextlib.suppress(Exception):
            self._setup(vocab, reference)

    def _setup(self, vocab: str, reference: Any) -> None:
        from bpeproof.impl import formats

        kind = formats.load(Path(vocab)).kind
        if kind == "tiktoken":
            try:
                tiktoken = require("tiktoken", "comparing with the file's own library")
            except LibraryMissingError as error:
                self.note = str(error)
                return
            from bpeproof.impl.formats.tiktoken_file import load_tiktoken_ranks

            if reference.pretokenizer is not None:
                return
            encoding = tiktoken.Encoding("checked", pat_str=reference.pattern,
                                         mergeable_ranks=load_tiktoken_ranks(vocab),
                                         special_tokens=reference.special_tokens)
            self.name = f"tiktoken {getattr(tiktoken, '__version__', '')}".strip()

            def encode_tiktoken(text: str, special: bool) -> list[int]:
                return list(encoding.encode(text, allowed_special="all" if special else set(), disallowed_special=()))

            self._encode = encode_tiktoken
        elif kind == "hf-bpe":
            try:
                tokenizers = require("tokenizers", "comparing with the file's own library")
            except LibraryMissingError as error:
                self.note = str(error)
                return
            raw = Path(vocab).read_bytes()
            if vocab.endswith(".gz"):
                raw = gzip.decompress(raw)
            hf = tokenizers.Tokenizer.from_str(raw.decode("utf-8"))
            self.name = f"tokenizers {tokenizers.__version__}"

            def encode_hf(text: str, special: bool) -> list[int]:
                return list(hf.encode(text, add_special_tokens=False).ids)

            self._encode = encode_hf
        elif kind == "sentencepiece-bpe":
            try:
                sentencepiece = require("sentencepiece", "comparing with the file's own library")
            except LibraryMissingError as error:
                self.note = str(error)
                return
            from bpeproof.impl.io.files import read_bytes

            processor = sentencepiece.SentencePieceProcessor(model_proto=read_bytes(vocab))
            self.name = f"sentencepiece {getattr(sentencepiece, '__version__', '')}".strip()

            def encode_sentencepiece(text: str, special: bool) -> list[int]:
                return list(processor.encode(text))

            self._encode = encode_sentencepiece

    def encode(self, text: str, special: bool = False) -> list[int] | str | None:
        if self._encode is None:
            return None
        try:
            return self._encode(text, special)
        except Exception as error:
            return f"raised {type(error).__name__}: {error}"


def _top_level_alternatives(pattern: str) -> list[str]:
    """The alternatives of a regular expression's top level (``a|b|c``), split outside groups and classes."""
    parts: list[str] = []
    depth = 0
    in_class = False
    start = 0
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "^":
                i += 1
            if pattern[i + 1 : i + 2] == "]":
                i += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


def matched_alternative(pattern: str, text: str, position: int) -> tuple[int, str, str] | None:
    """(number from 1, source, matched text) of the first top-level alternative that matches at ``position``."""
    import regex

    from bpeproof.impl.pre_tokenizers.unicode_classes import stand_ins

    pinned = stand_ins(text)
    for number, alternative in enumerate(_top_level_alternatives(pattern), start=1):
        try:
            match = regex.compile(alternative).match(pinned, position)
        except regex.error:
            return None
        if match is not None:
            return number, alternative, text[match.start() : match.end()]
    return None


def token_table(reference: Any) -> dict[int, bytes]:
    """id → bytes of every token of the reference (special tokens left out)."""
    model = getattr(reference, "model", None)
    if model is not None and hasattr(model, "token_table"):
        table = dict(model.token_table())
        byte_ids = tuple(reference.byte_ids)
        return {byte_ids[t] if t < 256 and len(data) == 1 else t: data for t, data in table.items()}
    table = {b: bytes([b]) for b in range(256)}
    for a, b, c in reference.rules:
        table[c] = table[a] + table[b]
    byte_ids = tuple(reference.byte_ids)
    return {byte_ids[t] if t < 256 else t: data for t, data in table.items()}


def _pair_rules(reference: Any, table: dict[int, bytes]) -> list[tuple[int, int, int]] | None:
    """The reference's merge rules in external ids, in rank order: its own rule list, or the one recovered from
    the rank table; None when neither exists."""
    byte_ids = tuple(reference.byte_ids)

    def external(rules: Sequence[Sequence[int]]) -> list[tuple[int, int, int]]:
        return [(byte_ids[a] if a < 256 else a, byte_ids[b] if b < 256 else b, c) for a, b, c in rules]

    with contextlib.suppress(Exception):
        return external(reference.rules)
    with contextlib.suppress(Exception):
        from bpeproof.impl.formats.tiktoken_file import tiktoken_rules

        rules, _ = tiktoken_rules({data: token for token, data in table.items()})
        return external(rules)
    return None


class Variants:
    """The encodings of ``spec/variants.py`` on one word, in the reference's ids, computed from tables (the
    spec's own functions scan the whole rule list per step, too slow for 100,000 rules).  A token's rank is
    its rule's position, or its id when the reference has no rule list (tiktoken: rank = id)."""

    def __init__(self, reference: Any, pairs: bool = True) -> None:
        table = token_table(reference)
        rules = _pair_rules(reference, table) if pairs else None
        self.byte_id = {data[0]: token for token, data in table.items() if len(data) == 1}
        self.bytes_rank: dict[bytes, tuple[int, int]] = {bytes([b]): (-1, t) for b, t in self.byte_id.items()}
        self.pair_rank: dict[tuple[int, int], tuple[int, int]] | None = None
        if rules is not None:
            self.pair_rank = {}
            for index, (a, b, c) in enumerate(rules):
                self.pair_rank.setdefault((a, b), (index, c))
                if c in table:
                    self.bytes_rank.setdefault(table[c], (index, c))
        else:
            for token, data in sorted(table.items()):
                if len(data) > 1:
                    self.bytes_rank.setdefault(data, (token, token))

    def rule_rank(self, data: bytes) -> list[int] | None:
        if self.pair_rank is None:
            return None
        tokens = [self.byte_id[b] for b in data]
        while True:
            best: tuple[int, int, int] | None = None
            for i in range(len(tokens) - 1):
                found = self.pair_rank.get((tokens[i], tokens[i + 1]))
                if found is not None and (best is None or found[0] < best[0]):
                    best = (found[0], found[1], i)
            if best is None:
                return tokens
            tokens[best[2] : best[2] + 2] = [best[1]]

    def bytes_rank_parts(self, data: bytes) -> list[int] | None:
        parts = [bytes([b]) for b in data]
        while True:
            best: tuple[int, int] | None = None
            for i in range(len(parts) - 1):
                found = self.bytes_rank.get(parts[i] + parts[i + 1])
                if found is not None and (best is None or found[0] < best[0]):
                    best = (found[0], i)
            if best is None:
                return [self.bytes_rank[p][1] for p in parts]
            i = best[1]
            parts[i : i + 2] = [parts[i] + parts[i + 1]]

    def whole(self, data: bytes, fallback: Callable[[bytes], list[int] | None]) -> list[int] | None:
        found = self.bytes_rank.get(data)
        return [found[1]] if data and found is not None else fallback(data)

    def agreeing(self, data: bytes, ids: list[int]) -> list[str]:
        """The names in ``bpeproof.spec.variants.VARIANTS`` whose encoding of ``data`` is ``ids``."""
        if any(b not in self.byte_id for b in data):
            return []
        answers = {
            "sequential": self.rule_rank(data),  # (i) = (ii) on every valid rule list (spec/variants.py)
            "rule-rank": self.rule_rank(data),
            "bytes-rank": self.bytes_rank_parts(data),
            "whole-word+rule-rank": self.whole(data, self.rule_rank),
            "whole-word+bytes-rank": self.whole(data, self.bytes_rank_parts),
        }
        return [name for name, answer in answers.items() if answer is not None and answer == ids]


#: What each variant is, for reports (spec/variants.py).
VARIANT_TEXT = {
    "sequential": "(i) def-bpe: the rules in order, each left to right",
    "rule-rank": "(ii) lowest-rank pair first, by rule (Hugging Face tokenizers' BPE)",
    "bytes-rank": "(iii) lowest rank of the joined bytes (tiktoken's merge)",
    "whole-word+rule-rank": "(iv) a whole-word token first, else (ii)",
    "whole-word+bytes-rank": "(iv) a whole-word token first, else (iii) (tiktoken)",
}


def _token_bytes(reference: Any, token: int) -> bytes | None:
    try:
        return bytes(reference.token_bytes(token))
    except Exception:
        return None


def _spans(reference: Any, ids: Sequence[int]) -> list[tuple[int, int, int, bytes | None]]:
    """(start, end, id, bytes) of each token, by byte offset."""
    out: list[tuple[int, int, int, bytes | None]] = []
    position = 0
    for token in ids:
        data = _token_bytes(reference, token)
        length = len(data) if data is not None else 0
        out.append((position, position + length, token, data))
        position += length
    return out


def align(reference: Any, expected: Sequence[int], actual: Sequence[int]) -> list[tuple[bytes, list[str], list[str]]]:
    """Both id lists cut into segments at the byte offsets where both have a token boundary."""
    left, right = _spans(reference, expected), _spans(reference, actual)
    rows: list[tuple[bytes, list[str], list[str]]] = []
    i = j = 0
    while i < len(left) or j < len(right):
        mine: list[tuple[int, int, int, bytes | None]] = []
        theirs: list[tuple[int, int, int, bytes | None]] = []
        if i < len(left):
            mine.append(left[i])
            i += 1
        if j < len(right):
            theirs.append(right[j])
            j += 1
        while mine and theirs and mine[-1][1] != theirs[-1][1]:
            if mine[-1][1] < theirs[-1][1] and i < len(left):
                mine.append(left[i])
                i += 1
            elif theirs[-1][1] < mine[-1][1] and j < len(right):
                theirs.append(right[j])
                j += 1
            else:
                break
        data = b"".join(t[3] or b"?" for t in (mine or theirs))
        rows.append((data, [f"{t[2]} {t[3]!r}" for t in mine],
                     [f"{t[2]} {t[3]!r}" if t[3] is not None else f"{t[2]} (not in the vocabulary)" for t in theirs]))
    return rows


@dataclass
class Analysis:
    layer: str  # "split", "merge", "bytes" (the ids do not spell the text), "error", "decode"
    claim: str
    detail: str
    piece: str | None = None
    piece_index: int | None = None
    piece_bytes: tuple[int, int] | None = None
    alternative: str | None = None
    variants: list[str] = field(default_factory=list)


#: Characters that some engines' whitespace classes hold and others not (Python's ``str.isspace`` and
#: ``\s`` of the regex module, JavaScript's ``\s``, Unicode's White_Space, C's ``isspace``, older Unicode):
#: a cut next to one is a class change, since an implementation may well have split there.
CONTESTED_SPACES = frozenset("\x1c\x1d\x1e\x1f\x85\u180e\u200b\ufeff")


#: ECMAScript's ``\s`` as the inside of a character class: WhiteSpace and LineTerminator (U+FEFF in; U+0085 and
#: U+001C–U+001F, which Python's regex counts, out).  A port to JavaScript that keeps the pattern splits by this.
JS_SPACE = r"\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def with_js_whitespace(pattern: str) -> str | None:
    r"""``pattern`` with ``\s`` and ``\S`` read as JavaScript reads them; None when that cannot be written
    (``\S`` inside a character class)."""
    out: list[str] = []
    in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            escape = pattern[index : index + 2]
            if escape == "\\s":
                out.append(JS_SPACE if in_class else f"[{JS_SPACE}]")
            elif escape == "\\S":
                if in_class:
                    return None
                out.append(f"[^{JS_SPACE}]")
            else:
                out.append(escape)
            index += 2
            continue
        if char == "[":  # inside a class a "[" is a literal (the regex module's version 0)
            in_class = True
        elif char == "]":
            in_class = False
        out.append(char)
        index += 1
    return "".join(out)


def _char_class(char: str) -> str:
    if char in CONTESTED_SPACES:
        return f"contested {ord(char):04X}"
    return "Z" if char.isspace() else unicodedata.category(char)[0]


def _cut_inside(reference: Any, piece: str, spans: Sequence[tuple[int, int, int, bytes | None]]) -> list[str] | None:
    """Where the implementation's tokens inside one reference piece are the reference's own merges of smaller
    pieces, cut only where the kind of character changes (letter, digit, space, punctuation…): those pieces, as
    a pre-tokenizer would cut them; None when no such cut explains the tokens (a merge difference)."""
    merge = _word_merge(reference)
    if merge is None:
        return None
    data = piece.encode("utf-8")
    base = spans[0][0] if spans else 0
    cuts = [s[0] - base for s in spans] + [len(data)]
    ids = [s[2] for s in spans]
    best: dict[int, list[int]] = {0: []}  # index in cuts → the cut points used (fewest)
    for j in range(1, len(cuts)):
        for i in range(j):
            if i in best and (j not in best or len(best[i]) + 1 < len(best[j])) and \
                    merge(data[cuts[i] : cuts[j]]) == ids[i:j]:
                best[j] = [*best[i], cuts[i]] if i else []
    used = best.get(len(cuts) - 1)
    if not used:
        return None
    pieces: list[str] = []
    previous = 0
    for cut in [*used, len(data)]:
        try:
            pieces.append(data[previous:cut].decode("utf-8"))
        except UnicodeDecodeError:
            return None
        previous = cut
    if any(_char_class(left[-1]) == _char_class(right[0]) for left, right in itertools.pairwise(pieces)):
        return None
    return pieces


#: Ways a port reads the reference's pattern otherwise: what the change does, and the pattern it gives (None when
#: it cannot be written).  A split difference they explain is reported with the variant's pieces.
PATTERN_VARIANTS: dict[str, Callable[[str], str | None]] = {
    "\\s is JavaScript's (U+0085 and U+001C–U+001F not white space, U+FEFF white space)": with_js_whitespace,
}


def _pattern_variant_split(reference: Any, text: str, actual: list[int]) -> tuple[str, list[str]] | None:
    """The first of ``PATTERN_VARIANTS`` whose pieces of ``text`` differ from the reference's and whose pieces,
    each merged as the reference merges it, are the implementation's ids: its description and those pieces."""
    if reference.pretokenizer is not None or not isinstance(reference.pattern, str):
        return None
    own = reference.pre_tokenize(text)
    for description, transform in PATTERN_VARIANTS.items():
        variant = transform(reference.pattern)
        if variant is None or variant == reference.pattern:
            continue
        try:
            from bpeproof.impl.pre_tokenizers.patterns import compile_pinned

            pieces = [match.group() for match in compile_pinned(variant).finditer(text)]
        except Exception:
            continue
        if "".join(pieces) == text and pieces != own and _merged_pieces(reference, pieces) == actual:
            return description, pieces
    return None


def _word_merge(reference: Any) -> Callable[[bytes], list[int] | None] | None:
    """How the reference merges one word's bytes (its semantics, from ``spec/variants.py``'s tables); None when
    the tables cannot be built."""
    try:
        variants = Variants(reference)
    except Exception:
        return None
    if (getattr(reference, "semantics", None) or "sequential") == "tiktoken":
        return lambda data: variants.whole(data, variants.bytes_rank_parts)
    return variants.rule_rank


def _merged_pieces(reference: Any, pieces: Sequence[str]) -> list[int] | None:
    """The ids of ``pieces``, each merged on its own as the reference merges a word (None: not possible)."""
    merge = _word_merge(reference)
    ids: list[int] = []
    for piece in pieces:
        merged = None if merge is None else merge(piece.encode("utf-8"))
        if merged is None:
            return None
        ids += merged
    return ids


def analyse(reference: Any, text: str, expected: list[int], actual: list[int], special: bool,
            encode_alone: Callable[[str], Answer] | None) -> Analysis:
    """Which layer differs: the split, the merge inside a piece, or the bytes (see the module docstring)."""
    data = text.encode("utf-8")
    specials = {token: name for name, token in reference.special_tokens.items()}
    mine, theirs = [t for t in expected if t in specials], [t for t in actual if t in specials]
    if mine != theirs:
        if special:
            detail = (f"with allowed_special the reference reads {[specials[t] for t in mine]} as special tokens"
                      f" {mine}; the implementation's ids hold {theirs or 'none of them'}")
        else:
            detail = (f"without allowed_special a special token's name is ordinary text, but the implementation"
                      f" produced the special ids {theirs}")
        return Analysis("special", "def-utf8", detail + " (special tokens are ids apart from the rules, produced"
                        " only where allowed)")
    spans = _spans(reference, actual)
    spelled = b"".join(s[3] or b"" for s in spans)
    unknown = [s[2] for s in spans if s[3] is None]
    if unknown or spelled != data:
        first = next((i for i, (x, y) in enumerate(zip(spelled, data, strict=False)) if x != y),
                     min(len(spelled), len(data)))
        why = (f"ids {sorted(set(unknown))[:5]} are not in the vocabulary" if unknown
               else f"their bytes first differ from the text's UTF-8 at byte {first}:"
               f" {spelled[first:first + 8]!r} instead of {data[first:first + 8]!r}")
        return Analysis("bytes", "thm-bpe-roundtrip",
                        f"the implementation's ids do not spell the text ({why}): changed text (normalisation),"
                        " a wrong byte table or ids of another vocabulary")
    boundaries = {s[0] for s in spans} | {len(data)}
    pieces = [text] if special else reference.pre_tokenize(text)
    ref_spans = _spans(reference, expected)
    offset = 0
    char_offset = 0
    for index, piece in enumerate(pieces):
        size = len(piece.encode("utf-8"))
        start, end = offset, offset + size
        crossing = start not in boundaries or end not in boundaries
        mine = [s[2] for s in ref_spans if start <= s[0] < end]
        theirs = [s[2] for s in spans if start <= s[0] < end]
        if crossing or mine != theirs:
            analysis = Analysis("merge", "def-bpe", "", piece, index, (start, end))
            alone = encode_alone(piece) if encode_alone is not None and not crossing else None
            cut = None if crossing else _cut_inside(reference, piece, [s for s in spans if start <= s[0] < end])
            split = crossing or (isinstance(alone, list) and alone == mine) or cut is not None
            if split and not special and reference.pretokenizer is None:
                found = matched_alternative(reference.pattern, text, char_offset)
                if found is not None:
                    number, source, matched = found
                    analysis.alternative = f"{number}: {source}"
                    alt_text = f"alternative {number} `{source}` matched {matched!r}"
                else:
                    alt_text = "no alternative of the pattern could be identified"
            else:
                alt_text = "its pre-tokenizer's split steps cut it there"
            if split:
                analysis.layer = "split"
                how = ("an implementation token crosses the piece's border" if crossing else
                       f"the implementation cuts it into {cut!r}, each merged as the reference merges it" if cut
                       else "encoded alone the piece gets the reference's ids, so the implementation cuts the text"
                       " differently around it")
                analysis.detail = (f"pre-tokenization differs at piece {index} {piece!r}: the reference cuts this"
                                   f" word out ({alt_text}); {how}. def-bpe encodes each word on its own, so the"
                                   f" split decides which merges can happen")
            elif (variant := _pattern_variant_split(reference, text, actual)) is not None:
                analysis.layer = "split"
                analysis.detail = (f"pre-tokenization differs at piece {index} {piece!r}: the implementation's ids are"
                                   f" the reference's merges of the pieces {variant[1]!r}, which the pattern gives"
                                   f" when {variant[0]}. def-bpe encodes each word on its own, so the split"
                                   " decides which merges can happen")
            else:
                agreeing = Variants(reference).agreeing(piece.encode("utf-8"), theirs)
                analysis.variants = agreeing
                semantics = getattr(reference, "semantics", None) or "sequential"
                if agreeing:
                    which = "; ".join(f"{name}: {VARIANT_TEXT[name]}" for name in agreeing)
                    analysis.detail = (f"both cut the same piece {index} {piece!r}, but merge it differently: the"
                                       f" implementation's tokens agree with {which} (spec/variants.py), the"
                                       f" reference follows {semantics}")
                else:
                    analysis.detail = (f"both cut the same piece {index} {piece!r}, but merge it differently, and"
                                       f" the implementation's tokens agree with none of the variants in"
                                       f" spec/variants.py (the reference follows {semantics})")
            return analysis
        offset = end
        char_offset += len(piece)
    return Analysis("merge", "def-bpe", "the id lists differ, but no piece could be singled out")


# ---------------------------------------------------------------------------
# The result
# ---------------------------------------------------------------------------


def _codepoints(text: str, limit: int = 40) -> str:
    shown = " ".join(f"U+{ord(c):04X}" for c in text[:limit])
    return shown + (" …" if len(text) > limit else "")


@dataclass
class TokenizerCheckResult:
    """The outcome of ``check_tokenizer``: a difference found or not, and if so where and in which layer."""

    found: bool
    implementation: str
    vocab: str
    reference: str
    examples: int
    seconds: float
    seed: int
    per_source: dict[str, int] = field(default_factory=dict)
    library: str | None = None
    note: str | None = None
    kind: str | None = None  # "encode", "decode", "timeout", "crashed", "protocol", "memory"
    text: str | None = None
    allowed_special: str | None = None
    earlier: list[str] = field(default_factory=list)
    expected: Any = None
    actual: Any = None
    library_answer: Any = None
    claim: str | None = None
    layer: str | None = None
    detail: str | None = None
    piece: str | None = None
    piece_index: int | None = None
    alternative: str | None = None
    variants: list[str] = field(default_factory=list)
    aligned: list[tuple[bytes, list[str], list[str]]] = field(default_factory=list)
    source: str | None = None
    seconds_to_find: float | None = None

    @property
    def ran(self) -> bool:
        """Whether examples ran (or a difference was found): zero examples is never a pass."""
        return self.found or self.examples > 0

    @property
    def examples_per_second(self) -> float:
        return self.examples / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with stable keys."""
        return {
            "found": self.found, "ran": self.ran, "kind": self.kind, "layer": self.layer, "claim": self.claim,
            "detail": self.detail, "text": self.text,
            "codepoints": [ord(c) for c in self.text] if self.text is not None else None,
            "allowed_special": self.allowed_special, "earlier_texts": list(self.earlier),
            "expected": self.expected, "actual": self.actual if not isinstance(self.actual, _Raised)
            else repr(self.actual), "library_answer": self.library_answer, "library": self.library,
            "piece": self.piece, "piece_index": self.piece_index, "alternative": self.alternative,
            "variants": list(self.variants),
            "aligned": [{"bytes": list(data), "reference": ref, "implementation": impl}
                        for data, ref, impl in self.aligned],
            "source": self.source, "implementation": self.implementation, "vocab": self.vocab,
            "reference": self.reference, "examples": self.examples, "seconds": round(self.seconds, 3),
            "seconds_to_find": None if self.seconds_to_find is None else round(self.seconds_to_find, 3),
            "examples_per_second": round(self.examples_per_second, 1), "per_source": dict(self.per_source),
            "seed": self.seed, "note": self.note,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def report(self) -> str:
        """A human-readable report."""
        head = f"bpeproof check: tokenizer={self.implementation}, vocab={self.vocab} (reference: {self.reference}"
        head += f"; library: {self.library})" if self.library else ")"
        stats = (f"{count(self.examples, 'example')} in {self.seconds:.1f} s ({self.examples_per_second:.0f}/s),"
                 f" seed {self.seed}")
        if not self.found:
            per = ", ".join(f"{name} {number}" for name, number in self.per_source.items())
            lines = [head, f"no difference found: {stats}" + (f" [{per}]" if per else "")]
            if self.note:
                lines.append(f"note: {self.note}")
            return "\n".join(lines)
        assert self.text is not None
        lines = [head, f"FOUND a difference ({self.kind}) after {stats}"
                 + (f"; first seen at {self.seconds_to_find:.2f} s" if self.seconds_to_find is not None else "")
                 + (f" (source {self.source})" if self.source else "")]
        if self.layer:
            lines.append(f"  layer    : {self.layer}")
        if self.claim:
            lines.append(f"  claim    : {self.claim}")
        if self.detail:
            lines.append(f"  detail   : {self.detail}")
        lines.append(f"  text     : {self.text!r}")
        lines.append(f"  code pts : {_codepoints(self.text)}")
        if self.allowed_special is not None:
            lines.append(f"  special  : allowed_special={self.allowed_special!r}")
        if self.earlier:
            lines.append(f"  earlier  : in the same process, after encoding {self.earlier!r} (state kept between"
                         " calls: alone in a fresh process this text is answered correctly)")
        if self.piece is not None:
            lines.append(f"  piece    : #{self.piece_index} {self.piece!r}"
                         + (f" (pattern alternative {self.alternative})" if self.alternative else ""))
        lines.append(f"  reference: {self.expected!r}")
        if self.library:
            verdict = ""
            if self.library_answer is not None:
                verdict = (" (= reference)" if self.library_answer == self.expected else
                           " (= implementation)" if self.library_answer == self.actual else " (differs from both)")
            lines.append(f"  library  : {self.library_answer!r}{verdict}")
        lines.append(f"  impl     : {self.actual!r}")
        if self.aligned:
            lines.append("  aligned  : bytes | reference tokens | implementation tokens")
            for data, ref, impl in self.aligned[:40]:
                mark = "  " if ref == impl else "≠ "
                lines.append(f"   {mark}{data!r:<16} | {', '.join(ref):<30} | {', '.join(impl)}")
        if self.note:
            lines.append(f"  note     : {self.note}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# The search
# ---------------------------------------------------------------------------


@dataclass
class _Finding:
    kind: str
    text: str
    allowed_special: str | None
    expected: Any
    actual: Any
    earlier: list[str] = field(default_factory=list)
    source: str | None = None


class _Checker:
    def __init__(self, impl: Implementation, reference: Any, deadline: float) -> None:
        self.impl = impl
        self.reference = reference
        self.deadline = deadline

    def expected(self, text: str, allowed: str | None) -> list[int]:
        if allowed is None:
            return list(self.reference.encode(text))
        return list(self.reference.encode(text, allowed_special=allowed))

    def judge_batch(self, texts: Sequence[str], expected: Sequence[list[int]], answers: Sequence[Answer],
                    allowed: str | None) -> tuple[int, _Finding] | None:
        for index, (text, want, got) in enumerate(zip(texts, expected, answers, strict=True)):
            if got != want:
                return index, _Finding("memory" if isinstance(got, _Raised) and "memory cap" in got.message
                                       else "encode", text, allowed, want, got, list(texts[:index]))
        return None

    def roundtrip(self, texts: Sequence[str], answers: Sequence[Answer]) -> _Finding | None:
        pairs = [(t, a) for t, a in zip(texts, answers, strict=True) if isinstance(a, list)]
        if not pairs:
            return None
        decoded = self.impl.decode([a for _, a in pairs if isinstance(a, list)])
        for (text, _ids), back in zip(pairs, decoded, strict=True):
            if back != text:
                return _Finding("decode", text, None, text, back, [])
        return None

    def fails(self, finding: _Finding, text: str, earlier: Sequence[str], fresh: bool) -> _Finding | None:
        """Run ``text`` again (after ``earlier``, in a fresh process when ``fresh``); the finding if it fails."""
        if fresh:
            self.impl.restart()
        texts = [*earlier, text]
        try:
            if finding.kind == "decode":
                answers = self.impl.encode(texts)
                got = answers[-1]
                if not isinstance(got, list):
                    return None
                back = self.impl.decode([got])[0]
                return _Finding("decode", text, None, text, back, list(earlier)) if back != text else None
            answers = self.impl.encode(texts, finding.allowed_special)
        except ImplementationGone as gone:
            if finding.kind in ("timeout", "crashed", "protocol"):
                return _Finding(gone.kind, text, finding.allowed_special, None, str(gone), list(earlier))
            return None
        if finding.kind in ("timeout", "crashed", "protocol"):
            return None
        want = self.expected(text, finding.allowed_special)
        got = answers[-1]
        if got != want and finding.kind in ("encode", "memory"):
            return _Finding(finding.kind, text, finding.allowed_special, want, got, list(earlier))
        return None


def _candidates(text: str) -> list[str]:
    """Smaller texts: chunks cut out (halves first), then characters replaced by simpler ones."""
    out: list[str] = []
    n = len(text)
    size = n // 2
    while size >= 1:
        out += [text[:i] + text[i + size :] for i in range(0, n, size)]
        size //= 2
    return [c for c in dict.fromkeys(out) if c != text]


def _simpler(text: str) -> list[str]:
    out: list[str] = []
    for i, char in enumerate(text):
        for simple in ("a", " ", "0"):
            if char != simple and (char.isalpha() == simple.isalpha() or not char.isascii()):
                out.append(text[:i] + simple + text[i + 1 :])
    return out


def shrink(checker: _Checker, finding: _Finding, until: float) -> _Finding:
    """Make the failing text (and the earlier texts it needs) smaller while it still fails, until ``until``."""
    stateful = bool(finding.earlier)
    best = finding
    for generate in (_candidates, _simpler):
        improved = True
        while improved and time.monotonic() < until:
            improved = False
            pool = generate(best.text)
            if not stateful and finding.kind in ("encode", "memory", "decode") and pool:
                # stateless: one request for the whole pool of candidates
                answered = False
                for chunk in range(0, len(pool), 16):  # small requests: a slow implementation stops early
                    if improved or time.monotonic() >= until:
                        break
                    part = pool[chunk : chunk + 16]
                    try:
                        if finding.kind == "decode":
                            raise ImplementationGone("skip", "")
                        answers = checker.impl.encode(part, finding.allowed_special)
                    except ImplementationGone:
                        break
                    answered = True
                    for candidate, got in zip(part, answers, strict=True):
                        want = checker.expected(candidate, finding.allowed_special)
                        if got != want and isinstance(got, type(best.actual)):
                            best = _Finding(finding.kind, candidate, finding.allowed_special, want, got, [],
                                            finding.source)
                            improved = True
                            break
                if answered:
                    continue
            for candidate in pool:
                if time.monotonic() >= until:
                    break
                again = checker.fails(finding, candidate, best.earlier, fresh=stateful or finding.kind in
                                      ("timeout", "crashed", "protocol"))
                if again is not None:
                    again.source = finding.source
                    best, improved = again, True
                    break
    if stateful:  # shrink the earlier text too
        for candidate in _candidates(best.earlier[-1]) if best.earlier else []:
            if time.monotonic() >= until:
                break
            again = checker.fails(finding, best.text, [candidate], fresh=True)
            if again is not None:
                again.source = finding.source
                best = again
    return best


def _confirm(checker: _Checker, finding: _Finding, until: float) -> _Finding:
    """Alone in a fresh process; if it passes there, find the earlier text it needs."""
    if finding.kind in ("timeout", "crashed", "protocol"):
        return _Finding(finding.kind, finding.text, finding.allowed_special, finding.expected, finding.actual, [],
                        finding.source)
    alone = checker.fails(finding, finding.text, [], fresh=True)
    if alone is not None:
        alone.source = finding.source
        return alone
    for earlier in reversed(finding.earlier):
        if time.monotonic() >= until:
            break
        again = checker.fails(finding, finding.text, [earlier], fresh=True)
        if again is not None:
            again.source = finding.source
            return again
    return finding


def _token_texts(reference: Any, limit: int = 8_000) -> tuple[list[str], list[str]]:
    """The texts of (a sample of) the reference's tokens, and those of them that merging their bytes by the
    lowest rank does not reach (only a whole-piece lookup gives them)."""
    texts: list[str] = []
    whole_only: list[str] = []
    try:
        table = token_table(reference)
        variants = Variants(reference, pairs=False)
    except Exception:
        return texts, whole_only
    items = list(table.items())
    step = max(1, len(items) // limit)
    for token, data in items[::step]:
        if len(data) > 1:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            texts.append(text)
            if variants.bytes_rank_parts(data) != [token]:
                whole_only.append(text)
    return texts, whole_only


def check_tokenizer(
    tokenizer: Target | None = None,
    *,
    vocab: str,
    pattern: str | None = None,
    decode: Target | None = None,
    cmd: str | None = None,
    seconds: float = 10.0,
    seed: int | None = None,
    examples: int | None = None,
    call_timeout: float = 5.0,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    shrink_seconds: float | None = None,
    batch: int = BATCH,
    weights: dict[str, float] | None = None,
) -> TokenizerCheckResult:
    """Check ``tokenizer(text) -> list[int]`` (a callable or ``MOD:FUNC``), or the program ``cmd`` speaking the
    line protocol, against the reference tokenizer of the vocabulary file ``vocab``, for ``seconds``.

    ``examples`` also ends the search after that many texts: the same seed and count try the same texts on
    any machine, however loaded (``seconds`` then only bounds the run).

    ``decode(ids) -> str`` (or the program's decode) is checked as decode(encode(t)) == t.  Raises
    ``TargetError`` for a function that cannot be imported, a program that does not speak the protocol or a
    file that is not a vocabulary.  ``result.ran`` is false when no example ran (never a pass).
    """
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
        raise TargetError(f"seconds must be a positive number, not {seconds!r}")
    if examples is not None and (isinstance(examples, bool) or not isinstance(examples, int) or examples <= 0):
        raise TargetError(f"examples must be a positive whole number, not {examples!r}")
    if (tokenizer is None) == (cmd is None):
        raise TargetError("give one of a tokenizer function (MOD:FUNC) and a program (cmd)")
    run_seed = secrets.randbelow(2**31) if seed is None else seed
    start = time.monotonic()
    deadline = start + seconds
    reference = _load_reference(vocab, pattern)
    semantics = getattr(reference, "semantics", None)
    reference_name = "bpeproof Tokenizer" + (f", semantics {semantics}" if semantics else "")
    env = {ENV_VOCAB: os.path.abspath(vocab)}
    if pattern is not None:
        env[ENV_PATTERN] = pattern
    impl = Implementation(tokenizer, decode, cmd, env, call_timeout, memory_mb)
    impl.start(max(0.5, deadline - time.monotonic()))
    checker = _Checker(impl, reference, deadline)
    specials = sorted(reference.special_tokens) if impl.special else []
    token_texts, whole_only = _token_texts(reference)
    generator = TextGenerator(run_seed, token_texts, specials, weights, whole_only)
    counts: Counter[str] = Counter()
    finding: _Finding | None = None
    found_at: float | None = None
    try:
        finding, found_at = _search(checker, generator, counts, batch, deadline, bool(specials), examples)
        if finding is not None:
            shrink_for = max(1.0, min(5.0, 0.2 * seconds)) if shrink_seconds is None else shrink_seconds
            until = time.monotonic() + shrink_for
            finding = _confirm(checker, finding, until)
            finding = shrink(checker, finding, until)
        result = TokenizerCheckResult(
            found=finding is not None, implementation=impl.name, vocab=vocab, reference=reference_name,
            examples=sum(counts.values()), seconds=time.monotonic() - start, seed=run_seed,
            per_source=dict(counts),
            seconds_to_find=None if found_at is None else found_at - start,
        )
        if finding is None and not counts:
            result.note = "no example ran within the budget: give more seconds"
        if finding is not None:
            _describe(result, finding, checker, vocab)
    finally:
        impl.stop()
    return result


def _search(checker: _Checker, generator: TextGenerator, counts: Counter[str], batch: int, deadline: float,
            special: bool, examples: int | None) -> tuple[_Finding | None, float | None]:
    """Batches of texts, pipelined: the next batch is drawn and judged by the reference while the
    implementation answers the current one.  At most ``examples`` texts are drawn (None: no limit)."""
    impl = checker.impl
    left = examples  # texts still to draw (None: no limit)

    def more() -> bool:
        return time.monotonic() < deadline and (left is None or left > 0)

    def draw() -> tuple[list[str], list[str], list[list[int]], str | None]:
        allowed = "all" if special and generator.rng.random() < 0.15 else None
        texts: list[str] = []
        sources: list[str] = []
        nonlocal left
        size = batch if left is None else min(batch, left)
        if left is not None:
            left -= size
        for _ in range(size):
            if allowed:
                texts.append(generator.special())
                sources.append("special")
            elif special and generator.rng.random() < 0.05:  # special names as ordinary text
                texts.append(generator.special())
                sources.append("special_as_text")
            else:
                text, source = generator.draw()
                texts.append(text)
                sources.append(source)
        return texts, sources, [checker.expected(t, allowed) for t in texts], allowed

    current = draw()
    try:
        impl.send_encode(current[0], current[3])
    except ImplementationGone as gone:
        return _Finding(gone.kind, current[0][0], current[3], None, str(gone), [], current[1][0]), time.monotonic()
    while True:
        texts, sources, expected, allowed = current
        upcoming = draw() if more() else None
        try:
            answers = impl.receive_encode(len(texts))
        except ImplementationGone as gone:
            return _locate(checker, texts, sources, allowed, gone), time.monotonic()
        counts.update(sources)
        judged = checker.judge_batch(texts, expected, answers, allowed)
        if judged is not None:
            index, finding = judged
            finding.source = sources[index]
            return finding, time.monotonic()
        if impl.has_decode and allowed is None:
            try:
                finding2 = checker.roundtrip(texts, answers)
            except ImplementationGone as gone:
                return _locate(checker, texts, sources, allowed, gone), time.monotonic()
            if finding2 is not None:
                finding2.source = sources[texts.index(finding2.text)]
                return finding2, time.monotonic()
        if upcoming is None or time.monotonic() >= deadline:
            return None, None
        current = upcoming
        try:
            impl.send_encode(current[0], current[3])
        except ImplementationGone as gone:
            return _locate(checker, current[0], current[1], current[3], gone), time.monotonic()


def _locate(checker: _Checker, texts: Sequence[str], sources: Sequence[str], allowed: str | None,
            gone: ImplementationGone) -> _Finding:
    """The text of a batch on which the process hung or ended: each text alone, in a fresh process."""
    for text, source in zip(texts, sources, strict=True):
        try:
            checker.impl.restart()
            checker.impl.encode([text], allowed)
        except ImplementationGone as again:
            return _Finding(again.kind, text, allowed, None, str(again), [], source)
        except TargetError:
            break
    return _Finding(gone.kind, texts[0], allowed, None, str(gone), [], sources[0])


def _describe(result: TokenizerCheckResult, finding: _Finding, checker: _Checker, vocab: str) -> None:
    reference = checker.reference
    result.kind = finding.kind
    result.text = finding.text
    result.allowed_special = finding.allowed_special
    result.earlier = list(finding.earlier)
    result.expected = finding.expected
    result.actual = finding.actual.message if isinstance(finding.actual, _Raised) else finding.actual
    result.source = finding.source
    library = Library(vocab, reference)
    result.library = library.name
    if library.name is not None:
        result.library_answer = library.encode(finding.text, finding.allowed_special is not None)
    if finding.kind == "encode" and isinstance(finding.actual, list):
        result.aligned = align(reference, finding.expected, finding.actual)

        def alone(piece: str) -> Answer:
            try:
                checker.impl.restart()
                return checker.impl.encode([piece])[0]
            except (ImplementationGone, TargetError):
                return _Raised("no answer")

        analysis = analyse(reference, finding.text, finding.expected, finding.actual,
                           finding.allowed_special is not None, None if finding.earlier else alone)
        result.layer, result.claim, result.detail = analysis.layer, analysis.claim, analysis.detail
        result.piece, result.piece_index = analysis.piece, analysis.piece_index
        result.alternative, result.variants = analysis.alternative, analysis.variants
    elif finding.kind == "encode":
        result.layer, result.claim = "error", "def-bpe"
        result.detail = (f"encoding is defined on every text, but the implementation answered"
                         f" {finding.actual!r}")
    elif finding.kind == "decode":
        result.layer, result.claim = "decode", "thm-bpe-roundtrip"
        result.detail = f"decode(encode(t)) must give t back; it gave {finding.actual!r}"
    elif finding.kind == "memory":
        result.layer, result.claim = "memory", "def-bpe"
        result.detail = "the implementation hit the worker's memory cap on this text"
    else:
        result.layer, result.claim = finding.kind, "def-bpe"
        result.detail = f"encoding is defined on every text, but the implementation {finding.actual}"
    if finding.earlier:
        result.note = ("the wrong answer needs the earlier text in the same process (state kept between calls,"
                       " e.g. a cache with a wrong key)")

