"""Command-line entry points: `mtok` (inspect, export, ...) and `mtok-export` (the export alone).

Results go to stdout, diagnostics to stderr.  Every `MtokError` becomes `error: ...` and its exit
code (2 bad input or output location, 3 lossy export refused, 1 verification mismatch), an OS error
(a file that cannot be read or written) is exit 2 with the path and the reason, Ctrl-C, SIGTERM and
SIGHUP are exit 130, 143 and 129 with one line (`signals`); a traceback only with --debug.

`--debug`, `--quiet` and `--version` work anywhere on the line (they are taken out of argv before
the command parses it) and are listed in every command's --help."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

import sys

import typer

from ..errors import MtokError, stop_line
from . import cmd_chat, cmd_convert, cmd_diff, cmd_doctor, cmd_export, cmd_inspect, cmd_losses, cmd_stats, cmd_tables, cmd_verify

app = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  help="Convert LLM tokenizers to MNN's .mtok and prove they tokenize the same.")
app.command("export")(cmd_export.export)
app.command("inspect")(cmd_inspect.inspect)
app.command("verify")(cmd_verify.verify)
app.command("convert")(cmd_convert.convert)
app.command("losses")(cmd_losses.losses)
app.add_typer(cmd_tables.app, name="tables")
app.command("lint-template")(cmd_chat.lint_template)
app.command("chat")(cmd_chat.chat)
app.command("diff")(cmd_diff.diff)
app.command("doctor")(cmd_doctor.doctor)
app.command("stats")(cmd_stats.stats)

# (flags, help) of the options every command takes; shown in --help, handled by _run.
GLOBAL_OPTIONS = ((("--debug",), "Show a traceback for errors."),
                  (("--quiet", "-q"), "Print nothing but errors; the exit code tells the result."),
                  (("--version",), "Show the tool, MNN runtime and Unicode versions, and exit."))


def _with_global_options(command):
    """The click command of `command` with GLOBAL_OPTIONS added to it and every subcommand (for
    --help only: _run has removed them from argv before parsing), and the options' help naming the
    registry's choices (`options.fill`)."""
    from typer.core import TyperOption

    from .registry_help import fill

    stack = [command]
    while stack:
        cmd = stack.pop()
        fill(cmd)  # the help naming the targets, filled in from the registry when shown
        names = {n for p in cmd.params for n in getattr(p, "opts", ())}
        for flags, text in GLOBAL_OPTIONS:
            if not names & set(flags):
                cmd.params.append(TyperOption(param_decls=list(flags), is_flag=True, default=False,
                                              expose_value=False, help=text))
        stack.extend(getattr(cmd, "commands", {}).values())
    return command


def _narrowed(typer_app, argv: list[str]):
    """`typer_app` holding only the command `argv` runs: typer builds the click command of every
    registered command (~8 ms for all of them), and a run needs one.  A group with one command and a
    no-op callback parses and prints usage like the whole group does for that command; anything
    else (`--help`, a subgroup, a misspelt name and its suggestions) gets the whole app."""
    info = next((c for c in typer_app.registered_commands if len(argv) > 1 and c.name == argv[1]), None)
    if info is None or len(typer_app.registered_commands) < 2:
        return typer_app
    one = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode=None)
    one.registered_commands.append(info)
    one.callback()(_no_options)
    return one


def _no_options():
    pass


def _take_flags(argv: list[str], *flags: str) -> bool:
    found = False
    for flag in flags:
        while flag in argv[1:]:
            argv.remove(flag)
            found = True
    return found


def _run(typer_app):
    from .. import signals
    from .console import print_error, print_line, set_quiet

    argv = sys.argv
    debug = _take_flags(argv, "--debug")
    set_quiet(_take_flags(argv, "--quiet", "-q"))
    if _take_flags(argv, "--version"):
        from .version import version_lines

        for line in version_lines():
            print(line)
        sys.exit(0)
    stopped = None
    try:
        with signals.handled():  # SIGTERM and SIGHUP unwind like Ctrl-C, in every phase
            try:
                command = _with_global_options(typer.main.get_command(_narrowed(typer_app, argv)))
                rc = command.main(args=argv[1:], prog_name=_prog(argv[0]), standalone_mode=False)
            finally:
                stopped = signals.received()
        if rc == 130:  # typer turns KeyboardInterrupt into a silent Exit(130); no command exits 130 itself
            raise KeyboardInterrupt
        sys.exit(rc if isinstance(rc, int) else 0)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM or SIGHUP (errors.Interrupted): one plain line, not an `error:`
        signum = stopped if stopped is not None else 2
        print_line(stop_line(signum))
        sys.exit(128 + signum)
    except MtokError as e:
        if debug:
            raise
        print_error(e)
        sys.exit(e.exit_code)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except OSError as e:  # a file the command could not read or write (bad location, full disk)
        if debug:
            raise
        where = e.filename if e.filename is not None else "output"
        print_line(f"error: {where}: {e.strerror or e}")
        sys.exit(2)
    except Exception as e:  # usage errors (typer bundles its own click)
        from typer._click.exceptions import Abort, ClickException

        if isinstance(e, ClickException):
            e.show()
            sys.exit(2)
        if isinstance(e, Abort):
            print_line("interrupted")
            sys.exit(130)
        if debug:
            raise
        # A bug, not something the user did: one line, and how to get the details for a report.
        print_line(f"error: internal error: {type(e).__name__}: {e}")
        print_line("  hint: rerun with --debug for the traceback, and report it")
        sys.exit(2)


def _prog(arg0: str) -> str:
    import os

    name = os.path.basename(arg0)
    return "mtok" if name in ("__main__.py", "") else name


def main():
    _run(app)


def export_main():
    single = typer.Typer(add_completion=False, rich_markup_mode=None)
    single.command()(cmd_export.export)
    _run(single)
