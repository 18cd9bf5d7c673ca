"""MNN 3.4.1, the released pre-`.mtok` runtime: the reference for a legacy `tokenizer.txt` input.

It cannot share this tool's environment (that one has the current MNN), so it lives in its own venv:

1. `$MTOK_MNN341_PYTHON`, an interpreter that imports MNN 3.4.1 (a venv you made yourself);
2. else `venv-mnn341` in the cache directory (`$MTOK_CACHE_DIR`, else `~/.cache/mtok-export`),
   outside the repository so `make clean` and git never see its 150 MB.

`find()` is what the tool calls at export/verify time: it never installs, it names the command
that does (`ReferenceUnavailable.install`).  That command is this module run as a script
(`python -m mtok_export.verify.mnn341`; `make setup` runs it): idempotent, it creates the venv
with `python -m venv` and `pip install MNN==3.4.1` in a temporary directory renamed into place,
under a file lock beside it, so concurrent sessions neither race nor leave half a venv behind.
A `<repo>/.venv-mnn341` left by older versions is moved there instead of downloading again."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from ..io import cache_dir
from .reference import ReferenceUnavailable

VERSION = "3.4.1"
ENV = "MTOK_MNN341_PYTHON"
OLD_VENV = Path(__file__).resolve().parents[2] / ".venv-mnn341"  # a checkout's, from older versions


def venv_dir() -> Path:
    return cache_dir() / "venv-mnn341"


def setup_command() -> str:
    """The exact command that creates the venv `find` looks for (in the current cache directory)."""
    cache = os.environ.get("MTOK_CACHE_DIR")
    prefix = f"MTOK_CACHE_DIR={shlex.quote(cache)} " if cache else ""
    return f"{prefix}{shlex.quote(sys.executable)} -m mtok_export.verify.mnn341"


def find() -> Path:
    """The interpreter that runs MNN 3.4.1; `ReferenceUnavailable` when there is none.  Only looks
    for the file (importing MNN costs a process); the caller checks the version the run reports."""
    env = os.environ.get(ENV)
    if env:
        if not Path(env).is_file():
            raise ReferenceUnavailable(f"${ENV}={env}: no such interpreter",
                                       f"point ${ENV} at a Python with MNN=={VERSION}, or unset it and run "
                                       f"`{setup_command()}`")
        return Path(env)
    python = venv_dir() / "bin" / "python"
    if not python.is_file():
        raise ReferenceUnavailable(f"MNN {VERSION} (the reference for a legacy tokenizer.txt) is not set up: "
                                   f"no {python}", setup_command())
    return python


def version_of(python: Path) -> str | None:
    """MNN.version() in `python`, None when it does not import."""
    try:
        out = subprocess.run([str(python), "-I", "-c", "import MNN; print('MNN=' + MNN.version())"],
                             capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    # MNN's import prints a line at C level, flushed before or after ours
    found = [x[4:] for x in out.stdout.splitlines() if x.startswith("MNN=")]
    return found[0] if out.returncode == 0 and found else None


def ensure(venv: Path | None = None) -> Path:
    """Create the venv unless it already runs MNN 3.4.1; -> its interpreter.  `RuntimeError(why)`
    when it cannot be made (no network, no wheel for this platform)."""
    venv = venv or venv_dir()
    python = venv / "bin" / "python"
    if python.is_file() and version_of(python) == VERSION:
        return python
    import fcntl  # POSIX; only the creation needs it

    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.with_name(venv.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.is_file() and version_of(python) == VERSION:  # another session made it meanwhile
            return python
        shutil.rmtree(venv, ignore_errors=True)
        if version_of(OLD_VENV / "bin" / "python") == VERSION:
            shutil.move(str(OLD_VENV), str(venv))  # a venv survives a move: bin/python links the base
            if version_of(python) == VERSION:
                return python
            shutil.rmtree(venv, ignore_errors=True)
        _create(venv)
    return python


def _create(venv: Path) -> None:
    tmp = venv.with_name(venv.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(tmp)], check=True, capture_output=True, timeout=300)
        pip = subprocess.run([str(tmp / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              f"MNN=={VERSION}"], capture_output=True, text=True, timeout=900)
        if pip.returncode != 0:
            raise RuntimeError(f"pip install MNN=={VERSION} failed: {(pip.stderr or pip.stdout).strip()[-400:]}")
        if version_of(tmp / "bin" / "python") != VERSION:
            raise RuntimeError(f"the new venv does not import MNN {VERSION}")
        os.replace(tmp, venv)
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(f"cannot create {venv}: {e}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    try:
        python = ensure()
    except RuntimeError as e:
        print(f"error: MNN {VERSION} venv: {e}", file=sys.stderr)
        return 1
    print(f"MNN {VERSION}: {python}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
