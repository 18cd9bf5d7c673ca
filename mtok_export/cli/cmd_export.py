"""`mtok-export --path DIR`: export a model directory to `tokenizer.mtok` (and verify it)."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..dump.sanitize import show
from ..errors import InputError, Interrupted, LossError, MtokError, OutputError, VerificationError
from ..options import command
from .gate import (CI, JunitFile, ReportFile, SarifFile, SummaryFile, outcome_options, print_decisions, print_report,
                   publish, verify_progress, write_file, write_outcomes)


@command("export", ("path", "more", "output", "jobs", "target", "fmt", "accept", "accept_file", "allow_lossy",
                    "allow_crash", "strict", "bos", "chat_template", "no_chat", "header_specials", "normalizer_form",
                    "regex_form", "ignore_merges_form", "max_word", "keep_llm_config", "no_verify", "no_sweep", "no_robust",
                    "robust_seconds", "corpus", "runtime_python", "as_json", "report_file", "junit_file",
                    "sarif_file", "summary_file", "pattern", "special", "family", "input_file"))
def export(
    path: Annotated[list[Path], typer.Option("--path", "-p", help="Model directory or any tokenizer file in it, "
                                             "recognized by content: {formats}; or org/name[@revision] on the "
                                             "HuggingFace Hub (when "
                                             "no such local path exists: only the tokenizer files are fetched). "
                                             "Several models: --path A B C, a folder of model folders, or @LIST "
                                             "(a file of paths or repository ids, one a line).")],
    more: Annotated[Optional[list[Path]], typer.Argument(metavar="[MORE]...", help="More models, as --path "
                                                         "takes them.", show_default=False)] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Output directory [default: --path; "
                                                   "a Hub model: ./NAME]. With several models, OUTPUT/NAME/ per "
                                                   "model (NAME: its folder or repository name).")] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Models exported at once, each in its own "
                                      "process with its own runtime and time limit.")] = 1,
    keep_llm_config: Annotated[bool, typer.Option("--keep-llm-config", rich_help_panel="Output", help="In an MNN model folder, leave "
                                                  "llm_config.json's jinja block as it is (the engine then uses that "
                                                  "template and EOS, and verification renders through it) "
                                                  "[default: update it to what the file embeds].")] = False,
    as_json: Annotated[bool, typer.Option("--json", rich_help_panel=CI, help="Print the JSON outcome instead of the summary "
                                          "(several models: {exit_code, models: [one outcome each]}).")] = False,
    report_file: ReportFile = None,
    junit_file: JunitFile = None,
    sarif_file: SarifFile = None,
    summary_file: SummaryFile = None,
    options=None,
):
    """Export a model directory to MNN's .mtok, verify it with the real MNN runtime, and only then
    replace the output (a file that fails is kept as OUTPUT.rejected) and write OUTPUT.json, the manifest.

    Each loss gets a severity, measured on the corpus (or declared, with --no-verify): edge losses are
    warnings, the others need --accept CODE, --accept-file or --allow-lossy.

    Several models (--path A B C, a folder of model folders, @LIST) are exported --jobs at a time; a
    line per model as it ends, then a table (model, exit code, losses, checks, seconds); --report and
    --junit cover every model (one JUnit test suite each).

    Exit codes: 0 written and verified, 1 a mismatch no recorded loss reproduces, 2 bad input or
    output location, 3 a loss the policy refuses.  Several models: the worst of theirs, in the order
    2 > 1 > 3 > 0 (an unreadable model may hide anything; a wrong file is worse than a refused loss)."""
    from ..job import Job
    from ..reports import outcome_json
    from .console import out
    from .fleet import expand

    started = time.perf_counter()
    try:
        keywords = options()  # the table's options as the API's keywords (`options.keywords`)
        job = Job.build(path[0], **keywords)
        models, several = expand([*path, *(more or [])])
        if several and keywords["input"] is not None:
            raise InputError("--input picks a file inside one --path; it cannot apply to several models")
        if several and job.policy.accept_file:  # one --accept-file for every model: no code of it is stale
            job = dataclasses.replace(job, policy=dataclasses.replace(job.policy, shared=True))
    except MtokError as e:
        write_outcomes("mtok-export", e.exit_code, report_file, junit_file,
                       subject=_subject(" ".join(map(str, path)), output, None), started=started, error=e, hint=e.hint,
                       sarif_file=sarif_file, summary_file=summary_file, json_stdout=as_json)
        if as_json:
            out.print_json(json.dumps(outcome_json("mtok-export", e.exit_code, error=e, hint=e.hint), default=str))
            raise typer.Exit(e.exit_code)
        raise
    if several:
        raise typer.Exit(_export_fleet(models, output, jobs, job, keep_llm_config, as_json, report_file, junit_file,
                                       sarif_file, summary_file))
    _export_one(models[0], output, job, keep_llm_config, as_json, report_file, junit_file, sarif_file, summary_file)


class _Attempt:
    """One model's export, whatever its outcome: the result (when it got that far) and the error."""

    def __init__(self, model, output, base, keep_llm_config: bool, progress=None, steps=None):
        from ..api import export as run
        from ..next_command import for_refusal
        from ..policy import refusal_hint, stale_codes

        self.result = self.error = None
        self.stale: list[str] = []  # codes the model's accept file lists and its export no longer records
        self.accept_file = ""
        job = base
        try:
            job = model.job(base)  # reads the model's own accept file
            if output is None:  # beside the input; a Hub model's cache folder is no place for it
                output = Path(model.name).absolute() if model.repo else job.source if job.source.is_dir() else None
            try:
                with claimed(Path(output) if output is not None else job.source.parent):
                    self.result = run(job, output, progress=progress, steps=steps, keep_llm_config=keep_llm_config)
            except (LossError, VerificationError) as e:
                self.result = e.result
                raise
        except MtokError as e:
            if isinstance(e, LossError):  # the library's hint names API arguments; ours, the options
                e.hint = refusal_hint(e.decisions, job.target)
                e.next = for_refusal(job, e.decisions, job.source, output)
                if job.verify is None and any(not d.accepted and not d.measured and not d.stale for d in e.decisions):
                    e.hint += ("\n--no-verify: these severities are the declared ones (each code's reach as the loss "
                               "registry states it); a verified export measures them on the corpus, and a loss that "
                               "reaches only edge inputs there is a warning, not a refusal")
            if isinstance(e, VerificationError):
                e.next = _after_mismatch(job, e.result.verify, output)
            self.error = e
        if not job.policy.strict and self.result is not None:  # under --strict they are refusals
            self.stale = stale_codes(job.policy, (d.code for d in self.result.decisions))
            self.accept_file = job.policy.accept_file

    @property
    def code(self) -> int:
        return self.error.exit_code if self.error is not None else 0

    @property
    def hint(self):
        return getattr(self.error, "hint", None)

    @property
    def decisions(self):
        return self.result.decisions if self.result else None

    @property
    def report(self):
        return self.result.verify if self.result else None


