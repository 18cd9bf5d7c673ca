"""The verification's time budget (`verify.budget`, issue 40): a stage stops at its share, a cut
phase is named with what was checked and what was not, and no limit (0) never stops anything."""

from __future__ import annotations

from mtok_export.verify.budget import SHARES, Budget


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_stages_stop_at_their_share_and_a_cut_is_named():
    clock = Clock()
    b = Budget(60, clock)
    assert not b.over() and b.left() == 60
    clock.now += 31
    assert b.over(SHARES["reference"]) and not b.over(SHARES["runtime"]) and not b.over()
    assert b.left(SHARES["runtime"]) == 60 * SHARES["runtime"] - 31
    clock.now += 29
    assert b.over() and b.left() == 0
    assert b.cut("sweep", 262_144, 262_144) is None and b.partial == []  # whole: nothing to name
    p = b.cut("sweep", 40_000, 262_144)
    assert b.partial == [p]
    assert p.line() == "sweep: 40,000 of 262,144 entries checked in 60 s (--verify-seconds 60); the rest not checked"
    assert p.to_json()["done"] == 40_000 and p.to_json()["total"] == 262_144


def test_no_limit_never_stops():
    clock = Clock()
    for b in (Budget(0, clock), Budget(None, clock)):
        clock.now += 10**6
        assert not b.over() and b.left() is None and not b.limited
