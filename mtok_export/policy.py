"""The acceptance policy (DESIGN 4.2): which recorded losses an export may ship with.

Each loss code gets one decision.  Its severity is measured where verification ran (the checks and
corpus slices its mismatches fall on, `verify.check.Report.reach`) and declared otherwise (the code's
`LossKind.severity`; also for a loss the corpus never exercised).  By default `edge` losses are
accepted with a warning and every other loss refuses the export (exit 3), naming the flag that
accepts it.  `--accept CODE,...` and `--accept-file FILE` accept named codes, `--allow-lossy` accepts
everything, `--strict` refuses edge losses too."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from .job_options import Policy, read_accept_file  # the policy's options, declared with the job's
from .options import name, spell
from .losses import CRASH, EDGE, EXACT_ON, KINDS, REGEX_STACK, Loss, Severity
from .lower.regex import BOUND
from .readers.interpretation import ENCODER
from .target_type import Target
from .targets import DEFAULT, runs_exactly


# The accept file a model folder holds for itself: used when no --accept-file is given, and in a fleet
# instead of the shared one, for that model
ACCEPT_FILE = "mtok-accept.txt"


def own_accept_file(policy: Policy, folder: Path) -> Policy:
    """`policy` with the accept file `folder` holds (ACCEPT_FILE), when it holds one and --accept-file
    named none or named a fleet's shared one."""
    own = Path(folder) / ACCEPT_FILE
    if (policy.accept_file and not policy.shared) or not own.is_file():
        return policy
    return replace(policy, accept_file=str(own), accept_file_codes=read_accept_file(own), shared=False)


def stale_codes(policy: Policy, recorded) -> list[str]:
    """The codes the accept file lists that the export no longer records (`recorded`: its loss
    codes): a baseline that would hide the next time such a loss comes back."""
    return [] if policy.shared else sorted(policy.accept_file_codes - set(recorded))


@dataclass
class Decision:
    """The policy's verdict on one loss code."""

    code: str
    severity: Severity
    measured: bool  # severity measured on the corpus (else declared)
    # "edge", or the option that accepted it as the CLI names it (`options.name`: "--accept", "--accept-file",
    # "--allow-lossy", "--allow-crash"; the outcome JSON's vocabulary); None: refused
    accepted_by: str | None
    losses: list[Loss] = field(default_factory=list)
    everyday: int = 0  # mismatches explained on the everyday slice
    edge: int = 0  # ... and on the edge slice
    stale: bool = False  # a code the accept file lists and the export no longer records (--strict refuses it)
    why: str = ""  # accepted by USAGE: what says how the model is used

    @property
    def accepted(self) -> bool:
        return self.accepted_by is not None

    def to_json(self) -> dict:
        return {"code": self.code, "severity": self.severity.value, "severity_source": "measured" if self.measured
                else "declared", "accepted_by": self.accepted_by, "mismatches": {"everyday": self.everyday,
                                                                                  "edge": self.edge},
                "losses": [loss_json(x) for x in self.losses], **({"stale": True} if self.stale else {}),
                **({"why": self.why} if self.why else {})}


def loss_json(x: Loss) -> dict:
    return {"code": x.code, "layer": x.kind.layer, "component": x.component, "json_path": x.json_path,
            "reason": x.reason, "example": x.example}


USAGE = "usage"  # `Decision.accepted_by` of a loss the model's use cannot reach


def usage_of(tok):
    """The usage decision a source IR carries (None: a reader that records none)."""
    return getattr(tok.meta.interpretation, "usage", None)


def unused(code: str, usage) -> bool:
    """Whether loss `code` cannot reach the user of a model used as `usage` (the interpretation's
    `Decision`, or None): a difference in decoding (projection "stream": what `decode(int)` returns)
    is no difference for an encoder, which never decodes."""
    return getattr(usage, "value", None) == ENCODER and KINDS[code].projection == "stream"


