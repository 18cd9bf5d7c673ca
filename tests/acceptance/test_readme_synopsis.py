"""The README's CLI synopsis names every long option of `mtok-export` and of `mtok verify`, as the
commands take them (derived from the commands, `tests.cli.test_cli_params.commands`): the exercise of
issue 42 found it a hand-kept copy that a new option silently left behind."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.test_cli_params import commands

README = Path(__file__).resolve().parents[2] / "README.md"
GLOBAL = {"--help", "--version", "--debug", "--quiet"}  # every command's; `mtok --help` lists them


def _synopsis(command: str) -> str:
    """The synopsis lines of `command` in the README's CLI section (its first line and the indented
    lines that continue it)."""
    block = README.read_text(encoding="utf-8").split("## CLI", 1)[1].split("\n\n", 2)[1]
    lines, taken = [], False
    for line in block.splitlines():
        if line.startswith(f"    {command} "):
            taken = True
        elif not line.startswith("                "):
            taken = False
        if taken:
            lines.append(line)
    return "\n".join(lines)


def _missing(command: str, name: str) -> set[str]:
    opts = {o for p in commands()[name]["params"] for o in p["opts"] + p["secondary_opts"] if o.startswith("--")}
    return opts - GLOBAL - set(re.findall(r"--[a-z][a-z-]*", _synopsis(command)))


def test_the_export_synopsis_names_every_option():
    assert _missing("mtok-export", "mtok-export") == set()


def test_the_verify_synopsis_names_every_option():
    assert _missing("mtok verify", "verify") == set()


def test_a_left_out_option_is_caught(monkeypatch):
    """The mutant: a synopsis without `--family` is reported."""
    text = README.read_text(encoding="utf-8")
    assert "[--family " in text
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: text.replace("[--family ", "[--famly "))
    assert "--family" in _missing("mtok-export", "mtok-export")