def _after_mismatch(job, report, output):
    """The next command after a mismatch no loss reproduces: its component and the option to try."""
    from ..next_command import for_mismatch

    first = next((m for c in report.checks for m in c.mismatches if not m.explanation), None)
    options = outcome_options(first.check, first.expected, first.got, report.target, first.component) if first else []
    return for_mismatch(job, first.component if first else "", options, job.source, output)


@contextmanager
def claimed(folder: Path):
    """The output folder, locked for this export (a lock on the folder itself, so no lock file is
    left): a second export to it fails clearly instead of racing the first to replace the file.
    Created when missing, and removed again (with the parents it needed) when the export leaves it
    empty: a bad input, Ctrl-C, a full disk."""

    made, p = [], Path(folder).absolute()
    while not p.exists() and p != p.parent:
        made.append(p)
        p = p.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # not a folder, or no permission: the export names the reason
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputError(folder, "another mtok-export is writing to this folder now; run them one after "
                                      "another, or give each its own --output") from None
        yield
    finally:
        os.close(fd)
        for p in made:  # the folder first, then the parents it needed
            try:
                p.rmdir()
            except OSError:  # not empty: the export wrote there
                break


def _export_one(model, output, job, keep_llm_config, as_json, report_file, junit_file, sarif_file=None,
                summary_file=None):
    from ..reports import outcome_json
    from .console import err, escape, out
    from .fleet import stale_warning
    from .progress import table_progress

    started = time.perf_counter()
    with table_progress() as progress, verify_progress(as_json or job.verify is None) as steps:
        a = _Attempt(model, output, job, keep_llm_config, progress, steps)
    result, error, code, hint, decisions = a.result, a.error, a.code, a.hint, a.decisions
    subject = _subject(model.label, output, result)
    if error is not None and (result is None or not isinstance(error, (LossError, VerificationError))):
        write_outcomes("mtok-export", code, report_file, junit_file, subject=subject, started=started, error=error,
                       result=result, hint=hint, decisions=decisions, sarif_file=sarif_file, summary_file=summary_file,
                       json_stdout=as_json)
        if as_json:
            out.print_json(json.dumps(outcome_json("mtok-export", code, error=error, hint=hint), default=str))
            raise typer.Exit(code)
        raise error
    report = a.report
    write_outcomes("mtok-export", code, report_file, junit_file, subject=subject, started=started, error=error,
                   result=result, report=report, decisions=decisions, hint=hint, sarif_file=sarif_file,
                   summary_file=summary_file, json_stdout=as_json)
    if as_json:
        out.print_json(json.dumps(outcome_json("mtok-export", code, error=error, result=result, report=report,
                                               decisions=decisions, hint=hint), ensure_ascii=False, default=str))
        raise typer.Exit(code)
    refused = any(not d.accepted for d in decisions or ())
    if not out.quiet:  # --quiet: nothing to print (and the tables would load rich for nothing)
        print_summary(result)
        if report is not None:
            print_report(report, refused)
        print_decisions(decisions)
        if result.rejected:
            why = ("it verified, but the policy refuses its losses" if refused and (report is None or report.ok)
                   else "it failed verification")
            out.print(f"[bold red]{why}: kept as {escape(str(result.rejected))} to inspect (the next export that "
                      "passes removes it); the output was not replaced[/]")
    for warning in result.lowering.warnings:
        err.print(f"warning: {warning}", markup=False)
    if a.stale:
        err.print(f"warning: {stale_warning(a.accept_file, a.stale)}", markup=False)
    if error is not None:
        raise error
    edge = [d.code for d in decisions if d.accepted_by == "edge"]
    # the verdict, one line on stderr like the `error:` line of every other outcome
    partial = "".join(f" (partial: {p['phase']} {p['done']:,} of {p['total']:,} {p['unit']} checked)"
                      for p in (report.partial if report is not None else ()))  # what the budget left unchecked
    err.print(f"passed: wrote {result.path}" + (f", verified on MNN {report.runtime}{partial}" if report is not None
                                                else ", not verified (--no-verify)")
              + (f"; edge losses accepted with a warning (--strict refuses them): {', '.join(edge)}" if edge else ""),
              markup=False)


