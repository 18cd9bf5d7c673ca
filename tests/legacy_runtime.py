"""The released pre-pipeline runtime, MNN 3.4.1, for tests of legacy `tokenizer.txt` files.

`mnn341_python` (session fixture) is the path of a Python interpreter that imports MNN 3.4.1:

1. `$MTOK_MNN341_PYTHON` if set (a venv you made yourself);
2. else `<repo>/.venv-mnn341`, created on first use with `python -m venv` and
   `pip install MNN==3.4.1` (CI has nothing preinstalled).  Creation happens in a temporary
   directory renamed into place, under a file lock (in the system temp directory), so concurrent
   sessions neither race nor leave half a venv behind.  Add `.venv-mnn341/` to .gitignore.

The test is skipped (not failed) only when the venv cannot be created: no network or no wheel for
this platform.  Import this module's fixture into a test module with
`from legacy_runtime import mnn341_python  # noqa: F401`."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENV = REPO / ".venv-mnn341"
VERSION = "3.4.1"


def _version(python: Path) -> str | None:
    try:
        out = subprocess.run([str(python), "-c", "import MNN; print(MNN.version())"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = out.stdout.strip().splitlines()
    return lines[-1].strip() if out.returncode == 0 and lines else None


def _create(venv: Path) -> str:
    """Create the venv at `venv`; returns '' on success, else why not."""
    tmp = venv.with_name(venv.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(tmp)], check=True, capture_output=True, timeout=300)
        pip = subprocess.run([str(tmp / "bin/python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              f"MNN=={VERSION}"], capture_output=True, text=True, timeout=900)
        if pip.returncode != 0:
            return f"pip install MNN=={VERSION} failed: {(pip.stderr or pip.stdout).strip()[-400:]}"
        if _version(tmp / "bin/python") != VERSION:
            return f"the new venv does not import MNN {VERSION}"
        os.replace(tmp, venv)
        return ""
    except (OSError, subprocess.SubprocessError) as e:
        return f"cannot create {venv}: {e}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ensure_mnn341(venv: Path = VENV) -> str:
    """-> interpreter path; raises RuntimeError(reason) when it cannot be made."""
    env = os.environ.get("MTOK_MNN341_PYTHON")
    if env:
        if _version(Path(env)) != VERSION:
            raise RuntimeError(f"$MTOK_MNN341_PYTHON={env} does not import MNN {VERSION}")
        return env
    python = venv / "bin/python"
    if python.is_file() and _version(python) == VERSION:
        return str(python)
    venv.parent.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(str(venv.resolve()).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"mtok-venv-mnn341-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.is_file() and _version(python) == VERSION:  # another session made it meanwhile
            return str(python)
        shutil.rmtree(venv, ignore_errors=True)
        why = _create(venv)
        if why:
            raise RuntimeError(why)
    return str(python)


@pytest.fixture(scope="session")
def mnn341_python() -> str:
    try:
        return ensure_mnn341()
    except RuntimeError as e:
        pytest.skip(f"MNN {VERSION} runtime unavailable: {e}")
