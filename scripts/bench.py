#!/usr/bin/env python3
"""Export, inspect and verify speed against a floor measured in the same run (`make bench`).

For each shared-corpus tokenizer, whole processes, median of `--repeat` runs (each after one warm-up,
so the Unicode table and reference caches are warm, as on a second export of a model):

* `floor`: a process that only reads the input, parses it with the fastest standard parser for its
  format (json, the sentencepiece protobuf, base64 lines) and sorts the vocabulary by UTF-8 bytes:
  what any exporter must at least do;
* `export`: `mtok-export --allow-lossy --no-verify`, as a ratio to `floor`;
* `inspect`: `mtok inspect` of the file, as a ratio to its own floor: a process that reads the
  `.mtok`, parses the three header lines and walks every vocabulary entry of the model section;
* `verify`: the default export (`--allow-lossy`, verification on), in seconds;
* peak RSS of the export process (MiB).

Then a scaling line per input format: export time minus floor against vocabulary size, fitted by
least squares (microseconds per vocabulary entry, and how well a line fits).  Ratios, not seconds, are what to
compare across machines and loads: floor and export run interleaved in the same minute."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "tokenizers"

FLOORS = {  # format name -> the floor program (argv[1] is the input file)
    "tokenizer.json": "import json,sys\nv=json.loads(open(sys.argv[1],'rb').read())['model']['vocab']\n"
                      "sorted(k.encode() for k in (v if isinstance(v, dict) else (t for t, _ in v)))",
    "sentencepiece": "import sys\nfrom sentencepiece import sentencepiece_model_pb2 as pb\nm=pb.ModelProto()\n"
                     "m.ParseFromString(open(sys.argv[1],'rb').read())\nsorted(p.piece.encode() for p in m.pieces)",
    "tiktoken": "import base64,sys\nsorted(base64.b64decode(l.split()[0]) for l in open(sys.argv[1],'rb').read()"
                ".splitlines() if l.strip())",
}
# argv: file, offset of the first vocabulary entry, count, bytes after each entry's string
INSPECT_FLOOR = ("import struct,sys\nd=open(sys.argv[1],'rb').read()\np=0\nfor _ in range(3): p=d.index(b'\\n',p)+1\n"
                 "p,n,extra=int(sys.argv[2]),int(sys.argv[3]),int(sys.argv[4])\nu=struct.Struct('<H').unpack_from\n"
                 "for _ in range(n):\n    k=u(d,p)[0]; bytes(d[p+2:p+2+k]); p+=2+k+extra")


# Byte code is written and used, as in any installed copy (PYTHONDONTWRITEBYTECODE=1 would make every
# process compile the whole package again: 0.1 s).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CWD = [Path(__file__).resolve().parents[1]]  # `python -m` puts the working directory first on sys.path


def run(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, cwd=CWD[0])
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 3):  # 3: a loss refused (not with --allow-lossy)
        raise SystemExit(f"failed ({status}): {' '.join(cmd)}")
    return seconds, usage.ru_maxrss / 1024


def median(cmds: dict[str, list[str]], repeat: int) -> dict[str, tuple[float, float]]:
    """Each command once to warm up, then `repeat` rounds with the commands interleaved."""
    for cmd in cmds.values():
        run(cmd)
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in cmds}
    for _ in range(repeat):
        for k, cmd in cmds.items():
            times[k].append(run(cmd))
    return {k: (statistics.median(t for t, _ in v), max(m for _, m in v)) for k, v in times.items()}


def model_entries(mtok: Path) -> tuple[int, int, int]:
    """(offset of the first vocabulary entry, entry count, bytes after each entry's string) of the
    model section (spec 2.5), located with our reader outside the timing."""
    from mtok_export.mtok import read_mtok

    data = mtok.read_bytes()
    _, layout = read_mtok(data)
    at = next(s for s in layout.sections if s.name == "model").offset
    kind, count = struct.unpack_from("<BI", data, at)
    if kind == 0:  # BPE: type, vocab_size, byte_fallback, byte_level, merge_size; str + u32 id
        return at + 11, count, 4
    if kind == 1:  # WordPiece: type, vocab_size, unk str, prefix str, u32 max; str + u32 id
        p = at + 5
        for _ in range(2):
            p += 2 + struct.unpack_from("<H", data, p)[0]
        return p + 4, count, 4
    return at + 10, count, 12  # Unigram: type, vocab_size, unk_id, byte_fallback; str + u32 id + f64


def input_of(d: Path):
    """[file, format name] of a model directory, or None for a folder of several models."""
    from mtok_export.formats import choose

    try:
        file, fmt, _ = choose(d)
    except Exception:  # noqa: BLE001  a folder of several models (sp-test-models): not a row
        return None
    return [str(file), fmt.name]


def ask(what: str, arg: Path):
    """`input_of` or `model_entries` answered by a child process: this one imports no package and
    reads no tokenizer, so its memory stays small.  (A measured child is forked from it, and the
    kernel counts the parent's pages in the child's peak RSS until the exec.)"""
    out = subprocess.run([sys.executable, __file__, f"--{what}", str(arg)], env=ENV, cwd=CWD[0], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", nargs="*", help="corpus tokenizer names (default: all)")
    ap.add_argument("--no-verify", action="store_true", help="skip the export-with-verification column")
    ap.add_argument("--tree", help="measure another checkout of this repository (e.g. a `git worktree` of an older "
                    "commit): its package runs the commands, with this interpreter and its libraries")
    ap.add_argument("--input-of", type=Path, help=argparse.SUPPRESS)  # the child side of `ask`
    ap.add_argument("--entries", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.input_of or args.entries:
        print(json.dumps(input_of(args.input_of) if args.input_of else model_entries(args.entries)))
        return
    if args.tree:
        ENV["PYTHONPATH"] = str(Path(args.tree).resolve())
        CWD[0] = Path(args.tree).resolve()
    mtok = [sys.executable, "-m", "mtok_export"]
    subprocess.run([*mtok, "--help"], env=ENV, cwd=CWD[0], check=True, stdout=subprocess.DEVNULL)  # byte code written
    dirs = [d for d in sorted(CORPUS.iterdir()) if d.is_dir() and (not args.only or d.name in args.only)]
    print(f"{'tokenizer':32} {'vocab':>8} {'floor s':>8} {'export':>13} {'inspect':>14} {'verify s':>9} {'RSS MiB':>8}")
    points: dict[str, list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for d in dirs:
            chosen = ask("input-of", d)
            if chosen is None or chosen[1] not in FLOORS:
                continue
            file, fmt = chosen
            out, vout = Path(tmp) / d.name, Path(tmp) / f"{d.name}-verified"
            export = [*mtok, "--quiet", "export", "--path", str(d), "-o", str(out), "--allow-lossy", "--no-verify"]
            run(export)
            mtok_file = out / "tokenizer.mtok"
            offset, count, extra = ask("entries", mtok_file)
            cmds = {"floor": [sys.executable, "-c", FLOORS[fmt], str(file)], "export": export,
                    "inspect floor": [sys.executable, "-c", INSPECT_FLOOR, str(mtok_file), str(offset), str(count),
                                      str(extra)],
                    "inspect": [*mtok, "inspect", str(mtok_file)]}
            if not args.no_verify:
                cmds["verify"] = [*mtok, "--quiet", "export", "--path", str(d), "-o", str(vout), "--allow-lossy"]
            m = median(cmds, args.repeat)
            floor, (export_s, rss) = m["floor"][0], m["export"]
            ratio_i = m["inspect"][0] / m["inspect floor"][0]
            verify = f"{m['verify'][0]:9.2f}" if "verify" in m else f"{'-':>9}"
            print(f"{d.name:32} {count:8,} {floor:8.3f} {export_s:6.2f} {export_s / floor:5.2f}x "
                  f"{m['inspect'][0]:6.2f} {ratio_i:5.2f}x  {verify} {rss:8.0f}", flush=True)
            points.setdefault(fmt, []).append((count, export_s - floor))
    for name, pts in points.items():  # one line per input format: their per-entry work differs
        if len(pts) < 3:
            continue
        n = len(pts)
        mx, my = sum(x for x, _ in pts) / n, sum(y for _, y in pts) / n
        sxx = sum((x - mx) ** 2 for x, _ in pts)
        slope = sum((x - mx) * (y - my) for x, y in pts) / sxx
        ss = sum((y - my) ** 2 for _, y in pts)
        r2 = 1 - sum((y - (my + slope * (x - mx))) ** 2 for x, y in pts) / ss if ss else 1.0
        print(f"\nscaling ({name}): export - floor = {my - slope * mx:.3f} s + {slope * 1e6:.2f} us per vocabulary "
              f"entry (R^2 = {r2:.2f} over {n} tokenizers)")
    helps = sorted(run([*mtok, "--help"])[0] for _ in range(5))
    print(f"mtok --help: {helps[2]:.3f} s (median of 5)")


if __name__ == "__main__":
    main()
