"""The one command that comes next (DESIGN 4.2): every refused export (exit 3) ends with a complete
`mtok-export` command that ships the file, every flag merged (the user's own, then what the refusal
needs), the recommended form chosen, and why in one line; a failed verification (exit 1) ends with
the component it points at, what to try, and the command that writes the report to attach.

The command is made from the job (`Job.argv`), not from the command line typed, so it is the same
whatever spelling the user chose, and holds no CI output options (they do not change the file)."""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass
from pathlib import Path

from .losses import CRASH, EXACT_ON, REGEX_STACK
from .targets import runs_exactly


@dataclass(frozen=True)
class NextCommand:
    argv: tuple[str, ...]
    why: str  # one line

    @property
    def line(self) -> str:
        return shlex.join(self.argv)

    def to_json(self) -> dict:
        return {"command": self.line, "argv": list(self.argv), "why": self.why}


def _argv(job, path: Path, output: Path | None, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    return ("mtok-export", "--path", str(path), *(("--output", str(output)) if output is not None else ()),
            *job.argv(), *extra)


def for_refusal(job, decisions, path: Path, output: Path | None) -> NextCommand | None:
    """The command that ships what `decisions` refuse, or None when they refuse nothing.  A crash is
    answered by the bounded split where a split on std::wregex is the cause (the safe form, exact
    wherever no run of one class is longer than its cap), else by --allow-crash; every other refused
    code is accepted by name; a stale accept file under --strict by leaving --strict out."""
    refused = [d for d in decisions if not d.accepted]
    if not refused:
        return None
    policy, forms, why = job.policy, job.forms, []
    crashes = [d for d in refused if d.severity == CRASH]
    if crashes:
        on_wregex = any(d.code == REGEX_STACK.code or any(x.pattern for x in d.losses) for d in crashes)
        if on_wregex and forms.regex_form != "bounded":
            forms = dataclasses.replace(forms, regex_form="bounded")
            why.append("--regex-form bounded: the exact split crashes the runtime on one long run of a character "
                       "class; capped, it cannot (loss regex-bound: exact on every text without such a run)")
        else:
            policy = dataclasses.replace(policy, allow_crash=True)
            why.append(f"--allow-crash: the runtime crashes on a long input ({', '.join(d.code for d in crashes)}) and "
                       "no form avoids it; ship it only where inputs are bounded, and report it")
    codes = sorted(d.code for d in refused if not d.stale and d.severity != CRASH)
    if codes:
        policy = dataclasses.replace(policy, accept=policy.accept | frozenset(codes))
        alts = [f"{c} runs exactly with --target {t.name} ({EXACT_ON[c][1]})" for c in codes
                if (t := runs_exactly(c, job.target.name)) is not None]
        why.append(f"--accept {','.join(codes)}: ships with {'this loss' if len(codes) == 1 else 'these losses'}, "
                   "each listed above with what the end user would see" + (f"; or: {'; '.join(alts)}" if alts else ""))
    stale = [d.code for d in refused if d.stale]
    if stale:
        policy = dataclasses.replace(policy, strict=False)
        why.append(f"without --strict: the accept file lists {', '.join(stale)}, which this export no longer records "
                   "(remove it from the file to keep --strict)")
    shipping = dataclasses.replace(job, policy=policy, forms=forms)
    return NextCommand(_argv(shipping, path, output), "; ".join(why))


def for_mismatch(job, component: str, options: list[str], path: Path, output: Path | None) -> NextCommand:
    """After a mismatch no loss reproduces: the command that writes the report to attach to a bug
    report, and why (the component the first divergence points at, and the options that change it)."""
    where = f"the mismatch points at the {component}" if component else "no component stands out"
    tried = f"; try {options[0]}" if options else ""
    return NextCommand(_argv(job, path, output, ("--report", "mtok-report.json")),
                       f"{where}{tried}; else attach mtok-report.json and the source to a bug report")
