"""Check a text → ids tokenizer, written in any language, against a vocabulary file's reference tokenizer.

Usage from Python::

    from bpeproof.proofs_tests.checker.tokenizer_check import check_tokenizer

    result = check_tokenizer("mymod:encode", vocab="cl100k_base.tiktoken", decode="mymod:decode", seconds=30)
    assert not result.found, result.report()

from the command line: ``bpeproof check --tokenizer mymod:encode --vocab FILE`` or
``bpeproof check --cmd 'node adapter.mjs' --vocab FILE``, and from pytest:
``pytest --pyargs bpeproof.proofs_tests --bpe-tokenizer mymod:encode --bpe-vocab FILE``.

The reference and the file's own library are ``library``'s (with the special tokens of a known encoding, or
given); the implementation runs in another process behind the line protocol (``protocol``).  The check is the
one search loop (``search``) over one source, ``text_search.TextSource``, for the whole budget: every difference
goes into its group by cause (``groups``), and each group's smallest text is confirmed in fresh processes and
shrunk (``text_search.settle``), then reported with its code points, both id lists aligned with their token
bytes, and the layer that differs with its cause (``diagnosis``).  Groups named by ``ignore`` are set aside:
reported, but not a failure (``result.found`` is false when every group is set aside).  Before the first text,
``startup`` starts the implementation's process while the reference loads.
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Iterable, Sequence
from typing import Any

from bpeproof.impl.io.wording import count
from bpeproof.proofs_tests.checker.diagnosis import align
from bpeproof.proofs_tests.checker.groups import Classifier, Finding, Group, Groups
from bpeproof.proofs_tests.checker.library import Library
from bpeproof.proofs_tests.checker.progress import Progress
from bpeproof.proofs_tests.checker.protocol import BATCH, LOAD_TIMEOUT, SPECIAL_NAMES, ErrorAnswer, Implementation
from bpeproof.proofs_tests.checker.sandbox import DEFAULT_MEMORY_MB
from bpeproof.proofs_tests.checker.search import Search, run
from bpeproof.proofs_tests.checker.startup import prepare
from bpeproof.proofs_tests.checker.text_search import Judge, TextSource, settle
from bpeproof.proofs_tests.checker.texts import TextGenerator, read_corpus
from bpeproof.proofs_tests.checker.tokenizer_result import Divergence, TokenizerCheckResult
from bpeproof.proofs_tests.checker.worker import Target, TargetError

__all__ = ["TargetError", "check_tokenizer"]

#: The first turn of the text source, in seconds (each later one is twice as long).
FIRST_SLICE = 1.0
#: The share of the budget kept for confirming and shrinking the groups' texts, once there is a group.
SETTLE_SHARE = 0.25
#: Fewer texts than this, and a pass is said to be too few to trust: every planted port of the suite is caught
#: within 768 texts at the seeds tried, and some published ones only after thousands.
TRUSTED_TEXTS = 3000


def special_names_of(impl: Implementation, reference: Any, given: str | None) -> tuple[str, str]:
    """How the implementation reads special tokens' names (``protocol.SPECIAL_NAMES``), and where that comes
    from: ``given`` (``--special-names``), else what the implementation says (the hello's ``"special"``, a
    function's ``allowed_special`` parameter), else the file's own library's convention (``tokenizers`` reads
    them in every text; tiktoken, without ``allowed_special``, in none)."""
    if given is not None:
        return given, f"--special-names {given}"
    if impl.special_names is not None:
        if impl.cmd is None:  # a function's worker says only this
            return impl.special_names, "the function takes an allowed_special parameter"
        said = {"text": "false", "allowed": "true", "always": '"always"'}[impl.special_names]
        return impl.special_names, f'the program\'s hello says "special": {said}'
    if reference.library_allowed_special == "all":
        return "always", "the file's own library reads them in every text, and the program states no other way"
    return "text", ("the program does not say it takes allowed_special (a hello with \"special\": true, a"
                    " function's allowed_special parameter, or --special-names)")


def _special_note(reference: Any, origin: str, special_names: str, why: str) -> str:
    """What the run does with special tokens, and why (for the report)."""
    names = reference.special_tokens
    if not names:
        return ("not tested: the vocabulary has none" + (f" ({origin})" if origin else "")
                + "; give them with --special NAME=ID")
    shown = ", ".join(f"{name} {token}" for name, token in list(names.items())[:6])
    what = f"{len(names)} ({origin}: {shown}{', …' if len(names) > 6 else ''})"
    how = {"allowed": "tested with allowed_special and as ordinary text",
           "always": "read as special tokens in every text",
           "text": "tested as ordinary text only"}[special_names]
    return f"{what}, {how}: {why}"


def _surrogate_note(judge: Judge, library: Library) -> str | None:
    """What each side did with the texts that hold a lone surrogate (for the report)."""
    seen = judge.surrogate_outcomes
    if not seen:
        return None
    does = ("replaces each with U+FFFD, as tiktoken does" if library.surrogates == "replace" else
            "refuses them, as tokenizers and sentencepiece do (they raise)")
    did = ", ".join(f"{outcome} ({count(number, 'text')})" for outcome, number in seen.most_common())
    return f"{count(sum(seen.values()), 'text')}; the file's own library {does}; the implementation {did}"


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
    ignore: Iterable[str] = (),
    special: dict[str, int] | None = None,
    corpus: Sequence[str] | None = None,
    progress: float | None = None,
    special_names: str | None = None,
    load_timeout: float = LOAD_TIMEOUT,
) -> TokenizerCheckResult:
    """Check ``tokenizer(text) -> list[int]`` (a callable or ``MOD:FUNC``), or the program ``cmd`` speaking the
    line protocol, against the reference tokenizer of the vocabulary file ``vocab``, for ``seconds``.

    The search goes on after a difference until the budget is spent and reports every group of differences
    (``result.groups``); ``ignore`` names groups to set aside (their keys, or prefixes up to a colon).
    ``special``: special tokens (name → id) the reference gets besides those of a known encoding.
    ``special_names``: how the implementation reads their names in a text ("text", "allowed" or "always",
    ``protocol.SPECIAL_NAMES``); by default as it says (the hello's ``"special"``, a function's
    ``allowed_special`` parameter), else as the file's own library does.
    ``examples`` also ends the search after that many texts: the same seed and count try the same texts on
    any machine, however loaded (``seconds`` then only bounds the run).

    ``decode(ids) -> str`` (or the program's decode) is checked as decode(encode(t)) == t.  Raises
    ``TargetError`` for a function that cannot be imported, a program that does not speak the protocol or a
    file that is not a vocabulary.  ``result.ran`` is false when no example ran (never a pass).

    ``seconds`` bounds the whole run, confirming and shrinking included.  ``load_timeout``: the limit on each
    process's first call, which may load the vocabulary (every other call has ``call_timeout``).

    ``corpus``: text files (UTF-8, plain or ``.gz``) whose lines are the ``corpus`` source (``texts.read_corpus``)
    instead of the sample shipped with the package.  ``progress``: seconds between progress lines on stderr
    (``progress.Progress``; None: none).
    """
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
        raise TargetError(f"seconds must be a positive number, not {seconds!r}")
    if examples is not None and (isinstance(examples, bool) or not isinstance(examples, int) or examples <= 0):
        raise TargetError(f"examples must be a positive whole number, not {examples!r}")
    if (tokenizer is None) == (cmd is None):
        raise TargetError("give one of a tokenizer function (MOD:FUNC) and a program (cmd)")
    if not (isinstance(load_timeout, (int, float)) and math.isfinite(load_timeout) and load_timeout > 0):
        raise TargetError(f"load_timeout must be a positive number, not {load_timeout!r}")
    if special_names is not None and special_names not in SPECIAL_NAMES:
        raise TargetError(f"special_names must be one of {', '.join(SPECIAL_NAMES)}, not {special_names!r}")
    ignore = [ignore] if isinstance(ignore, str) else list(ignore)
    run_seed = secrets.randbelow(2**31) if seed is None else seed
    start = time.monotonic()
    end = start + seconds
    search: Search[Finding] = Search(start=start, deadline=end, examples=examples, stop_at_first=False)
    lines = None if corpus is None else read_corpus(list(corpus))
    ready = prepare(tokenizer, decode, cmd, vocab, pattern, call_timeout, memory_mb, search.deadline, special,
                    load_timeout)
    reference, impl, origin = ready.reference, ready.impl, ready.special_origin
    semantics = getattr(reference, "semantics", None)
    reference_name = "bpeproof Tokenizer" + (f", semantics {semantics}" if semantics else "")
    library = Library(vocab, reference)
    classifier = Classifier(reference)
    judge = Judge(impl, reference, classifier.variants.token_bytes if classifier.variants is not None else {},
                  library.decode, library.surrogates)
    classifier.probe = judge.probe
    groups = Groups(classifier, ignore)
    shrink_for = max(1.0, min(5.0, 0.2 * seconds)) if shrink_seconds is None else shrink_seconds

    def leave_time_to_settle() -> None:  # once there is a group, its text is shrunk within the budget too
        search.deadline = min(search.deadline, max(start, end - min(SETTLE_SHARE * seconds, 3 * shrink_for)))

    groups.on_new_group = leave_time_to_settle
    specials = sorted(reference.special_tokens)
    reads, why = special_names_of(impl, reference, special_names)
    generator = TextGenerator(run_seed, ready.token_texts, specials, weights, ready.whole_only, lines)
    source = TextSource(judge, generator, batch, groups, reads if specials else "text", names=bool(specials))
    try:
        with Progress(lambda: (sum(list(search.counts.values())), len(groups)), progress):
            run(search, [source], FIRST_SLICE)
        groups.fold()
        reported = settle(judge, groups, shrink_for, end)
        result = TokenizerCheckResult(
            found=False, implementation=impl.name, vocab=vocab, reference=reference_name,
            examples=sum(search.counts.values()), seconds=time.monotonic() - start, seed=run_seed,
            per_source=dict(search.counts), library=library.shown, ignore=ignore,
            special_tokens=_special_note(reference, origin, reads, why),
            lone_surrogates=_surrogate_note(judge, library),
        )
        for group in groups.ordered():
            finding, settled = reported[group.key]
            result.groups.append(_describe(group, finding, classifier, library, start))
            result.groups[-1].settled = settled
        result.adopt()
        notes = []
        checked = sum(search.counts.values())
        if not result.groups and not search.counts:
            notes.append("no example ran within the budget: give more seconds")
        elif not result.groups and checked < TRUSTED_TEXTS:
            notes.append(f"only {count(checked, 'text')} checked, too few to trust this pass (the planted ports"
                         f" need up to {TRUSTED_TEXTS:,}): give more --seconds")
        if search.halted is not None:
            notes.append(f"the search stopped early: {search.halted}")
        if result.earlier:
            notes.append("the wrong answer needs the earlier text in the same process (state kept between calls,"
                         " e.g. a cache with a wrong key)")
        result.note = "; ".join(notes) or None
    finally:
        impl.stop()
    return result


def _describe(group: Group, finding: Finding, classifier: Classifier, library: Library, start: float
              ) -> Divergence:
    """The report of one group: its smallest text, diagnosed, beside the file's own library's answer."""
    analysis = classifier.diagnose(finding)
    layer = analysis.layer
    if group.key in (analysis.keys or [analysis.key]) and group.key.split(":")[0] in ("split", "merge"):
        layer = group.key.split(":")[0]  # a text two causes explain alike is reported as its group's
    divergence = Divergence(
        key=group.key, count=group.count, ignored_by=group.ignored_by, seconds_to_find=group.first_seen - start,
        kind=finding.kind, text=finding.text, allowed_special=finding.allowed_special, earlier=list(finding.earlier),
        expected=finding.expected, source=finding.source, layer=layer, claim=analysis.claim,
        detail=analysis.detail, piece=analysis.piece, piece_index=analysis.piece_index,
        alternative=analysis.alternative, variants=list(analysis.variants),
        actual=finding.actual.message if isinstance(finding.actual, ErrorAnswer) else finding.actual,
        ids=finding.ids,
    )
    if library.name is not None and finding.kind != "decode":
        divergence.library_answer = library.encode(finding.text, finding.allowed_special is not None)
    if finding.kind == "encode" and isinstance(finding.actual, list):
        divergence.aligned = align(classifier.reference, finding.expected, finding.actual)
    return divergence
