"""The option table, derived from the fields that hold the job's options (`job_options`): `TABLE`.

An `Option` is one choice of an export, a conversion or a verification, as a field of its holder
declares it (`job_options.opt`): its API keyword (`Job.build`, `api.export`, `api.convert`), its type
and default, its choices, its CLI flag and help, its key in the manifest's job JSON, what holds it in
the job (`owner`: the `read` options, the `forms`, the `policy`, the `verify` options, or the job
itself) and the `--help` panel it is listed under.  From the table come:

- the typer options of `mtok-export`, `mtok convert` and `mtok verify` (`command`);
- `Job.build`'s and the API's typed keywords (`signature`, `bind`) and the job's groups (`groups`);
- the one check of a choice (`check`) and the job's manifest JSON both ways (`to_json`, `from_json`);
- the option as a refusal hint spells it, in the CLI's words or the API's (`spell`, `name`).

Every run of the CLI builds its commands from this table, so this module and `job_options` import
nothing of ours but the holders at their top; the registries load when a value is resolved.  A CLI
switch that is not a keyword of its own (`--no-chat`, `--no-robust`) is an option with
`keyword=False`, folded into the keyword it changes by that keyword's `cli` (the CLI's values by
parameter name -> the keyword's value); a keyword that is no field (`fmt`: `--format`) says how it
is read back from a job (`get`)."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Optional

from . import job_options
from .errors import InputError
from .job_options import HOLDER, MANIFEST, OPTION, JobFields


@dataclass(frozen=True)
class Option:
    key: str  # the API keyword, and the CLI parameter's name unless `param` names another
    type: object  # the API's type (what `Job.build` takes)
    default: object  # the API's default
    flags: tuple[str, ...] = ()  # the CLI's flags (the first is the one messages and hints name); (): API only
    help: str = ""  # the CLI's help
    owner: str = "job"  # what holds it in the job: read, forms, policy, verify, job
    held_as: str = ""  # its name in the owner (default: `key`; "": a keyword the job does not hold as such)
    manifest: str = ""  # its key in the manifest's JSON (in its holder's object; "": not recorded there)
    choices: tuple[str, ...] = ()  # what a value must be (checked once, when the job is made)
    commands: tuple[str, ...] = ("export",)  # the commands that take it
    param: str = ""  # the CLI parameter's name (default: `key`)
    cli_type: object = None  # the CLI's type, when not `type`
    cli_default: object = None  # the CLI's default, when `cli_type` is given
    cli: Callable[[dict], object] | None = None  # the CLI's values (by parameter name) -> the keyword's value
    keyword: bool = True  # False: a CLI switch another option's `cli` folds into its keyword
    typer: dict = field(default_factory=dict)  # more typer.Option arguments (min, metavar, show_default)
    per_command: dict = field(default_factory=dict)  # command -> what it says otherwise: {help, default, type}
    panel: str | None = None  # the `--help` panel it is listed under (None: the command's own options)
    omit_unset: bool = False  # the manifest records it only when set (max_word)
    json: dict = field(default_factory=dict)  # {dump, load}: its value <-> its manifest JSON (default: as is)
    get: Callable | None = None  # a keyword no field holds: (job) -> its value

    @property
    def name(self) -> str:
        return self.param or self.key

    @property
    def attr(self) -> str:
        return self.held_as or self.key


def _type(f: dataclasses.Field, spec: dict):
    if "type" in spec:
        return spec["type"]
    return eval(f.type, vars(job_options)) if isinstance(f.type, str) else f.type  # noqa: S307 (our annotation)


def _option(spec: dict, owner: str, panel: str | None, **more) -> Option:
    spec = dict(spec)
    spec.pop("before", None), spec.pop("after", None)
    spec.setdefault("panel", panel)
    if "api_default" in spec:
        spec["default"] = spec.pop("api_default")
    return Option(owner=owner, **{**more, **spec})


def _options_of(f: dataclasses.Field, owner: str, panel: str | None) -> list[Option]:
    """The options a field declares (its own, and the switches before and after it), as held by `owner`."""
    spec = f.metadata.get(OPTION)
    if spec is None:
        return []
    before = [_option(s, owner, panel, held_as="") for s in spec.get("before", ())]
    after = [_option(s, owner, panel, held_as="") for s in spec.get("after", ())]
    key = spec.get("key", f.name)
    own = _option({k: v for k, v in spec.items() if k != "key"}, owner, panel, key=key, type=_type(f, spec),
                  default=spec.get("default", f.default), held_as="" if HOLDER in f.metadata else f.name,
                  manifest=f.metadata.get(MANIFEST) or "")
    return [*before, own, *after]


def _table(job=JobFields) -> tuple[Option, ...]:
    """Every option, in the order of the job's fields, a holder's options where the holder is."""
    out: list[Option] = []
    for f in dataclasses.fields(job):
        h = f.metadata.get(HOLDER)
        out += _options_of(f, "job", h["panel"] if h else None)
        if h is not None:
            out += [o for g in dataclasses.fields(h["cls"]) for o in _options_of(g, f.name, h["panel"])]
    return tuple(out)


TABLE: tuple[Option, ...] = _table()
BY_KEY = {o.key: o for o in TABLE if o.keyword}


def options_of(command: str, table=TABLE) -> list[Option]:
    return [o for o in table if command in o.commands]


# ------------------------------------------------------------------ the CLI's options

def _said(o: Option, command: str, what: str, otherwise):
    return o.per_command.get(command, {}).get(what, otherwise)


def parameter(o: Option, command: str) -> inspect.Parameter:
    """`o` as a typer option of `command`: an annotated parameter."""
    import typer  # typer (~30 ms): the CLI's alone; the library (api, job) reads this table without it

    cli_type = _said(o, command, "type", o.cli_type or o.type)
    default = _said(o, command, "default", o.cli_default if o.cli_type is not None else o.default)
    panel = {"rich_help_panel": o.panel} if o.panel else {}
    info = typer.Option(*o.flags, help=_said(o, command, "help", o.help), **panel,
                        **_said(o, command, "typer", o.typer))
    return inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[cli_type, info])


def command(name: str, order: tuple[str, ...], table=TABLE):
    """A decorator: the command `fn(own parameters..., options: dict)` as typer sees it: its own
    parameters and the table's options of command `name`, in `order` (parameter names; options not
    named there come last); `options` is what they say as the API's keywords (`keywords`)."""
    def decorate(fn):
        own = [p for p in inspect.signature(fn, eval_str=True).parameters.values() if p.name != "options"]
        taken = {o.name: parameter(o, name) for o in options_of(name, table)}
        every = {p.name: p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own} | taken
        unknown = set(order) - set(every)
        if unknown:
            raise TypeError(f"{name}: the order names {', '.join(sorted(unknown))}, which it does not take")
        params = [every[n] for n in order] + [p for n, p in every.items() if n not in order]

        def run(**values):
            given = {k: values.pop(k) for k in taken}
            return fn(**values, options=lambda: keywords(name, given, table))

        run.__name__, run.__doc__, run.__module__ = fn.__name__, fn.__doc__, fn.__module__
        run.__signature__ = inspect.Signature(params)
        run.__annotations__ = {p.name: p.annotation for p in params}
        return run

    return decorate


