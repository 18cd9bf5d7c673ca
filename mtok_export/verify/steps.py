"""What verification tells its caller while it runs: each phase as it starts, and for a phase with
countable work (the runtime's encodes, the vocabulary sweep's comparisons) how far it is.

A caller's `progress` is `progress(phase)` (the form older callers give: told each phase once) or
`progress(phase, done, total)` (told the phase with `done=None, total=None` when it starts, then its
counts, at most every `EVERY` seconds and once at the end).  `Steps` hides the difference."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable

EVERY = 0.25  # seconds between two counts of one phase (a callback that prints is not flooded)


def _takes_counts(progress) -> bool:
    """Does `progress` accept (phase, done, total)?"""
    try:
        sig = inspect.signature(progress)
    except (TypeError, ValueError):  # a builtin without a signature: the old form
        return False
    try:
        sig.bind("phase", 0, 0)
    except TypeError:
        return False
    return True


class Steps:
    def __init__(self, progress: Callable | None = None, clock=time.monotonic):
        self._progress = progress
        self._counts = progress is not None and _takes_counts(progress)
        self._clock = clock
        self.phase = ""
        self._last = float("-inf")

    def __call__(self, phase: str, done: int | None = None, total: int | None = None) -> None:
        """`phase` starts (no counts), or has done `done` of `total`."""
        if self._progress is None:
            return
        if phase != self.phase:
            self.phase, self._last = phase, float("-inf")
            self._progress(phase, None, None) if self._counts else self._progress(phase)
        if done is None or not self._counts:
            return
        now = self._clock()
        if done >= (total or 0) or now - self._last >= EVERY:
            self._last = now
            self._progress(phase, done, total)