def decide(losses: list[Loss], policy: Policy, reach: dict | None = None, usage=None) -> list[Decision]:
    """One decision per loss code, in first-recorded order.  `reach`: `Report.reach()` when
    verification ran; `usage`: how the model uses its tokenizer (the folder interpretation's
    `usage`), which a decode-only loss of an encoder cannot reach (accepted by `USAGE`, unless
    `--strict`)."""
    by_code: dict[str, list[Loss]] = {}
    for x in losses:
        by_code.setdefault(x.code, []).append(x)
    out = []
    for code, group in by_code.items():
        r = (reach or {}).get(code) or {}
        measured = bool(r.get("severity"))
        severity = Severity(r["severity"]) if measured else group[0].kind.severity
        if group[0].kind.severity == CRASH:  # a crash is a crash, whatever the corpus reached
            severity, measured = CRASH, False
            by = name("allow_crash") if policy.allow_crash else None
        elif policy.allow_lossy:
            by = name("allow_lossy")
        elif code in policy.accept:
            by = name("accept")
        elif code in policy.accept_file_codes:
            by = name("accept_file")
        elif severity == EDGE and not policy.strict:
            by = "edge"
        elif unused(code, usage) and not policy.strict:
            by = USAGE
        else:
            by = None
        why = f"the model never decodes ({usage.how})" if by == USAGE else ""
        everyday = r.get("everyday", 0) + r.get("documents", 0)  # the long documents are everyday text
        out.append(Decision(code, severity, measured, by, group, everyday, r.get("edge", 0), why=why))
    if policy.strict:  # a stale accept file refuses the export: the next run would hide that loss's return
        out.extend(Decision(c, KINDS[c].severity, False, None, stale=True) for c in stale_codes(policy, by_code))
    return out


NO_CRASH_FOLD = (" writes the split regex for the fold engine, which does not recurse per character: no crash "
                 "(loss regex-fold instead: non-ASCII letters count as both cases; accept it with --accept regex-fold)")


NO_CRASH_BOUNDED = (f" caps every repetition of a split regex that runs on std::wregex at {BOUND} characters: no crash "
                    "(loss regex-bound instead: a longer run of one class is cut into pieces; exact wherever there "
                    "is none)")


def refusal_hint(decisions: list[Decision], target: Target | str = DEFAULT, *, api: bool = False) -> str:
    """How to accept the refused codes, in the CLI's options or (`api`) the Python API's arguments;
    then, per refused code, what the end user of the file would see (its first loss's reason, with an
    example input) and the target that runs it exactly, if one does."""
    refused = [d for d in decisions if not d.accepted]
    codes = [d.code for d in refused if not d.stale and d.severity != CRASH]
    crashes = [d.code for d in refused if d.severity == CRASH]
    lines = []
    if codes:  # the API's sentence and the CLI's differ; the options are spelled by the table
        file = (f"an {name('accept_file', api)[:-1]} listing them, checked into" if api else
                f"list them in an {name('accept_file')} checked into")
        lines.append(f"{'pass' if api else 'accept them with'} {spell('accept', codes, api)} (or {file} the model "
                     f"repo); {spell('allow_lossy', True, api)} accepts every loss but a crash")
    if crashes:
        lines.append(f"{', '.join(crashes)}: the runtime crashes: neither {name('accept', api)} nor "
                     f"{name('allow_lossy', api)} accepts it; {spell('allow_crash', True, api)} ships it anyway")
        stack = any(d.code == REGEX_STACK.code for d in decisions)
        if stack:
            lines.append(spell("regex_form", "fold", api) + NO_CRASH_FOLD)
        if stack or any(x.pattern for d in refused if d.severity == CRASH for x in d.losses):
            lines.append(spell("regex_form", "bounded", api) + NO_CRASH_BOUNDED)
    for d in refused:
        if d.stale:
            lines.append(f"{d.code}: the accept file lists it, but this export no longer records it: remove it "
                         "from the file (strict refuses a stale accept file)")
            continue
        x = d.losses[0] if d.losses else None
        sees = f"{x.reason}" + (f" (e.g. {x.example!r})" if x.example else "") if x else KINDS[d.code].summary
        lines.append(f"{d.code}: the end user would see: {sees}")
        alt = runs_exactly(d.code, getattr(target, "name", target))
        if alt is not None:
            lines.append(f"{d.code}: {spell('target', alt.name, api)} runs it exactly ({EXACT_ON[d.code][1]}; the "
                         f"file then needs {alt.requires})")
    return "\n".join(lines)