def _subject(path: Path, output: Path | None, result) -> str:
    """The model and the output, as the JUnit suite names them (the output planned when the export
    stopped before choosing it)."""
    return f"{path} -> {result.path if result is not None else output or path}"


def _export_fleet(models, output, jobs, base, keep_llm_config, as_json, report_file, junit_file,
                  sarif_file=None, summary_file=None) -> int:
    """Every model through the pool; -> the worst exit code."""
    from ..ci import on_github
    from ..reports import fleet_json, junit_fleet, worst_exit
    from .console import err, out
    from .fleet import fleet_verdict, print_row, print_table, run_pool

    start = time.perf_counter()
    want = (report_file is not None or as_json or sarif_file is not None or summary_file is not None or on_github(),
            junit_file is not None)

    def job(model):
        t = time.perf_counter()
        a = _Attempt(model, output / model.name if output is not None else None, base, keep_llm_config)
        if isinstance(a.error, Interrupted):
            raise a.error
        return _row(model, a, time.perf_counter() - t, *want)

    finished = []

    def done(row):
        finished.append(row)
        if not as_json:
            print_row(row, len(finished), len(models))

    _preload(base.verify is not None)
    rows = run_pool(models, jobs, job, done)
    code = worst_exit(r["exit_code"] for r in rows)
    outcome = fleet_json("mtok-export", code, [r["report"] for r in rows]) if want[0] else None
    if report_file is not None:
        write_file(report_file, json.dumps(outcome, ensure_ascii=False, indent=1, default=str) + "\n")
    if junit_file is not None:
        write_file(junit_file, junit_fleet("mtok-export", [(r["suite"], r["junit"], r["seconds"]) for r in rows]))
    publish([r["report"] for r in rows if r["report"] is not None], sarif_file, summary_file, as_json)
    if as_json:
        out.write_json(outcome)
    elif not out.quiet:
        print_table(rows, code, time.perf_counter() - start)
    if not as_json:
        err.print(fleet_verdict(rows, code), markup=False)  # the verdict: the last line on stderr
    return code


