#!/usr/bin/env python3
"""Parity tables: every shared-corpus tokenizer.json exported for MNN 3.6.1, verified against HF
on the built-in corpus (and the llama.cpp test strings with --testvectors).  `--naive` adds the
table for MNN's own exporter mapping, to show what lowering changes."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus"

from mtok_export.verify.parity import COLUMNS, parity_rows  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--naive", action="store_true", help="also the naive mapping (MNN's exporter)")
    ap.add_argument("--testvectors", action="store_true", help="add the llama.cpp *.inp strings")
    ap.add_argument("--target", default="mnn-3.6")
    args = ap.parse_args()
    dirs = sorted(d for d in (CORPUS / "tokenizers").iterdir() if (d / "tokenizer.json").is_file())
    modes = ["lowered"] + (["naive"] if args.naive else [])
    with tempfile.TemporaryDirectory() as tmp:
        for mode in modes:
            print(f"\n{mode} mapping, target {args.target}")
            print(f"{'tokenizer':26} " + " ".join(f"{c:>12}" for c in COLUMNS) + "  unexplained  losses")
            for d in dirs:
                row = parity_rows(d, Path(tmp) / mode / d.name, mode=mode, target=args.target,
                                  testvectors=CORPUS / "testvectors" if args.testvectors else None)
                cells = " ".join(f"{row['checks'].get(c, '-'):>12}" for c in COLUMNS)
                print(f"{d.name:26} {cells}  {row['unexplained']:>11}  {row['losses']}")


if __name__ == "__main__":
    main()
