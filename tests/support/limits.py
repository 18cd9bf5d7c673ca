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

REPO = Path(__file__).resolve().parents[2]
MEMORY = 3 * 2**30  # address space of the child: far below the 24 GB these inputs took unbounded


@dataclass
class Run:
    code: int  # exit status, or -signal
    out: str
    err: str
    seconds: float  # wall time
    peak_mib: float  # the child's peak RSS


# The measured command is started by a small launcher process: a child forked straight from the test
# process is charged that process's resident pages until its exec (the kernel keeps the fork's high
# water mark), so in a long pytest run a 40 MiB command showed 1.7 GiB.  The launcher is small when
# it forks, and it reports its child's own usage.
_LAUNCHER = """
import os, resource, sys, time
memory, cpu, deadline, report = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
def limit():
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
import subprocess
proc = subprocess.Popen(sys.argv[5:], stdin=subprocess.DEVNULL, preexec_fn=limit)
end = time.monotonic() + deadline
while True:
    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
    if pid:
        break
    if time.monotonic() > end:
        proc.kill()
    time.sleep(0.02)
with open(report, "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


def limited(argv: list[str], *, memory: int = MEMORY, cpu_seconds: int = 60, env: dict | None = None) -> Run:
    """`argv` run with RLIMIT_AS = `memory` and RLIMIT_CPU = `cpu_seconds`; stdout/stderr captured."""
    env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "usage"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", _LAUNCHER, str(memory), str(cpu_seconds), str(cpu_seconds * 3),
                        str(report), *argv], stdout=out, stderr=err, stdin=subprocess.DEVNULL, text=True, env=env,
                       check=False)
        seconds = time.perf_counter() - start
        code, maxrss = report.read_text().split()
        out.seek(0)
        err.seek(0)
        return Run(int(code), out.read(), err.read(), seconds, int(maxrss) / 1024)


def export_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mtok_export", "export", *args]
