"""The line protocol between the text → ids checker and the implementation under check, in any language.

The implementation runs in another process (``process.Peer``, isolated by ``sandbox``) and writes a hello line,
then answers each request line ``{"encode": [texts…]}`` (with ``"allowed_special"`` when special tokens are
allowed) or ``{"decode": [[ids…]…]}`` with one line ``{"results": […]}``: per item the ids, the text, or
``{"error": "…"}``.  ``Implementation`` is the checker's side; ``serve`` is the implementation's side for a Python
function given as ``MOD:FUNC`` (a forked worker speaking the same protocol); ``examples/adapters/`` hold the
same for programs.  The manual's page "Check a tokenizer in any language" describes every message.
"""

from __future__ import annotations

import inspect
import json
import os
import shlex
import time
from collections.abc import Callable, Sequence
from typing import Any

from bpeproof.proofs_tests.checker.process import Gone, Peer
from bpeproof.proofs_tests.checker.sandbox import Channel, ChannelError, Process, fork_worker, spawn_program
from bpeproof.proofs_tests.checker.worker import Target, TargetError, describe, resolve_callable, silence

#: The protocol's name, sent in the hello line.
PROTOCOL = "bpeproof-check"
#: Texts per request.
BATCH = 64
#: The limit on a process's first call, which may load the vocabulary (``Implementation.load_timeout``).
LOAD_TIMEOUT = 60.0
#: Environment variables the implementation's process is given: the vocabulary file and the pattern asked for.
ENV_VOCAB = "BPEPROOF_CHECK_VOCAB"
ENV_PATTERN = "BPEPROOF_CHECK_PATTERN"
#: How a program reads special tokens' names in a text: never ("text": names are ordinary text, tiktoken's
#: ``encode_ordinary``), where ``allowed_special`` allows them ("allowed": tiktoken's ``encode``), or in every text
#: ("always": the ``tokenizers`` library's ``encode``, which has no mode for ordinary text).  The hello's
#: ``"special"`` says which: false, true or "always".
SPECIAL_NAMES = ("text", "allowed", "always")
_HELLO_SPECIAL: dict[bool | str, str] = {False: "text", True: "allowed", "always": "always"}


