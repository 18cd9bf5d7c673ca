"""`verify.steps.Steps`: a caller's progress callback in either form it may take."""

from __future__ import annotations

from mtok_export.verify.steps import EVERY, Steps


def test_one_argument_callback_gets_each_phase_once():
    seen = []
    step = Steps(seen.append)
    step("reference")
    step("runtime", 0, 10)
    step("runtime", 10, 10)
    step("vocab sweep", 5, 9)
    assert seen == ["reference", "runtime", "vocab sweep"]


def test_three_argument_callback_gets_counts_rate_limited_and_the_end():
    now = [0.0]
    seen = []
    step = Steps(lambda phase, done, total: seen.append((phase, done, total)), clock=lambda: now[0])
    step("runtime")
    for k in range(100):  # all within one EVERY: only the first count and the last
        step("runtime", k, 100)
    now[0] += EVERY
    step("runtime", 100, 100)
    step("vocab sweep", 0, 3)
    assert seen == [("runtime", None, None), ("runtime", 0, 100), ("runtime", 100, 100),
                    ("vocab sweep", None, None), ("vocab sweep", 0, 3)]


def test_callback_with_defaults_takes_counts():
    seen = []
    Steps(lambda phase, done=None, total=None: seen.append((phase, done)))("robustness", 3, 4)
    assert seen == [("robustness", None), ("robustness", 3)]


def test_no_callback():
    Steps(None)("runtime", 1, 2)  # nothing to tell, nothing raised
