#!/usr/bin/env python3
"""On-device encode time of the files we write (issue 17): MNN 3.6.1's `tokenizer_encode` on a ~30 KB
mixed prompt (the everyday slice of the built-in corpus: prose in many scripts, code, numbers),
median of 5 (CPU time of the encoding thread; `--clock wall` for wall time), each file in its own
process (with `--rounds N`, the processes are repeated N times,
interleaved, and the lowest median is kept: the machine may be shared).  Per corpus tokenizer with a tokenizer.json: the file MNN's
own exporter writes for it (`LlmTokenizer.export` from `transformers/llm/export/utils/tokenizer.py`),
our file as exported, their ratio, and the floor: our file with an empty header special list and no
normalizer (what the runtime spends on everything else).

MNN's exporter is never part of this repository: it is read from the cache directory
(`$MTOK_CACHE_DIR/mnn-exporter/<commit>/tokenizer.py`, default `~/.cache/mtok-export`), fetched there
on first use from GitHub or, offline, from a local MNN clone (`--mnn-git DIR`).

    python scripts/bench_device.py [--only NAME,...] [--repeat 5] [--rounds 1] [--normalizer-form table]
                                   [--mnn-git DIR] [--many-specials 800]

The last row is DeepSeek-V3-style: Llama-3 with special tokens added up to `--many-specials` (the
reason header special lists matter: the runtime scans them at every byte)."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import replace
from pathlib import Path

from mtok_export.corpus import builtin_corpus, slice_of
from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.unicode.tables import cache_dir

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "tokenizers"
MNN_COMMIT = "4d40bdbd7efb73a58383bb5da867a6f41eb1776e"  # the revision the spec was read from
EXPORTER_PATH = "transformers/llm/export/utils/tokenizer.py"

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
clock = time.thread_time if sys.argv[4] == "cpu" else time.perf_counter
times = []
for _ in range(repeat):
    t = clock(); ids = m.tokenizer_encode(prompt); times.append(clock() - t)
print(json.dumps({"times": times, "n": len(ids)}))
"""

# Runs MNN's exporter in its own process (it imports transformers): argv = exporter dir, model dir, out dir.
EXPORT = r"""
import sys
sys.path.insert(0, sys.argv[1])
from tokenizer import LlmTokenizer
print(LlmTokenizer(sys.argv[2], model_type="").export(sys.argv[3]))
"""


def prompt(size: int = 30_000) -> str:
    texts = [s.text for s in builtin_corpus() if slice_of(s) == "everyday" and len(s.text) > 20]
    out, n = [], 0
    while n < size:
        for t in texts:
            out.append(t)
            n += len(t) + 1
    return "\n".join(out)[:size]


def mnn_exporter(mnn_git: str | None) -> Path | None:
    """The directory holding MNN's exporter module (cached); None when it cannot be had."""
    d = cache_dir() / "mnn-exporter" / MNN_COMMIT
    if (d / "tokenizer.py").is_file():
        return d
    try:
        if mnn_git:
            data = subprocess.run(["git", "-C", mnn_git, "show", f"{MNN_COMMIT}:{EXPORTER_PATH}"],
                                  capture_output=True, check=True, timeout=60).stdout
        else:
            url = f"https://raw.githubusercontent.com/alibaba/MNN/{MNN_COMMIT}/{EXPORTER_PATH}"
            with urllib.request.urlopen(url, timeout=30) as r:
                data = r.read()
    except (OSError, subprocess.SubprocessError) as e:
        print(f"MNN's exporter not available ({e}); pass --mnn-git DIR (a clone of alibaba/MNN)", file=sys.stderr)
        return None
    d.mkdir(parents=True, exist_ok=True)
    (d / "tokenizer.py").write_bytes(data)
    return d


