"""The runtimes this tool writes for: one `Target` entry each (the type is `target_type.py`).

A target's `lower` turns the IR into what its output format writes (`Lowered.content`), the IR
the runtime will run (`Lowered.ir`, what verification compares with the source) and the
`Lowering` (losses, passes).  The output format (`formats.MTOK`, `formats.LEGACY`) then writes
the content.  The passes ask the entry what the runtime can do (`Target.appends_suffix`,
`Target.reads(code)`, ...), so adding a runtime is one entry in `TARGETS`; only a capability no
entry has yet needs a field in `target_type.py` and the pass that asks it."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError
from .formats import Format
from .readers.formats.mnn import LEGACY, MTOK
from .losses import EXACT_ON
from .lower import Forms, Lowering, lower
from .mtok.constants import NormalizerCode
from .target_type import MNN_JINJA, RuntimeRange, Target


@dataclass(frozen=True)
class Lowered:
    content: object  # what the output format writes: the lowered IR, or a legacy plan's content
    ir: object  # the IR of what the runtime runs with the file
    lowering: Lowering


def _to_mtok(target: Target, tok, *, bos: str = "auto", progress=None, forms: Forms = Forms()) -> Lowered:
    low, lw = lower(tok, target, bos, progress, forms)
    return Lowered(low, low, lw)


def _to_legacy(target: Target, tok, *, bos: str = "auto", progress=None, forms: Forms = Forms()) -> Lowered:
    # a legacy type's header lists, normalizer and regex engine are fixed by the type: no form applies
    from .lower.legacy import lower_legacy  # the legacy types: loaded only when a tokenizer.txt is written

    plan, lw = lower_legacy(tok, target, bos)
    return Lowered(plan.content, plan.projection, lw)


_CODES_36 = frozenset(NormalizerCode)  # every code of spec 2.3 (Strip, 8, since MNN 3.6)
_R = RuntimeRange.parse

TARGETS = {t.name: t for t in (
    Target("mnn-3.6", MTOK, _to_mtok, "MNN 3.6 (PyPI MNN 3.6.x) loading a .mtok; encode() prepends the header "
           "prefix only", _R(">= 3.6.0"), legacy=False, appends_suffix=False, normalizer_codes=_CODES_36,
           jinja=MNN_JINJA, default=True),
    Target("mnn-3.5", MTOK, _to_mtok, "MNN 3.5 loading a .mtok: as 3.6, without Strip", _R(">= 3.5.0"),
           legacy=False, appends_suffix=False, normalizer_codes=_CODES_36 - {NormalizerCode.STRIP}, jinja=MNN_JINJA),
    # a main-branch build reports the release it follows: no number tells it from that release
    Target("mnn-head", MTOK, _to_mtok, "MNN's main branch loading a .mtok: also runs the post program (appends "
           "the suffix)", _R(">= 3.6.0", "MNN built from its main branch (no release runs the post program yet)"),
           legacy=False, appends_suffix=True, normalizer_codes=_CODES_36, jinja=MNN_JINJA),
    # written for 3.4.1 and earlier (its reference for a legacy source, verify/mnn341.py), read by every
    # later release too (the .mtok runtimes verify it)
    Target("mnn-legacy", LEGACY, _to_legacy, "MNN <= 3.4.1 loading a tokenizer.txt (type 0-3, chosen by the model "
           "family)", _R("any", "MNN 3.4.1 or earlier (a tokenizer.txt; later releases read it too)"), legacy=True,
           appends_suffix=False, normalizer_codes=frozenset(), jinja=None),
)}
(DEFAULT,) = (n for n, t in TARGETS.items() if t.default)  # the name `--target` defaults to
# `--format` -> the output format it writes; a format with one target implies it (`--format txt`)
OUTPUTS = {"mtok": MTOK, "txt": LEGACY}


def names(output: Format | None = None) -> list[str]:
    """The target names (those writing `output`, when given), in the registry's order."""
    return [n for n, t in TARGETS.items() if output is None or t.output is output]


def target_for(fmt: str = "mtok", target: str = DEFAULT) -> Target:
    """The target an export with `--format fmt --target target` writes for: the one place a name
    from the command line (or a manifest) becomes a `Target`, and the one message for a bad one."""
    if fmt not in OUTPUTS:
        raise InputError(f"--format {fmt!r}: choose {' or '.join(OUTPUTS)}")
    choices = names(OUTPUTS[fmt])
    if target in choices:
        return TARGETS[target]
    if target in TARGETS and fmt != "mtok" and len(choices) == 1:  # --format txt: its one target
        return TARGETS[choices[0]]
    raise InputError(f"--target {target!r}: choose one of {', '.join(choices)}")


def format_name(target: Target) -> str:
    """`--format`'s name of what `target` writes (mtok, txt)."""
    return next(name for name, fmt in OUTPUTS.items() if fmt is target.output)


def runs_exactly(code: str, target: str) -> Target | None:
    """The target that runs loss `code` exactly where `target` (a name; the default when unknown)
    does not: the first with the capability `losses.EXACT_ON` names for it, writing the same format,
    the default first.  None when `target` has it, or no other does (what the refusal hint offers)."""
    has = EXACT_ON[code][0] if code in EXACT_ON else None
    current = TARGETS.get(target, TARGETS[DEFAULT])
    if has is None or has(current):
        return None
    order = sorted(TARGETS.values(), key=lambda t: not t.default)
    return next((t for t in order if t.output is current.output and has(t)), None)


def build(tok, fmt: str = "mtok", *, target: str | Target = DEFAULT, bos: str = "auto", progress=None,
          forms: Forms = Forms()):
    """IR -> (file bytes, the IR the runtime will run, the Lowering with losses and passes).  Whether
    the losses are acceptable is the policy's decision (`policy.decide`).  `target`: a name, resolved
    with `fmt`, or the `Target` itself (a job's, already resolved; it fixes the output format)."""
    t = target if isinstance(target, Target) else target_for(fmt, target)
    low = t.lower(t, tok, bos=bos, progress=progress, forms=forms)
    return t.output.write(low.content), low.ir, low.lowering
