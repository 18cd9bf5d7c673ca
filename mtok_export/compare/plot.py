"""`mtok stats --plot`: a per-slice bar chart of tokens per byte (one bar per tokenizer) above the
distribution of per-sample expansion (a box per tokenizer).  matplotlib is imported here only."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError

FORMATS = (".png", ".svg")


def check_plot_path(path: Path):
    if path.suffix.lower() not in FORMATS:
        raise InputError(f"--plot {path}: the file name must end in .png or .svg")


def write_plot(results, path: Path):
    """`results`: `TokenizerStats` per tokenizer, slices in the same order for each."""
    check_plot_path(path)
    try:
        import matplotlib  # an optional library (the `plot` extra), ~0.4 s: only for --plot
    except ImportError:
        e = InputError("--plot needs matplotlib, which is not installed")
        e.hint = "pip install 'mtok-export[plot]'"
        raise e from None
    matplotlib.use("Agg")  # no display needed; must precede pyplot
    import matplotlib.pyplot as plt  # after matplotlib.use("Agg"), which must come first

    matplotlib.rcParams["svg.hashsalt"] = "mtok"  # deterministic SVG ids
    names = [s.slice for s in results[0].slices]
    fig, (bars, boxes) = plt.subplots(2, 1, figsize=(max(8.0, 0.4 * len(names) + 2), 8),
                                      gridspec_kw={"height_ratios": [3, 2]})
    width = 0.8 / len(results)
    for k, r in enumerate(results):
        per = {s.slice: s.per_byte for s in r.slices}
        xs = [i + (k - (len(results) - 1) / 2) * width for i in range(len(names))]
        bars.bar(xs, [per.get(n, 0.0) for n in names], width, label=r.name)
    bars.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=8)
    bars.set_ylabel("tokens per UTF-8 byte")
    bars.set_title("Compression by slice (lower is better)")
    bars.legend(fontsize=8)
    bars.grid(axis="y", alpha=0.3)
    boxes.boxplot([r.total.expansions for r in results], showfliers=True)
    boxes.set_xticks(range(1, len(results) + 1), [r.name for r in results], fontsize=8)
    boxes.set_ylabel("tokens per byte, per sample")
    boxes.set_title("Per-sample expansion, all slices")
    boxes.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    try:
        fig.savefig(path, metadata={"Software": None} if path.suffix.lower() == ".png" else {"Date": None})
    except OSError as e:
        raise InputError(f"--plot {path}: cannot write ({e.strerror or e})") from None
    finally:
        plt.close(fig)
