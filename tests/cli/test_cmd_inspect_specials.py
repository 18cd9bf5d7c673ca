"""The special-token table prints a token's text as text: `[/INST]` is no markup closing tag."""

from __future__ import annotations

from mtok_export.cli.cmd_inspect import print_surface
from mtok_export.verify.surface import Special


def test_token_text_is_never_markup(capsys):
    print_surface([Special(4, "[/INST]", True, True, True, False, "role"), Special(5, "[bold]x", True, True, None, True, "")])
    out = capsys.readouterr().out
    assert "[/INST]" in out and "[bold]x" in out
