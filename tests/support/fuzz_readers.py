"""`make fuzz`: fuzz every reader for longer than the suite does and print, per reader, the inputs
tried, clean errors (`MtokError`), other exceptions (must be 0), hangs (must be 0), peak memory,
and outputs written for mutated inputs that the strict reader rejects (must be 0).

    python -m tests.support.fuzz_readers [--seconds 60] [--seed 13] [--reader NAME ...] [--json]

Each reader runs in its own process so its peak memory (max RSS) is its own.  The harness is
`fuzzing.py` beside it (shared with `tests/acceptance/test_fuzz.py`).  Exit 1 when any defect was found, and each
defect is listed with an input that shows it."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from tests.support.fuzzing import REPO, TARGETS, fuzz


def child(reader: str, seconds: float, seed: int) -> None:
    """Run one reader here and print its row as JSON (with this process's peak RSS)."""
    import resource

    stats = fuzz(reader, seconds, seed)
    row = stats.as_row()
    row["peak MiB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux
    row["defects"] = {**{k: v for k, v in stats.other.items()}, **({"hang": stats.hangs} if stats.hangs else {})}
    row["examples"] = stats.examples
    print(json.dumps(row))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60, help="per reader")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--reader", action="append", choices=sorted(TARGETS))
    ap.add_argument("--json", action="store_true", help="one JSON row per reader")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.seconds, args.seed)
        return 0
    rows = []
    for reader in args.reader or list(TARGETS):
        r = subprocess.run([sys.executable, "-m", "tests.support.fuzz_readers", "--child", reader, "--seconds",
                            str(args.seconds), "--seed", str(args.seed)], capture_output=True, text=True, cwd=REPO)
        if r.returncode != 0:
            print(f"{reader}: the fuzzing process failed (exit {r.returncode}):\n{r.stderr[-2000:]}", file=sys.stderr)
            return 1
        rows.append(json.loads(r.stdout.strip().splitlines()[-1]))
        if not args.json:
            print(f"{reader}: done", file=sys.stderr)
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        cols = ["reader", "tried", "clean errors", "other exceptions", "hangs", "peak MiB", "outputs written",
                "written but rejected by the strict reader"]
        widths = [max(len(c), *(len(str(row[c])) for row in rows)) for c in cols]
        print("  ".join(c.rjust(w) for c, w in zip(cols, widths)))
        for row in rows:
            print("  ".join(str(row[c]).rjust(w) for c, w in zip(cols, widths)))
        for row in rows:
            for key, example in row["examples"].items():
                print(f"{row['reader']}: {key}\n    input: {example}")
    bad = sum(row["other exceptions"] + row["hangs"] + row["written but rejected by the strict reader"] for row in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
