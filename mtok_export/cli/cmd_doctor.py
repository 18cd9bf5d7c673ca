"""`mtok doctor PATH [--against SRC] [--fix]`: what is wrong with a tokenizer already deployed (a
`.mtok`, a legacy `tokenizer.txt`, or an MNN model folder), how much it matters, why, and the one
command that repairs it.  Exit 0 healthy, 1 wrong (or static defects without a source), 2 bad
input, 3 a repair the loss policy refuses."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..dump.sanitize import clip, show
from ..errors import InputError, MtokError
from ..options import BY_KEY, check
from .cmd_inspect import print_surface
from .gate import JunitFile, ReportFile, verify_progress, write_file


def doctor(
    path: Annotated[Path, typer.Argument(help="The deployed tokenizer: a .mtok, a legacy tokenizer.txt, or an MNN "
                                         "model folder (config.json / llm_config.json: the tokenizer file it names, "
                                         "rendered through its jinja block as the engine does).")],
    against: Annotated[Optional[str], typer.Option("--against", help="The source it should tokenize like: a model "
                                                   "directory or file, or a Hub id org/name[@revision]. Without it "
                                                   "only the static checks run.")] = None,
    fix: Annotated[bool, typer.Option("--fix", help="With --against: write a verified file in its place (the "
                                      "old one kept beside it as NAME.orig), and patch llm_config.json's jinja "
                                      "block to the source's template and EOS.")] = False,
    accept: Annotated[Optional[list[str]], typer.Option("--accept", help="With --fix: loss codes to accept in the "
                                                        "repaired file (repeat or comma-separate), as mtok-export's "
                                                        "--accept.")] = None,
    regex_form: Annotated[Optional[str], typer.Option("--regex-form", help="The form of the split regex in the "
                                                      "file this tool writes, as mtok-export's --regex-form "
                                                      "[default: bounded, which never crashes the "
                                                      "runtime].")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the diagnosis as JSON.")] = False,
    runtime_python: Annotated[Optional[Path], typer.Option("--runtime-python", help="Interpreter with the MNN "
                                                           "runtime [default: this one].")] = None,
    no_robust: Annotated[bool, typer.Option("--no-robust", help="Skip the long-input (crash) phase.")] = False,
    report_file: ReportFile = None,
    junit_file: JunitFile = None,
):
    """Diagnose a deployed tokenizer: healthy, wrong on everyday text, wrong on edge inputs, or crashes
    on long input; each defect with its cause and its measured effect, and the command that repairs it.

    Without --against: the strict reader, the runtime it needs, the chat template's lint, stop ids
    and BOS handling.  With --against: the file this tool would write for the source, diffed layer
    by layer, and the deployed file run on the MNN runtime against the source's reference."""
    from ..doctor import diagnose
    from .console import out

    started = time.perf_counter()
    if fix and against is None:
        raise InputError("--fix needs --against SOURCE: the repaired file is made from the source")
    if regex_form is not None:  # the export's own check and message (`options.TABLE`)
        check(BY_KEY["regex_form"], regex_form)
    diagnosis = error = None
    try:
        with _progress(as_json) as step:
            diagnosis = diagnose(path, against, python=runtime_python, robust=None if no_robust else 1.0,
                                 regex_form=regex_form, progress=step)
        repaired = None
        if fix and diagnosis.repair:  # a healthy file is left as it is
            from ..doctor.repair import repair

            with _progress(as_json) as step:
                repaired = repair(diagnosis, python=runtime_python, accept=tuple(accept or ()), progress=step)
    except MtokError as e:
        error = e
        _outcomes(report_file, junit_file, path, started, diagnosis, error)
        raise
    code = diagnosis.exit_code if repaired is None else 0
    _outcomes(report_file, junit_file, path, started, diagnosis, None, repaired)
    if as_json:
        doc = diagnosis.to_json() | ({"fixed": repaired} if fix else {})
        out.print_json(json.dumps(doc, ensure_ascii=False, default=str))
    else:
        _print(diagnosis, repaired, fix)
    raise typer.Exit(code)


def _outcomes(report_file, junit_file, path, started, diagnosis, error, repaired=None):
    from ..reports import junit_findings

    seconds = time.perf_counter() - started
    doc = (diagnosis.to_json() if diagnosis is not None else {"path": str(path)}) | (
        {"fixed": repaired} if repaired is not None else {})
    code = error.exit_code if error is not None else 0 if repaired is not None else diagnosis.exit_code
    doc |= {"command": "mtok doctor", "exit_code": code, "error": str(error) if error is not None else None}
    if report_file is not None:
        write_file(report_file, json.dumps(doc, ensure_ascii=False, indent=1, default=str) + "\n")
    if junit_file is not None:
        write_file(junit_file, junit_findings("mtok doctor", str(path), code, seconds=seconds,
                                              findings=doc.get("findings", []), error=error,
                                              report=diagnosis.report if diagnosis is not None else None))


def _progress(as_json: bool):
    return verify_progress(as_json)


_STYLE = {"ok": "green", "info": "", "note": "dim", "warning": "yellow", "wrong": "bold red"}
_MARK = {"ok": "ok", "info": "--", "note": "~~", "warning": "!!", "wrong": "XX"}


def _print(d, repaired, fix: bool):
    from rich.text import Text

    from .console import out

    head = f"{d.path}" + (f" (the engine loads {d.file.name})" if d.file != d.path else "")
    out.print(Text(head + (f" against {d.source}" if d.source else ""), style="bold"))
    if d.identical:
        out.print(Text("  byte for byte the file this tool writes for the source"))
    for f in d.findings:
        line = Text(f"  {_MARK[f.level]} {f.what:14} ", style=_STYLE[f.level])
        line.append(clip(show(f.cause), 400))
        out.print(line)
        if f.effect:
            out.print(Text(f"     {'':14} measured: {f.effect}"))
        if f.example:
            e = f.example
            out.print(Text(f"     {'':14} e.g. [{e['check']}] {clip(e['text'], 60)}: expected {clip(e['expected'], 60)}, "
                           f"got {clip(e['got'], 60)}", style="dim"))
    print_surface(d.surface)
    m = d.measured
    if m.get("robustness"):
        out.print(Text(f"  robustness: {clip(m['robustness'], 200)}", style="bold red" if m.get("crash") else "dim"))
    if m.get("totals"):
        t = m["totals"]
        out.print(Text(f"  ran {t['everyday']} everyday and {t['edge']} edge strings, {t['chats']} chats, "
                       f"{t['tokens']:,} vocabulary tokens on the runtime", style="dim"))
    style = "bold green" if d.verdict == "healthy" else "bold red"
    out.print(Text(f"verdict: {d.verdict}", style=style) + Text(f"  ({d.seconds:.1f} s)"))
    if repaired is not None:
        out.print(Text(f"fixed: {repaired['written']} written and verified; the old file kept as {repaired['kept']}"
                       + (f"; llm_config.json's jinja block patched (old one kept as {repaired['llm_config_kept']})"
                          if repaired.get("llm_config_kept") else ""), style="bold green"))
    elif d.repair and not fix:
        out.print(Text(f"repair: {d.repair}"))
    elif fix:
        out.print(Text("nothing to fix: the file is left as it is"))

