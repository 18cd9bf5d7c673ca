"""`mtok verify FILE --against SRC_DIR`: the real MNN runtime against the HF reference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer


def verify(
    file: Annotated[Path, typer.Argument(help="The written .mtok file.")],
    against: Annotated[Path, typer.Option("--against", help="Source model directory (tokenizer.json).")],
    target: Annotated[str, typer.Option(help="Target the file was exported for.")] = "mnn-3.6",
    corpus: Annotated[Optional[Path], typer.Option(help="Extra strings, JSONL (a string or {text} per line).")] = None,
    allow_lossy: Annotated[bool, typer.Option("--allow-lossy", help="Accept mismatches explained by "
                                              "the losses the export reported.")] = False,
    bos: Annotated[str, typer.Option(help="BOS policy the file was exported with.")] = "auto",
    runtime_python: Annotated[Optional[Path], typer.Option("--runtime-python", help="Python interpreter "
                                                           "with the MNN runtime to test.")] = None,
    json_report: Annotated[Optional[Path], typer.Option("--json", help="Write a JSON report here ('-' = stdout).")] = None,
):
    """Check that the MNN runtime tokenizes like HF on an edge-case corpus.

    Exit 0 only when every check matches, or every mismatch is explained by a loss accepted with
    --allow-lossy; 1 otherwise; 2 on bad input."""
    from ..export import read_source
    from ..lower import lower

    tok = read_source(against)
    low, lw = lower(tok, target, bos)
    report = run_verify(file, against, low, lw, corpus=corpus, python=runtime_python, accepted=allow_lossy,
                        json_report=json_report)
    raise typer.Exit(0 if report.ok else 1)


def run_verify(file, source_dir, lowered, lowering, *, corpus=None, python=None, accepted=False, json_report=None,
               quiet=False, reference=None):
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from ..verify.check import verify
    from ..verify.corpus import builtin_chats, builtin_corpus, load_corpus_file
    from .console import err, out

    samples = list(builtin_corpus()) + (list(load_corpus_file(corpus)) if corpus else [])
    with Progress(SpinnerColumn(), TextColumn("verify: {task.description}"), TimeElapsedColumn(),
                  console=err, transient=True,
                  disable=quiet or json_report == Path("-") or not err.is_terminal) as bar:
        task = bar.add_task("start", total=None)
        report = verify(file, source_dir, lowered, lowering, samples=samples, chats=list(builtin_chats()),
                        python=python, accepted=accepted, progress=lambda s: bar.update(task, description=s),
                        reference=reference)
    data = report_json(report)
    if json_report is not None:
        text = json.dumps(data, ensure_ascii=False, indent=1)
        if str(json_report) == "-":
            out.print(text, markup=False, highlight=False)
        else:
            Path(json_report).write_text(text + "\n", encoding="utf-8")
    if not quiet and str(json_report) != "-":
        print_report(report)
    return report


def report_json(report) -> dict:
    return {
        "file": report.file, "target": report.target, "runtime": report.runtime, "ok": report.ok,
        "accepted_losses": report.accepted,
        "checks": [{"name": c.name, "ok": c.ok, "total": c.total, "note": c.skipped} for c in report.checks],
        "classes": [{"check": check, "explanation": code, "count": n,
                     "example": {"sample": m.sample, "text": m.text, "expected": m.expected, "got": m.got}}
                    for check, code, n, m in report.classes()],
        "losses": [{"code": x.code, "component": x.component, "json_path": x.json_path, "reason": x.reason}
                   for x in report.losses],
        "unexplained": report.unexplained,
    }


def print_report(report):
    from rich.table import Table
    from rich.text import Text

    from ..dump.sanitize import clip, show
    from .console import out

    t = Table("check", "match", "note", box=None, padding=(0, 2), title=f"verify on MNN {report.runtime}",
              title_justify="left")
    notes: list[str] = []
    for c in report.checks:
        mark = "" if c.total == 0 else ("[green]" if c.ok == c.total else "[red]") + f"{c.ok}/{c.total}[/]"
        if c.skipped and c.skipped not in notes:
            notes.append(c.skipped)
        t.add_row(c.name, mark or "-", f"({notes.index(c.skipped) + 1})" if c.skipped else "")
    out.print(t)
    for i, note in enumerate(notes, 1):
        out.print(Text(f"  ({i}) {note}"))
    reasons = {x.code: x.reason for x in report.losses}
    reasons.setdefault("legacy-type", "the legacy runtime did exactly what its type does (the losses listed at export)")
    for check, code, n, m in report.classes():
        why = Text(f"explained by loss {code}: {reasons.get(code, '')}" if code else "UNEXPLAINED",
                   style="" if code else "bold red")
        out.print(Text.assemble((check, "bold"), f": {n} mismatch(es), ", why))
        out.print(Text(f"    input    {clip(show(m.text), 100)!s}"))
        expected, got = m.expected, m.got
        if isinstance(expected, str) and isinstance(got, str):  # rendered text: the first differing line
            a, b = expected.splitlines(), got.splitlines()
            k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            out.print(Text(f"    first difference at line {k + 1}"))
            expected, got = (a[k] if k < len(a) else "<end>"), (b[k] if k < len(b) else "<end>")
        out.print(Text(f"    expected {clip(show(str(expected)), 100)}"))
        out.print(Text(f"    got      {clip(show(str(got)), 100)}"))
    if report.ok:
        out.print("[bold green]verify passed[/]" + (" (mismatches explained by accepted losses)"
                                                     if any(c.mismatches for c in report.checks) else ""))
    else:
        out.print(f"[bold red]verify failed[/]: {report.unexplained} unexplained mismatch(es)"
                  + ("" if report.accepted else "; losses were not accepted (--allow-lossy)"))
