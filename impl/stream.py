"""Decoding token ids that arrive in pieces, never showing half a character (prop-utf8-boundary).

A token boundary may fall inside a character's UTF-8 form (def-utf8), so the
bytes of a stream of tokens are decoded as one byte stream: the bytes of a
character that is not complete yet wait for the next piece.
``bpeproof.impl.tokenizer.Tokenizer.stream_decoder`` makes one for a tokenizer.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterable

from bpeproof.spec.types import InvalidTextError

__all__ = ["StreamDecoder"]


class StreamDecoder:
    """Turns token ids into text as they arrive, holding back a character cut by a token boundary (prop-utf8-boundary).

    ``feed(ids)`` returns the text completed so far; the bytes of a character
    whose UTF-8 form (def-utf8) is not complete yet wait for the next call.
    ``finish()`` returns the rest.  With ``errors="strict"`` invalid UTF-8
    raises ``InvalidTextError`` naming the byte offset in the whole stream;
    with ``"replace"`` it becomes U+FFFD exactly as decoding the joined bytes would.
    """

    def __init__(self, decode_bytes: Callable[[Iterable[int]], bytes], errors: str = "strict") -> None:
        self._decode_bytes = decode_bytes
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors)
        self._errors = errors
        self._offset = 0  # bytes handed to the UTF-8 decoder so far

    def feed(self, ids: Iterable[int]) -> str:
        """The text the bytes of ``ids`` complete; an incomplete last character is kept."""
        return self._run(self._decode_bytes(ids), final=False)

    def finish(self) -> str:
        """The remaining text; a character still incomplete is an error (strict) or U+FFFD (replace)."""
        return self._run(b"", final=True)

    def _run(self, data: bytes, final: bool) -> str:
        pending = len(self._decoder.getstate()[0])
        try:
            text = self._decoder.decode(data, final)
        except UnicodeDecodeError as error:
            start = self._offset - pending + error.start
            self._decoder.reset()
            raise InvalidTextError(f"the token stream is not valid UTF-8 at byte {start}: {error.reason}") from None
        self._offset += len(data)
        return text
