"""The CLI started through `signal_driver.py`, paused at a phase, and signalled there: shared by
`tests/acceptance/test_signals.py` (which asserts the outcomes) and `signal_matrix.py` (which prints them)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.corpus_dirs import SAMPLES
from tests.support.processes import processes_with, wait_for

SAMPLE = SAMPLES / "qwen-bpe"
DRIVER = Path(__file__).with_name("signal_driver.py")
OLD = b"the previous output\n"


def hung_python(tmp_path: Path) -> tuple[Path, str]:
    """A fake `--runtime-python`: answers export's version check, then hangs as the worker with a
    background child in its group.  -> (its path, the marker in its sleeps' command lines)."""
    marker = str(5000 + os.getpid() % 1000)
    script = tmp_path / "hung-python"
    script.write_text(f'#!/bin/sh\nif [ "$2" = "-c" ]; then printf 3.6.1; exit 0; fi\n'
                      f"sleep {marker}1 &\nexec sleep {marker}2\n")
    script.chmod(0o755)
    return script, marker


def default_signals() -> None:
    """The child's dispositions as a terminal gives them, whatever this run inherited (under nohup
    SIGHUP is ignored, and an ignored SIGHUP is rightly kept so)."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def start(phase: str, argv: list[str], env: dict, *swallow: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(DRIVER), phase, *swallow, *argv], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            preexec_fn=default_signals)


def signal_when(proc: subprocess.Popen, ready, signum: int) -> tuple[str, str]:
    """Send `signum` once `ready()` holds (the phase reached), -> (stdout, stderr) after it ended."""
    try:
        assert wait_for(lambda: ready() or proc.poll() is not None, 120), "the phase was never reached"
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signum)
        return proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def paused(proc: subprocess.Popen, phase: str):
    """-> ready(): whether the driver announced the pause at `phase` (reads stderr line by line)."""
    seen = []

    def ready():
        if not seen:
            line = proc.stderr.readline()
            if line.startswith(f"paused at {phase}"):
                seen.append(line)
        return bool(seen)
    return ready


def export_argv(out: Path, python: Path | None = None) -> list[str]:
    argv = ["mtok-export", "--path", str(SAMPLE), "--output", str(out), "--allow-lossy"]
    return argv + (["--runtime-python", str(python)] if python else [])


def start_export(tmp_path: Path, out: Path, phase: str, env: dict):
    """An export paused at `phase`, or for "runtime-hung" waiting on a hung fake runtime with its
    two sleeps running.  -> (the process, when it is ready to be signalled, the hung runtime's
    marker or None)."""
    if phase == "runtime-hung":
        python, marker = hung_python(tmp_path)
        proc = start("runtime", export_argv(out, python), env)
        return proc, lambda: len(processes_with(f"sleep {marker}")) == 2, marker
    proc = start(phase, export_argv(out), env)
    return proc, paused(proc, phase), None
