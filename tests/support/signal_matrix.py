"""Print the signal x phase matrix of `mtok-export` that `tests/acceptance/test_signals.py` asserts, as a table:
exit code, the output (kept / replaced), processes and files left, and for kill -9 what the next
export removed.

    python -m tests.support.signal_matrix"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.processes import processes_with, wait_for
from tests.support.signal_runs import OLD, export_argv, signal_when, start_export

REPO = Path(__file__).resolve().parents[2]
PHASES = ["read", "lower", "reference", "runtime", "runtime-hung", "rename", "commit"]
SIGNALS = [("SIGINT", signal.SIGINT), ("SIGTERM", signal.SIGTERM), ("SIGHUP", signal.SIGHUP),
           ("kill -9", signal.SIGKILL)]


def one(phase: str, signum: int) -> str:
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        root = tmp / "tmp"
        root.mkdir()
        env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(root), "MTOK_CACHE_DIR": str(tmp / "cache")}
        out = tmp / "out"
        out.mkdir()
        (out / "tokenizer.mtok").write_bytes(OLD)
        (out / "tokenizer.mtok.json").write_text("{}")
        proc, ready, marker = start_export(tmp, out, phase, env)
        signal_when(proc, ready, signum)
        wait_for(lambda: not processes_with(str(root)) and not (marker and processes_with(f"sleep {marker}")), 5)
        left_procs = len(processes_with(str(root))) + (len(processes_with(f"sleep {marker}")) if marker else 0)
        kept = (out / "tokenizer.mtok").read_bytes() == OLD
        files = sorted(p.name for p in out.iterdir() if p.name not in ("tokenizer.mtok", "tokenizer.mtok.json"))
        files += sorted(p.name for p in root.iterdir())
        cell = f"{proc.returncode}, {'kept' if kept else 'replaced'}, procs {left_procs}, files {len(files)}"
        if signum == signal.SIGKILL:
            if marker:  # the fake runtime has no PDEATHSIG, unlike the real worker
                for line in processes_with(f"sleep {marker}"):
                    os.kill(int(line.split()[0]), signal.SIGKILL)
            again = subprocess.run([sys.executable, "-m", "mtok_export", "export", *export_argv(out)[1:]], env=env,
                                   capture_output=True, text=True)
            rest = [p.name for p in out.iterdir() if p.name.startswith(".")] + [p.name for p in root.iterdir()]
            cell += f"; rerun {again.returncode}, left {len(rest)}"
        return cell


def main() -> None:
    print("| phase | " + " | ".join(name for name, _ in SIGNALS) + " |")
    print("|---" * (len(SIGNALS) + 1) + "|")
    for phase in PHASES:
        print(f"| {phase} | " + " | ".join(one(phase, s) for _, s in SIGNALS) + " |", flush=True)


if __name__ == "__main__":
    main()
