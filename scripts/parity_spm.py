#!/usr/bin/env python3
"""Parity of SentencePiece models exported for MNN, against the `sentencepiece` library itself.

For each model: read -> lower -> `.mtok`, run by MNN 3.6.1 (this interpreter), and read -> legacy
type-0 `tokenizer.txt` (lossy allowed), run by MNN 3.4.1 (`--mnn341 PYTHON`, default
/work/venv341/bin/python or <repo>/.venv-mnn341/bin/python when present), on the built-in corpus.
Columns: raw ids (no BOS/EOS), engine ids (what `tokenizer_encode` returns vs SentencePiece with the
config's BOS/EOS policy), streaming decode (concatenated single-id decodes vs `sp.decode`), the
same with the kept leading space ignored, the IR run by HF `tokenizers` (reader fidelity), and
the number of mismatches no loss or reader class explains; then every mismatch class."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CORPUS = REPO.parent / "shared" / "corpus" / "tokenizers"

MODELS = [
    ("llama2-7b-hf", CORPUS / "llama2-7b-hf/tokenizer.model"),
    ("mistral-7b-v0.1", CORPUS / "mistral-7b-v0.1_mistral-common/tokenizer.model.v1"),
    ("t5-small", CORPUS / "t5-small/spiece.model"),
    ("sp-test_model", CORPUS / "sp-test-models/test_model.model"),
    ("sp-test_ja_model", CORPUS / "sp-test-models/test_ja_model.model"),
    ("chatglm-6b", CORPUS / "chatglm-6b/ice_text.model"),
    ("samples/llama-spm", REPO / "samples/llama-spm/tokenizer.model"),
    ("samples/t5-unigram", REPO / "samples/t5-unigram/spiece.model"),
]


def default_341() -> str | None:
    for p in (Path("/work/venv341/bin/python"), REPO / ".venv-mnn341/bin/python"):
        if p.is_file():
            return str(p)
    return None


def table(title: str, rows) -> str:
    head = (f"{'model':20} {'MNN':6} {'raw ids':>9} {'engine ids':>10} {'stream':>8} {'stream*':>8} "
            f"{'IR(HF)':>8} {'unexpl':>6}")
    out = [title, head, "-" * len(head)]
    for name, p in rows:
        ir = f"{p.ir_raw[0]}/{p.ir_raw[1]}" if p.ir_raw else "-"
        out.append(f"{name:20} {p.runtime:6} {p.cell('raw ids'):>9} {p.cell('engine ids'):>10} "
                   f"{p.cell('streaming decode'):>8} {p.stream_but_lead_space():>8} {ir:>8} {p.unexplained:>6}")
    out.append("(stream* = streaming decode ignoring the one leading space the runtime keeps)")
    for name, p in rows:
        classes = sorted(p.classes().items(), key=lambda kv: (kv[0][0], -kv[1]))
        if classes:
            out.append(f"  {name}: " + "; ".join(f"{check} {why or 'UNEXPLAINED'} x{n}" for (check, why), n in classes))
    return "\n".join(out)


def main():
    from mtok_export.verify.reference_spm import spm_parity, spm_parity_txt

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mnn341", default=default_341(), help="python with MNN 3.4.1 for the type-0 table")
    ap.add_argument("--only", help="models whose name contains this")
    args = ap.parse_args()
    models = [(n, p) for n, p in MODELS if p.is_file() and (not args.only or args.only in n)]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [(n, spm_parity(p, Path(tmp) / "mtok" / n.replace("/", "_"))) for n, p in models]
        print(table(".mtok (read -> lower mnn-3.6 -> write_mtok) on MNN 3.6.1 vs sentencepiece", rows))
        print()
        if args.mnn341:
            rows = [(n, spm_parity_txt(p, Path(tmp) / "txt" / n.replace("/", "_"), python=args.mnn341))
                    for n, p in models]
            print(table("legacy type 0 tokenizer.txt on MNN 3.4.1 vs sentencepiece", rows))
        else:
            print("(no MNN 3.4.1 interpreter: pass --mnn341 PYTHON)")
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