def keywords(command: str, given: dict, table=TABLE) -> dict:
    """The CLI's values of `command` (by parameter name) as the API's keywords (`--no-verify` as
    `verify_on_runtime=False`, `--special` parsed); raises `InputError` for switches that contradict."""
    return {o.key: o.cli(given) if o.cli else given[o.name] for o in options_of(command, table) if o.keyword}


# ------------------------------------------------------------------ the API's keywords, and the job's groups

def signature(table=TABLE) -> list[inspect.Parameter]:
    """The keywords of `Job.build` (and of `api.export`, `api.convert` beside their own)."""
    return [inspect.Parameter(o.key, inspect.Parameter.KEYWORD_ONLY, default=o.default, annotation=o.type)
            for o in table if o.keyword]


def bind(where: str, given: dict, table=TABLE) -> dict:
    """Every keyword's value (its default when not `given`); `TypeError` for one the table has not."""
    keys = {o.key: o for o in table if o.keyword}
    unknown = sorted(set(given) - set(keys))
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
    return {k: _typed(o, given[k]) if k in given else o.default for k, o in keys.items()}


def _typed(o: Option, value):
    if value is not None and o.type == Optional[Path]:
        return Path(value)
    return value


def groups(values: dict, table=TABLE) -> dict[str, dict]:
    """The keywords' values by owner (read, forms, policy, verify, job), each by its name there."""
    out: dict[str, dict] = {}
    for o in table:
        if o.keyword:
            out.setdefault(o.owner, {})[o.attr] = values[o.key]
    return out


