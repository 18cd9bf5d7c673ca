#!/usr/bin/env python3
"""The release gate over the shared corpus: plain `mtok-export --path SRC` (no flags) on every
tokenizer (the tokenizer folders and the vocab-only GGUF files), as a pipeline would run it, with
stdin closed so that a prompt cannot wait for an answer.  Each refusal is run again with the flags
its own hint prints (`--accept ...`, `--target ...`), to show the hint works.  Prints the sweep
table (tokenizer, plain exit code, exit code with the hint's flags, whether anything prompted),
then one row per loss code: declared severity, trigger, projection, the severities measured and the
mismatches it reproduced over the whole corpus.

    python scripts/gate_corpus.py [--only NAME] [--no-gguf] [--json FILE]"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from mtok_export.losses import KINDS

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
CORPUS = SHARED / "tokenizers"
# What a prompt for an answer looks like (transformers' trust_remote_code question, input()).
PROMPT = re.compile(r"\[y/N\]|Do you wish to run the custom code")


def sources(gguf: bool = True):
    for d in sorted(CORPUS.iterdir()):
        models = sorted(d.glob("*.model")) + sorted(d.glob("*.model.v*"))
        if len(models) > 1 and not (d / "tokenizer.json").is_file():
            yield from models
        else:
            yield d
    if gguf:
        yield from sorted((SHARED / "gguf").glob("*.gguf"))


def run(src: Path, out: Path, flags: list[str] = ()) -> dict:
    report = out / "report.json"
    out.mkdir(parents=True, exist_ok=True)
    code = "import sys; from mtok_export.cli import export_main; sys.argv[0] = 'mtok-export'; export_main()"
    try:
        done = subprocess.run([sys.executable, "-c", code, "--path", str(src), "--output", str(out / "out"),
                               "--report", str(report), *flags], capture_output=True, text=True, timeout=1800,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        return {"exit_code": "timeout", "prompted": bool(PROMPT.search(str(e.stdout or "") + str(e.stderr or "")))}
    data = json.loads(report.read_text()) if report.is_file() else {}
    data["exit_code"] = done.returncode
    data["prompted"] = bool(PROMPT.search(done.stdout + done.stderr))
    if report.is_file():
        report.unlink()
    return data


def hint_flags(r: dict) -> list[str]:
    """The options the refusal's hint gives first: its `--accept CODES`."""
    hint = r.get("hint") or ""
    flags = []
    if m := re.search(r"--accept (\S+)", hint.splitlines()[0] if hint else ""):
        flags += ["--accept", m.group(1)]
    return flags


def trigger_of(kind) -> str:
    if kind.trigger is not None:
        return kind.trigger.__name__.strip("_").replace("_", " ")
    return "its strings / pattern" if kind.projection is None else "its strings"


def detail(r: dict) -> str:
    if r["exit_code"] == 3:
        refused = [d for d in r.get("losses", ()) if d["accepted_by"] is None]
        return "refused: " + ", ".join(f"{d['code']} ({d['severity']}, {d['severity_source']})" for d in refused)
    if r["exit_code"] == 1:
        return f"{(r.get('verify') or {}).get('unexplained')} unexplained mismatch(es)"
    if r["exit_code"] == 2:
        return str(r.get("error"))[:160]
    return ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="one corpus entry (name substring)")
    ap.add_argument("--no-gguf", action="store_true", help="leave the GGUF files out")
    ap.add_argument("--json", type=Path, help="write every outcome here")
    args = ap.parse_args()
    outcomes, rows = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for src in sources(not args.no_gguf):
            name = src.name if src.is_dir() or src.suffix == ".gguf" else f"{src.parent.name}/{src.name}"
            if args.only and args.only not in name:
                continue
            r = outcomes[name] = run(src, Path(tmp) / name.replace("/", "_"))
            flags = hint_flags(r) if r["exit_code"] == 3 else []
            again = run(src, Path(tmp) / (name.replace("/", "_") + "-hint"), flags) if flags else None
            rows.append((name, r, flags, again))
            edge = [d["code"] for d in r.get("losses", ()) if d["accepted_by"] == "edge"]
            line = f"{name:44} exit {r['exit_code']}  {detail(r)}"
            if again is not None:
                line += f"\n{'':44}   with {' '.join(flags)}: exit {again['exit_code']}  {detail(again)}"
            if edge:
                line += f"\n{'':44}   edge warnings: {', '.join(edge)}"
            print(line, flush=True)
    print()
    print(f"{'tokenizer':44} {'plain':>6} {'hint flags':>10} {'prompt':>7}  flags")
    for name, r, flags, again in rows:
        prompted = r["prompted"] or bool(again and again["prompted"])
        print(f"{name:44} {r['exit_code']!s:>6} {again['exit_code'] if again else '-'!s:>10} "
              f"{'yes' if prompted else 'no':>7}  {' '.join(flags)}")
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
