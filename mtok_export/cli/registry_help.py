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
    """The options of a click `command` whose help names a placeholder fill it in when shown, and
    its --help lists them by panel (`panels`)."""
    for param in command.params:
        if any(p in (getattr(param, "help", None) or "") for p in PLACEHOLDERS):
            param.get_help_record = _filling(param, param.get_help_record)
    if any(getattr(p, "rich_help_panel", None) for p in command.params):
        command.format_options = lambda ctx, formatter: panels(command, ctx, formatter)


def panels(command, ctx, formatter) -> None:
    """The options of `command` under their panels (`rich_help_panel`: the holder of a job's option,
    `job_options.holder`): the command's own options first (the common path), then each panel in
    the order its first option comes.  typer shows panels only with rich, which `--help` does not load."""
    args, sections = [], {}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        if param.param_type_name == "argument":
            args.append(record)
        else:
            sections.setdefault(getattr(param, "rich_help_panel", None) or "Options", []).append(record)
    if args:
        with formatter.section("Arguments"):
            formatter.write_dl(args)
    for title in sorted(sections, key=lambda t: t != "Options"):  # stable: the panels in order of first option
        with formatter.section(title):
            formatter.write_dl(sections[title])


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
