"""`mtok losses`: the loss registry, i.e. every code `--accept` takes and what verify does with it."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

import json
from typing import Annotated

import typer


def losses(as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False):
    """List every loss code: layer, declared severity, how verify reproduces it (projection) or, without
    a projection, that it explains only differences inside its trigger's spans."""
    from rich.table import Column, Table

    from ..losses import KINDS
    from .console import out

    rows = [{"code": k.code, "layer": k.layer, "severity": k.severity.value, "projection": k.projection,
             "summary": k.summary} for k in KINDS.values()]
    if as_json:
        out.print_json(json.dumps(rows, ensure_ascii=False))
        return
    t = Table(Column("code", no_wrap=True), Column("layer", no_wrap=True), "severity",
              Column("projection", no_wrap=True), "what the runtime does differently", box=None, padding=(0, 1))
    for r in rows:
        t.add_row(r["code"], r["layer"], r["severity"], r["projection"] or "- (trigger span)", r["summary"])
    out.print(t)