def _row(model, a: _Attempt, seconds: float, with_report: bool, with_junit: bool) -> dict:
    """What a job sends back: plain data (the IRs stay in the job's process)."""
    from ..reports import EXIT_MEANING, junit_cases, outcome_json

    code, report, decisions = a.code, a.report, a.decisions or []
    row = {"name": model.name, "source": model.label, "exit_code": code, "outcome": EXIT_MEANING.get(code, "error"),
           "error": str(a.error) if a.error is not None else None, "hint": a.hint, "losses": len(decisions),
           "next": a.error.next.to_json() if a.error is not None and a.error.next is not None else None,
           "stale": a.stale, "accept_file": a.accept_file,
           "refused": sum(1 for d in decisions if not d.accepted), "seconds": round(seconds, 3),
           "checks": ([sum(1 for c in report.checks if c.total and all(m.explanation for m in c.mismatches)),
                       sum(1 for c in report.checks if c.total)] if report is not None else None),
           "report": None, "junit": None, "suite": f"mtok-export: {_subject(model.label, None, a.result)}"}
    if with_report:
        row["report"] = {"name": model.name, "source": model.label, "seconds": row["seconds"],
                         **outcome_json("mtok-export", code, error=a.error, result=a.result, report=report,
                                        decisions=decisions, hint=a.hint)}
    if with_junit:
        row["junit"] = junit_cases(row["suite"], code, seconds=seconds, error=a.error, report=report,
                                   decisions=decisions)
    return row


def _preload(verifying: bool) -> None:
    """Import the export stack once, before the jobs fork, so each job starts with it loaded."""
    from ..api import export  # noqa: F401

    if verifying:
        from ..verify.pipeline import run  # noqa: F401


def print_summary(r):
    from rich.table import Table
    from rich.text import Text

    from ..dump.jsonify import id_to_token
    from ..dump.render import one_line, size, tokens
    from ..ir.models import BPE
    from .console import escape, out

    low = r.lowered
    names = id_to_token(low)
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold")
    t.add_column()
    row = lambda k, v: t.add_row(k, Text(v))  # noqa: E731  (token text must never be markup)
    model = f"{low.model.kind}, vocab {len(names):,}"
    if isinstance(low.model, BPE):
        model += f", merges {len(low.model.merges):,}"
    row("model", model)
    for k in ("normalizer", "pre_tokenizer", "decoder"):
        row(k.replace("_", "-"), one_line(getattr(low, k)))
    row("special", f"{len(low.special_ids)}: " + tokens(low.special_ids, names, 8))
    stops = ", ".join(f"{show(names.get(i, '?'))}({i}) from {src}" for i, src in r.source.meta.stop_sources)
    row("stop", stops or "none")
    row("prefix", tokens(low.prefix_ids, names))
    row("post program", one_line(low.post_processor) if low.post_processor else "none")
    chat = r.source.chat
    if low.chat.text:
        row("chat template", f"{chat.source} ({chat.name + ', ' if chat.name else ''}{len(low.chat.text):,} chars)")
    else:  # why there is none: --no-chat, detected from the configs, or the chat-template-missing loss's reason
        row("chat template", "none (" + "; ".join(f"{k}: {v}" for k, v in chat.detail) + ")" if chat.detail else "none")
    for detail in r.lowering.applied.get("legacy-type", ()):
        row("legacy type", detail)
    if r.lowering.applied:
        row("passes", ", ".join(r.lowering.applied))
    for note in list(r.source.meta.notes) + r.lowering.notes:
        row("note", note)
    verb = "[bold green]wrote[/]" if r.written else "[bold red]rejected[/]" if r.rejected else "[bold red]not written[/]"
    out.print(f"{verb} {escape(str(r.path))} ({size(r.size)}, {r.seconds:.2f} s, target {r.lowering.target.name})")
    out.print(t)
