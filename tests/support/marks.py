"""Marks several test files share.  `runtime` (registered in pyproject.toml) is on every test that
starts the MNN runtime, a reference library's heavy load or a subprocess export, on the shared
corpus's rows of a sweep, and on the others that take seconds: the quick loop is
`pytest -m "not runtime"`, and tests/conftest.py fails an unmarked test that starts the runtime."""

from __future__ import annotations

import importlib.util

import pytest

runtime = pytest.mark.runtime
MNN_MISSING = pytest.mark.skipif(importlib.util.find_spec("MNN") is None, reason="MNN is not installed")


def needs_mnn(test):
    """A test that runs the MNN runtime: marked `runtime`, skipped where MNN is not installed."""
    return runtime(MNN_MISSING(test))


def sweep_param(name: str):
    """A row of a sweep over the corpus and `samples/`: only the samples' rows are in the quick loop."""
    return pytest.param(name, id=name, marks=() if name.startswith("samples/") else pytest.mark.runtime)
