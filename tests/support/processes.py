"""What the stop and cleanup tests look at from outside: the processes whose command line names a
marker, and waiting for a condition with a time bound."""

from __future__ import annotations

import subprocess
import time


def processes_with(text: str) -> list[str]:
    """`pid args` of every process whose command line holds `text` (not the `ps` asking)."""
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True).stdout
    return [line for line in ps.splitlines() if text in line and "ps -eo" not in line]


def wait_for(predicate, timeout: float, poll: float = 0.05) -> bool:
    """Whether `predicate()` held within `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(poll)
    return False
