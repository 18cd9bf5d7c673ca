"""The released pre-pipeline runtime, MNN 3.4.1, for tests of legacy `tokenizer.txt` files.

`mnn341_python` (session fixture) is the path of a Python interpreter that imports MNN 3.4.1:

1. `$MTOK_MNN341_PYTHON` if set (a venv you made yourself);
2. else `venv-mnn341` in the tool's cache directory (`$MTOK_CACHE_DIR`, else
   `~/.cache/mtok-export`), outside the repository so `make clean` and git never see 150 MB of
   it; created on first use with `python -m venv` and `pip install MNN==3.4.1` (CI has nothing
   preinstalled).  Creation happens in a temporary directory renamed into place, under a file
   lock beside it, so concurrent sessions neither race nor leave half a venv behind.  A
   `<repo>/.venv-mnn341` left by older versions is moved there instead of downloading again.

The test is skipped (not failed) only when the venv cannot be created: no network or no wheel for
this platform.  Import this module's fixture into a test module with
`from legacy_runtime import mnn341_python  # noqa: F401`."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mtok_export.unicode.tables import cache_dir

REPO = Path(__file__).resolve().parents[1]
VENV = cache_dir() / "venv-mnn341"  # resolved at import, before any test points the cache elsewhere
OLD_VENV = REPO / ".venv-mnn341"
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
    with open(venv.with_name(venv.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.is_file() and _version(python) == VERSION:  # another session made it meanwhile
            return str(python)
        shutil.rmtree(venv, ignore_errors=True)
        if venv == VENV and _version(OLD_VENV / "bin/python") == VERSION:
            shutil.move(str(OLD_VENV), str(venv))  # a venv survives a move: bin/python links the base
            if _version(python) == VERSION:
                return str(python)
            shutil.rmtree(venv, ignore_errors=True)
        why = _create(venv)
        if why:
            raise RuntimeError(why)
    return str(python)


def installed_mnn341() -> str | None:
    """The interpreter `ensure_mnn341` would return without creating one (for the parity tables'
    command lines), or None."""
    env = os.environ.get("MTOK_MNN341_PYTHON")
    python = Path(env) if env else VENV / "bin/python"
    return str(python) if python.is_file() else None


@pytest.fixture(scope="session")
def mnn341_python() -> str:
    try:
        return ensure_mnn341()
    except RuntimeError as e:
        pytest.skip(f"MNN {VERSION} runtime unavailable: {e}")