def mnn_file(exporter: Path, model_dir: Path, out: Path) -> Path | None:
    """The tokenizer file MNN's exporter writes for `model_dir`, or None if it fails."""
    done = subprocess.run([sys.executable, "-c", EXPORT, str(exporter), str(model_dir), str(out)],
                          capture_output=True, text=True, timeout=1200)
    path = Path(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 and done.stdout.strip() else None
    if path is None or not path.is_file():
        print(f"  MNN's exporter failed on {model_dir.name}: {done.stderr.strip().splitlines()[-1:]}",
              file=sys.stderr)
        return None
    return path


def encode_ms(data: bytes, text_file: Path, repeat: int, name: str = "tokenizer.mtok", clock: str = "cpu") -> float:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / name).write_bytes(data)
        (d / "config.json").write_text(json.dumps({"tokenizer_file": name, "llm_model": "llm.mnn",
                                                   "llm_weight": "llm.mnn.weight", "backend_type": "cpu"}))
        (d / "llm.mnn").write_bytes(b"\0")
        (d / "llm.mnn.weight").write_bytes(b"\0")
        done = subprocess.run([sys.executable, "-c", TIMER, str(d / "config.json"), str(text_file), str(repeat), clock],
                              capture_output=True, text=True, timeout=600)
        line = done.stdout.strip().splitlines()[-1]
        return statistics.median(json.loads(line)["times"]) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="tokenizers whose directory name contains this (comma-separated)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1, help="measure each file this many times, keep the lowest")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="cpu: the encoding thread's CPU time (default: other load on the machine does not count)")
    ap.add_argument("--normalizer-form", default="compose", help="our files' normalizer form (compose, no-compose, table)")
    ap.add_argument("--mnn-git", help="a local clone of alibaba/MNN to take the exporter from when offline")
    ap.add_argument("--many-specials", type=int, default=800, metavar="N",
                    help="add a DeepSeek-V3-style row: Llama-3 with N special tokens in all (0: none)")
    args = ap.parse_args()
    exporter = mnn_exporter(args.mnn_git)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write(prompt())
        text_file = Path(f.name)
    print(f"{'tokenizer':28} {'MNN exporter ms':>15} {'ours ms':>8} {'ratio':>6} {'floor ms':>9}")
    ratios = []
    only = args.only.split(",") if args.only else None
    dirs = [d for d in sorted(CORPUS.iterdir()) if (d / "tokenizer.json").is_file()]
    synthetic = tempfile.TemporaryDirectory()
    if args.many_specials:
        dirs.append(many_specials(CORPUS / "meta-llama-3-8b-instruct", args.many_specials, Path(synthetic.name)))
    for d in dirs:
        if only and not any(o in d.name for o in only):
            continue
        ours, _ = lower(read_model_dir(d), TARGETS[DEFAULT], normalizer_form=args.normalizer_form)
        files = {"ours": (write_mtok(ours), "tokenizer.mtok"),
                 "floor": (write_mtok(replace(ours, special_ids=(), normalizer=None)), "tokenizer.mtok")}
        if exporter is not None:
            with tempfile.TemporaryDirectory() as tmp:
                path = mnn_file(exporter, d, Path(tmp))
                if path is not None:
                    files["theirs"] = (path.read_bytes(), path.name)
        best: dict[str, float] = {}
        for _ in range(args.rounds):
            for key, (data, name) in files.items():
                ms = encode_ms(data, text_file, args.repeat, name, args.clock)
                best[key] = min(best.get(key, ms), ms)
        a, floor, theirs = best["ours"], best["floor"], best.get("theirs")
        cells = (f"{theirs:15.2f} {a:8.2f} {a / theirs:6.2f}" if theirs else f"{'n/a':>15} {a:8.2f} {'':>6}")
        if theirs:
            ratios.append(a / theirs)
        print(f"{d.name:28} {cells} {floor:9.2f}", flush=True)
    if ratios:
        print(f"ratio ours / MNN exporter: median {statistics.median(ratios):.2f}, max {max(ratios):.2f} "
              f"({len(ratios)} tokenizers)")
    text_file.unlink()
    synthetic.cleanup()
    return 0


def many_specials(src: Path, total: int, tmp: Path) -> Path:
    """A copy of `src` with special tokens added until it has `total` (DeepSeek-V3 has about 800:
    `<｜place▁holder▁no▁K｜>` reserved tokens), in tokenizer.json and tokenizer_config.json alike."""
    out = tmp / f"llama-3-{total}-specials"
    out.mkdir()
    tj = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))
    cfg = json.loads((src / "tokenizer_config.json").read_text(encoding="utf-8"))
    have = [t for t in tj["added_tokens"] if t["special"]]
    next_id = max(t["id"] for t in tj["added_tokens"]) + 1
    for k in range(max(0, total - len(have))):
        tok = {"id": next_id + k, "content": f"<\uff5cplace\u2581holder\u2581no\u2581{k}\uff5c>", "single_word": False,
               "lstrip": False, "rstrip": False, "normalized": False, "special": True}
        tj["added_tokens"].append(tok)
        cfg.setdefault("added_tokens_decoder", {})[str(tok["id"])] = {k2: v for k2, v in tok.items() if k2 != "id"}
    (out / "tokenizer.json").write_text(json.dumps(tj, ensure_ascii=False), encoding="utf-8")
    (out / "tokenizer_config.json").write_text(json.dumps(cfg, ensure_ascii=False), encoding="utf-8")
    for extra in ("special_tokens_map.json", "generation_config.json", "config.json"):
        if (src / extra).is_file():
            (out / extra).write_bytes((src / extra).read_bytes())
    return out


if __name__ == "__main__":
    sys.exit(main())
