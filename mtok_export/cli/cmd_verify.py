"""`mtok verify FILE`: the real MNN runtime against the source's reference, with the export's policy.

The manifest beside the file (`FILE.json`, written by `mtok-export`) supplies the source, the target,
the BOS policy, the reader options and the accepted losses; the options below override it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..reports import outcome_json
from .console import out
from .gate import (Accept, AcceptFile, AllowLossy, JunitFile, ReportFile, Strict, print_decisions, print_report,
                   verify_progress, write_outcomes)


def verify(
    file: Annotated[Path, typer.Argument(help="The written .mtok (or legacy tokenizer.txt).")],
    against: Annotated[Optional[Path], typer.Option("--against", help="Source model directory or file "
                                                    "[default: the manifest's source].")] = None,
    target: Annotated[Optional[str], typer.Option(help="Target the file was exported for [default: the "
                                                  "manifest's, else mnn-3.6].")] = None,
    bos: Annotated[Optional[str], typer.Option(help="BOS policy the file was exported with [default: the "
                                               "manifest's, else auto].")] = None,
    corpus: Annotated[Optional[Path], typer.Option(help="Extra strings, JSONL (a string or {text} per line).")] = None,
    accept: Accept = None,
    accept_file: AcceptFile = None,
    allow_lossy: AllowLossy = False,
    strict: Strict = False,
    runtime_python: Annotated[Optional[Path], typer.Option("--runtime-python", help="Python interpreter "
                                                           "with the MNN runtime to test.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON outcome instead of the tables.")] = False,
    report_file: ReportFile = None,
    junit_file: JunitFile = None,
):
    """Check that the MNN runtime tokenizes the file like the source's reference.

    The file's own structure is checked first (exit 2 with the byte offset when it is malformed).
    Exit 0 when every mismatch is reproduced by a loss the policy accepts (the manifest's policy
    unless options are given), 1 when a mismatch is not reproduced, 3 when a loss is refused."""
    from ..errors import InputError, LossError, MtokError, VerificationError
    from ..policy import Policy

    decisions = report = error = None
    code = 0
    try:
        manifest, source, low, lw, read_opts = _prepare(file, against, target, bos)
        given = accept or accept_file or allow_lossy or strict
        policy = Policy.from_options(accept, accept_file, allow_lossy, strict) if given or manifest is None \
            else Policy.from_json(manifest.get("policy", {}))
        with verify_progress(as_json) as step:
            report, decisions = run_verify(file, source, low, lw, policy, corpus=corpus, python=runtime_python,
                                           progress=step, source_path=read_opts["path"])
        if not report.ok:
            raise VerificationError(_Result(report))
        if any(not d.accepted for d in decisions):
            raise LossError(decisions)
    except MtokError as e:
        error, code = e, e.exit_code
        if report is None and not as_json:
            write_outcomes("mtok verify", code, report_file, junit_file, error=e, hint=getattr(e, "hint", None))
            raise
        if isinstance(e, InputError) and report is None:
            pass
    write_outcomes("mtok verify", code, report_file, junit_file, error=error, report=report, decisions=decisions,
                   hint=getattr(error, "hint", None))
    if as_json:
        out.print_json(json.dumps(outcome_json("mtok verify", code, error=error, report=report, decisions=decisions,
                                               hint=getattr(error, "hint", None)), ensure_ascii=False, default=str))
        raise typer.Exit(code)
    print_report(report)
    print_decisions(decisions)
    if error is not None:
        raise error


class _Result:  # what VerificationError needs of an export result
    def __init__(self, report):
        self.verify, self.rejected = report, None


def _prepare(file: Path, against, target, bos):
    """The manifest (or None), the source IR and its honest lowering, after the file's own checks."""
    from ..errors import InputError
    from ..export import read_source
    from ..lower import BOS_POLICIES, TARGETS, lower
    from ..manifest import read_manifest

    file = Path(file)
    if not file.is_file():
        raise InputError(f"{file}: no such file")
    _check_file(file)
    manifest = read_manifest(file)
    m = manifest or {}
    opts = dict(m.get("read_options") or {})
    source = against or (Path(m["source"]) if m.get("source") else None)
    if source is None:
        raise InputError(f"{file}: no manifest beside it ({file.name}.json); pass --against SOURCE")
    target = target or m.get("target") or "mnn-3.6"
    bos = bos or m.get("bos_policy") or "auto"
    if target not in (*TARGETS, "mnn-legacy"):
        raise InputError(f"--target {target!r}: choose one of {', '.join(TARGETS)}")
    if bos not in BOS_POLICIES:
        raise InputError(f"--bos {bos!r}: choose one of {', '.join(BOS_POLICIES)}")
    tok = read_source(source, opts.get("chat_template"), pattern=opts.get("pattern"), special=opts.get("special"),
                      family=opts.get("family"))
    if target == "mnn-legacy" or file.suffix == ".txt":
        from ..export import build

        _, low, lw = build(tok, "txt", bos=bos)
    else:
        low, lw = lower(tok, target, bos, header_specials=opts.get("header_specials") or "needed")
    return manifest, tok, low, lw, {**opts, "path": Path(source)}


def _check_file(file: Path):
    """The strict reader's checks before the runtime loads the file (exit 2 with an offset)."""
    from ..mtok import read_mtok
    from ..mtok.header import read_header

    data = file.read_bytes()
    kind, _, _ = read_header(data, str(file))
    if kind == 4:
        read_mtok(data, str(file))
    else:
        from ..legacy import read_legacy

        read_legacy(data, str(file))


def run_verify(file, source, lowered, lowering, policy, *, corpus=None, python=None, progress=None,
               source_path=None):
    """-> (verify.Report, policy decisions with measured severities)."""
    from ..policy import decide
    from ..verify.check import verify
    from ..verify.corpus import builtin_chats, builtin_corpus, load_corpus_file
    from ..verify.reference import reference_for

    samples = list(builtin_corpus()) + (list(load_corpus_file(corpus)) if corpus else [])
    src = Path(source_path) if source_path is not None else None
    source_dir = src if src is None or src.is_dir() else src.parent
    report = verify(file, source, lowered, lowering, samples=samples, chats=list(builtin_chats()),
                    source_dir=source_dir, python=python, progress=progress, reference=reference_for(source))
    return report, decide(lowering.losses, policy, report.reach())