def check(o: Option, value) -> None:
    """The one check of a choice: an `InputError` naming the CLI option, which the API shares."""
    if o.choices and value not in o.choices:
        raise InputError(f"{o.flags[0]} {value!r}: choose one of {', '.join(o.choices)}")


def check_all(holder) -> None:
    """Every choice a holder's fields declare (`Option.choices`), checked."""
    for f in dataclasses.fields(holder):
        choices = (f.metadata.get(OPTION) or {}).get("choices")
        if choices:
            check(BY_KEY[f.metadata[OPTION].get("key", f.name)], getattr(holder, f.name))


def held(job, table=TABLE) -> dict:
    """The keywords that make `job` (`Job.build`'s), each as the job holds it: what `argv` prints."""
    out = {}
    for o in table:
        if not o.keyword:
            continue
        if o.get is not None:
            out[o.key] = o.get(job)
        else:
            at = job if o.owner == "job" else getattr(job, o.owner)
            out[o.key] = getattr(at, o.attr) if at is not None else o.default
    return out


# ------------------------------------------------------------------ the manifest's JSON, both ways

def to_json(value) -> dict:
    """The manifest's JSON of a holder (or of the job): each field the manifest records at its key
    (`opt(manifest=...)`), a holder's as its own object (or its keys at this level: manifest ""),
    a keyword no field holds (`--format`) where its option is declared; left out: an option recorded
    only when set (`omit_unset`) that is not set."""
    out: dict = {}
    for f in dataclasses.fields(value):
        spec = f.metadata.get(OPTION) or {}
        for s in spec.get("before", ()):
            if s.get("manifest"):
                out[s["manifest"]] = s["get"](value)
        key, v = f.metadata.get(MANIFEST), getattr(value, f.name)
        if key is None or (spec.get("omit_unset") and v is None):
            continue
        if HOLDER in f.metadata:
            out.update({key: to_json(v)} if key else to_json(v))
        else:
            dump = (spec.get("json") or f.metadata.get("json") or {}).get("dump")
            out[key] = dump(v) if dump else v
    return out


def from_json(cls, data: dict) -> dict:
    """The fields of `cls` (a holder, or the job) that a manifest's JSON `data` records, by field
    name (a holder's as the holder, a keyword no field holds by its key); a key it lacks is the
    field's default.  The reverse of `to_json`."""
    out: dict = {}
    for f in dataclasses.fields(cls):
        spec = f.metadata.get(OPTION) or {}
        for s in spec.get("before", ()):
            if s.get("manifest"):
                out[s["key"]] = data.get(s["manifest"])
        key = f.metadata.get(MANIFEST)
        if key is None:
            continue
        if HOLDER in f.metadata:
            h = f.metadata[HOLDER]["cls"]
            out[f.name] = h(**from_json(h, data.get(key) if key else data))
            continue
        load = (spec.get("json") or f.metadata.get("json") or {}).get("load")
        if data.get(key) is not None:
            out[f.name] = load(data[key]) if load else data[key]
    return out


# ------------------------------------------------------------------ hints, in either vocabulary

def name(key: str, api: bool = False) -> str:
    """The option as a sentence names it: `--accept` (the CLI), `accept=` (the API)."""
    return f"{key}=" if api else BY_KEY[key].flags[0]


def spell(key: str, value=True, api: bool = False) -> str:
    """The option given `value`, as the CLI or the API writes it: `--accept a,b` / `accept=['a', 'b']`,
    `--allow-lossy` / `allow_lossy=True`, `--target mnn-head` / `target='mnn-head'`."""
    if api:
        return f"{key}={value!r}"
    flag = BY_KEY[key].flags[0]
    if value is True:
        return flag
    return f"{flag} {','.join(value) if isinstance(value, (list, tuple)) else value}"
