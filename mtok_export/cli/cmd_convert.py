"""`mtok convert SRC OUT --to mtok|txt|hf`: any supported input to any output, without verification
(run `mtok verify` on the result, or use `mtok-export`, which verifies)."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..options import command


@command("convert", ("src", "out", "to", "target", "allow_lossy", "chat_template", "pattern", "special", "force",
                     "as_json"))
def convert(
    src: Annotated[Path, typer.Argument(help="Any input: a model directory (tokenizer.json, SentencePiece "
                                        ".model, tiktoken ranks, vocab.json + merges.txt, vocab.txt), a .mtok "
                                        "or a legacy tokenizer.txt; the format is detected from content.")],
    out: Annotated[Path, typer.Argument(help="Output file (mtok, txt) or directory (hf; or a directory for "
                                        "mtok/txt, which gets tokenizer.mtok / tokenizer.txt).")],
    to: Annotated[str, typer.Option(help="mtok, txt (legacy, type from the model family) or hf "
                                    "(tokenizer.json + configs).")] = "mtok",
    force: Annotated[bool, typer.Option("--force", help="Replace an existing output file.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON outcome ({exit_code, paths, size, losses, "
                                          "passes}, or the error and its hint) instead of the lines.")] = False,
    options=None,
):
    """Convert between tokenizer formats (exit 3 when something would be lost without --allow-lossy)."""
    import json

    from ..api import convert as run
    from ..errors import LossError, MtokError
    from ..policy import loss_json, refusal_hint
    from ..reports import command_json
    from .console import out as console
    from ..job import Job

    try:
        job = Job.build(src, fmt="txt" if to == "txt" else "mtok", verify_on_runtime=False, **options())
        result = run(job, out, to=to, force=force)
    except MtokError as e:
        if isinstance(e, LossError):  # the API's hint names its arguments; ours, the options
            e.hint = refusal_hint(e.decisions, job.target)
        if not as_json:
            raise
        decisions = e.decisions if isinstance(e, LossError) else []
        console.print_json(json.dumps(command_json(
            "mtok convert", e.exit_code, error=e, hint=e.hint, paths=[], size=0,
            losses=[loss_json(x) for d in decisions for x in d.losses],
            refused=[d.code for d in decisions if not d.accepted], passes={}), ensure_ascii=False))
        raise typer.Exit(e.exit_code)
    if as_json:
        console.print_json(json.dumps(command_json(
            "mtok convert", 0, paths=[str(p) for p in result.paths], size=result.size,
            losses=[loss_json(x) for x in result.losses], refused=[], passes=result.passes), ensure_ascii=False))
        return
    if to == "hf":
        for path in result.paths:
            console.print(f"wrote {path}", markup=False)
        return
    console.print(f"wrote {result.paths[0]} ({result.size:,} bytes)", markup=False)
    for name, details in result.passes.items():
        for d in details:
            console.print(f"  pass {name}: {d}", markup=False)
    for loss in result.losses:
        console.print(f"  loss [{loss.code}] {loss}", markup=False)
