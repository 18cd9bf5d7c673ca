"""The runtimes this tool writes for: one `Target(name, output, lower, runtime)` each.

A target's `lower` turns the IR into what its output format writes (`Lowered.content`), the IR
the runtime will run (`Lowered.ir`, what verification compares with the source) and the
`Lowering` (losses, passes).  The output format (`formats.MTOK`, `formats.LEGACY`) then writes
the content.  Adding a runtime is one entry here (plus, when it runs things differently, the
passes in `lower/` that look at `Lowering.target`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from .errors import InputError
from .formats import LEGACY, MTOK, Format
from .lower import Lowering, lower


@dataclass(frozen=True)
class Lowered:
    content: object  # what the output format writes: the lowered IR, or a legacy plan's content
    ir: object  # the IR of what the runtime runs with the file
    lowering: Lowering


@dataclass(frozen=True)
class Target:
    name: str
    output: Format
    lower: Callable[..., Lowered]  # (tok, *, bos, progress, header_specials, normalizer_form) -> Lowered
    runtime: str  # what loads and runs the file
    requires: str = ""  # the runtime release the file needs (written into the manifest)


def _to_mtok(name: str, tok, *, bos: str = "auto", progress=None, header_specials: str = "needed",
             normalizer_form: str = "compose") -> Lowered:
    low, lw = lower(tok, name, bos, progress, header_specials, normalizer_form)
    return Lowered(low, low, lw)


def _to_legacy(tok, *, bos: str = "auto", progress=None, header_specials: str = "needed",
               normalizer_form: str = "compose") -> Lowered:
    # a legacy type's header lists and normalizer are fixed by the type: neither choice applies
    from .lower.legacy import lower_legacy  # the legacy types: loaded only when a tokenizer.txt is written

    plan, lw = lower_legacy(tok, bos)
    return Lowered(plan.content, plan.projection, lw)


TARGETS = {t.name: t for t in (
    Target("mnn-3.6", MTOK, partial(_to_mtok, "mnn-3.6"),
           "MNN 3.6 (PyPI MNN 3.6.x) loading a .mtok; encode() prepends the header prefix only", "MNN >= 3.6.0"),
    Target("mnn-3.5", MTOK, partial(_to_mtok, "mnn-3.5"), "MNN 3.5 loading a .mtok: as 3.6, without Strip",
           "MNN >= 3.5.0"),
    Target("mnn-head", MTOK, partial(_to_mtok, "mnn-head"),
           "MNN's main branch loading a .mtok: also runs the post program (appends the suffix)",
           "MNN built from its main branch (no release runs the post program yet)"),
    Target("mnn-legacy", LEGACY, _to_legacy,
           "MNN <= 3.4.1 loading a tokenizer.txt (type 0-3, chosen by the model family)",
           "MNN 3.4.1 or earlier (a tokenizer.txt; later releases read it too)"),
)}
# `--format` -> the target it implies when it is not `mtok` (whose runtime `--target` chooses)
BY_FORMAT = {"txt": "mnn-legacy"}


def target_for(fmt: str = "mtok", target: str = "mnn-3.6") -> Target:
    """The target an export with `--format fmt --target target` writes for."""
    if fmt not in ("mtok", *BY_FORMAT):
        raise InputError(f"--format {fmt!r}: choose mtok or {' or '.join(BY_FORMAT)}")
    name = BY_FORMAT.get(fmt, target)
    if name not in TARGETS or (fmt == "mtok" and TARGETS[name].output is not MTOK):
        raise InputError(f"--target {target!r}: choose one of "
                         + ", ".join(n for n, t in TARGETS.items() if t.output is MTOK))
    return TARGETS[name]


def build(tok, fmt: str = "mtok", *, target: str = "mnn-3.6", bos: str = "auto", progress=None,
          header_specials: str = "needed", normalizer_form: str = "compose"):
    """IR -> (file bytes, the IR the runtime will run, the Lowering with losses and passes).  Whether
    the losses are acceptable is the policy's decision (`policy.decide`)."""
    t = target_for(fmt, target)
    low = t.lower(tok, bos=bos, progress=progress, header_specials=header_specials, normalizer_form=normalizer_form)
    return t.output.write(low.content), low.ir, low.lowering
