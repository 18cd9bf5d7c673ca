"""Run a command in a child process under a memory and CPU-time limit and measure it: the hostile
inputs (issue 25) must fail cleanly within a bound, never take the machine's memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MEMORY = 3 * 2**30  # address space of the child: far below the 24 GB these inputs took unbounded


@dataclass
class Run:
    code: int  # exit status, or -signal
    out: str
    err: str
    seconds: float  # wall time
    peak_mib: float  # the child's peak RSS


def limited(argv: list[str], *, memory: int = MEMORY, cpu_seconds: int = 60, env: dict | None = None) -> Run:
    """`argv` run with RLIMIT_AS = `memory` and RLIMIT_CPU = `cpu_seconds`; stdout/stderr captured."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))

    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, text=True, env=env,
                                preexec_fn=limit)
        deadline = start + cpu_seconds * 3
        while True:  # reaped here, not by Popen: wait4 gives this child's own peak RSS
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
            time.sleep(0.02)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(proc.returncode, out.read(), err.read(), seconds, usage.ru_maxrss / 1024)


def export_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mtok_export", "export", *args]
