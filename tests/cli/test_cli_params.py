"""Every command's options as click sees them (flags, types, defaults, choices' ranges, help,
metavars), against `tests/golden/cli-params.json`, captured from the commands as they were written
by hand before the option table (`mtok_export/options.py`) generated them: a change to a flag, a
default or a help text fails here.  Regenerate only on purpose (`python -m tests.cli.test_cli_params
> tests/golden/cli-params.json`), and say so."""

from __future__ import annotations

import json
import sys
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "cli-params.json"


def _params(cmd) -> list[dict]:
    out = []
    for p in cmd.params:
        t = p.type
        out.append({"name": p.name, "opts": list(p.opts), "secondary_opts": list(getattr(p, "secondary_opts", [])),
                    "kind": type(p).__name__, "type": getattr(t, "name", repr(t)), "min": getattr(t, "min", None),
                    "default": repr(p.default), "required": p.required, "is_flag": getattr(p, "is_flag", None),
                    "multiple": p.multiple, "nargs": p.nargs, "help": getattr(p, "help", None),
                    "metavar": p.metavar, "show_default": getattr(p, "show_default", None)})
    return out


def _walk(cmd, prefix: str = "") -> dict:
    res = {prefix or "mtok": {"help": cmd.help, "params": _params(cmd)}}
    for name, sub in getattr(cmd, "commands", {}).items():
        res.update(_walk(sub, (prefix + " " if prefix else "") + name))
    return res


def commands() -> dict:
    """Every command of `mtok` and `mtok-export`, with its parameters (the help text's placeholders
    unfilled: `cli.registry_help.fill` fills them when shown)."""
    import typer

    from mtok_export import cli
    from mtok_export.cli import cmd_export

    every = _walk(typer.main.get_command(cli.app))
    single = typer.Typer(add_completion=False, rich_markup_mode=None)
    single.command()(cmd_export.export)
    every["mtok-export"] = {"help": None, "params": _params(typer.main.get_command(single))}
    return every


def test_every_command_takes_the_options_it_took():
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    now = json.loads(json.dumps(commands(), sort_keys=True))
    assert sorted(now) == sorted(golden)
    for name in golden:
        assert now[name] == golden[name], name


if __name__ == "__main__":
    json.dump(commands(), sys.stdout, indent=1, sort_keys=True)
