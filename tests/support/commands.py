"""The two ways the tests run the command line, the only two: `run_here` in this process (fast; the
`cli` fixture of tests/conftest.py binds it to a test's monkeypatch and capsys) and `run_process`, a
child process from the checkout as a user runs it, where a test needs the whole process (its exit
code and streams as the shell sees them, what it imports at start-up, an installed-like launch).
Both take the program first (`mtok` or `mtok-export`) and the arguments as given."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.corpus_dirs import REPO

PROGRAMS = ("mtok", "mtok-export")


def run_here(monkeypatch, capsys, prog: str, *args) -> tuple[int, str, str]:
    """`prog` with `args` in this process -> (exit code, stdout, stderr)."""
    from mtok_export.cli import export_main, main

    assert prog in PROGRAMS, prog
    monkeypatch.setattr(sys, "argv", [prog, *map(str, args)])
    code = None
    try:
        (main if prog == "mtok" else export_main)()
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return (0 if code is None else code), out, err


def run_process(prog: str, *args, cwd=REPO, env: dict | None = None,
                timeout: float = 600) -> subprocess.CompletedProcess:
    """`prog` with `args` in a child process, from the checkout (`PYTHONPATH`), as a user runs it;
    `env`: the child's whole environment (default: this one's)."""
    assert prog in PROGRAMS, prog
    code = ("import sys; from mtok_export.cli import main, export_main; "
            f"sys.argv[0] = {prog!r}; (main if {prog!r} == 'mtok' else export_main)()")
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env={**(os.environ if env is None else env), "PYTHONPATH": str(REPO)}, timeout=timeout)
