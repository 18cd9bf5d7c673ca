"""SIGINT, SIGTERM and SIGHUP stop a command the same way, in every phase: the Python exception
unwinds (temporary files removed, the output not replaced), worker process groups are killed, and
the CLI exits 128 + the signal number (130, 143, 129).

SIGTERM's and SIGHUP's default actions end the process without unwinding, which would leave the
runtime worker, its temporary folder and the `.verifying` file behind; `handled()` makes them raise
`Interrupted` (a KeyboardInterrupt, so no `except Exception` swallows it) like Ctrl-C's
KeyboardInterrupt.

Raising is not enough when a worker runs: an exception raised in the middle of a library call can
be swallowed (a bare `except:`, a `__del__`), or raised inside `subprocess.Popen` after the fork,
before the caller holds the process.  So the handler itself first runs the registered `on_stop`
kills, and `deferred()` holds the exception while such a window is open; `raise_pending()` raises
a signal that arrived and was not raised (or was swallowed) where the caller can act on it."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from contextlib import contextmanager

from .errors import Interrupted

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

_kills: list[Callable[[], None]] = []  # run by the handler before it raises (innermost last)
_deferring = 0  # > 0: the handler records, the exception waits for raise_pending()
_received: list[int] = []  # signals taken since the outermost handled() began
_once = False  # a forked job (`for_forked_job`): only the first stop signal raises
_raised = False  # in a forked job, the first has raised


def _stop_exception(signum: int) -> BaseException:
    return KeyboardInterrupt() if signum == signal.SIGINT else Interrupted(signum)


def _raise(signum: int) -> None:
    global _raised
    if _once and _raised:
        return
    _raised = True
    raise _stop_exception(signum)


def _handler(signum, frame):
    _received.append(signum)
    for kill in reversed(_kills):
        kill()
    if not _deferring:
        _raise(signum)


@contextmanager
def handled():
    """While the block runs (in the main thread), the stop signals raise in it: SIGINT
    KeyboardInterrupt, SIGTERM and SIGHUP `Interrupted`, after the `on_stop` kills have run.
    Nested use keeps the outer handlers; elsewhere than the main thread it changes nothing.

    A SIGHUP ignored when we started stays ignored (`nohup`).  A SIGINT ignored when we started is
    handled all the same: a shell without job control starts background commands so, and Python
    then keeps it ignored, so an explicit `kill -INT` did nothing while the runtime worker hung
    (the flaky test_runtime_cleanup: stderr stopped at "verify: runtime")."""
    if threading.current_thread() is not threading.main_thread() or _installed():
        yield
        return
    previous = {s: signal.signal(s, _handler) for s in STOP_SIGNALS
                if not (s == getattr(signal, "SIGHUP", None) and signal.getsignal(s) == signal.SIG_IGN)}
    _received.clear()
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def _installed() -> bool:
    return signal.getsignal(signal.SIGTERM) is _handler


@contextmanager
def on_stop(kill: Callable[[], None]):
    """Run `kill` (idempotent, quick, never raising) from the handler when a stop signal arrives
    inside the block, before any exception is raised."""
    _kills.append(kill)
    try:
        yield
    finally:
        _kills.remove(kill)


@contextmanager
def deferred():
    """A stop signal arriving inside the block is recorded (and the `on_stop` kills run) but not
    raised there; it is raised when the block ends."""
    global _deferring
    seen = len(_received)
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
    if len(_received) > seen and not _deferring:
        _raise(_received[-1])


def for_forked_job() -> None:
    """In a fleet's forked job, for the rest of its life: the stop signals raise as in `handled()`,
    but only the first one.  A job stopped by Ctrl-C gets SIGINT twice, the terminal's and then the
    fleet's own (which also stops a job the terminal did not reach); the second, arriving while the
    first unwinds, must not cut that cleanup short (a `.verifying` file was left behind when it hit
    export's `finally`)."""
    global _once, _raised, _deferring
    _once, _raised, _deferring = True, False, 0
    _kills.clear()
    _received.clear()
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, _handler)


def raise_pending(since: int) -> None:
    """Raise the last stop signal taken after `mark()` returned `since`, if any (one that was
    swallowed on the way, or deferred)."""
    if len(_received) > since:
        raise _stop_exception(_received[-1])


def mark() -> int:
    return len(_received)


def received() -> int | None:
    """The last stop signal taken while `handled()` ran (for the CLI's exit code), or None."""
    return _received[-1] if _received else None
