"""`mtok-export --path DIR`: export a model directory to `tokenizer.mtok` (and verify it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer


def export(
    path: Annotated[Path, typer.Option("--path", "-p", help="Model directory or any tokenizer file in it, "
                                       "recognized by content: tokenizer.json, SentencePiece, tiktoken, vocab.json/"
                                       "encoder.json + merges, vocab.txt, tekken.json, GGUF, CLIP .gz, legacy .txt.")],
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Output directory [default: --path].")] = None,
    target: Annotated[str, typer.Option(help="Runtime the .mtok is for: mnn-3.6, mnn-3.5 or mnn-head.")] = "mnn-3.6",
    fmt: Annotated[str, typer.Option("--format", help="mtok (MNN >= 3.5) or txt (legacy tokenizer.txt, types 0-3, "
                                     "for MNN <= 3.4; the type follows the model family).")] = "mtok",
    allow_lossy: Annotated[bool, typer.Option("--allow-lossy", help="Write even if the target cannot do "
                                              "everything the source does; every loss is listed.")] = False,
    bos: Annotated[str, typer.Option(help="BOS policy when the chat template renders BOS itself: "
                                     "auto (template only), prefix (header prefix too), none.")] = "auto",
    chat_template: Annotated[Optional[str], typer.Option("--chat-template", help="Named template or a "
                                                         "template file to embed [default: the default one].")] = None,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="Skip verification against the MNN runtime.")] = False,
    corpus: Annotated[Optional[Path], typer.Option(help="Extra verification strings, JSONL.")] = None,
    runtime_python: Annotated[Optional[Path], typer.Option("--runtime-python", help="Python interpreter "
                                                           "with the MNN runtime to verify with.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON report instead of the summary.")] = False,
    pattern: Annotated[Optional[str], typer.Option("--pattern", help="Split regex of a tiktoken rank file "
                                                   "[default: from configs beside it or the known-vocabulary table].")] = None,
    special: Annotated[Optional[str], typer.Option("--special", help="Special tokens of a tiktoken rank file: JSON "
                                                   "{token: id} or [tokens] (ids follow the ranks), inline or a file; {} for none.")] = None,
    family: Annotated[Optional[str], typer.Option("--family", help="vocab.json + merges.txt post-processing when "
                                                  "tokenizer_config.json has no known tokenizer_class: gpt2, roberta, whisper.")] = None,
    input_file: Annotated[Optional[Path], typer.Option("--input", help="The file in --path to read when it holds "
                                                       "several (the choice made is shown as a note).")] = None,
):
    """Export a model directory to MNN's .mtok, then verify it with the real MNN runtime.

    Exit codes: 0 written (and verified), 1 verification mismatch (the file stays written),
    2 bad input, 3 the target would lose information and --allow-lossy was not given."""
    from ..errors import InputError, LossError
    from ..export import export as run
    from ..lower import BOS_POLICIES, TARGETS
    from .console import out

    if fmt not in ("mtok", "txt"):
        raise InputError(f"--format {fmt!r}: choose mtok or txt")
    if target not in TARGETS:
        raise InputError(f"--target {target!r}: choose one of {', '.join(TARGETS)}")
    if bos not in BOS_POLICIES:
        raise InputError(f"--bos {bos!r}: choose one of {', '.join(BOS_POLICIES)}")
    from .progress import table_progress

    if special is not None:
        from ..readers.tiktoken import parse_special_arg
        special = parse_special_arg(special)
    try:
        with table_progress() as progress:
            from ..formats import resolve_input
            result = run(resolve_input(path, input_file), output or (path if path.is_dir() else None), target=target, allow_lossy=allow_lossy, bos=bos,
                         chat_template=chat_template, progress=progress, pattern=pattern, special=special,
                         family=family, fmt=fmt)
    except LossError as e:
        if as_json:
            out.print_json(json.dumps({"ok": False, "error": str(e), "passes": e.applied,
                                       "losses": [_loss(x) for x in e.losses]}, ensure_ascii=False))
            raise typer.Exit(e.exit_code)
        e.hint = "rerun with --allow-lossy to write the file anyway (each loss is then reported)"
        raise
    if not as_json:
        print_summary(result)
    verified = None
    if not no_verify:
        from ..verify.reference import reference_for
        from .cmd_verify import report_json, run_verify

        source_dir = path if path.is_dir() else path.parent
        verified = run_verify(result.path, source_dir, result.lowered, result.lowering, corpus=corpus,
                              python=runtime_python, accepted=allow_lossy, quiet=as_json,
                              reference=reference_for(result.source))
    if as_json:
        data = report(result)
        data["verify"] = report_json(verified) if verified else None
        out.print_json(json.dumps(data, ensure_ascii=False))
    if verified is not None and not verified.ok:
        raise typer.Exit(1)


def _loss(x) -> dict:
    return {"component": x.component, "json_path": x.json_path, "reason": x.reason, "example": x.example}


def report(r) -> dict:
    from ..dump.jsonify import component, id_to_token

    low = r.lowered
    names = id_to_token(low)
    return {
        "ok": True,
        "output": str(r.path),
        "size": r.size,
        "seconds": round(r.seconds, 3),
        "target": r.lowering.target,
        "model": {"type": low.model.kind, "vocab_size": len(names)},
        "components": {k: component(getattr(low, k)) for k in
                       ("normalizer", "pre_tokenizer", "decoder", "post_processor")},
        "special": [{"id": i, "text": names.get(i)} for i in low.special_ids],
        "stop": [{"id": i, "text": names.get(i), "source": src} for i, src in r.source.meta.stop_sources],
        "prefix": [{"id": i, "text": names.get(i)} for i in low.prefix_ids],
        "chat_template": {"source": r.source.chat.source, "name": r.source.chat.name,
                          "chars": len(low.chat.text)},
        "passes": r.lowering.applied,
        "losses": [_loss(x) for x in r.lowering.losses],
        "notes": list(r.source.meta.notes) + r.lowering.notes,
        "inputs": [{"path": f.path, "sha256": f.sha256} for f in r.source.provenance.inputs],
        "unicode_version": r.source.provenance.unicode_version,
    }


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
    out.print(f"[bold green]wrote[/] {escape(str(r.path))} ({size(r.size)}, {r.seconds:.2f} s, target {r.lowering.target})")
    out.print(t)
    if r.lowering.losses:
        out.print(f"[bold yellow]{len(r.lowering.losses)} loss(es) accepted with --allow-lossy:[/]")
        for x in r.lowering.losses:
            out.print(f"  - {show(str(x))}", markup=False)
