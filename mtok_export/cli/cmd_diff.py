"""`mtok diff A B`: where two tokenizers differ, layer by layer (static, on the IR) and on a corpus
(behavioural, the first differing layer per string).  Exit 0 identical, 1 different, 2 bad input."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..compare import BEHAVIOUR_LAYERS
from ..dump import STATIC_LAYERS
from ..dump.sanitize import clip, show
from ..errors import InputError


def diff(
    a: Annotated[Path, typer.Argument(help="First tokenizer: any input export reads (directory, .mtok, .txt, .model, ...).")],
    b: Annotated[Path, typer.Argument(help="Second tokenizer.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    layer: Annotated[Optional[str], typer.Option(help="Only this layer: " + ", ".join(STATIC_LAYERS + BEHAVIOUR_LAYERS) + ".")] = None,
    limit: Annotated[int, typer.Option(help="Examples shown per layer (0: all).")] = 8,
    static: Annotated[bool, typer.Option("--static", help="Static diff only (no corpus run).")] = False,
    corpus: Annotated[Optional[Path], typer.Option(help="JSONL corpus for the behavioural diff (default: the "
                                                   "built-in verification corpus).")] = None,
    runtime: Annotated[bool, typer.Option("--runtime", help="Run .mtok inputs on the MNN runtime instead of "
                                          "HF tokenizers.")] = False,
    runtime_python: Annotated[Optional[Path], typer.Option(help="Interpreter with MNN for --runtime.")] = None,
    tolerance: Annotated[float, typer.Option(help="Unigram score changes up to this are equal.")] = 1e-6,
):
    """Compare two tokenizers: per-layer static diff with content hashes, then a behavioural diff."""
    from ..compare import behaviour as B
    from ..dump import layer_diff as L
    from ..corpus import builtin_corpus, load_corpus_file
    from ..formats import read_source

    if layer is not None and layer not in STATIC_LAYERS + BEHAVIOUR_LAYERS:
        raise InputError(f"--layer {layer!r}: choose one of {', '.join(STATIC_LAYERS + BEHAVIOUR_LAYERS)}")
    if limit < 0:
        raise InputError("--limit must be 0 (all) or more")
    samples = load_corpus_file(corpus) if corpus is not None else None
    t0 = time.perf_counter()
    tok_a, tok_b = read_source(a), read_source(b)
    t_read = time.perf_counter() - t0
    report = {"a": _side(a, tok_a), "b": _side(b, tok_b), "read_seconds": round(t_read, 3)}
    different = False
    if layer is None or layer in STATIC_LAYERS:
        t0 = time.perf_counter()
        layers = L.diff_layers(tok_a, tok_b, only=layer, score_tolerance=tolerance)
        report["static"] = {"seconds": round(time.perf_counter() - t0, 3),
                            "layers": [_layer_json(d, limit) for d in layers]}
        different |= any(not d.equal for d in layers)
    if not static and (layer is None or layer in BEHAVIOUR_LAYERS):
        t0 = time.perf_counter()
        beh = B.diff_behaviour(tok_a, tok_b, list(samples or builtin_corpus()),
                               runtime_a=_mtok(a) if runtime else None, runtime_b=_mtok(b) if runtime else None,
                               python=runtime_python)
        if layer is not None:
            beh.diffs = [d for d in beh.diffs if d.layer == layer]
        report["behaviour"] = _behaviour_json(beh, tok_a, tok_b, limit, time.perf_counter() - t0)
        different |= bool(beh.diffs)
    report["identical"] = not different
    if as_json:
        from .console import out
        out.print_json(json.dumps(report, ensure_ascii=False))
    else:
        _print(report, limit)
    raise typer.Exit(1 if different else 0)


def _mtok(path: Path) -> Path | None:
    """The `.mtok` file behind an input, for --runtime (None: not a .mtok, use the reference)."""
    p = path / "tokenizer.mtok" if path.is_dir() else path
    if p.is_file():
        with open(p, "rb") as f:
            if f.read(6) in (b"430 4\n", b"430 4\r"):
                return p
    return None


def _side(path: Path, tok) -> dict:
    from ..ir import models as M
    return {"path": str(path), "model": tok.model.kind, "vocab_size": len(M.vocab_of(tok.model)),
            "added_tokens": len(tok.added_tokens)}


def _cut(items: list, limit: int) -> list:
    return items if limit == 0 else items[:limit]


def _layer_json(d, limit: int) -> dict:
    return {"layer": d.name, "equal": d.equal, "hash_a": d.hash_a, "hash_b": d.hash_b, "note": d.note,
            "counts": d.counts, "changes_total": len(d.changes),
            "changes": [{"op": c.op, "where": c.where, "a": c.a, "b": c.b} for c in _cut(d.changes, limit)]}


def _behaviour_json(beh, tok_a, tok_b, limit: int, seconds: float) -> dict:
    from ..dump.jsonify import id_to_token

    names_a, names_b = id_to_token(tok_a), id_to_token(tok_b)

    def side(d, value, names):
        if d.layer in ("ids", "post_processed"):
            return [[i, names.get(i)] for i in value]
        return value

    return {"engine_a": beh.engine_a, "engine_b": beh.engine_b, "compared": beh.compared, "skipped": beh.skipped,
            "seconds": round(seconds, 3), "differing": len(beh.diffs), "first_layer_counts": beh.counts(),
            "diffs": [{"sample": d.sample, "text": d.text, "layer": d.layer, "a": side(d, d.a, names_a),
                       "b": side(d, d.b, names_b)} for d in _cut(beh.diffs, limit)]}


# ------------------------------------------------------------------ text output

def _print(r: dict, limit: int):
    from rich.text import Text

    from .console import out

    for k in ("a", "b"):
        s = r[k]
        out.print(Text(f"{k.upper()}  {show(s['path'])}  ({s['model']}, {s['vocab_size']:,} tokens, "
                       f"{s['added_tokens']} added)"))
    if "static" in r:
        st = r["static"]
        out.print(Text(f"\nstatic diff ({st['seconds']:.2f} s; reading both {r['read_seconds']:.2f} s)", style="bold"))
        out.print(Text(f" {'layer':15} {'hash A':12} {'hash B':12}"))
        for d in st["layers"]:
            what = d["note"] if d["equal"] else ", ".join(f"{v:,} {k}" for k, v in d["counts"].items() if v) or d["note"]
            line = Text(f" {d['layer']:15} {d['hash_a']:12} {'same' if d['equal'] else d['hash_b']:12} ")
            line.append("=" if d["equal"] else "≠", style="green" if d["equal"] else "bold red")
            line.append(" " + clip(what, max(20, out.width - 46)))  # notes are sanitized
            out.print(line, no_wrap=True, overflow="ellipsis")
        for d in st["layers"]:
            if not d["equal"]:
                _print_layer(d, limit)
    if "behaviour" in r:
        _print_behaviour(r["behaviour"], limit)
    out.print(Text("\nidentical" if r["identical"] else "\ndifferent", style="bold green" if r["identical"] else "bold red"))


def _print_layer(d: dict, limit: int):
    from rich.text import Text

    from .console import out

    out.print(Text(clip(f"\n{d['layer']}: {d['note']}", 110), style="bold"))  # notes are sanitized
    if d["layer"] == "chat_template":
        for c in d["changes"]:
            if c["op"] in "+- @" and not c["a"] and not c["b"]:
                style = {"+": "green", "-": "red", "@": "cyan"}.get(c["op"], "")
                out.print(Text(clip(show(c["where"] if c["op"] == "@" else c["op"] + c["where"]), 110), style=style))
            else:
                out.print(Text(f"  ~ {c['where']}: {clip(show(c['a']), 50)} -> {clip(show(c['b']), 50)}"))
    else:
        for c in d["changes"]:
            style = {"+": "green", "-": "red"}.get(c["op"], "yellow")
            if c["op"] == "~":
                line = f"  ~ {show(c['where'])}: {clip(show(c['a']), 60)} -> {clip(show(c['b']), 60)}"
            else:
                line = f"  {c['op']} {show(c['where'])}" + (f"  {show(c['a'] or c['b'])}" if c["a"] or c["b"] else "")
            out.print(Text(clip(line, 150), style=style))
    if len(d["changes"]) < d["changes_total"]:
        out.print(Text(f"  … {d['changes_total'] - len(d['changes']):,} more (--limit 0 or --json for all)", style="dim"))


def _print_behaviour(beh: dict, limit: int):
    from rich.text import Text

    from ..compare.behaviour import divergence

    from .console import out

    skipped = f", {beh['skipped']} with NUL skipped" if beh["skipped"] else ""
    out.print(Text(f"\nbehaviour on {beh['compared']} strings{skipped} ({beh['seconds']:.2f} s)", style="bold"))
    out.print(Text(f"  A: {beh['engine_a']}\n  B: {beh['engine_b']}"))
    counts = ", ".join(f"{k} {v}" for k, v in beh["first_layer_counts"].items())
    out.print(Text(f"  {beh['differing']} differ; first differing layer: {counts}"))
    for d in beh["diffs"]:
        out.print(Text(f"  [{d['sample']}] \"{clip(show(d['text']), 70)}\"  -> {d['layer']}", style="yellow"))
        a, b = d["a"], d["b"]
        if isinstance(a, list):
            i = divergence(a, b)
            ids = d["layer"] in ("ids", "post_processed")  # [id, text] pairs, else pre-token strings
            fmt = (lambda x: f"{show(x[1] or '?')}({x[0]})") if ids else (lambda x: f'"{show(x)}"')
            for side, v in (("A", a), ("B", b)):
                window = " ".join(fmt(x) for x in v[i:i + 8]) + (" …" if len(v) > i + 8 else "")
                out.print(Text(f"      {side} @{i}/{len(v)}: {clip(window, 110)}"))
        else:  # text: a window around the first differing character, marks escaped so they show
            i = divergence(list(a), list(b))
            cps = " vs ".join(f"U+{ord(v[i]):04X}" if i < len(v) else "end" for v in (a, b))
            out.print(Text(f"      first difference at character {i}: {cps}"))
            lo = max(0, i - 12)
            for side, v in (("A", a), ("B", b)):
                window = ("…" if lo else "") + show(v[lo:i + 24], marks=True) + ("…" if len(v) > i + 24 else "")
                out.print(Text(f"      {side} @{i}/{len(v)}: {clip(window, 110)}"))
    if len(beh["diffs"]) < beh["differing"]:
        out.print(Text(f"  … {beh['differing'] - len(beh['diffs']):,} more (--limit 0 or --json for all)", style="dim"))
