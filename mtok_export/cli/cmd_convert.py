"""`mtok convert SRC OUT --to mtok|txt|hf`: any supported input to any output, without verification
(run `mtok verify` on the result, or use `mtok-export`, which verifies)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer


def convert(
    src: Annotated[Path, typer.Argument(help="Any input: a model directory (tokenizer.json, SentencePiece "
                                        ".model, tiktoken ranks, vocab.json + merges.txt, vocab.txt), a .mtok "
                                        "or a legacy tokenizer.txt; the format is detected from content.")],
    out: Annotated[Path, typer.Argument(help="Output file (mtok, txt) or directory (hf; or a directory for "
                                        "mtok/txt, which gets tokenizer.mtok / tokenizer.txt).")],
    to: Annotated[str, typer.Option(help="mtok, txt (legacy, type from the model family) or hf "
                                    "(tokenizer.json + configs).")] = "mtok",
    target: Annotated[str, typer.Option(help="For --to mtok: mnn-3.6, mnn-3.5 or mnn-head.")] = "mnn-3.6",
    allow_lossy: Annotated[bool, typer.Option("--allow-lossy", help="Write even if something is lost; "
                                              "each loss is listed.")] = False,
    chat_template: Annotated[Optional[str], typer.Option("--chat-template", help="Named template or file.")] = None,
    pattern: Annotated[Optional[str], typer.Option(help="Split regex for tiktoken rank files.")] = None,
    special: Annotated[Optional[str], typer.Option(help="Special tokens for tiktoken rank files (JSON).")] = None,
):
    """Convert between tokenizer formats (exit 3 when something would be lost without --allow-lossy)."""
    from ..errors import InputError
    from ..export import FORMATS, atomic_write, build, read_source
    from ..lower import TARGETS
    from .console import out as console

    if to not in ("mtok", "txt", "hf"):
        raise InputError(f"--to {to!r}: choose mtok, txt or hf")
    if target not in TARGETS:
        raise InputError(f"--target {target!r}: choose one of {', '.join(TARGETS)}")
    if special is not None:
        from ..readers.tiktoken import parse_special_arg
        special = parse_special_arg(special)
    tok = read_source(src, chat_template, pattern=pattern, special=special)
    if to == "hf":
        from ..writers.hf_json import write_hf_dir

        for path in write_hf_dir(tok, out):
            console.print(f"wrote {path}", markup=False)
        return
    from ..errors import LossError
    from ..policy import Policy, decide

    data, _, lw = build(tok, to, target=target)
    decisions = decide(lw.losses, Policy(allow_lossy=allow_lossy))  # declared severities: convert does not verify
    if any(not d.accepted for d in decisions):
        raise LossError(decisions)
    path = out / FORMATS[to] if out.is_dir() else out
    atomic_write(path, data)
    console.print(f"wrote {path} ({len(data):,} bytes)", markup=False)
    for name, details in lw.applied.items():
        for d in details:
            console.print(f"  pass {name}: {d}", markup=False)
    for loss in lw.losses:
        console.print(f"  loss {loss}", markup=False)
