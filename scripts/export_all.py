#!/usr/bin/env python3
"""Every shared-corpus tokenizer (directories, and each file of a directory holding several
SentencePiece models) exported to `.mtok` (verified on this interpreter's MNN, 3.6.1) and to legacy
`.txt` (verified on `--legacy-python`, e.g. a venv with MNN==3.4.1): one table row each."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from mtok_export.errors import LossError, MtokError, VerificationError
from mtok_export.export import export
from mtok_export.job import Job, VerifyOptions, resolve_target
from mtok_export.policy import Policy

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "tokenizers"


def sources():
    for d in sorted(CORPUS.iterdir()):
        models = sorted(d.glob("*.model"))
        if len(models) > 1 and not (d / "tokenizer.json").is_file():
            yield from models
        else:
            yield d


def row(src: Path, out: Path, fmt: str, python) -> str:
    try:
        r = export(Job(src, target=resolve_target(fmt), policy=Policy(allow_lossy=True),
                       verify=VerifyOptions(python=Path(python) if python else None)), out)
    except (LossError, VerificationError) as e:
        r = e.result
    except MtokError as e:
        return f"not written: {str(e).splitlines()[0][:90]}"
    rep = r.verify
    cells = {c.name: f"{c.ok}/{c.total}" for c in rep.checks if c.total}
    kind = next(iter(r.lowering.applied.get("legacy-type", [""])))[:7]
    return (f"{kind:8}raw {cells.get('raw ids', '-'):>8}  engine {cells.get('engine ids', '-'):>8}  "
            f"stream {cells.get('streaming decode', '-'):>8}  unexplained {rep.unexplained}  "
            f"losses {len(r.lowering.losses)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--legacy-python", help="interpreter with MNN 3.4.1 for the .txt rows")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for src in sources():
            name = src.name if src.is_dir() else f"{src.parent.name}/{src.name}"
            out = Path(tmp) / name
            print(f"{name}\n  .mtok (3.6.1) {row(src, out / 'mtok', 'mtok', None)}", flush=True)
            print(f"  .txt  ({'3.4.1' if args.legacy_python else 'this MNN'}) "
                  f"{row(src, out / 'txt', 'txt', args.legacy_python)}", flush=True)


if __name__ == "__main__":
    main()
