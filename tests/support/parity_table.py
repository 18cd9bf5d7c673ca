#!/usr/bin/env python3
"""Parity tables: a source exported (lowered, or MNN's own naive mapping) for MNN, verified on the
runtime, summarized k/n per check.  `tests/acceptance/test_conformance.py` asserts on the rows; run as a script it
prints the table for every shared-corpus tokenizer.json (`--naive` adds the naive mapping's, to
show what lowering changes; `--testvectors` adds the llama.cpp test strings).

    python -m tests.support.parity_table [--naive] [--testvectors] [--target mnn-3.6]"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path

from tests.support.naive_mapping import naive
from tests.support.verify_jobs import CORPUS_ONLY

from mtok_export.corpus import builtin_chats, builtin_corpus, testvector_corpus
from mtok_export.formats import read_source
from mtok_export.lower import Lowering, lower
from mtok_export.mtok import write_mtok
from mtok_export.targets import TARGETS
from mtok_export.verify.check import VerifyJob, verify
from mtok_export.verify.references import choose

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
COLUMNS = ("engine ids", "raw ids", "streaming decode", "chat text", "chat ids", "chat paths", "stop ids")


def parity_rows(src: Path, out_dir: Path, *, mode: str = "lowered", target: str = "mnn-3.6",
                testvectors: Path | None = None, python=None) -> dict:
    tok = read_source(src)  # a directory with tokenizer.json, or any other input (GGUF, tekken, ...)
    if mode == "naive":
        from tokenizers import Tokenizer

        hf = Tokenizer.from_file(str(src / "tokenizer.json"))
        try:
            low = naive(tok, lambda s: hf.encode(s).ids, lambda i: hf.decode([i]))
        except ValueError as e:
            return {"checks": {}, "unexplained": str(e), "losses": ""}
        lw = Lowering(TARGETS[target])
    else:
        low, lw = lower(tok, TARGETS[target])
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    samples = list(builtin_corpus()) + (list(testvector_corpus(testvectors)) if testvectors else [])
    job = VerifyJob(tok, low, lw, samples, list(builtin_chats()), replace(CORPUS_ONLY, python=python))
    report = verify(job, path, choose(tok))
    return {
        "checks": {c.name: f"{c.ok}/{c.total}" for c in report.checks if c.total},
        "unexplained": report.unexplained if mode != "naive" else "-",
        "losses": ",".join(sorted({x.code for x in lw.losses})),
        "report": report,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
