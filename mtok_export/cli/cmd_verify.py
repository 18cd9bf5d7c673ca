"""`mtok verify FILE`: the real MNN runtime against the source's reference, with the export's policy.

The manifest beside the file (`FILE.json`, written by `mtok-export`) supplies the source, the target,
the BOS policy, the reader options and the accepted losses; the options below override it."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import LossError, MtokError, VerificationError
from ..options import command
from .gate import JunitFile, ReportFile, print_decisions, print_report, verify_progress, write_outcomes


@command("verify", ("file", "against", "target", "bos", "corpus", "accept", "accept_file", "allow_lossy", "allow_crash",
                    "strict", "runtime_python", "no_sweep", "no_robust", "robust_seconds", "as_json", "template_drift",
                    "report_file", "junit_file"))
def verify(
    file: Annotated[Path, typer.Argument(help="The written .mtok (or legacy tokenizer.txt), or an MNN model "
                                         "folder: then the tokenizer file its config names, rendered through its "
                                         "llm_config.json as the engine does.")],
    against: Annotated[Optional[Path], typer.Option("--against", help="Source model directory or file "
                                                    "[default: the manifest's source].")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON outcome instead of the tables.")] = False,
    template_drift: Annotated[bool, typer.Option("--template-drift", help="Only compare the chat template the "
                                                 "manifest recorded (sha256, Hub revision) with the one the source "
                                                 "gives now (a Hub id: its branch's current revision): exit 1 "
                                                 "when it was re-issued.")] = False,
    report_file: ReportFile = None,
    junit_file: JunitFile = None,
    options=None,
):
    """Check that the MNN runtime tokenizes the file like the source's reference.

    The file's own structure is checked first (exit 2 with the byte offset when it is malformed).
    Exit 0 when every mismatch is reproduced by a loss the policy accepts (the manifest's policy
    unless options are given), 1 when a mismatch is not reproduced, 3 when a loss is refused."""
    if template_drift:
        return _template_drift(file, against, as_json)
    from ..api import verify as run
    from ..policy import refusal_hint
    from ..reports import outcome_json
    from .console import out

    started = time.perf_counter()
    decisions = report = error = None
    code = 0
    subject = f"{file}" + (f" against {against}" if against else "")
    try:
        with verify_progress(as_json) as step:
            result = run(file, against, progress=step, **options())
        report, decisions = result.report, result.decisions
        subject = f"{result.file} against {result.job.source}"  # the source the manifest names, without --against
        if not report.ok:
            raise VerificationError(_Result(report))
        if any(not d.accepted for d in decisions):
            raise LossError(decisions, hint=refusal_hint(decisions, result.job.target))
    except MtokError as e:
        error, code = e, e.exit_code
        if report is None and not as_json:
            write_outcomes("mtok verify", code, report_file, junit_file, subject=subject, started=started, error=e,
                           hint=getattr(e, "hint", None))
            raise
    write_outcomes("mtok verify", code, report_file, junit_file, subject=subject, started=started, error=error,
                   report=report, decisions=decisions, hint=getattr(error, "hint", None), json_stdout=as_json)
    if as_json:
        out.print_json(json.dumps(outcome_json("mtok verify", code, error=error, report=report, decisions=decisions,
                                               hint=getattr(error, "hint", None)), ensure_ascii=False, default=str))
        raise typer.Exit(code)
    print_report(report, any(not d.accepted for d in decisions))
    print_decisions(decisions)
    if error is not None:
        raise error


def _template_drift(file: Path, against: Path | None, as_json: bool):
    from ..verify.pipeline import template_drift
    from .console import out

    d = template_drift(file, against)
    rec, cur = d["recorded"], d["current"]
    at = lambda r: f" at revision {r}" if r else ""  # noqa: E731
    if as_json:
        out.print_json(json.dumps(d, ensure_ascii=False))
    elif d["drift"]:
        out.print(f"chat template re-issued: {cur['source']}{at(cur['revision'])} gives sha256 {cur['sha256']}; "
                  f"{file} embeds sha256 {rec['sha256']}{at(rec['revision'])}: export it again", markup=False)
    else:
        out.print(f"chat template unchanged: {cur['source']}{at(cur['revision'])} gives the recorded sha256 "
                  f"{rec['sha256']}", markup=False)
    raise typer.Exit(1 if d["drift"] else 0)


class _Result:  # what VerificationError needs of an export result
    def __init__(self, report):
        self.verify, self.rejected = report, None
