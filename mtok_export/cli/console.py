"""Consoles and the error printer shared by every command.

Each console is a rich `Console` made on first use: importing rich costs about 13 ms, which
`mtok --help`, `--quiet` runs (whose consoles print nothing) and runs that print no line never pay.

Without a terminal (CI logs, pipes) rich would wrap at 80 columns, one word of a table cell per
line; there the consoles are `WIDE` instead, unless `COLUMNS` says otherwise, and the spaces rich pads
a table's cells with at the end of a line are dropped (a CI pane shows lines, not a grid).

`--json` output is printed under `--quiet` too: the JSON was asked for, the rest is what quiet
silences."""

from __future__ import annotations

import json
import os
import re
import sys

_PADDING = re.compile(r"[ \t]+\n")

# Wide enough for every table row the commands print (`mtok losses`: 273 characters) and long notes;
# tables and text take only the width they need, so nothing is padded to it.
WIDE = 1000


class _Console:
    """A rich Console with these options, made when something is printed (or another of its
    attributes is read); `quiet` is kept here until then, and a quiet console makes nothing."""

    def __init__(self, **options):
        self._options = options
        self._made = None
        self._quiet = False

    @property
    def quiet(self) -> bool:
        return self._quiet

    @quiet.setter
    def quiet(self, value: bool):
        self._quiet = value
        if self._made is not None:
            self._made.quiet = value

    def print(self, *args, **kwargs):
        if not self._quiet:
            self._console().print(*args, **kwargs)

    def print_json(self, text: str):
        if self._quiet:  # asked for with --json: printed, without loading rich
            self.write_json(json.loads(text))
        else:
            self._console().print_json(text)

    def write_json(self, data):
        """`data` as print_json prints it (indent 2, not ASCII-escaped), without rich: rendering the
        outcomes of a dozen models (megabytes) through rich takes about as long as exporting them.
        Printed under --quiet too."""
        stream = sys.stderr if self._options.get("stderr") else sys.stdout
        stream.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")

    def rich(self):
        """The rich Console itself: a rich `Progress` enters its console as a context manager, which
        this wrapper is not (a bar given the wrapper failed with an internal error on a terminal)."""
        return self._console()

    def __getattr__(self, name):  # is_terminal, width, ...: the real console's
        return getattr(self._console(), name)

    def _console(self):
        if self._made is None:
            from rich.console import Console  # rich (~13 ms): only when something is printed

            self._made = Console(**self._options)
            if not self._made.is_terminal:
                given = self._options.get("file")
                self._made.file = _Unpadded((lambda: given) if given is not None else
                                            (lambda: sys.stderr) if self._options.get("stderr") else (lambda: sys.stdout))
                if not os.environ.get("COLUMNS", "").isdigit():
                    self._made.width = WIDE
            self._made.quiet = self._quiet
        return self._made


class _Unpadded:
    """A stream (`stream()`: the file given, or whichever stdout or stderr `sys` holds when written
    to) without the spaces before each line end."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream().write(_PADDING.sub("\n", text))

    def flush(self):
        self._stream().flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._stream().fileno()

    @property
    def encoding(self):
        return getattr(self._stream(), "encoding", "utf-8")


out = _Console(highlight=False, soft_wrap=True, emoji=False)
err = _Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
# Errors have their own console so --quiet (which silences `out` and `err`) never hides them.
_errors = _Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def set_quiet(quiet: bool):
    """--quiet: no results, summaries or progress; errors still print."""
    out.quiet = err.quiet = quiet


def print_line(text: str):
    """One plain line on stderr, even with --quiet (interrupts, OS errors)."""
    _errors.print(text, markup=False)


def print_error(e: BaseException):
    _errors.print(f"[bold red]error:[/] {escape(str(e))}")
    cause = e.__cause__
    while cause is not None:
        _errors.print(f"  [red]caused by:[/] {escape(str(cause))}")
        cause = cause.__cause__
    hint = getattr(e, "hint", None)
    for i, line in enumerate(hint.splitlines() if hint else ()):
        _errors.print(f"  [cyan]hint:[/] {escape(line)}" if i == 0 else f"        {escape(line)}")
    step = getattr(e, "next", None)
    if step is not None:  # the last line: a complete command, as it is to be run
        _errors.print(f"  [cyan]why:[/] {escape(step.why)}")
        _errors.print(f"[bold]next:[/] {escape(step.line)}", soft_wrap=True)


def escape(s: str) -> str:
    """`s` shown literally in rich markup."""
    from rich.markup import escape as rich_escape  # rich (~13 ms): only when markup is printed

    return rich_escape(s)
