"""Encoding a plan's ranges on threads of the C loop, in the calling process.

A tokenizer whose texts all go through the C loop (a named pattern's scanner, no pipeline, no allowed special
tokens: ``Tokenizer.encodes_on_threads``) encodes many texts at once on several threads with the GIL released
(``Tokenizer.encode_on_threads_uint32``).  ``encode_files`` then needs no worker process: the ranges are read here,
in order, their texts (pieces of at most ``PIECE`` bytes, cut at line cuts) gathered until every thread has a few,
encoded at once, and each range's ids handed on in order, as little-endian uint32 bytes, exactly what a worker
process would have sent.  No tokenizer is sent anywhere and no ids cross a pipe.

A batch the C loop cannot encode (a lone surrogate, a byte without an id, an id of 2**32 or more) is encoded again
by the one-process job (``jobs.JOBS["encode"]``), range after range, so that the error raised is the one a
single process raises for the first failing range.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bpeproof.impl.parallel.cuts import iter_range_texts
from bpeproof.impl.parallel.jobs import JOBS
from bpeproof.impl.parallel.plans import Plan

if TYPE_CHECKING:
    from bpeproof.impl.special_tokens import AllowedSpecial
    from bpeproof.impl.tokenizer import Tokenizer

#: The most bytes of one text given to a thread: small enough that the threads finish a batch together.
PIECE = 1 << 18
#: Texts gathered per thread before a batch is encoded, and the most bytes a batch holds.
TEXTS_PER_THREAD = 8
BATCH_BYTES = 32 << 20


def encode_plan_on_threads(
    tokenizer: Tokenizer,
    plan: Plan,
    threads: int,
    allowed_special: AllowedSpecial,
    cut: bool,
    bar: Any,
    on_done: Callable[[int, tuple[bytes, int]], None],
) -> None:
    """Encode every range of ``plan`` on ``threads`` threads; ``on_done(index, (uint32 ids as bytes, bytes of
    text))`` for each range in order, as the worker processes' results arrive in ``pool.run_tasks``."""
    on_bytes = bar.update if bar is not None else None
    ranges: list[tuple[int, list[str], int]] = []  # (task index, its texts, its bytes of text)
    held = 0

    def encode_held() -> None:
        texts = [text for _, range_texts, _ in ranges for text in range_texts]
        ids = tokenizer.encode_on_threads_uint32(texts, threads, allowed_special=allowed_special)
        if ids is None:  # the C loop could not: the one-process job, for its error (or its ids)
            job = JOBS["encode"]((tokenizer, allowed_special, cut, PIECE), None)
            for index, _, _ in ranges:
                on_done(index, job.run(plan.tasks[index]))
        else:
            start = 0
            for index, range_texts, size in ranges:
                on_done(index, (b"".join(ids[start : start + len(range_texts)]), size))
                start += len(range_texts)
        ranges.clear()

    try:
        for index, task in enumerate(plan.tasks):
            pieces = list(iter_range_texts(task, cut=cut, on_bytes=on_bytes, block=PIECE))
            ranges.append((index, [text for text, _ in pieces], sum(size for _, size in pieces)))
            held += ranges[-1][2]
            if sum(len(texts) for _, texts, _ in ranges) >= TEXTS_PER_THREAD * threads or held >= BATCH_BYTES:
                encode_held()
                held = 0
        encode_held()
    finally:
        if bar is not None:
            bar.close()
    if plan.error is not None:
        raise plan.error
