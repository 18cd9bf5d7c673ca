#!/usr/bin/env python3
"""Speed of the `.mtok` codec, old tree against new, with floors measured in the same run.

    python scripts/bench_codec.py --tree /work/main --tree .   [--rounds 5] [NAME ...]

For every corpus tokenizer named (default: the largest BPE, Unigram and WordPiece ones) it times,
in each tree, `write_mtok` of the lowered IR, `read_mtok` of the bytes, `mtok inspect` in process
(`api.inspect` + the text view) and as a whole process.  Rounds alternate the trees, so load from
other processes hits both alike; each number is the median over the rounds (one warm-up call, then
one timed call per round).  Times are CPU seconds (user + system; children's from getrusage):
on a shared machine they vary far less than wall time.  Floors, measured in the same children:
  write:   sort the vocab by UTF-8 bytes, then `b"".join` the token bytes;
  inspect: read the file, parse its header, slice the body into its sections (offsets known).
The process floor is the same work in a fresh interpreter.  Output bytes are checked identical
across trees.  Nothing here is imported by the package or the tests.

    python scripts/bench_codec.py --write-read NAME --cache DIR [--repeat N]

is one whole process for an outside timer (`/usr/bin/time`, or hyperfine running it twice, with
PYTHONPATH=<tree> and a working directory outside both trees, so each tree's package is the one
imported): it loads NAME's lowered IR from DIR (lowering and saving it there on the first run),
then writes the `.mtok` and reads it back with the strict full reader, N times."""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "tokenizers"
DEFAULT = ["qwen2.5-instruct", "meta-llama-3-8b-instruct", "t5-small", "bert-base-uncased"]

# Runs inside a tree (PYTHONPATH=tree): one warm-up and one timed call of each job per input.
CHILD = r"""
import contextlib, io, json, pickle, sys, time
from pathlib import Path
from mtok_export.api import inspect
from mtok_export.cli import cmd_inspect
from mtok_export.lower import lower
from mtok_export.mtok import read_mtok, write_mtok
from mtok_export.mtok.header import read_header
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import TARGETS

work, corpus, names = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]

def once(fn):
    fn()
    t = time.process_time()
    fn()
    return time.process_time() - t

out = {}
for name in names:
    cache = work / (name + ".ir.pickle")
    if cache.exists():
        low = pickle.loads(cache.read_bytes())
    else:
        low = lower(read_model_dir(corpus / name), TARGETS["mnn-3.6"])[0]
        cache.write_bytes(pickle.dumps(low))
    data = write_mtok(low)
    path = work / (name + ".mtok")
    path.write_bytes(data)
    vocab = low.model.vocab
    tokens = [p for p, _ in vocab] if isinstance(vocab, tuple) else list(vocab)
    cuts = [(s.offset, s.offset + s.size) for s in read_mtok(data)[1].sections]

    def write_floor():
        b"".join(sorted([t.encode("utf-8") for t in tokens]))

    def inspect_floor():
        raw = path.read_bytes()
        read_header(raw)
        [raw[a:b] for a, b in cuts]

    def inspect_text():
        r = inspect(path)
        with contextlib.redirect_stdout(io.StringIO()):  # the text view renders, into nothing
            cmd_inspect._print(r.info, r.path)

    out[name] = {"bytes": len(data), "sha": __import__("hashlib").sha256(data).hexdigest(),
                 "write floor": once(write_floor), "write": once(lambda: write_mtok(low)),
                 "read": once(lambda: read_mtok(data)),
                 "inspect floor": once(inspect_floor), "inspect": once(inspect_text)}
print(json.dumps(out))
"""

# The same in a fresh interpreter, without the package (so both trees share one floor).
PROCESS_FLOOR = r"""
import sys
raw = open(sys.argv[1], "rb").read()
lines = raw.split(b"\n", 3)[:3]
[int(x) for line in lines for x in line.split()]
cuts = [int(x) for x in sys.argv[2:]]
[raw[a:b] for a, b in zip(cuts, cuts[1:])]
"""

INSPECT_PROCESS = "import sys; from mtok_export.cli import main; sys.argv = ['mtok', 'inspect', sys.argv[1]]; main()"


def run(tree: Path, code: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=tree, check=True,
                          capture_output=True, text=True)


