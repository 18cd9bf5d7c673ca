"""The job's options, each declared once: `TABLE`.

An `Option` is one choice of an export, a conversion or a verification: its API keyword (`Job.build`,
`api.export`, `api.convert`), its type and default, what it resolves against (`choices`, or the
registry the job resolves it with), its CLI flag and help, its key in the manifest's job JSON, what
holds it in the job (`owner`: the reader's `formats.Options`, the `lower.Forms`, the `Policy`, the
`VerifyOptions`, or the job itself) and the commands that take it.  From the table come:

- the typer options of `mtok-export`, `mtok convert` and `mtok verify` (`command`);
- `Job.build`'s and the API's typed keywords (`signature`, `bind`) and the job's groups (`groups`);
- the one check of a choice (`check`) and the job's manifest JSON both ways (`to_json`, `from_json`);
- the option as a refusal hint spells it, in the CLI's words or the API's (`spell`, `name`).

Every run of the CLI builds its commands from this table, so the module imports nothing of ours at
its top; the registries load when a value is resolved.  A CLI switch that is not a keyword of its
own (`--no-chat`, `--no-robust`) is an option with `keyword=False`, folded into the keyword it changes
by that keyword's `cli` (the CLI's values by parameter name -> the keyword's value)."""

# function-local imports: the CLI builds its options from this table at start-up, when no library
# module may load (tests/acceptance/test_startup_imports.py); a value's registry loads when it is used

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Optional

from .errors import InputError

ROBUST_SECONDS = 1.0  # the robustness phase's default budget of runtime encode seconds (`verify.robust`)


@dataclass(frozen=True)
class Option:
    key: str  # the API keyword, and the CLI parameter's name unless `param` names another
    type: object  # the API's type (what `Job.build` takes)
    default: object  # the API's default
    flags: tuple[str, ...] = ()  # the CLI's flags (the first is the one messages and hints name); (): API only
    help: str = ""  # the CLI's help
    owner: str = "job"  # what holds it in the job: read, forms, policy, verify, job
    held_as: str = ""  # its name in the owner (default: `key`)
    manifest: str = ""  # its dotted key in the manifest's job JSON ("read.pattern"; "": not recorded there)
    choices: tuple[str, ...] = ()  # what a value must be (checked once, when the job is made)
    commands: tuple[str, ...] = ("export",)  # the commands that take it
    param: str = ""  # the CLI parameter's name (default: `key`)
    cli_type: object = None  # the CLI's type, when not `type`
    cli_default: object = None  # the CLI's default, when `cli_type` is given
    cli: Callable[[dict], object] | None = None  # the CLI's values (by parameter name) -> the keyword's value
    keyword: bool = True  # False: a CLI switch another option's `cli` folds into its keyword
    typer: dict = field(default_factory=dict)  # more typer.Option arguments (min, metavar, show_default)
    per_command: dict = field(default_factory=dict)  # command -> what it says otherwise: {help, default, type}

    @property
    def name(self) -> str:
        return self.param or self.key

    @property
    def attr(self) -> str:
        return self.held_as or self.key


def _no(name: str) -> Callable[[dict], bool]:
    return lambda p: not p[name]


def _chat_template(p: dict):
    if not p.get("no_chat"):
        return p["chat_template"]
    if p["chat_template"] is not None:
        raise InputError("--no-chat and --chat-template contradict each other: give one")
    from .ir.tokenizer import NO_CHAT

    return NO_CHAT


def _special(p: dict):
    if p["special"] is None:
        return None
    from .readers.tiktoken import parse_special_arg

    return parse_special_arg(p["special"])


def _robust(p: dict):
    return None if p["no_robust"] else p["robust_seconds"] or ROBUST_SECONDS


_GATE = ("export", "verify")  # the release gate's commands (cli/gate.py)
_SPECIAL = dict[str, int] | list[str] | None

