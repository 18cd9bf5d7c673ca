"""`mtok tables show FORM` and `mtok tables diff A.mtok B.mtok`: the per-code-point normalization
tables (spec section 6), as this Python builds them or as two files carry them."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..dump.sanitize import show as esc
from ..errors import InputError

app = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  help="Show or compare Unicode normalization tables.")


def _codepoint(text: str) -> int:
    t = text.upper().removeprefix("U+").removeprefix("0X")
    try:
        cp = int(t, 16)
    except ValueError:
        raise InputError(f"--codepoint {text!r}: expected U+XXXX") from None
    if not 0 <= cp <= 0x10FFFF:
        raise InputError(f"--codepoint {text!r}: beyond U+10FFFF")
    return cp


@app.command("show")
def show(
    form: Annotated[str, typer.Argument(help="nfc, nfkc, nfd or nfkd.")],
    codepoint: Annotated[Optional[str], typer.Option(help="Only this code point, e.g. U+212B.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Every entry as JSON.")] = False,
):
    """Print the table built by walking U+0000..U+10FFFF (Unicode 9.0.0, HF tokenizers' version)."""
    from ..unicode import ucd
    from ..unicode.tables import FORMS, table
    from .console import out
    from .progress import table_progress

    name = form.upper()
    if name not in FORMS:
        raise InputError(f"unknown form {form!r}: choose one of {', '.join(f.lower() for f in FORMS)}")
    with table_progress() as progress:
        entries = table(name, progress=progress)
    if codepoint is not None:
        cp = _codepoint(codepoint)
        entries = tuple(e for e in entries if e[0] == cp)
    if as_json:
        out.print_json(json.dumps({"form": name.lower(), "unicode_version": ucd.VERSION,
                                   "entries": [{"codepoint": cp, "to": to} for cp, to in entries]},
                                  ensure_ascii=False))
        return
    out.print(f"{name} table, Unicode {ucd.VERSION} ({ucd.data_version()}): {len(entries):,} entries", markup=False)
    for cp, to in entries:
        out.print(f"U+{cp:04X}\t{esc(chr(cp))}\t-> {esc(to)}\t({' '.join(f'U+{ord(c):04X}' for c in to)})",
                  markup=False)


def file_tables(path: Path) -> list[tuple[str, dict[int, str]]]:
    """(where, {codepoint: replacement}) for every table in a .mtok, in file order."""
    from ..mtok import read_mtok

    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    tok, _ = read_mtok(data, str(path))
    found = []

    def walk(n, where):
        if n is None:
            return
        for i, child in enumerate(getattr(n, "normalizers", ())):
            walk(child, f"{where}.normalizers[{i}]")
        for attr in ("entries", "nfd_table"):
            t = getattr(n, attr, None)
            if t is not None:
                found.append((f"{where} {n.kind}.{attr}", dict(t)))

    walk(tok.normalizer, "normalizer")
    return found


@app.command("diff")
def diff(
    a: Annotated[Path, typer.Argument(help="First .mtok.")],
    b: Annotated[Path, typer.Argument(help="Second .mtok.")],
    as_json: Annotated[bool, typer.Option("--json", help="Differences as JSON.")] = False,
    limit: Annotated[int, typer.Option(help="Entries listed per table (all with --json).")] = 20,
):
    """Which normalization-table entries differ between two files (exit 1 if any)."""
    from .console import out

    ta, tb = file_tables(a), file_tables(b)
    result = []
    for i in range(max(len(ta), len(tb))):
        wa, da = ta[i] if i < len(ta) else ("(none)", {})
        wb, db = tb[i] if i < len(tb) else ("(none)", {})
        changes = [{"codepoint": cp, "a": da.get(cp), "b": db.get(cp)}
                   for cp in sorted(da.keys() | db.keys()) if da.get(cp) != db.get(cp)]
        result.append({"a": wa, "b": wb, "a_entries": len(da), "b_entries": len(db), "changes": changes})
    if as_json:
        out.print_json(json.dumps({"tables": result}, ensure_ascii=False))
    else:
        if not result:
            out.print("neither file has a normalization table", markup=False)
        for r in result:
            out.print(f"{r['a']} ({r['a_entries']:,}) vs {r['b']} ({r['b_entries']:,}): "
                      f"{len(r['changes']):,} differing entries", markup=False)
            for c in r["changes"][:limit]:
                show_side = lambda v: "-" if v is None else esc(v)  # noqa: E731
                out.print(f"  U+{c['codepoint']:04X}  {show_side(c['a'])}  |  {show_side(c['b'])}", markup=False)
            if len(r["changes"]) > limit:
                out.print(f"  … +{len(r['changes']) - limit} more (--limit, --json)", markup=False)
    if any(r["changes"] for r in result):
        raise typer.Exit(1)
