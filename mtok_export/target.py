"""The `Target` type: one MNN runtime a file is written for, and what that runtime can run.

The lowering passes (`lower/`), the chat-template lowering (`chat/`) and verification (`verify/`)
ask a target what it can do (`target.appends_suffix`), never what it is called, so a new runtime
that behaves like an old one is one registry entry (`targets.py`, which sits above the lowering
and holds the entries with their output format and lowering).  This module imports nothing of
ours: every layer may hold a `Target`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, eq=False)  # one object per target: compared by identity, as the registry holds them
class Target:
    name: str  # what `--target` says and the manifest records
    output: object  # the output format (`formats.MTOK`, `formats.LEGACY`) that writes what `lower` returns
    lower: Callable  # (target, tok, *, bos, progress, forms: lower.Forms) -> targets.Lowered
    runtime: str  # what loads and runs the file (for help texts)
    requires: str  # the runtime release the file needs (written into the manifest)
    legacy: bool  # a legacy tokenizer.txt: its type fixes the normalizer and post-processor, no chat fields
    appends_suffix: bool  # encode() runs the post program (appends the post-processor's suffix ids)
    normalizer_codes: frozenset[int]  # the `mtok.constants.NormalizerCode`s its .mtok reader knows
    jinja: str  # the Jinja engine its chat path renders the embedded template with ("": none)
    default: bool = False  # the target of `--target`'s default (one in the registry)

    def reads(self, code: int) -> bool:
        """Whether this runtime runs a normalizer written with `code` (MNN 3.5 has no Strip, 8)."""
        return code in self.normalizer_codes

    def __repr__(self) -> str:
        return f"Target({self.name!r})"