TABLE: tuple[Option, ...] = (  # in the order of the manifest's job JSON
    Option("chat_template", Optional[str], None, ("--chat-template",), "Named template or a template file to embed "
           "[default: the default one, else a port of the model's Python prompt encoder, else mistral_common's "
           "for a tekken or .model.vN file].", "read", manifest="read.chat_template",
           commands=("export", "convert"), cli=_chat_template,
           per_command={"convert": {"help": "Named template or file."}}),
    Option("pattern", Optional[str], None, ("--pattern",), "Split regex of a tiktoken rank file [default: from "
           "configs beside it or the known-vocabulary table].", "read", manifest="read.pattern",
           commands=("export", "convert"), per_command={"convert": {"help": "Split regex for tiktoken rank files."}}),
    Option("special", _SPECIAL, None, ("--special",), "Special tokens of a tiktoken rank file: JSON {token: id} or "
           "[tokens] (ids follow the ranks), inline or a file; {} for none.", "read", manifest="read.special",
           commands=("export", "convert"), cli_type=Optional[str], cli=_special,
           per_command={"convert": {"help": "Special tokens for tiktoken rank files (JSON)."}}),
    Option("family", Optional[str], None, ("--family",), "vocab.json + merges.txt post-processing when "
           "tokenizer_config.json has no known tokenizer_class: gpt2, roberta, whisper.", "read",
           manifest="read.family"),
    Option("fmt", str, "mtok", ("--format",), "mtok (MNN >= 3.5) or txt (legacy tokenizer.txt, types 0-3, for MNN "
           "<= 3.4; the type follows the model family).", manifest="format"),  # resolved by `targets.target_for`
    Option("target", Optional[str], None, ("--target",), "Runtime the .mtok is for: {targets} [default: "
           "{default_target}].", manifest="target", commands=("export", "convert", "verify"),
           typer={"show_default": False},  # None: the default target (`targets.DEFAULT`); resolved with --format
           per_command={"convert": {"help": "For --to mtok: {targets} [default: {default_target}]."},
                        "verify": {"help": "Target the file was exported for: {targets} [default: the manifest's, "
                                   "else {default_target}].", "typer": {}}}),
    Option("bos", str, "auto", ("--bos",), "BOS policy when the chat template renders BOS itself: auto (template "
           "only), prefix (header prefix too), none.", manifest="bos", choices=("auto", "prefix", "none"),
           commands=("export", "verify"),
           per_command={"verify": {"help": "BOS policy the file was exported with [default: the manifest's, else "
                                   "auto].", "default": None, "type": Optional[str]}}),
    Option("header_specials", str, "needed", ("--header-specials",), "needed: only the chat template's turn mark in "
           "the header list that the runtime scans at every byte (the others are still split out); all: every "
           "special token (slower encode); none: no token (faster on plain text, slower on prompts dense in special "
           "tokens).", "forms", manifest="header_specials", choices=("needed", "all", "none")),
    Option("normalizer_form", str, "compose", ("--normalizer-form",), "NFC/NFKC/SentencePiece charsmap normalizers "
           "as compose: a guarded code-point table and one literal Replace per canonical pair (closest to HF; the "
           "pairs cost an NFC tokenizer 1-4 ms per 30 KB on MNN 3.6.1); no-compose: the code-point rules only "
           "(decomposed input stays decomposed); table: MNN's own code-point table (as fast as no-compose for NFC; "
           "controls and zero-width characters become spaces).", "forms", manifest="normalizer_form",
           choices=("compose", "no-compose", "table")),  # see lower/normalizers.py
    Option("regex_form", str, "bounded", ("--regex-form",), "A split regex that runs on std::wregex (one with "
           "Unicode sub-categories, scripts or class operations: o200k, MiniMax, Kimi-K2, tekken; DeepSeek's CJK "
           "split), which recurses once per character of a match and so crashes MNN on a long run, as bounded: "
           "code-point ranges with every repetition capped at 256 characters, so no match can crash the runtime "
           "(loss regex-bound: a longer run of one class is cut into pieces; a warning where only such runs differ); "
           "explicit: the same ranges uncapped, exact on every input but a file a run of ~4,000 characters crashes "
           "on Android's 1 MiB thread stack (refused; --allow-crash ships it); fold: the fold engine's form, 4-6x "
           "faster on MNN 3.6.1 and exact on ASCII, but non-ASCII letters count as both cases (loss regex-fold).",
           "forms", manifest="regex_form", choices=("bounded", "explicit", "fold")),  # see lower/regex.py
    Option("ignore_merges_form", str, "exact", ("--ignore-merges-form",), "A BPE with ignore_merges (Llama-3, "
           "GLM-4) whose merges miss some vocabulary words, as exact: two pre-tokenizer steps and a few thousand "
           "merges look each such word up whole, as HF does (encode 8-45x slower on MNN 3.6.1: one std::wregex "
           "search per word, its cost growing with the number of such words); merge: the runtime merges them pair "
           "by pair, as fast as MNN's own files (loss ignore-merges: Japanese katakana words, Vietnamese syllables, "
           "' 系统' in GLM-4.7 become several tokens).", "forms", manifest="ignore_merges_form",
           choices=("exact", "merge")),  # see lower/whole_words.py
    # the policy: the manifest records the `Policy` as one object (`Policy.to_json`)
    Option("accept", Optional[list[str]], (), ("--accept",), "Accept these loss codes (repeatable). Without it, "
           "losses that reach beyond edge inputs refuse the export (exit 3).", "policy", manifest="policy",
           commands=_GATE, cli_type=Optional[list[str]], cli=lambda p: p["accept"] or (),
           typer={"metavar": "CODE[,CODE...]"}),
    Option("accept_file", Optional[Path], None, ("--accept-file",), "A file of accepted loss codes, one per line (# "
           "comments); check it into the model repo so a new loss after a tokenizer update fails CI.", "policy",
           manifest="policy", commands=_GATE),
    Option("allow_lossy", bool, False, ("--allow-lossy",), "Accept every loss (each is still listed) but a crash.",
           "policy", manifest="policy", commands=("export", "convert", "verify"),
           per_command={"convert": {"help": "Write even if something is lost; each loss is listed."}}),
    Option("strict", bool, False, ("--strict",), "Refuse edge losses too (by default they are warnings).", "policy",
           manifest="policy", commands=_GATE),
    Option("allow_crash", bool, False, ("--allow-crash",), "Ship a file the runtime crashes on (loss runtime-crash "
           "or regex-stack); neither --accept nor --allow-lossy does.", "policy", manifest="policy", commands=_GATE),
    Option("max_word", Optional[int], None, ("--max-word",), "Cut every word (a piece after the pre-tokenizers) "
           "longer than N characters into N-character pieces: MNN's BPE is quadratic in a word's length (a "
           "20,000-character word costs seconds), so an app given untrusted input gets a bounded cost; exact for "
           "every word up to N (loss max-word).", "forms", manifest="max_word", typer={"min": 1}),
    # not in the job's JSON: what is read (recorded beside it) and how it is verified
    Option("input", Optional[Path], None, ("--input",), "The file in --path to read when it holds several (the "
           "choice made is shown as a note; one model only).", param="input_file"),
    Option("verify_on_runtime", bool, True, ("--no-verify",), "Skip verification against the MNN runtime (loss "
           "severities are then the declared ones).", param="no_verify", cli_type=bool, cli_default=False,
           cli=_no("no_verify")),
    Option("corpus", Optional[Path], None, ("--corpus",), "Extra verification strings, JSONL.", "verify",
           commands=_GATE, per_command={"verify": {"help": "Extra strings, JSONL (a string or {text} per line)."}}),
    Option("runtime_python", Optional[Path], None, ("--runtime-python",), "Python interpreter with the MNN runtime to "
           "verify with.", "verify", held_as="python", commands=_GATE,
           per_command={"verify": {"help": "Python interpreter with the MNN runtime to test."}}),
    Option("sweep", bool, True, ("--no-sweep",), "Leave out the vocabulary sweep (every token's own text on the "
           "runtime and the reference): faster, and blind to what the corpus does not reach.", "verify",
           commands=_GATE, param="no_sweep", cli_type=bool, cli_default=False, cli=_no("no_sweep"),
           per_command={"verify": {"help": "Leave out the vocabulary sweep (every token's own text on the runtime "
                                   "and the reference)."}}),
    Option("robust", Optional[float], ROBUST_SECONDS, ("--robust-seconds",), "Runtime seconds the robustness phase "
           "may spend on its encodes (longer runs as it allows) [default: 1.0].", "verify", commands=_GATE,
           param="robust_seconds", cli_type=Optional[float], cli=_robust, typer={"min": 0.1, "show_default": False}),
    Option("verify_seconds", float, 60.0, ("--verify-seconds",), "Seconds verification may take before the vocabulary "
           "sweep ends where it is, named in the verdict (\"passed (partial)\": the rest of the sweep not checked); "
           "0: no limit.", "verify", held_as="seconds", commands=_GATE, typer={"min": 0.0}),
    Option("no_robust", bool, False, ("--no-robust",), "Leave out the robustness phase (long runs of each character "
           "class and long documents on the runtime: crashes, time growth).", commands=_GATE, keyword=False),
    Option("no_chat", bool, False, ("--no-chat",), "The model has no chat (a base model): embed no template, and "
           "record that no template is right, instead of the loss chat-template-missing.", keyword=False),
)
BY_KEY = {o.key: o for o in TABLE if o.keyword}


