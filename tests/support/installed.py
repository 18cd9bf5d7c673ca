"""What the set-up installs for the tests (`make setup`): a test never installs or downloads.

`import_installed(name)` imports a module of the `test` extra; `package_file(distribution, member)` is a file
of a package pinned in `tests/requirements-no-deps.txt`, read from the installed package.  A missing
one skips the test with the command that installs it, or fails it where the set-up must have
provided everything (`MTOK_TESTS_STRICT=1`, set by `.ci/run`)."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

REQUIREMENTS = Path(__file__).resolve().parents[1] / "requirements-no-deps.txt"
TEST_EXTRA = f"{sys.executable} -m pip install -e '.[test]'"


def missing(why: str, command: str):
    """Skip with the command that provides what is missing (fail under MTOK_TESTS_STRICT)."""
    if os.environ.get("MTOK_TESTS_STRICT"):
        pytest.fail(f"{why}: the set-up must provide it (`{command}`)", pytrace=False)
    pytest.skip(f"{why}; install it with `{command}`")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins() -> dict[str, str]:
    """canonical distribution name -> pinned version, from tests/requirements-no-deps.txt."""
    out = {}
    for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        requirement = line.split("#", 1)[0].strip()
        if requirement:
            name, version = requirement.split("==")
            out[_canonical(name)] = version
    return out


def import_installed(name: str):
    """Import `name`, a module the `test` extra installs."""
    if importlib.util.find_spec(name) is None:
        missing(f"{name} is not installed", TEST_EXTRA)
    return importlib.import_module(name)


def package_file(distribution: str, member: str) -> Path:
    """The installed file `member` (a path inside site-packages) of the pinned `distribution`."""
    version = pins()[_canonical(distribution)]
    command = f"{sys.executable} -m pip install --no-deps '{distribution}=={version}'"
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        missing(f"{distribution} is not installed", command)
    if dist.version != version:
        missing(f"{distribution} {dist.version} is installed, the tests read {version}", command)
    path = Path(dist.locate_file(member))
    if not path.is_file():
        pytest.fail(f"{distribution} {version} has no {member}")
    return path
