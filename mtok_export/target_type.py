"""The `Target` type: one MNN runtime a file is written for, and what that runtime can run.

The lowering passes (`lower/`), the chat-template lowering (`chat/`) and verification (`verify/`)
ask a target what it can do (`target.appends_suffix`), never what it is called, so a new runtime
that behaves like an old one is one registry entry (`targets.py`, which sits above the lowering
and holds the entries with their output format and lowering).  This module imports nothing of
ours: every layer may hold a `Target`.  The type and its registry are two modules, not one package:
the registry sits above `lower` (its entries call it), the type below everything that holds one."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

# a release, one optional pre/dev/post part, and a local label (`+cpu`: the same release)
_RELEASE = re.compile(r"v?(\d+(?:\.\d+)*)(?:[-_.]?(dev|a|alpha|b|beta|c|rc|post)[-_.]?(\d*))?(?:\+[\w.]+)?",
                      re.ASCII | re.IGNORECASE)
_PHASE = {"dev": -4, "a": -3, "alpha": -3, "b": -2, "beta": -2, "c": -1, "rc": -1, None: 0, "post": 1}


@dataclass(frozen=True)
class Version:
    """A release number as MNN's package and `MNN.version()` give it ("3.6.1"), compared as numbers
    part by part ("3.10" > "3.9") with missing parts zero ("3.7" == "3.7.0").  A pre-release or dev
    suffix ("3.7.0rc1", "3.7.0.dev0") comes before its release, a post suffix ("3.7.0.post1") after,
    a local label ("3.7.0+cpu") is the release (PEP 440's order, for the forms a runtime reports)."""

    text: str = field(compare=False)  # as written (what the prose shows)
    key: tuple = field(repr=False)  # (release without trailing zeros, phase: dev < a < b < rc < release < post, n)

    @classmethod
    def parse(cls, text: str) -> Version:
        m = _RELEASE.fullmatch(text.strip())
        if m is None:
            raise ValueError(f"{text!r} is not a release number (digits separated by dots, then rc1, .dev0, "
                             ".post1 or +label at most)")
        parts = [int(p) for p in m.group(1).split(".")]
        while len(parts) > 1 and parts[-1] == 0:
            parts.pop()
        phase = m.group(2).lower() if m.group(2) else None
        return cls(text.strip(), (tuple(parts), _PHASE[phase], int(m.group(3) or 0)))

    def __lt__(self, other: Version) -> bool:
        return self.key < other.key

    def __le__(self, other: Version) -> bool:
        return self.key <= other.key

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class RuntimeRange:
    """The MNN releases that run a target's files, both ends inclusive (None: unbounded), checked
    against the verifying runtime before anything runs (`verify.runtime.require_runtime`).  `note`
    replaces the derived prose where the range cannot say it (a main-branch build, a format every
    release reads); the prose is what the manifest records as `runtime_required`."""

    minimum: Version | None
    maximum: Version | None = None
    note: str = ""

    @classmethod
    def parse(cls, text: str, note: str = "") -> RuntimeRange:
        """">= 3.7", "<= 3.4.1", ">= 3.5, <= 3.6.1", "== 3.6.1", "any"."""
        lo = hi = None
        for clause in filter(None, (c.strip() for c in text.split(","))):
            if clause == "any":
                continue
            op, rest = clause[:2], clause[2:]
            if op not in (">=", "<=", "==") or not rest.strip():
                raise ValueError(f"runtime range {text!r}: each clause is '>= X', '<= X' or '== X'")
            v = Version.parse(rest)
            lo = v if op in (">=", "==") else lo
            hi = v if op in ("<=", "==") else hi
        if lo is not None and hi is not None and hi < lo:
            raise ValueError(f"runtime range {text!r} is empty")
        return cls(lo, hi, note)

    def admits(self, version: Version) -> bool:
        return (self.minimum is None or self.minimum <= version) and (self.maximum is None or version <= self.maximum)

    @property
    def clauses(self) -> str:
        """The range alone: ">= 3.6.0", "== 3.6.1", "any release"."""
        if self.minimum is not None and self.minimum == self.maximum:
            return f"== {self.minimum}"
        ends = [f">= {self.minimum}"] if self.minimum is not None else []
        ends += [f"<= {self.maximum}"] if self.maximum is not None else []
        return ", ".join(ends) or "any release"

    def __str__(self) -> str:
        return self.note or f"MNN {self.clauses}"


@dataclass(frozen=True)
class JinjaEngine:
    """The Jinja engine a runtime renders chat templates with, and the release whose engine it is:
    the chat lint rules are keyed by that version (`chat.rules.RULESETS`)."""

    name: str
    version: Version

    def __str__(self) -> str:
        return f"{self.name} {self.version}"


# The one engine of every .mtok runtime so far (MNN 3.5 to 3.6.1, spec section 8): each lint rule was
# reproduced against the runtime of this release (tests/chat/test_lint.py).
MNN_JINJA = JinjaEngine("MNN jinja.hpp", Version.parse("3.6.1"))


@dataclass(frozen=True, eq=False)  # one object per target: compared by identity, as the registry holds them
class Target:
    name: str  # what `--target` says and the manifest records
    output: object  # the output format (`formats.MTOK`, `formats.LEGACY`) that writes what `lower` returns
    lower: Callable  # (target, tok, *, bos, progress, forms: lower.Forms) -> targets.Lowered
    runtime: str  # what loads and runs the file (for help texts)
    runs_on: RuntimeRange  # the MNN releases that run the file (checked before verification runs)
    legacy: bool  # a legacy tokenizer.txt: its type fixes the normalizer and post-processor, no chat fields
    appends_suffix: bool  # encode() runs the post program (appends the post-processor's suffix ids)
    normalizer_codes: frozenset[int]  # the `mtok.constants.NormalizerCode`s its .mtok reader knows
    jinja: JinjaEngine | None  # the engine its chat path renders the embedded template with (None: no chat)
    default: bool = False  # the target of `--target`'s default (one in the registry)

    @property
    def requires(self) -> str:
        """The runtime release the file needs, as prose (the manifest's `runtime_required`)."""
        return str(self.runs_on)

    def reads(self, code: int) -> bool:
        """Whether this runtime runs a normalizer written with `code` (MNN 3.5 has no Strip, 8)."""
        return code in self.normalizer_codes

    def __repr__(self) -> str:
        return f"Target({self.name!r})"