def options_of(command: str, table=TABLE) -> list[Option]:
    return [o for o in table if command in o.commands]


# ------------------------------------------------------------------ the CLI's options

def _said(o: Option, command: str, what: str, otherwise):
    return o.per_command.get(command, {}).get(what, otherwise)


def parameter(o: Option, command: str) -> inspect.Parameter:
    """`o` as a typer option of `command`: an annotated parameter."""
    import typer

    cli_type = _said(o, command, "type", o.cli_type or o.type)
    default = _said(o, command, "default", o.cli_default if o.cli_type is not None else o.default)
    info = typer.Option(*o.flags, help=_said(o, command, "help", o.help), **_said(o, command, "typer", o.typer))
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


# ------------------------------------------------------------------ the manifest's job JSON

def to_json(values: dict[str, dict], policy: dict, table=TABLE) -> dict:
    """The job JSON from the job's values by owner (`values[owner][attr]`) and its policy's JSON:
    each recorded option at its key; an option whose default is None is left out while unset."""
    out: dict = {}
    for o in table:
        if not o.manifest or not o.keyword:
            continue
        *parents, last = o.manifest.split(".")
        at = out
        for p in parents:
            at = at.setdefault(p, {})
        if o.manifest == "policy":
            at[last] = policy
        elif o.owner == "forms" and o.default is None:  # max_word: recorded only when set
            value = values[o.owner][o.attr]
            if value:
                at[last] = value
        else:
            at[last] = values[o.owner][o.attr]
    return out


def from_json(job: dict, table=TABLE) -> dict:
    """The keywords a job JSON records (the policy's as its JSON, under `policy`); a key it lacks is
    the option's default."""
    out = {}
    for o in table:
        if not o.manifest or not o.keyword or o.manifest == "policy":
            continue
        at = job
        for p in o.manifest.split("."):
            at = at.get(p) if isinstance(at, dict) else None
        out[o.key] = at if at is not None else o.default
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
