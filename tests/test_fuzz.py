"""Fuzz every reader for a few seconds with a fixed seed (the harness is `tests/fuzzing.py`; `make
fuzz` runs it longer).  No input may raise anything but an `MtokError`, hang, or make the writer
produce bytes our strict reader rejects."""

from __future__ import annotations

import pytest

from fuzzing import TARGETS, fuzz

SECONDS = 7  # per reader, six readers: the file stays under a minute on a loaded 2-core machine


@pytest.mark.parametrize("reader", sorted(TARGETS))
def test_reader_survives_mutated_inputs(reader):
    stats = fuzz(reader, SECONDS, seed=13)
    assert stats.tried >= 20, stats.as_row()  # the budget bought a meaningful number of inputs
    assert stats.clean > 0, stats.as_row()  # the mutations do reach the error paths
    detail = "\n".join(f"{k}  <-  {v}" for k, v in stats.examples.items())
    assert stats.defects == 0, f"{stats.as_row()}\n{dict(stats.other)}\n{detail}"
