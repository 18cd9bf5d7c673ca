"""The runtime worker's progress as `run_runtime(tell=...)` reports it: its progress record read while
it runs (`runtime._tell`), by a wait that wakes every `TICK` seconds without losing output."""

from __future__ import annotations

import sys

from mtok_export.verify import runtime as R


def test_the_progress_record_becomes_phase_counts():
    seen = []
    tell = lambda *a: seen.append(a)  # noqa: E731
    robust = R.RobustRequest(texts=["a"] * 7, groups=["g"] * 7, seconds=1.0, stack=1 << 18)
    for record in ("import MNN".ljust(64), "load", "encode 41".ljust(64), "decode 5", "robust 3", "done"):
        R._tell(tell, record, 100, robust)
    assert seen == [("runtime", 41, 100), ("runtime", 100, 100), ("robustness", 3, 7)]


def test_the_wait_ticks_and_keeps_the_output():
    ticks = []
    code = "import sys, time; sys.stdout.write('a'); sys.stdout.flush(); time.sleep(1.3); sys.stdout.write('b')"
    rc, out, _ = R._run_group([sys.executable, "-c", code], 30, runtime=False, tick=lambda: ticks.append(1))
    assert (rc, out) == (0, b"ab")
    assert len(ticks) >= 2
