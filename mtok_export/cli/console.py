"""Consoles and the error printer shared by every command."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
# Errors have their own console so --quiet (which silences `out` and `err`) never hides them.
_errors = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def set_quiet(quiet: bool):
    """--quiet: no results, summaries or progress; errors still print."""
    out.quiet = err.quiet = quiet


def print_line(text: str):
    """One plain line on stderr, even with --quiet (interrupts, OS errors)."""
    _errors.print(text, markup=False)


def print_error(e: BaseException):
    _errors.print(f"[bold red]error:[/] {_esc(str(e))}")
    cause = e.__cause__
    while cause is not None:
        _errors.print(f"  [red]caused by:[/] {_esc(str(cause))}")
        cause = cause.__cause__
    hint = getattr(e, "hint", None)
    if hint:
        _errors.print(f"  [cyan]hint:[/] {_esc(hint)}")


def _esc(s: str) -> str:
    return escape(s)
