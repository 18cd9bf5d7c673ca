"""What `mtok-export` and `mtok verify` share as a release gate: the acceptance-policy options, the
verify report and loss-decision printers, and the `--report` / `--junit` files written on every
outcome (exit 0, 1, 2 and 3)."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..dump.sanitize import clip, show
from ..io import atomic_write
from ..options import BY_KEY, name, spell

# the acceptance-policy options are the job's: `options.TABLE`
CI = "CI output"  # the --help panel of what a CI job writes
ReportFile = Annotated[Optional[Path], typer.Option("--report", rich_help_panel=CI, help="Write the JSON outcome here, whatever the "
                                                    "exit code (0, 1, 2 or 3).")]
JunitFile = Annotated[Optional[Path], typer.Option("--junit", rich_help_panel=CI, help="Write a JUnit XML file here: one test case "
                                                   "per verification check and per loss.")]
SummaryFile = Annotated[Optional[Path], typer.Option("--summary", rich_help_panel=CI, help="Write the job summary here as markdown "
                                                     "(per model: verdict, checks, losses, first mismatch, what to "
                                                     "do); on GitHub Actions it also goes to $GITHUB_STEP_SUMMARY.")]
SarifFile = Annotated[Optional[Path], typer.Option("--sarif", rich_help_panel=CI, help="Write a SARIF 2.1.0 log here (code scanning): "
                                                   "a rule per loss code, a result per loss and per unexplained "
                                                   "mismatch class, at its line in the source.")]


def write_outcomes(command: str, exit_code: int, report_file: Path | None, junit_file: Path | None, *,
                   subject: str, started: float, error=None, result=None, report=None, decisions=None, hint=None,
                   sarif_file: Path | None = None, summary_file: Path | None = None, json_stdout: bool = False):
    """`subject`: the model and the output, naming the JUnit suite; `started`: `time.perf_counter()` when
    the command began; `json_stdout`: stdout carries --json (GitHub's workflow commands go to stderr)."""
    import time

    from ..ci import on_github
    from ..reports import junit_xml, outcome_json

    data = None
    if report_file is not None or sarif_file is not None or summary_file is not None or on_github():
        data = outcome_json(command, exit_code, error=error, result=result, report=report, decisions=decisions,
                            hint=hint)
    if report_file is not None:
        write_file(report_file, json.dumps(data, ensure_ascii=False, indent=1, default=str) + "\n")
    if junit_file is not None:
        write_file(junit_file, junit_xml(command, subject, exit_code, seconds=time.perf_counter() - started,
                                         error=error, report=report, decisions=decisions))
    publish([data] if data is not None else [], sarif_file, summary_file, json_stdout)


def publish(outcomes: list[dict], sarif_file: Path | None, summary_file: Path | None, json_stdout: bool) -> None:
    """The CI formats made from outcome JSON: the --sarif and --summary files, and on GitHub Actions
    the job summary and the workflow commands."""
    import sys

    from ..ci import on_github, sarif, summary, write_github

    if sarif_file is not None:
        write_file(sarif_file, json.dumps(sarif(outcomes), ensure_ascii=False, indent=1, default=str) + "\n")
    if summary_file is not None:
        write_file(summary_file, summary(outcomes))
    if on_github():
        write_github(outcomes, sys.stderr if json_stdout else sys.stdout)


def write_file(path: Path, text: str):
    atomic_write(Path(path), text.encode("utf-8"))


def print_decisions(decisions, console=None):
    """One line per loss code (severity, measured or declared, mismatches on the everyday / edge
    slices, the verdict), then its first places in the source."""
    from rich.text import Text

    from .console import out

    console = console or out
    if not decisions:
        return
    console.print("[bold]losses[/]")
    for d in decisions:
        sev = f"{d.severity.value}, {'measured' if d.measured else 'declared'}"
        counts = f"; mismatches {d.everyday} everyday / {d.edge} edge" if d.measured else ""
        verdict = (Text("warning (edge)", style="yellow") if d.accepted_by == "edge"
                   else Text(f"not reached: {d.why}", style="green") if d.why
                   else Text(f"accepted by {d.accepted_by}", style="green") if d.accepted
                   else Text("REFUSED", style="bold red"))
        console.print(Text.assemble(f"  {d.code} ({sev}{counts}): ", verdict))
        for x in d.losses[:3]:
            console.print(Text(f"    [{d.code}] {x.json_path} {x.component}: {show(x.reason)}"
                               + (f" (e.g. {show(x.example)})" if x.example else "")))
        if len(d.losses) > 3:
            console.print(Text(f"    [{d.code}] ... {len(d.losses) - 3} more (all in --report)"))


def print_report(report, refused: bool = False):
    """The check table, the mismatch classes and the verification's own line; `refused`: the policy
    refuses some recorded loss (then that line says the losses decide, never "verify passed")."""
    from rich.table import Table
    from rich.text import Text

    from .console import out

    ref = report.reference or {}
    t = Table("check", "match", "unexplained", "reference", "note", box=None, padding=(0, 2),
              title=f"verify on MNN {report.runtime}", title_justify="left")
    notes: list[str] = []
    for c in report.checks:
        mark = "" if c.total == 0 else ("[green]" if c.ok == c.total else "[red]") + f"{c.ok}/{c.total}[/]"
        if c.skipped and c.skipped not in notes:
            notes.append(c.skipped)
        bad = sum(1 for m in c.mismatches if not m.explanation)
        unexplained = "" if c.total == 0 else f"[bold red]{bad}[/]" if bad else "0"
        t.add_row(c.name, mark or "-", unexplained, c.reference if c.total else "",
                  f"({notes.index(c.skipped) + 1})" if c.skipped else "")
    out.print(t)
    if ref.get("self_check"):
        out.print(Text(f"  reference: none, self-check only: {ref.get('why')}"
                       + (f"; to run it: {ref['install']}" if ref.get("install") else ""), style="bold yellow"))
    elif ref:
        out.print(Text(f"  reference: {ref['library']} on {', '.join(Path(f).name for f in ref['files'])}"
                       + (f" ({ref['detail']})" if ref.get("detail") else "")))
    if ref.get("disagreement"):  # a finding about the source, not a failure of the file
        out.print(Text(f"  {ref['disagreement']['summary']}", style="yellow"))
    for i, note in enumerate(notes, 1):
        out.print(Text(f"  ({i}) {note}"))
    for check, codes, n, m in report.classes():
        why = Text(f"reproduced by loss {', '.join(codes)}" if codes else "UNEXPLAINED (no recorded loss reproduces it)",
                   style="" if codes else "bold red")
        out.print(Text.assemble((check, "bold"), f": {n} mismatch(es), ", why))
        out.print(Text(f"    input    {clip(show(m.text), 100)!s}"))
        expected, got = m.expected, m.got
        if isinstance(expected, str) and isinstance(got, str):  # rendered text: the first differing line
            a, b = expected.splitlines(), got.splitlines()
            k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            out.print(Text(f"    first difference at line {k + 1}"))
            expected, got = (a[k] if k < len(a) else "<end>"), (b[k] if k < len(b) else "<end>")
        elif isinstance(expected, list) and isinstance(got, list):  # ids: around the first difference
            k, expected, got = id_window(expected, got)
            out.print(Text(f"    first difference at id {k} (expected {len(m.expected)} ids, got {len(m.got)})"))
        out.print(Text(f"    expected {clip(show(str(expected)), 100)}"))
        out.print(Text(f"    got      {clip(show(str(got)), 100)}"))
        if not codes:
            if m.component:
                out.print(Text(f"    points at the {m.component}"))
            options = outcome_options(check, m.expected, m.got, report.target, m.component)
            for line in options:
                out.print(Text(f"    option   {line}"))
            if m.component and not options:
                out.print(Text(f"    no option changes the {m.component}: report it ({COMPONENT_REPORT.get(m.component, '')}), "
                               "with --report FILE and the source"))
    if report.robustness is not None:
        out.print(Text(f"robustness: {report.robustness.verdict()}",
                       style="bold red" if report.robustness.crash else ""))
    if report.ok and ref.get("self_check"):
        out.print("[bold yellow]self-check passed[/] (no independent reference ran: this proves the file against "
                  "this tool's own reading of the source, not against the source)")
    elif report.ok and refused:
        out.print("[bold]verify: no unexplained mismatch[/]; the policy refuses some of the recorded losses (below)")
    elif report.ok:
        out.print("[bold green]verify passed[/]" + (" [bold yellow](partial)[/]" if report.partial else "")
                  + (" (every mismatch reproduced by a recorded loss)"
                                                     if any(c.mismatches for c in report.checks) else ""))
    else:
        out.print(f"[bold red]verify failed[/]: {report.unexplained} mismatch(es) not reproduced by any recorded loss")
    for p in report.partial:  # what the time budget left unchecked: a verdict on what ran only
        out.print(Text(f"  partial: {p['note']} (--verify-seconds 0 checks all)", style="bold yellow"))


def id_window(a: list, b: list, before: int = 4, after: int = 6) -> tuple[int, str, str]:
    """(index of the first difference, each list around it): `before` ids of the common part, then
    up to `after` ids from the difference, with `…` where a list goes on, so two long lists that
    differ late never print the same."""
    k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lo = max(0, k - before)

    def part(ids: list) -> str:
        shown = ", ".join(map(str, ids[lo:k + after]))
        return f"[{'…, ' if lo else ''}{shown}{', …' if len(ids) > k + after else ''}]"
    return k, part(a), part(b)


def _any(key: str) -> str:
    """`--regex-form explicit|fold`: the option with each of its choices."""
    return spell(key, "|".join(BY_KEY[key].choices))


_BOS = (f"{spell('bos', 'prefix')} / {spell('bos', 'none')}: which ids the header prefix puts first (and whether the "
        "chat template's BOS stays)")
# The options that change each pipeline component a dead end can point at (`verify.attribution.COMPONENTS`).
COMPONENT_OPTIONS = {
    "normalizer": (f"{_any('normalizer_form')}: how NFC/NFKC/charsmap rules are written",),
    "split": (f"{_any('regex_form')}: how a split regex with Unicode sub-categories is written",),
    "added tokens": (f"{spell('header_specials', 'all')}: every special token split out by the runtime, not only those "
                     "with a role",),
    "template": (f"{spell('chat_template', 'NAME|FILE')}: embed another template; in an MNN model folder "
                 "--keep-llm-config leaves llm_config.json's jinja block in charge",),
}
# What to report where no option changes the component.
COMPONENT_REPORT = {
    "interpretation": "the reader did not follow the folder's interpretation (the cause above): a bug of this tool",
    "reader": "this tool's reading of the source gives other ids than the reference (HF on the IR differs from it "
              "on this input): a reader bug, or a question the folder's interpretation (manifest) answers otherwise",
    "vocabulary": "an id the written vocabulary does not hold where the reference has it",
    "model": "the runtime's model (merges, ranks or scores) splits this input otherwise than the reference",
    "decoder": "the runtime decodes these ids otherwise than the reference",
}


def outcome_options(check: str, expected, got, target: str = "", component: str = "") -> list[str]:
    """The options that change the `component` the first divergence points at (for a dead end: what
    to try), most specific first; none where no option changes it (`COMPONENT_REPORT` says what to
    report).  Without a component, by the shape of the difference and the check."""
    lines: list[str] = []
    head = tail = False
    if isinstance(expected, list) and isinstance(got, list):
        k = next((i for i, (x, y) in enumerate(zip(expected, got)) if x != y), min(len(expected), len(got)))
        head = k < min(3, len(expected), len(got)) and check != "raw ids"
        tail = k == min(len(expected), len(got)) and len(expected) > len(got)
    if component:
        if component in ("bos/eos", "template") and head:
            lines.append(_BOS)
        if component == "bos/eos":
            lines.extend(_missing_tail(target) if tail else [] if head else [_BOS])
        return [*lines, *COMPONENT_OPTIONS.get(component, ())]
    if head:
        lines.append(_BOS)
    if tail:
        lines.extend(_missing_tail(target))
    if check in ("engine ids", "raw ids"):
        lines.extend(o for c in ("normalizer", "split", "added tokens") for o in COMPONENT_OPTIONS[c])
    elif check.startswith("chat"):
        lines.extend(COMPONENT_OPTIONS["template"])
    return lines


def _missing_tail(target: str) -> list[str]:
    """Ids missing at the end: the target whose runtime appends the post-processor's suffix, or, on
    such a target, the runtime it needs (the one that ran did not append them)."""
    from ..losses import SUFFIX_NOT_APPENDED
    from ..targets import TARGETS, runs_exactly

    alt = runs_exactly(SUFFIX_NOT_APPENDED.code, target)
    if alt is not None:
        return [f"{spell('target', alt.name)}: that runtime appends the post-processor's suffix ids"]
    t = TARGETS.get(target)
    if t is not None and t.appends_suffix:
        return [f"{name('runtime_python')}: a Python whose MNN is what {t.name} needs ({t.requires}); the one here does "
                "not run the post program"]
    return []


def verify_progress(quiet: bool):
    """A context manager yielding `progress(phase, done=None, total=None)` (`verify.steps`): on a terminal
    a bar with the phase, its counts and the time left; otherwise one line per phase, and for a phase
    with counts a line every `PLAIN_EVERY` seconds (done of total, time left); nothing with `quiet`
    (--json, --quiet)."""
    import time
    from contextlib import contextmanager

    from .console import err

    @contextmanager
    def cm():
        if quiet or err.quiet:
            yield lambda phase, done=None, total=None: None
        elif err.is_terminal:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            with Progress(SpinnerColumn(), TextColumn("verify: {task.description}"), BarColumn(), MofNCompleteColumn(),
                          TextColumn("left"), TimeRemainingColumn(), TimeElapsedColumn(), console=err.rich(),
                          transient=True) as bar:
                task = [bar.add_task("start", total=None)]

                def step(phase, done=None, total=None):
                    if done is None:  # a phase starts, its total unknown until counts come (a new task:
                        bar.remove_task(task[0])  # `reset` would keep the last phase's total)
                        task[0] = bar.add_task(phase, total=None)
                    else:
                        bar.update(task[0], completed=done, total=total)
                    bar.refresh()  # drawn now (the caller tells at most every 0.25 s, `verify.steps`)
                yield step
        else:
            began = {"phase": "", "at": 0.0, "shown": 0.0}

            def step(phase, done=None, total=None):
                now = time.monotonic()
                if done is None:
                    began.update(phase=phase, at=now, shown=now)
                    err.print(f"verify: {phase}", markup=False)
                elif now - began["shown"] >= PLAIN_EVERY and total:
                    began["shown"] = now
                    err.print(f"verify: {phase} {counted(done, total, now - began['at'])}", markup=False)
            yield step

    return cm()


PLAIN_EVERY = 2.0  # seconds between two progress lines of one phase where there is no terminal


def counted(done: int, total: int, seconds: float) -> str:
    """"120,000/262,144 (46%), about 3 s left": a phase's counts and, from its rate so far, its time left."""
    left = f", about {seconds * (total - done) / done:.0f} s left" if 0 < done < total else ""
    return f"{done:,}/{total:,} ({100 * done // max(total, 1)}%){left}"