def timed(tree: Path, code: str, *args: str) -> float:
    """CPU seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run(tree, code, *args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cell(m: dict, job: str, floor: str) -> str:
    return f"{1000 * m[job]:7.1f} {m[job] / m[floor]:4.1f}x"


def write_read(name: str, cache: Path, repeat: int) -> None:
    """One write and one full strict read of NAME's `.mtok`, `repeat` times, in this process."""
    import pickle

    from mtok_export.mtok import read_mtok, write_mtok

    ir = cache / (name + ".ir.pickle")
    if ir.exists():
        low = pickle.loads(ir.read_bytes())
    else:
        from mtok_export.lower import lower
        from mtok_export.readers.model_dir import read_model_dir
        from mtok_export.targets import TARGETS

        low = lower(read_model_dir(CORPUS / name), TARGETS["mnn-3.6"])[0]
        cache.mkdir(parents=True, exist_ok=True)
        ir.write_bytes(pickle.dumps(low))
    for _ in range(repeat):
        if read_mtok(write_mtok(low))[0] != low:
            sys.exit(f"{name}: the .mtok read back differs from the IR written")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", default=DEFAULT, help="corpus tokenizer folders")
    ap.add_argument("--tree", action="append", type=Path, help="a checkout to time (repeat)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--write-read", metavar="NAME", help="one process: write + read NAME's .mtok (see above)")
    ap.add_argument("--cache", type=Path, help="with --write-read: where the lowered IR is kept")
    ap.add_argument("--repeat", type=int, default=1, help="with --write-read: how many write + read rounds")
    args = ap.parse_args()
    if args.write_read:
        if args.cache is None:
            ap.error("--write-read needs --cache DIR")
        return write_read(args.write_read, args.cache, args.repeat)
    if not args.tree:
        ap.error("give --tree (twice, to compare), or --write-read")
    trees = [t.resolve() for t in args.tree]
    times: dict = {}  # (tree, name, job) -> [seconds]
    shas: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        works = {t: Path(tmp) / f"tree{i}" for i, t in enumerate(trees)}
        for w in works.values():
            w.mkdir()
        for _ in range(args.rounds):
            for tree in trees:
                result = json.loads(run(tree, CHILD, str(works[tree]), str(CORPUS), *args.names).stdout)
                for name, r in result.items():
                    shas.setdefault(name, set()).add(r.pop("sha"))
                    size = r.pop("bytes")
                    for job, sec in r.items():
                        times.setdefault((tree, name, job), []).append(sec)
                    mtok = works[tree] / f"{name}.mtok"
                    sections = json.loads(run(tree, "import json,sys; from mtok_export.mtok import read_mtok; "
                                                    "l = read_mtok(open(sys.argv[1],'rb').read())[1]; "
                                                    "print(json.dumps([l.header_size] + [s.offset + s.size "
                                                    "for s in l.sections]))", str(mtok)).stdout)
                    times.setdefault((tree, name, "process floor"), []).append(
                        timed(tree, PROCESS_FLOOR, str(mtok), *map(str, sections)))
                    times.setdefault((tree, name, "inspect process"), []).append(
                        timed(tree, INSPECT_PROCESS, str(mtok)))
                    times[(tree, name, "size")] = [size]
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"CPU ms, median of {args.rounds} rounds; x = ratio to the floor measured in the same child (in process) "
          "or the same round (process)")
    for name in args.names:
        same = "identical" if len(shas[name]) == 1 else "DIFFERENT"
        print(f"\n{name}: {int(med[(trees[0], name, 'size')]):,} bytes, output {same} across trees")
        print(f"  {'tree':24} {'write floor':>11} {'write':>14} {'read':>14} {'insp. floor':>11} "
              f"{'inspect':>14} {'proc. floor':>11} {'inspect proc.':>14}")
        for tree in trees:
            m = {job: med[(tree, name, job)] for job in ("write floor", "write", "read", "inspect floor", "inspect",
                                                         "process floor", "inspect process")}
            print(f"  {str(tree)[-24:]:24} {1000 * m['write floor']:11.1f} {cell(m, 'write', 'write floor'):>14} "
                  f"{cell(m, 'read', 'write floor'):>14} {1000 * m['inspect floor']:11.1f} "
                  f"{cell(m, 'inspect', 'inspect floor'):>14} {1000 * m['process floor']:11.1f} "
                  f"{cell(m, 'inspect process', 'process floor'):>14}")


if __name__ == "__main__":
    main()
