#!/usr/bin/env python3
"""The release gate over the shared corpus: plain `mtok-export --path SRC` (no flags) on every
tokenizer, as a pipeline would run it.  Prints the exit code and, for each refusal, the refused
losses and the flag that accepts them; then one row per loss code: declared severity, trigger,
projection, the severities measured and the mismatches it reproduced over the whole corpus.

    python scripts/gate_corpus.py [--only NAME] [--json FILE]"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from mtok_export.losses import KINDS

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "tokenizers"


def sources():
    for d in sorted(CORPUS.iterdir()):
        models = sorted(d.glob("*.model")) + sorted(d.glob("*.model.v*"))
        if len(models) > 1 and not (d / "tokenizer.json").is_file():
            yield from models
        else:
            yield d


def run(src: Path, out: Path) -> dict:
    report = out / "report.json"
    code = "import sys; from mtok_export.cli import export_main; sys.argv[0] = 'mtok-export'; export_main()"
    done = subprocess.run([sys.executable, "-c", code, "--path", str(src), "--output", str(out / "out"),
                           "--report", str(report)], capture_output=True, text=True, timeout=1200)
    data = json.loads(report.read_text()) if report.is_file() else {"exit_code": done.returncode}
    data["exit_code"] = done.returncode
    return data


def trigger_of(kind) -> str:
    if kind.trigger is not None:
        return kind.trigger.__name__.strip("_").replace("_", " ")
    return "its strings / pattern" if kind.projection is None else "its strings"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="one corpus entry (name substring)")
    ap.add_argument("--json", type=Path, help="write every outcome here")
    args = ap.parse_args()
    outcomes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for src in sources():
            name = src.name if src.is_dir() else f"{src.parent.name}/{src.name}"
            if args.only and args.only not in name:
                continue
            r = outcomes[name] = run(src, Path(tmp) / name.replace("/", "_"))
            refused = [d for d in r.get("losses", ()) if d["accepted_by"] is None]
            edge = [d["code"] for d in r.get("losses", ()) if d["accepted_by"] == "edge"]
            line = f"{name:44} exit {r['exit_code']}"
            if r["exit_code"] == 3:
                line += "  refused: " + ", ".join(f"{d['code']} ({d['severity']}, {d['severity_source']})"
                                                  for d in refused)
                line += f"\n{'':44}        accept with: --accept {','.join(d['code'] for d in refused)}"
            elif r["exit_code"] == 1:
                line += f"  {r['verify']['unexplained']} unexplained mismatch(es)"
            elif r["exit_code"] == 2:
                line += f"  {r.get('error')}"
            if edge:
                line += f"\n{'':44}        edge warnings: {', '.join(edge)}"
            print(line, flush=True)
    print()
    print(f"{'loss code':24} {'layer':14} {'declared':9} {'projection':12} {'trigger':22} {'measured':18} "
          f"{'mismatches everyday/edge':>24}  tokenizers")
    for code, kind in KINDS.items():
        seen = [(n, d) for n, r in outcomes.items() for d in r.get("losses", ()) if d["code"] == code]
        if not seen and kind.layer == "legacy":
            continue
        measured = sorted({d["severity"] for _, d in seen if d["severity_source"] == "measured"})
        every = sum(d["mismatches"]["everyday"] for _, d in seen)
        edge = sum(d["mismatches"]["edge"] for _, d in seen)
        print(f"{code:24} {kind.layer:14} {kind.severity.value:9} {kind.projection or 'no':12} "
              f"{trigger_of(kind)[:22]:22} {','.join(measured) or '-':18} {f'{every}/{edge}':>24}  {len(seen)}")
    if args.json:
        args.json.write_text(json.dumps(outcomes, ensure_ascii=False, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
