#!/usr/bin/env python3
"""Whole-process wall times of `mtok-export --allow-lossy --no-verify` and `mtok inspect` for every
shared-corpus tokenizer.json (best of N runs), plus an in-process stage breakdown for the largest,
to show what bounds the total.  Run with `make bench`."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "tokenizers"
BIN = Path(sys.executable).parent


def best(cmd: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return min(times)


def stages(src: Path) -> list[tuple[str, float]]:
    sys.path.insert(0, str(ROOT))
    from mtok_export.lower import lower
    from mtok_export.mtok import read_mtok, write_mtok
    from mtok_export.readers.model_dir import read_model_dir

    out = []
    t = time.perf_counter()
    json.loads((src / "tokenizer.json").read_bytes())
    out.append(("json.loads(tokenizer.json)", time.perf_counter() - t))
    for name, fn in (("read (json + IR)", lambda: read_model_dir(src)),):
        t = time.perf_counter()
        tok = fn()
        out.append((name, time.perf_counter() - t))
    t = time.perf_counter()
    low, _ = lower(tok)
    out.append(("lower (tables from cache)", time.perf_counter() - t))
    t = time.perf_counter()
    data = write_mtok(low)
    out.append(("write_mtok (sort vocab, merges)", time.perf_counter() - t))
    t = time.perf_counter()
    read_mtok(data)
    out.append(("read_mtok (validate everything)", time.perf_counter() - t))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    dirs = sorted(d for d in CORPUS.iterdir() if (d / "tokenizer.json").is_file())
    print(f"{'tokenizer':28} {'vocab':>8} {'export s':>9} {'inspect s':>10} {'.mtok':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for d in dirs:
            out = Path(tmp) / d.name
            cmd = [str(BIN / "mtok-export"), "--path", str(d), "-o", str(out), "--allow-lossy", "--no-verify"]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)  # warm the table cache
            e = best(cmd, args.repeat)
            f = out / "tokenizer.mtok"
            i = best([str(BIN / "mtok"), "inspect", str(f)], args.repeat)
            vocab = len(json.loads((d / "tokenizer.json").read_bytes())["model"]["vocab"])
            print(f"{d.name:28} {vocab:8,} {e:9.3f} {i:10.3f} {f.stat().st_size / 1e6:8.2f}M")
    big = CORPUS / "qwen2.5-instruct"
    if big.is_dir():
        print(f"\nstages for {big.name} (in process, seconds):")
        for name, s in stages(big):
            print(f"  {name:34} {s:.3f}")
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mtok_export.cli"], check=True)
    print(f"  {'python start-up + CLI imports':34} {time.perf_counter() - t:.3f}")


if __name__ == "__main__":
    main()
