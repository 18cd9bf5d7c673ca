"""Help naming what a registry holds (the options themselves are the job's: `mtok_export.options`).

Help naming the registry is filled in when it is shown: every run builds the options of the
commands it may parse (`mtok --help` builds all of them), and that must not import the library
(`tests/acceptance/test_startup_imports.py`).  So a help text names `{targets}` (the `.mtok` targets of
`targets.names(MTOK)`, "a, b or c"), `{default_target}` (`targets.DEFAULT`) and `{formats}` (the input
formats, `formats.listed()`), and `fill` makes an option replace them only when its help is printed."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

PLACEHOLDERS = ("{targets}", "{default_target}", "{formats}")


def fill(command) -> None:
    """The options of a click `command` whose help names a placeholder fill it in when shown."""
    for param in command.params:
        if any(p in (getattr(param, "help", None) or "") for p in PLACEHOLDERS):
            param.get_help_record = _filling(param, param.get_help_record)


def _filling(param, record):
    def get_help_record(ctx):
        param.help = filled(param.help)
        return record(ctx)

    return get_help_record


def filled(text: str) -> str:
    from ..formats import listed as formats
    from ..readers.formats.mnn import MTOK
    from ..targets import DEFAULT, names

    mtok = names(MTOK)
    listed = ", ".join(mtok[:-1]) + " or " + mtok[-1] if len(mtok) > 1 else mtok[0]
    return text.replace("{targets}", listed).replace("{default_target}", DEFAULT).replace("{formats}", formats())
