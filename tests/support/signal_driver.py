"""Run the CLI with a pause at one phase, for `tests/acceptance/test_signals.py`: the test sends a signal once the
pause is announced, so every phase is hit at a known point instead of by timing.

    python tests/support/signal_driver.py PHASE [--swallow] mtok|mtok-export ARGS...

At PHASE the process prints `paused at PHASE` to stderr and sleeps (the signal interrupts it);
with `--swallow` the pause catches every exception, as a library call that swallows the
KeyboardInterrupt would, and the command goes on as if nothing happened.  Phases: read, lower,
reference (the verify step of that name), runtime (the projections made ready while the worker
runs), rename (just before the output is replaced), commit (inside the replace itself)."""

from __future__ import annotations

import functools
import os
import sys
import time


def pause(phase: str, swallow: bool) -> None:
    """Announce the phase and wait for a stop signal (at most 60 s).  A deferred signal (commit)
    raises nothing here: the wait ends when the handler has recorded it."""
    from mtok_export import signals

    since = signals.mark()
    sys.stderr.write(f"paused at {phase}\n")
    sys.stderr.flush()
    end = time.monotonic() + 60
    try:
        while signals.mark() == since and time.monotonic() < end:
            time.sleep(0.02)
    except BaseException:  # noqa: BLE001  what a library call with a bare except does
        if not swallow:
            raise


def paused_before(func, phase: str, swallow: bool):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        pause(phase, swallow)
        return func(*args, **kwargs)
    return wrapper


def main() -> None:
    phase, args = sys.argv[1], sys.argv[2:]
    swallow = args[0] == "--swallow"
    if swallow:
        args = args[1:]
    import mtok_export.export  # noqa: F401  (the package's lazy API names the function `export` too)
    from mtok_export import cli
    from mtok_export.cli import gate
    from mtok_export.verify import attribution

    export = sys.modules["mtok_export.export"]
    job = sys.modules["mtok_export.job"]  # the export and `mtok verify` read and lower through the Job

    if phase == "read":
        job.read_source = paused_before(job.read_source, phase, swallow)
    elif phase == "lower":
        job.Job.lower = paused_before(job.Job.lower, phase, swallow)  # the job lowers with its Target itself
    elif phase == "reference":
        progress = gate.verify_progress

        def verify_progress(quiet):
            cm = progress(quiet)

            class Wrapped:
                def __enter__(self):
                    step = cm.__enter__()
                    return lambda s: (step(s), s == "reference" and pause(phase, swallow))

                def __exit__(self, *exc):
                    return cm.__exit__(*exc)
            return Wrapped()
        gate.verify_progress = verify_progress
        import mtok_export.cli.cmd_export as cmd_export
        import mtok_export.cli.cmd_verify as cmd_verify
        cmd_export.verify_progress = cmd_verify.verify_progress = verify_progress
    elif phase == "runtime":
        attribution.Attribution.warm = paused_before(attribution.Attribution.warm, phase, swallow)
    elif phase == "rename":
        export._commit = paused_before(export._commit, phase, swallow)
    elif phase == "commit":
        replace = os.replace

        def slow_replace(src, dst, *a, **k):
            if str(src).endswith(".verifying") and os.path.basename(dst) == "tokenizer.mtok":
                pause(phase, swallow)
            return replace(src, dst, *a, **k)
        export.os.replace = slow_replace
    else:
        raise SystemExit(f"unknown phase {phase}")
    sys.argv = args
    (cli.main if args[0] == "mtok" else cli.export_main)()


if __name__ == "__main__":
    main()
