#!/usr/bin/env python3
"""On-device encode time of the files we write (issue 17): MNN 3.6.1's `tokenizer_encode` on a ~30 KB
mixed prompt (the everyday slice of the built-in corpus: prose in many scripts, code, numbers),
median of 5, each file in its own process.  Per corpus tokenizer: our file as exported, and the same
file with every special token in the header special list (`--header-specials all`), as ratios to the
floor: the same file with an empty header special list (what the runtime spends on everything else).

    python scripts/bench_device.py [--only NAME] [--repeat 5]"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.verify.corpus import builtin_corpus, slice_of

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "tokenizers"

# Runs in the measuring process: load the file the way the runtime worker does, time encode.
TIMER = r"""
import json, sys, time
import MNN.llm as llm
cfg, prompt, repeat = sys.argv[1], open(sys.argv[2], encoding="utf-8").read(), int(sys.argv[3])
m = llm.create(cfg)
try:
    m.load()
except Exception:
    pass
m.tokenizer_encode(prompt)  # warm-up
times = []
for _ in range(repeat):
    t = time.perf_counter(); ids = m.tokenizer_encode(prompt); times.append(time.perf_counter() - t)
print(json.dumps({"times": times, "n": len(ids)}))
"""


def prompt(size: int = 30_000) -> str:
    texts = [s.text for s in builtin_corpus() if slice_of(s) == "everyday" and len(s.text) > 20]
    out, n = [], 0
    while n < size:
        for t in texts:
            out.append(t)
            n += len(t) + 1
    return "\n".join(out)[:size]


def encode_ms(data: bytes, text_file: Path, repeat: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "tokenizer.mtok").write_bytes(data)
        (d / "config.json").write_text(json.dumps({"tokenizer_file": "tokenizer.mtok", "llm_model": "llm.mnn",
                                                   "llm_weight": "llm.mnn.weight", "backend_type": "cpu"}))
        (d / "llm.mnn").write_bytes(b"\0")
        (d / "llm.mnn.weight").write_bytes(b"\0")
        done = subprocess.run([sys.executable, "-c", TIMER, str(d / "config.json"), str(text_file), str(repeat)],
                              capture_output=True, text=True, timeout=600)
        line = done.stdout.strip().splitlines()[-1]
        return statistics.median(json.loads(line)["times"]) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write(prompt())
        text_file = Path(f.name)
    print(f"{'tokenizer':28} {'header specials':>16} {'floor ms':>9} {'ours ms':>8} {'ratio':>6} "
          f"{'all-specials ms':>16} {'ratio':>6}")
    for d in sorted(p for p in CORPUS.iterdir() if (p / "tokenizer.json").is_file()):
        if args.only and args.only not in d.name:
            continue
        tok = read_model_dir(d)
        ours, _ = lower(tok)
        every, _ = lower(tok, header_specials="all")
        floor = encode_ms(write_mtok(replace(ours, special_ids=())), text_file, args.repeat)
        a = encode_ms(write_mtok(ours), text_file, args.repeat)
        b = encode_ms(write_mtok(every), text_file, args.repeat)
        print(f"{d.name:28} {f'{len(ours.special_ids)}/{len(every.special_ids)}':>16} {floor:9.2f} {a:8.2f} "
              f"{a / floor:6.2f} {b:16.2f} {b / floor:6.2f}", flush=True)
    text_file.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
