"""`mtok stats SRC [SRC2 ...]`: compression and fixed-overhead statistics per domain slice, side by
side, with each figure's ratio to the first tokenizer's."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..dump.sanitize import clip, show
from ..errors import InputError

METRICS = {"tokens_per_byte": "per_byte", "tokens_per_char": "per_char", "tokens_per_word": "per_word",
           "expansion_mean": "mean", "expansion_p95": "p95", "byte_fallback_rate": "byte_fallback_rate"}


def stats(
    sources: Annotated[list[Path], typer.Argument(help="Tokenizers: any input export reads.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print every figure as JSON.")] = False,
    corpus: Annotated[Optional[Path], typer.Option(help="JSONL with \"text\" and \"slice\" per line, instead of "
                                                   "the built-in slices.")] = None,
    plot: Annotated[Optional[Path], typer.Option(help="Also write a chart: FILE.png or FILE.svg (needs matplotlib).")] = None,
    metric: Annotated[str, typer.Option(help="Per-slice figure of the first table: " + ", ".join(METRICS) + ".")]
    = "tokens_per_byte",
):
    """Tokens per byte/char/word, expansion percentiles, byte-fallback and unknown rates, and the fixed
    cost of BOS/EOS and the chat template, per slice, for one or more tokenizers."""
    from ..compare import stats as S
    from ..formats import read_source

    if metric not in METRICS:
        raise InputError(f"--metric {metric!r}: choose one of {', '.join(METRICS)}")
    if plot is not None:
        from ..compare.plot import check_plot_path
        check_plot_path(plot)
    samples = S.load_slices(corpus) if corpus is not None else S.builtin_samples()
    results = [S.tokenizer_stats(name, read_source(src), samples) for name, src in zip(_names(sources), sources)]
    if plot is not None:
        from ..compare.plot import write_plot
        write_plot(results, plot)
    if as_json:
        from .console import out
        out.print_json(json.dumps({"tokenizers": [r.to_json() for r in results]}, ensure_ascii=False))
        return
    _print(results, metric, plot)


def _names(paths: list[Path]) -> list[str]:
    """Short column names: the directory name, or parent/file for a file; numbered when they repeat."""
    names = [p.name if p.is_dir() else f"{p.parent.name}/{p.name}" for p in paths]
    return [f"{n}#{i + 1}" if names.count(n) > 1 else n for i, n in enumerate(names)]


def _value(s, attr: str) -> float:
    return s.percentile(95) if attr == "p95" else getattr(s, attr)


def _cell(v: float | None, first: float | None, fmt: str = "{:.3f}", ratio: bool = True) -> str:
    if v is None:
        return "-"
    text = fmt.format(v)
    if ratio and first:
        text += f" ×{v / first:.2f}"
    return text


def _print(results: list, metric: str, plot: Path | None):
    from rich.table import Table
    from rich.text import Text

    from .console import out

    attr = METRICS[metric]
    heads = [clip(show(r.name), 22) for r in results]
    t = Table("slice", "bytes", *heads, box=None, padding=(0, 1), title=f"{metric} (×ratio to {heads[0]})",
              title_justify="left")
    for k in range(2, 2 + len(results)):
        t.columns[k].justify = "right"
    t.columns[1].justify = "right"
    for i, s0 in enumerate(results[0].slices):
        row = [s0.slice, f"{s0.bytes:,}"]
        base = _value(s0, attr)
        row += [_cell(_value(r.slices[i], attr), base, ratio=k > 0) for k, r in enumerate(results)]
        t.add_row(*row)
    totals = [_value(r.total, attr) for r in results]
    t.add_row(Text("all", style="bold"), f"{results[0].total.bytes:,}",
              *[_cell(v, totals[0], ratio=k > 0) for k, v in enumerate(totals)])
    out.print(t)
    s = Table("all slices", *heads, box=None, padding=(0, 1), title="summary (×ratio to the first)", title_justify="left")
    s.columns[0].no_wrap = True
    for k in range(1, 1 + len(results)):
        s.columns[k].justify = "right"
    rows = [("tokens", lambda r: r.total.tokens, "{:,}"), ("tokens / byte", lambda r: r.total.per_byte, "{:.3f}"),
            ("tokens / char", lambda r: r.total.per_char, "{:.3f}"),
            ("tokens / word", lambda r: r.total.per_word, "{:.3f}"),
            ("expansion mean", lambda r: r.total.mean, "{:.3f}"),
            ("expansion P50", lambda r: r.total.percentile(50), "{:.3f}"),
            ("expansion P95", lambda r: r.total.percentile(95), "{:.3f}"),
            ("expansion P99", lambda r: r.total.percentile(99), "{:.3f}"),
            ("byte-fallback %", lambda r: 100 * r.total.byte_fallback_rate, "{:.2f}"),
            ("unknown %", lambda r: 100 * r.total.unknown_rate, "{:.2f}"),
            ("BOS/EOS tokens", lambda r: r.bos_eos, "{:d}"), ("chat: no messages", lambda r: r.chat_empty, "{:d}"),
            ("chat: 1 empty user turn", lambda r: r.chat_turn, "{:d}")]
    for label, get, fmt in rows:
        vals = [get(r) for r in results]
        ratio = fmt != "{:d}" and "%" not in label
        s.add_row(label, *[_cell(v, vals[0], fmt, ratio=ratio and k > 0) for k, v in enumerate(vals)])
    out.print(s)
    out.print(Text("- : no chat template, or the template rejects that conversation", style="dim"))
    for r in results:
        out.print(Text(f"{r.name}: {r.engine}", style="dim"))
    if plot is not None:
        out.print(Text(f"wrote {plot}"))
