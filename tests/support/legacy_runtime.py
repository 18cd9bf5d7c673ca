"""The released pre-pipeline runtime, MNN 3.4.1, for tests of legacy `tokenizer.txt` files.

`mnn341_python` (session fixture) is the path of the interpreter that imports MNN 3.4.1, found as
the tool finds it (`mtok_export.verify.mnn341.find`: `$MTOK_MNN341_PYTHON`, else `venv-mnn341` in
the cache directory).  A test never creates it: `make setup` does (`python -m
mtok_export.verify.mnn341`); without it the test is skipped with that command (failed
under `MTOK_TESTS_STRICT=1`, as in CI).  `tests/conftest.py`
provides the fixture to every test."""

from __future__ import annotations

import pytest

from mtok_export.verify import mnn341
from mtok_export.verify.reference import ReferenceUnavailable

from tests.support.installed import missing


def installed_mnn341() -> str | None:
    """The interpreter, or None (for the parity tables' command lines)."""
    try:
        return str(mnn341.find())
    except ReferenceUnavailable:
        return None


@pytest.fixture(scope="session")
def mnn341_python() -> str:
    try:
        python = mnn341.find()
    except ReferenceUnavailable as e:
        missing(e.why, e.install)
    if mnn341.version_of(python) != mnn341.VERSION:
        missing(f"{python} does not import MNN {mnn341.VERSION}", mnn341.setup_command())
    return str(python)
