"""`mtok-export --path DIR`: export a model directory to `tokenizer.mtok` (and verify it)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from .gate import (Accept, AcceptFile, AllowLossy, JunitFile, ReportFile, Strict, print_decisions, print_report,
                   verify_progress, write_outcomes)


def export(
    path: Annotated[Path, typer.Option("--path", "-p", help="Model directory or any tokenizer file in it, "
                                       "recognized by content: tokenizer.json, SentencePiece, tiktoken, vocab.json/"
                                       "encoder.json + merges, vocab.txt, tekken.json, GGUF, CLIP .gz, legacy .txt.")],
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Output directory [default: --path].")] = None,
    target: Annotated[str, typer.Option(help="Runtime the .mtok is for: mnn-3.6, mnn-3.5 or mnn-head.")] = "mnn-3.6",
    fmt: Annotated[str, typer.Option("--format", help="mtok (MNN >= 3.5) or txt (legacy tokenizer.txt, types 0-3, "
                                     "for MNN <= 3.4; the type follows the model family).")] = "mtok",
    accept: Accept = None,
    accept_file: AcceptFile = None,
    allow_lossy: AllowLossy = False,
    strict: Strict = False,
    bos: Annotated[str, typer.Option(help="BOS policy when the chat template renders BOS itself: "
                                     "auto (template only), prefix (header prefix too), none.")] = "auto",
    chat_template: Annotated[Optional[str], typer.Option("--chat-template", help="Named template or a "
                                                         "template file to embed [default: the default one].")] = None,
    header_specials: Annotated[str, typer.Option("--header-specials", help="needed: only special tokens with a "
                                                 "role (BOS, EOS, stop, prefix, the chat template's) in the header "
                                                 "list that the runtime scans at every byte (the others are still "
                                                 "split out); all: every special token (slower encode).")] = "needed",
    normalizer_form: Annotated[str, typer.Option("--normalizer-form", help="NFC/NFKC/SentencePiece charsmap "
                                                 "normalizers as compose: one literal Replace per changed code point "
                                                 "and per canonical pair (closest to HF; on MNN 3.6.1 an NFC "
                                                 "tokenizer encodes about 1.3x slower than with no-compose); "
                                                 "no-compose: the code-point rules only (decomposed input stays "
                                                 "decomposed); table: MNN's own code-point table (as fast as "
                                                 "no-compose for NFC; controls and zero-width characters become "
                                                 "spaces).")] = "compose",
    keep_llm_config: Annotated[bool, typer.Option("--keep-llm-config", help="In an MNN model folder, leave "
                                                  "llm_config.json's jinja block as it is (the engine then uses that "
                                                  "template and EOS, and verification renders through it) "
                                                  "[default: update it to what the file embeds].")] = False,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="Skip verification against the MNN runtime "
                                            "(loss severities are then the declared ones).")] = False,
    corpus: Annotated[Optional[Path], typer.Option(help="Extra verification strings, JSONL.")] = None,
    runtime_python: Annotated[Optional[Path], typer.Option("--runtime-python", help="Python interpreter "
                                                           "with the MNN runtime to verify with.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON outcome instead of the summary.")] = False,
    report_file: ReportFile = None,
    junit_file: JunitFile = None,
    pattern: Annotated[Optional[str], typer.Option("--pattern", help="Split regex of a tiktoken rank file "
                                                   "[default: from configs beside it or the known-vocabulary table].")] = None,
    special: Annotated[Optional[str], typer.Option("--special", help="Special tokens of a tiktoken rank file: JSON "
                                                   "{token: id} or [tokens] (ids follow the ranks), inline or a file; {} for none.")] = None,
    family: Annotated[Optional[str], typer.Option("--family", help="vocab.json + merges.txt post-processing when "
                                                  "tokenizer_config.json has no known tokenizer_class: gpt2, roberta, whisper.")] = None,
    input_file: Annotated[Optional[Path], typer.Option("--input", help="The file in --path to read when it holds "
                                                       "several (the choice made is shown as a note).")] = None,
):
    """Export a model directory to MNN's .mtok, verify it with the real MNN runtime, and only then
    replace the output (a file that fails is kept as OUTPUT.rejected) and write OUTPUT.json, the manifest.

    Each loss gets a severity, measured on the corpus (or declared, with --no-verify): edge losses are
    warnings, the others need --accept CODE, --accept-file or --allow-lossy.

    Exit codes: 0 written and verified, 1 a mismatch no recorded loss reproduces, 2 bad input or
    output location, 3 a loss the policy refuses."""
    from ..errors import InputError, LossError, MtokError, VerificationError
    from ..export import VerifyOptions
    from ..export import export as run
    from ..lower import BOS_POLICIES, HEADER_SPECIALS, NORMALIZER_FORMS, TARGETS
    from ..policy import Policy
    from ..reports import outcome_json
    from .console import err, out
    from .progress import table_progress

    started = time.perf_counter()
    result = decisions = error = hint = None
    code = 0
    try:
        if fmt not in ("mtok", "txt"):
            raise InputError(f"--format {fmt!r}: choose mtok or txt")
        if target not in TARGETS:
            raise InputError(f"--target {target!r}: choose one of {', '.join(TARGETS)}")
        if bos not in BOS_POLICIES:
            raise InputError(f"--bos {bos!r}: choose one of {', '.join(BOS_POLICIES)}")
        if header_specials not in HEADER_SPECIALS:
            raise InputError(f"--header-specials {header_specials!r}: choose one of {', '.join(HEADER_SPECIALS)}")
        if normalizer_form not in NORMALIZER_FORMS:
            raise InputError(f"--normalizer-form {normalizer_form!r}: choose one of {', '.join(NORMALIZER_FORMS)}")
        policy = Policy.from_options(accept, accept_file, allow_lossy, strict)
        if special is not None:
            from ..readers.tiktoken import parse_special_arg
            special = parse_special_arg(special)
        with table_progress() as progress, verify_progress(as_json or no_verify) as step:
            options = None if no_verify else VerifyOptions(corpus, runtime_python, step)
            try:
                from ..formats import resolve_input
                result = run(resolve_input(path, input_file), output or (path if path.is_dir() else None),
                             target=target, policy=policy, bos=bos, chat_template=chat_template,
                             progress=progress, pattern=pattern, special=special, family=family, fmt=fmt,
                             verify=options, keep_llm_config=keep_llm_config, header_specials=header_specials,
                             normalizer_form=normalizer_form)
            except (LossError, VerificationError) as e:
                result = e.result
                raise
        decisions = result.decisions
    except MtokError as e:
        error, code, hint = e, e.exit_code, getattr(e, "hint", None)
        decisions = result.decisions if result else None
        if result is None or not isinstance(e, (LossError, VerificationError)):
            write_outcomes("mtok-export", code, report_file, junit_file, subject=_subject(path, output, result),
                           started=started, error=e, result=result, hint=hint, decisions=decisions)
            if as_json:
                out.print_json(json.dumps(outcome_json("mtok-export", code, error=e, hint=hint), default=str))
                raise typer.Exit(code)
            raise
    report = result.verify if result else None
    write_outcomes("mtok-export", code, report_file, junit_file, subject=_subject(path, output, result),
                   started=started, error=error, result=result, report=report, decisions=decisions, hint=hint)
    if as_json:
        out.print_json(json.dumps(outcome_json("mtok-export", code, error=error, result=result, report=report,
                                               decisions=decisions, hint=hint), ensure_ascii=False, default=str))
        raise typer.Exit(code)
    if not out.quiet:  # --quiet: nothing to print (and the tables would load rich for nothing)
        print_summary(result)
        if report is not None:
            print_report(report)
        print_decisions(decisions)
    if error is not None:
        raise error
    edge = [d.code for d in decisions if d.accepted_by == "edge"]
    if edge:
        err.print(f"[yellow]warning:[/] edge losses accepted by default: {', '.join(edge)} (--strict refuses them)")


def _subject(path: Path, output: Path | None, result) -> str:
    """The model and the output, as the JUnit suite names them (the output planned when the export
    stopped before choosing it)."""
    return f"{path} -> {result.path if result is not None else output or path}"


def print_summary(r):
    from rich.table import Table
    from rich.text import Text

    from ..dump.jsonify import id_to_token
    from ..dump.render import one_line, size, tokens
    from ..dump.sanitize import show
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
    row("chat template", f"{chat.source} ({chat.name}, {len(low.chat.text):,} chars)" if low.chat.text else "none")
    for detail in r.lowering.applied.get("legacy-type", ()):
        row("legacy type", detail)
    if r.lowering.applied:
        row("passes", ", ".join(r.lowering.applied))
    for note in list(r.source.meta.notes) + r.lowering.notes:
        row("note", note)
    verb = "[bold green]wrote[/]" if r.written else "[bold red]rejected[/]" if r.rejected else "[bold red]not written[/]"
    out.print(f"{verb} {escape(str(r.path))} ({size(r.size)}, {r.seconds:.2f} s, target {r.lowering.target})")
    out.print(t)
    if r.rejected:
        out.print(Text(f"the file failed and was kept as {r.rejected}; the output was not replaced", style="bold red"))
