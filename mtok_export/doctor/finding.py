"""One thing `mtok doctor` found, and the verdicts it can reach."""

from __future__ import annotations

from dataclasses import dataclass, field

# Verdicts, worst first, with the exit code each gives (like `mtok verify`: 0 healthy, 1 wrong).
HEALTHY = "healthy"
EVERYDAY = "wrong on everyday text"
EDGE = "wrong on edge inputs"
CRASH = "crashes on long input"
STATIC_WARNINGS = "defects found by the static checks"
VERDICT_CODE = {HEALTHY: 0, EVERYDAY: 1, EDGE: 1, CRASH: 1, STATIC_WARNINGS: 1}


@dataclass
class Finding:
    what: str  # the check or layer: runtime, template, stop ids, bos, structure, or a static layer name
    level: str  # ok, info, note (no effect measured), warning (static), wrong (measured)
    cause: str  # in words
    effect: str = ""  # measured on the runtime: "12/180 everyday strings, 2/20 chats"
    components: tuple[str, ...] = ()  # `verify.attribution.COMPONENTS` the runtime mismatches point at
    example: dict = field(default_factory=dict)  # {"text", "expected", "got"} of the first mismatch

    def to_json(self) -> dict:
        return {"what": self.what, "level": self.level, "cause": self.cause, "effect": self.effect,
                "components": list(self.components), "example": self.example}
