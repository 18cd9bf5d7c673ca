"""The command lines run as the user runs them: in a child process, from the checkout."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.corpus_dirs import REPO


def export_cli(*args) -> subprocess.CompletedProcess:
    code = "import sys; from mtok_export.cli import export_main; sys.argv[0] = 'mtok-export'; export_main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, cwd=REPO,
                          timeout=600)


def mtok(*args, prog="mtok") -> subprocess.CompletedProcess:
    """`mtok` (or `mtok-export`, prog=) with `args`, as a user runs it."""
    code = ("import sys; from mtok_export.cli import main, export_main; "
            f"sys.argv[0] = {prog!r}; (main if {prog!r} == 'mtok' else export_main)()")
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)


def mtok_here(monkeypatch, capsys, *argv) -> tuple[int, str, str]:
    """`mtok` with `argv` in this process (no child: fast, for errors before anything runs)
    -> (exit code, stdout, stderr)."""
    from mtok_export import cli

    monkeypatch.setattr(sys, "argv", ["mtok", *argv])
    code = None
    try:
        cli.main()
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err
