"""The verification's time budget the user sees (`--verify-seconds`, issue 40): a phase that would run
past it ends where it is with a named partial result (what was checked, what was not), recorded in
the report, its verdict ("passed (partial)") and the manifest, never a silent stall.

Only the vocabulary sweep is cut: it asks every entry once, beyond what the corpus samples, so its
checked part is a true statement about those entries and nothing about the rest.  The corpus, the
chat paths and the stop ids always run whole (they are what verification means); the robustness
phase has its own budget (`--robust-seconds`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

# The sweep's three stages share the budget (`--verify-seconds`, declared in `job_options`), each
# stopping where its share of it (from the start of verification) is spent, so that what the
# reference answered is also encoded and compared: the reference up to half, the runtime's encodes
# up to 70%, the comparison (the explanation of mismatches, which can take minutes) up to the whole.
SHARES = {"reference": 0.5, "runtime": 0.7, "compare": 1.0}
# what a reference's `tell(done, total)` returns to stop it there: it answers the texts done so far
STOP = "stop"


@dataclass(frozen=True)
class Partial:
    """One phase ended by the budget: `done` of `total` `unit` checked in `seconds`."""

    phase: str
    done: int
    total: int
    unit: str
    seconds: float
    limit: float

    def line(self) -> str:
        return (f"{self.phase}: {self.done:,} of {self.total:,} {self.unit} checked in {self.seconds:.0f} s "
                f"(--verify-seconds {self.limit:g}); the rest not checked")

    def to_json(self) -> dict:
        return {"phase": self.phase, "done": self.done, "total": self.total, "unit": self.unit,
                "seconds": round(self.seconds, 1), "limit": self.limit, "note": self.line()}


@dataclass
class Budget:
    """`seconds` of verification from its start (None or 0: no limit); `partial`: the phases it cut."""

    seconds: float | None = None
    clock: object = field(default=time.monotonic, repr=False)
    start: float = field(default=0.0)
    partial: list[Partial] = field(default_factory=list)

    def __post_init__(self):
        self.start = self.clock()

    @property
    def limited(self) -> bool:
        return bool(self.seconds)

    def left(self, share: float = 1.0) -> float | None:
        """Seconds left until `share` of the budget is spent (None: no limit; never below 0)."""
        return max(self.seconds * share - (self.clock() - self.start), 0.0) if self.limited else None

    def over(self, share: float = 1.0) -> bool:
        """`share` of the budget is spent (a stage that others follow stops at its share)."""
        return self.limited and self.clock() - self.start >= self.seconds * share

    def cut(self, phase: str, done: int, total: int, unit: str = "entries") -> Partial | None:
        """Record that `phase` ended at `done` of `total` (nothing when it is whole) -> the record."""
        if done >= total:
            return None
        p = Partial(phase, done, total, unit, self.clock() - self.start, float(self.seconds or 0))
        self.partial.append(p)
        return p
