"""The cyclic collector is paused while a tokenizer's tables are built (`gc_pause.paused`, used by
export and convert) and is back as it was afterwards, on success and on failure."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from mtok_export import convert, export, gc_pause
from mtok_export.errors import InputError

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "qwen-bpe"


def test_paused_restores_the_collector_as_it_was():
    assert gc.isenabled()
    with gc_pause.paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_pause.paused():
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_pause.paused():
            pass
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_export_and_convert_build_with_the_collector_paused(tmp_path, monkeypatch):
    job = sys.modules["mtok_export.job"]  # where an export and a convert read and lower
    seen = []
    real = job.Job.lower  # the job lowers with its Target itself (no registry lookup by name)
    monkeypatch.setattr(job.Job, "lower", lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k))
    export(SAMPLE, tmp_path / "a", allow_lossy=True, verify_on_runtime=False)
    assert seen == [False] and gc.isenabled()
    assert (tmp_path / "a" / "tokenizer.mtok").is_file()
    real_read = job.read_source
    monkeypatch.setattr(job, "read_source", lambda *a, **k: seen.append(gc.isenabled()) or real_read(*a, **k))
    convert(SAMPLE, tmp_path / "b.mtok", allow_lossy=True)
    assert seen == [False, False, False] and gc.isenabled()  # convert reads, then lowers
    with pytest.raises(InputError):  # a failed read gives the collector back too
        export(tmp_path / "missing", tmp_path / "c", allow_lossy=True, verify_on_runtime=False)
    assert gc.isenabled()
