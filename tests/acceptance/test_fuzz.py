"""Fuzz every reader for a few seconds with a fixed seed (the harness is `tests/support/fuzzing.py`; `make
fuzz` runs it longer).  No input may raise anything but an `MtokError`, hang, or make the writer
produce bytes our strict reader rejects.  The chat-template and GGUF-field targets
(`fuzz_limited.py`) also may not take more than their child's memory limit."""

from __future__ import annotations

import tempfile

import pytest

from tests.support import fuzz_limited
from tests.support.fuzzing import TARGETS, fuzz

SECONDS = 7  # per reader, six readers: the file stays under a minute on a loaded 2-core machine


pytestmark = pytest.mark.runtime  # seconds of fuzzing per reader, limited targets in child processes


@pytest.mark.parametrize("reader", sorted(TARGETS))
def test_reader_survives_mutated_inputs(reader):
    stats = fuzz(reader, SECONDS, seed=13)
    assert stats.tried >= 20, stats.as_row()  # the budget bought a meaningful number of inputs
    assert stats.clean > 0, stats.as_row()  # the mutations do reach the error paths
    detail = "\n".join(f"{k}  <-  {v}" for k, v in stats.examples.items())
    assert stats.defects == 0, f"{stats.as_row()}\n{dict(stats.other)}\n{detail}"


@pytest.mark.parametrize("target", fuzz_limited.TARGETS)
def test_limited_target_survives_hostile_cases(target, tmp_path, monkeypatch):
    # chat templates and GGUF fields: each case in a memory- and time-limited child (fuzz_limited.py)
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the parent's and the children's temporary folder
    monkeypatch.setattr(tempfile, "tempdir", None)
    stats = fuzz_limited.fuzz(target, 8, seed=13)
    assert stats.tried >= 10 and stats.counts["clean"] > 0, stats.as_row()
    detail = "\n".join(f"{k}  <-  {v}" for k, v in stats.examples.items())
    assert stats.defects == 0, f"{stats.as_row()}\n{detail}"
    assert list(tmp_path.iterdir()) == []  # the killed children's scratch folders went with the parent's
