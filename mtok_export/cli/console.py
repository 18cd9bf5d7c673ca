"""Consoles and the error printer shared by every command."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

out = Console(highlight=False, soft_wrap=True, emoji=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def print_error(e: BaseException):
    err.print(f"[bold red]error:[/] {_esc(str(e))}")
    cause = e.__cause__
    while cause is not None:
        err.print(f"  [red]caused by:[/] {_esc(str(cause))}")
        cause = cause.__cause__
    hint = getattr(e, "hint", None)
    if hint:
        err.print(f"  [cyan]hint:[/] {_esc(hint)}")


def _esc(s: str) -> str:
    return escape(s)
