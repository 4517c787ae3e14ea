"""What every check reports, whichever checker ran it: found or not, how many examples, how fast, which seed.

``CheckResult`` (functions) and ``TokenizerCheckResult`` (text → ids) add what their finding holds; the run's
numbers, the rule that a run of no example is never a pass, and the line that states them are shared here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bpeproof.impl.io.wording import count


@dataclass(kw_only=True)
class RunResult:
    """The numbers of one check run."""

    found: bool
    examples: int
    seconds: float
    seed: int
    note: str | None = None
    seconds_to_find: float | None = None

    @property
    def ran(self) -> bool:
        """Whether any example ran (or a difference was found): a run of zero examples proves nothing."""
        return self.found or self.examples > 0

    @property
    def examples_per_second(self) -> float:
        """Throughput of the run."""
        return self.examples / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_json(self) -> str:
        """``to_dict`` as one JSON document."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def stats(self) -> str:
        """"N examples in S s (R/s), seed K"."""
        return (f"{count(self.examples, 'example')} in {self.seconds:.1f} s ({self.examples_per_second:.0f}/s),"
                f" seed {self.seed}")

    def first_seen(self) -> str:
        """"; first seen at S s" when a difference was found."""
        return "" if self.seconds_to_find is None else f"; first seen at {self.seconds_to_find:.2f} s"

    def nothing_found(self, head: str, counts: Mapping[str, int]) -> str:
        """The report of a run that found no difference: its numbers, the examples per source, the note."""
        per = ", ".join(f"{name} {number}" for name, number in counts.items())
        lines = [head, f"no difference found: {self.stats()}" + (f" [{per}]" if per else "")]
        if self.note:
            lines.append(f"note: {self.note}")
        return "\n".join(lines)
