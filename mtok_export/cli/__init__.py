"""Command-line entry points: `mtok` (inspect, export, ...) and `mtok-export` (the export alone).

Results go to stdout, diagnostics to stderr.  Every `MtokError` becomes `error: ...` and its exit
code (2 bad input, 3 lossy export refused, 1 verification mismatch); a traceback only with --debug."""

from __future__ import annotations

import sys

import typer

from . import cmd_chat, cmd_convert, cmd_diff, cmd_export, cmd_inspect, cmd_losses, cmd_stats, cmd_tables, cmd_verify

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
app.command("stats")(cmd_stats.stats)


def _run(fn):
    from ..errors import MtokError
    from .console import print_error

    debug = "--debug" in sys.argv
    if debug:
        sys.argv.remove("--debug")
    try:
        rc = fn(standalone_mode=False)  # click returns the code of a typer.Exit in this mode
        sys.exit(rc if isinstance(rc, int) else 0)
    except MtokError as e:
        if debug:
            raise
        print_error(e)
        sys.exit(e.exit_code)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except Exception as e:  # usage errors (typer bundles its own click)
        from typer._click.exceptions import Abort, ClickException  # typer vendors click

        if isinstance(e, ClickException):
            e.show()
            sys.exit(2)
        if isinstance(e, Abort):
            sys.exit(130)
        raise


def main():
    _run(app)


def export_main():
    single = typer.Typer(add_completion=False, rich_markup_mode=None)
    single.command()(cmd_export.export)
    _run(single)
