"""The command lines run as the user runs them: in a child process, from the checkout."""

from __future__ import annotations

import subprocess
import sys

from tests.support.corpus_dirs import REPO


def export_cli(*args) -> subprocess.CompletedProcess:
    code = "import sys; from mtok_export.cli import export_main; sys.argv[0] = 'mtok-export'; export_main()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, cwd=REPO,
                          timeout=600)