class ErrorAnswer:
    """An answer that is an error message instead of ids or text."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ErrorAnswer) and other.message == self.message

    def __hash__(self) -> int:
        return hash(self.message)

    def __repr__(self) -> str:
        return f"error: {self.message}"


#: One answer of the implementation: ids (encode), a text (decode), or the error it reported instead.
Answer = list[int] | str | ErrorAnswer


def _int_list(value: object) -> list[int] | ErrorAnswer:
    if isinstance(value, (str, bytes, dict)) or value is None:
        return ErrorAnswer(f"returned {type(value).__name__}, not a list of int ids")
    try:
        items = list(value)  # type: ignore[call-overload]
    except TypeError:
        return ErrorAnswer(f"returned {type(value).__name__}, not a list of int ids")
    if not all(isinstance(item, int) and not isinstance(item, bool) for item in items):
        return ErrorAnswer("returned a list that holds something other than int ids")
    return [int(item) for item in items]


def serve(
    receive: Callable[[], Any],
    send: Callable[[Any], None],
    encode: Callable[..., object],
    decode: Callable[..., object] | None,
) -> None:
    """Answer protocol requests with ``encode(text)`` and ``decode(ids)`` until ``receive`` returns None."""
    # A function without the parameter reads special tokens as its own convention says (the hello's).
    takes_allowed = _takes_allowed_special(encode)
    while True:
        request = receive()
        if not isinstance(request, dict):
            return
        results: list[Any] = []
        if "encode" in request:
            allowed = request.get("allowed_special") if takes_allowed else None
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


def resolve_text_function(target: Target, option: str) -> Callable[..., object]:
    """The function ``target`` names, which must take one argument (a text, or ids)."""
    return resolve_callable(target, option, None, 1, "take one argument")


def _takes_allowed_special(function: Callable[..., object]) -> bool:
    try:
        return "allowed_special" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def _python_worker(channel: Channel, tokenizer: Target, decode: Target | None, env: dict[str, str]) -> None:
    os.environ.update(env)
    silence()
    try:
        encode_function = resolve_text_function(tokenizer, "--tokenizer")
        decode_function = None if decode is None else resolve_text_function(decode, "--decode")
    except TargetError as error:
        channel.send({"protocol": PROTOCOL, "error": str(error)})
        return
    hello = {"protocol": PROTOCOL, "version": 1, "name": describe(tokenizer), "decode": decode_function is not None}
    if _takes_allowed_special(encode_function):  # else it states no convention: the file's own library's holds
        hello["special"] = True
    channel.send(hello)

    def receive() -> Any:
        try:
            return channel.receive(None)
        except ChannelError:
            return None

    serve(receive, channel.send, encode_function, decode_function)




class Implementation:
    """The implementation under check, answering encode/decode requests over a ``Peer``; restarted on demand."""

    def __init__(self, tokenizer: Target | None, decode: Target | None, cmd: str | None, env: dict[str, str],
                 call_timeout: float, memory_mb: int | None, load_timeout: float = LOAD_TIMEOUT) -> None:
        self.tokenizer, self.decode_target, self.cmd = tokenizer, decode, cmd
        self.env = env
        self.call_timeout = call_timeout
        # A process's first call may load the vocabulary (many programs do it when first asked): it is a call of
        # its own, the empty text, with a limit of its own (``start``), or every fresh process would time out on
        # its first text.
        self.load_timeout = max(call_timeout, load_timeout)
        self.deadline: float | None = None  # no wait goes past it (the end of the check's budget)
        self.memory_mb = memory_mb
        self.name = cmd if cmd is not None else describe(tokenizer) if tokenizer is not None else "?"
        self.has_decode = False
        self.special_names: str | None = None  # as the hello says (``SPECIAL_NAMES``); None: it says nothing
        self.restarts = 0
        self._peer = Peer(self._launch)

    def _launch(self) -> Process:
        if self.cmd is not None:
            try:
                argv = shlex.split(self.cmd)
            except ValueError as error:
                raise TargetError(f"--cmd {self.cmd!r}: {error}") from None
            if not argv:
                raise TargetError("--cmd is empty")
            try:
                return spawn_program(argv, self.memory_mb, env={**os.environ, **self.env})
            except OSError as error:
                raise TargetError(f"--cmd {self.cmd!r}: cannot start {argv[0]!r}: {error.strerror}") from None
        assert self.tokenizer is not None
        tokenizer, decode, env = self.tokenizer, self.decode_target, self.env
        return fork_worker(lambda channel: _python_worker(channel, tokenizer, decode, env), self.memory_mb)

    def begin(self) -> None:
        """Start the process without waiting for its hello (``start`` reads it): the checker prepares meanwhile."""
        self._peer.begin()

    def start(self, timeout: float) -> None:
        """Start the process, or take the one ``begin`` started, and read its hello line (``TargetError`` when it
        does not speak the protocol)."""
        try:
            hello = self._peer.greet(timeout, begun=True)
        except Gone as gone:
            self.stop()
            if gone.kind == "timeout":
                raise TargetError(f"{self.name}: no hello line within {timeout:.3g} s (still loading?)"
                                  + self._stderr_said()) from None
            raise TargetError(f"{self.name}: {gone} before its hello line{self._stderr_said()}") from None
        if not isinstance(hello, dict) or hello.get("protocol") != PROTOCOL:
            self.stop()
            raise TargetError(f"{self.name}: the first line must be the hello object"
                              f' {{"protocol": "{PROTOCOL}", ...}}, not {json.dumps(hello)[:80]}'
                              + self._stderr_said())
        if "error" in hello:
            self.stop()
            raise TargetError(str(hello["error"]))
        self.has_decode = hello.get("decode") is True
        said = hello.get("special")
        if said is not None and not isinstance(said, bool) and said != "always":
            self.stop()
            raise TargetError(f'{self.name}: the hello\'s "special" must be false, true or "always", not'
                              f" {json.dumps(said)[:40]}")
        self.special_names = None if said is None else _HELLO_SPECIAL[said]
        if isinstance(hello.get("name"), str) and self.cmd is not None:
            self.name = f"{self.cmd} ({hello['name'][:80]})"
        self._load()

    def _load(self) -> None:
        """The process's first call, the empty text, within ``load_timeout``: a program that loads its vocabulary
        when first asked does it now, not on a text under check.  Its answer is not judged."""
        limit = self._capped(self.load_timeout)
        try:
            self._peer.send({"encode": [""]})
            self._results(1, "its first encode", limit)
        except Gone as gone:
            self.stop()
            raise TargetError(f"{self.name}: its first call (the empty text, in which a program may load its"
                              f" vocabulary) {gone}; give it more than {limit:.3g} s with --load-timeout (or more"
                              " --seconds)"
                              + self._stderr_said()) from None

    def _stderr_said(self) -> str:
        tail = self._peer.stderr_tail()
        return f"; its stderr: {tail}" if tail else ""

    def stop(self) -> None:
        self._peer.stop()

    def restart(self) -> None:
        self.stop()
        self.restarts += 1
        self.start(self._capped(max(10.0, 5 * self.call_timeout)))

    def _capped(self, timeout: float) -> float:
        """``timeout``, but never past the deadline (a little time is always given)."""
        if self.deadline is None:
            return timeout
        return max(0.5, min(timeout, self.deadline - time.monotonic()))

    def timeout_for(self, count: int) -> float:
        """How long a request of ``count`` items may take."""
        return self.call_timeout * max(1.0, count / 8)

    def _results(self, count: int, what: str, limit: float | None = None) -> list[Any]:
        """The ``results`` of the next reply, which must hold ``count`` items (``Gone`` otherwise), within
        ``limit`` seconds (by default the calls' limit)."""
        reply = self._peer.receive(self._capped(self.timeout_for(count)) if limit is None else limit)
        results = reply.get("results") if isinstance(reply, dict) else None
        if not isinstance(results, list) or len(results) != count:
            raise self._peer.broke_protocol(f"answered {what} request of {count} items with"
                                            f" {json.dumps(reply)[:100]}")
        return results

    def send_encode(self, texts: Sequence[str], allowed_special: str | None = None) -> None:
        """Send an encode request (its answer is read by ``receive_encode``)."""
        if not self._peer.alive:
            self.restart()
        request: dict[str, Any] = {"encode": list(texts)}
        if allowed_special is not None:
            request["allowed_special"] = allowed_special
        self._peer.send(request)

    def receive_encode(self, count: int) -> list[Answer]:
        return [self._ids(item) for item in self._results(count, "an encode")]

    def encode(self, texts: Sequence[str], allowed_special: str | None = None) -> list[Answer]:
        self.send_encode(texts, allowed_special)
        return self.receive_encode(len(texts))

    def decode(self, id_lists: Sequence[list[int]]) -> list[Answer]:
        if not self._peer.alive:
            self.restart()
        self._peer.send({"decode": [list(ids) for ids in id_lists]})
        out: list[Answer] = []
        for item in self._results(len(id_lists), "a decode"):
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and isinstance(item.get("error"), str):
                out.append(ErrorAnswer(item["error"][:500]))
            else:
                out.append(ErrorAnswer(f"invalid decode result {json.dumps(item)[:80]}"))
        return out

    def _ids(self, item: object) -> Answer:
        if isinstance(item, list):
            if all(isinstance(t, int) and not isinstance(t, bool) for t in item):
                return list(item)
            return ErrorAnswer(f"invalid encode result {json.dumps(item)[:80]}: not a list of int ids")
        if isinstance(item, dict) and isinstance(item.get("error"), str):
            return ErrorAnswer(item["error"][:500])
        return ErrorAnswer(f"invalid encode result {json.dumps(item)[:80]}")
