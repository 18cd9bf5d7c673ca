"""Progress bars on stderr for long library work (the library only calls callbacks)."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def table_progress():
    """A `progress(done, total)` callback that shows a bar only if a cold table build happens (rich's
    progress module, 6 ms to import, is loaded only then)."""
    from .console import err

    bar = None
    task = None

    def progress(done: int, total: int):
        nonlocal bar, task
        if err.quiet or not err.is_terminal:  # --quiet, logs and pipes get no bar
            return
        if bar is None:
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            bar = Progress(TextColumn("building Unicode table"), BarColumn(), TimeRemainingColumn(),
                           console=err.rich(), transient=True)
            bar.start()
            task = bar.add_task("", total=total)
        bar.update(task, completed=done)

    try:
        yield progress
    finally:
        if bar is not None:
            bar.stop()
