"""The job's options, each declared once: as a field of the value that holds it.

A job (`job.Job`) holds what is read (`ReadOptions`: the reader is told these besides the file), the
`Target` and the BOS policy, the lowering's `Forms`, the acceptance `Policy` and how the file is
verified (`VerifyOptions`).  Each field that is a choice of the user's declares its option where it
is declared (`opt`: its CLI flags and help, its key in the manifest's job JSON, the commands that take
it, its choices, what the CLI says otherwise), the way `HfArgumentParser` reads a dataclass's fields;
a field holding a holder (`holder`) names the `--help` panel its options are listed in and where the
manifest records it.  `options.py` derives the rest from these fields: the option table, the CLI's
parameters, `Job.build`'s keywords, the job's JSON both ways and the choice checks.  A new reader
option is one field of `ReadOptions`.

Why the holders live here, in a module that imports nothing of ours at its top: every run of the CLI
builds its commands from these fields at start-up, when no library module may load
(tests/acceptance/test_startup_imports.py), and the layers that hold them (`lower` the `Forms`,
`formats` the `ReadOptions`) sit below the job; a value's parser (`--special`'s JSON, the loss
registry that checks `--accept`) loads when a value is given."""

# function-local imports: the CLI reads these fields at start-up, when no library module may load
# (tests/acceptance/test_startup_imports.py); a value's parser loads when a value is parsed

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from .errors import InputError
from .target_type import Target

if TYPE_CHECKING:
    from collections.abc import Callable

OPTION = "option"  # a field's metadata key: its option's declaration (`opt`)
HOLDER = "holder"  # a field's metadata key: it holds a holder (`holder`)
MANIFEST = "manifest"  # a field's metadata key: its key in the manifest's JSON (None: not recorded)


def opt(default=MISSING, *flags: str, factory=MISSING, manifest: str | None = None, **spec):
    """A field that is an option: `default`, the CLI's `flags` (the first is the one messages name),
    its key in the manifest (None: not recorded there) and what `options.Option` says of it besides
    (`help`, `commands`, `choices`, `key`, `param`, `type`, `api_default`, `cli_type`, `cli_default`,
    `cli`, `typer`, `per_command`, `omit_unset`, `json`, `before`, `after`)."""
    return field(default=default, default_factory=factory,
                 metadata={OPTION: {"flags": flags, **spec}, MANIFEST: manifest})


def switch(key: str, *flags: str, help: str, **spec) -> dict:
    """A CLI switch or keyword that is not a field of its own (`--no-chat`, `--format`): the field
    it goes with folds it into its value (`cli`), or the job resolves it (`get`: its value, read back
    from a job).  Declared in that field's `opt(before=...)` or `opt(after=...)`."""
    spec.setdefault("default", False if spec.get("type") is bool else None)
    return {"key": key, "flags": flags, "help": help, **spec}


def holder(cls, panel: str, manifest: str | None = "", factory=None, **option):
    """A field holding the holder `cls`, whose options `--help` lists under `panel`; the manifest
    records its JSON at `manifest` ("": its keys at the job's own level, None: not at all).
    `option`: the field's own option besides its holder's (`--no-verify`: `verify` None)."""
    metadata = {HOLDER: {"cls": cls, "panel": panel}, MANIFEST: manifest}
    if option:
        metadata[OPTION] = option
    return field(default_factory=factory or cls, metadata=metadata)


def recorded(default, manifest: str, **json):
    """A field the manifest records that is no option (the codes read from an accept file)."""
    return field(default=default, metadata={MANIFEST: manifest, **({"json": json} if json else {})})


def flag(holder_cls, name: str) -> str:
    """The CLI's flag of the field `name` of `holder_cls` (what a message names)."""
    return next(f for f in fields(holder_cls) if f.name == name).metadata[OPTION]["flags"][0]


# ------------------------------------------------------------------ the CLI's values -> the keywords

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


ROBUST_SECONDS = 1.0  # the robustness phase's default budget of runtime encode seconds (`verify.robust`)


def _robust(p: dict):
    return None if p["no_robust"] else p["robust_seconds"] or ROBUST_SECONDS


_GATE = ("export", "verify")  # the release gate's commands (cli/gate.py)
_SPECIAL = dict[str, int] | list[str] | None


# ------------------------------------------------------------------ the holders

@dataclass(frozen=True)
class ReadOptions:
    """What a reader is told besides the file (`Format.read(path, ReadOptions)`); a format takes the
    fields its entry names (`Format.options`), `chat_template` always."""

    chat_template: str | None = opt(  # a named template or a template file, instead of the source's
        None, "--chat-template", manifest="chat_template", commands=("export", "convert"), cli=_chat_template,
        help="Named template or a template file to embed [default: the default one, else a port of the model's "
        "Python prompt encoder, else mistral_common's for a tekken or .model.vN file].",
        per_command={"convert": {"help": "Named template or file."}},
        after=(switch("no_chat", "--no-chat", type=bool, keyword=False, help="The model has no chat (a base "
                      "model): embed no template, and record that no template is right, instead of the loss "
                      "chat-template-missing."),))
    pattern: str | None = opt(  # tiktoken rank files: the split regex
        None, "--pattern", manifest="pattern", commands=("export", "convert"), help="Split regex of a tiktoken "
        "rank file [default: from configs beside it or the known-vocabulary table].",
        per_command={"convert": {"help": "Split regex for tiktoken rank files."}})
    special: dict[str, int] | list[str] | None = opt(  # tiktoken rank files: {token: id}, or tokens after the ranks
        None, "--special", manifest="special", commands=("export", "convert"), type=_SPECIAL, cli_type=Optional[str],
        cli=_special, help="Special tokens of a tiktoken rank file: JSON {token: id} or [tokens] (ids follow the "
        "ranks), inline or a file; {} for none.",
        per_command={"convert": {"help": "Special tokens for tiktoken rank files (JSON)."}})
    family: str | None = opt(  # vocab.json + merges.txt: gpt2, roberta, whisper
        None, "--family", manifest="family", type=Optional[str], help="vocab.json + merges.txt post-processing "
        "when tokenizer_config.json has no known tokenizer_class: gpt2, roberta, whisper.")


@dataclass(frozen=True)
class Forms:
    """How the passes write what the runtime can run in more than one form, each a CLI option that
    trades on-device speed for exactness (the exact form is the default; a faster one is a loss).
    `header_specials`: see `lower.models.header_specials`; `normalizer_form`: lower/normalizers.py;
    `regex_form`: lower/regex.py ("bounded", the default, is "explicit" with every pattern that runs
    on std::wregex capped, so no match recurses deep enough to crash the runtime: DESIGN 4.2, the
    safe form is chosen by default); `ignore_merges_form`: lower/whole_words.py; `max_word`:
    `lower.pre_tokenizers.max_word` (None: no cap)."""

    header_specials: str = opt(
        "needed", "--header-specials", manifest="header_specials", choices=("needed", "all", "none"),
        help="needed: only the chat template's turn mark in the header list that the runtime scans at every byte "
        "(the others are still split out); all: every special token (slower encode); none: no token (faster on "
        "plain text, slower on prompts dense in special tokens).")
    normalizer_form: str = opt(
        "compose", "--normalizer-form", manifest="normalizer_form", choices=("compose", "no-compose", "table"),
        help="NFC/NFKC/SentencePiece charsmap normalizers as compose: a guarded code-point table and one literal "
        "Replace per canonical pair (closest to HF; the pairs cost an NFC tokenizer 1-4 ms per 30 KB on MNN "
        "3.6.1); no-compose: the code-point rules only (decomposed input stays decomposed); table: MNN's own "
        "code-point table (as fast as no-compose for NFC; controls and zero-width characters become spaces).")
    regex_form: str = opt(
        "bounded", "--regex-form", manifest="regex_form", choices=("bounded", "explicit", "fold"),
        help="A split regex that runs on std::wregex (one with Unicode sub-categories, scripts or class "
        "operations: o200k, MiniMax, Kimi-K2, tekken; DeepSeek's CJK split), which recurses once per character of "
        "a match and so crashes MNN on a long run, as bounded: code-point ranges with every repetition capped at "
        "256 characters, so no match can crash the runtime (loss regex-bound: a longer run of one class is cut "
        "into pieces; a warning where only such runs differ); explicit: the same ranges uncapped, exact on every "
        "input but a file a run of ~4,000 characters crashes on Android's 1 MiB thread stack (refused; "
        "--allow-crash ships it); fold: the fold engine's form, 4-6x faster on MNN 3.6.1 and exact on ASCII, but "
        "non-ASCII letters count as both cases (loss regex-fold).")
    ignore_merges_form: str = opt(
        "exact", "--ignore-merges-form", manifest="ignore_merges_form", choices=("exact", "merge"),
        help="A BPE with ignore_merges (Llama-3, GLM-4) whose merges miss some vocabulary words, as exact: two "
        "pre-tokenizer steps and a few thousand merges look each such word up whole, as HF does (encode 8-45x "
        "slower on MNN 3.6.1: one std::wregex search per word, its cost growing with the number of such words); "
        "merge: the runtime merges them pair by pair, as fast as MNN's own files (loss ignore-merges: Japanese "
        "katakana words, Vietnamese syllables, ' 系统' in GLM-4.7 become several tokens).")
    max_word: int | None = opt(
        None, "--max-word", manifest="max_word", omit_unset=True, type=Optional[int], typer={"min": 1},
        help="Cut every word (a piece after the pre-tokenizers) longer than N characters into N-character "
        "pieces: MNN's BPE is quadratic in a word's length (a 20,000-character word costs seconds), so an app "
        "given untrusted input gets a bounded cost; exact for every word up to N (loss max-word).")


def _sorted(codes) -> list[str]:
    return sorted(codes)


@dataclass(frozen=True)
class Policy:
    """The acceptance policy's choices (`policy.py` decides with them, DESIGN 4.2): made from the
    options by `from_options`, which reads the accept file and checks every code."""

    accept: frozenset[str] = opt(  # --accept
        frozenset(), "--accept", manifest="accept", commands=_GATE, type=Optional[list[str]], api_default=(),
        cli_type=Optional[list[str]], cli=lambda p: p["accept"] or (), typer={"metavar": "CODE[,CODE...]"},
        json={"dump": _sorted, "load": frozenset},
        help="Accept these loss codes (repeatable). Without it, losses that reach beyond edge inputs refuse the "
        "export (exit 3).")
    accept_file: str = opt(  # --accept-file, as given ("": none)
        "", "--accept-file", manifest="accept_file", commands=_GATE, type=Optional[Path],
        api_default=None, json={"dump": lambda p: p or None, "load": lambda j: j or ""},
        help="A file of accepted loss codes, one per line (# comments); check it into the model repo so a new loss "
        "after a tokenizer update fails CI.")
    accept_file_codes: frozenset[str] = recorded(frozenset(), "accept_file_codes", dump=_sorted, load=frozenset)
    allow_lossy: bool = opt(
        False, "--allow-lossy", manifest="allow_lossy", commands=("export", "convert", "verify"),
        help="Accept every loss (each is still listed) but a crash.",
        per_command={"convert": {"help": "Write even if something is lost; each loss is listed."}})
    strict: bool = opt(False, "--strict", manifest="strict", commands=_GATE,
                       help="Refuse edge losses too (by default they are warnings).")
    allow_crash: bool = opt(  # ship a file the runtime crashes on
        False, "--allow-crash", manifest="allow_crash", commands=_GATE,
        help="Ship a file the runtime crashes on (loss runtime-crash or regex-stack); neither --accept nor "
        "--allow-lossy does.")
    # the accept file is a fleet's, shared by its models: a code one model does not record may be
    # another's, so no code of it is stale (a model's own accept file, ACCEPT_FILE beside it, is)
    shared: bool = False

    @classmethod
    def from_options(cls, accept=(), accept_file: Path | None = None, allow_lossy: bool = False,
                     strict: bool = False, allow_crash: bool = False) -> Policy:
        """The policy the options say: `accept`'s codes (comma-separated too) and the accept file's,
        each a known loss code (`InputError` naming the option otherwise)."""
        codes = frozenset(c.strip() for a in accept or () for c in str(a).split(",") if c.strip())
        known(codes, flag(cls, "accept"))
        in_file = read_accept_file(accept_file) if accept_file is not None else frozenset()
        return cls(codes, str(accept_file or ""), in_file, allow_lossy, strict, allow_crash)


def read_accept_file(path: Path) -> frozenset[str]:
    """One loss code per line; `#` starts a comment; blank lines are ignored."""
    where = f"{flag(Policy, 'accept_file')} {path}"
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{where}: cannot read it ({e.__class__.__name__}: {e})") from e
    codes = frozenset(c for c in (line.split("#", 1)[0].strip() for line in lines) if c)
    known(codes, where)
    return codes


def known(codes, where: str) -> None:
    from .losses import KINDS  # the loss registry: only when codes are given

    unknown = sorted(c for c in codes if c not in KINDS)
    if unknown:
        raise InputError(f"{where}: unknown loss code(s) {', '.join(unknown)} (known: `mtok losses` lists them)")


@dataclass(frozen=True)
class VerifyOptions:
    """How a file is verified on the MNN runtime (the built-in corpus is always run)."""

    corpus: Path | None = opt(  # extra strings (JSONL)
        None, "--corpus", commands=_GATE, type=Optional[Path], help="Extra verification strings, JSONL.",
        per_command={"verify": {"help": "Extra strings, JSONL (a string or {text} per line)."}})
    python: Path | None = opt(  # interpreter with the MNN runtime
        None, "--runtime-python", key="runtime_python", commands=_GATE, type=Optional[Path],
        help="Python interpreter with the MNN runtime to verify with.",
        per_command={"verify": {"help": "Python interpreter with the MNN runtime to test."}})
    sweep: bool = opt(  # the vocabulary sweep (every token's own text) besides the corpus
        True, "--no-sweep", commands=_GATE, param="no_sweep", cli_type=bool, cli_default=False, cli=_no("no_sweep"),
        help="Leave out the vocabulary sweep (every token's own text on the runtime and the reference): faster, and "
        "blind to what the corpus does not reach.",
        per_command={"verify": {"help": "Leave out the vocabulary sweep (every token's own text on the runtime "
                                "and the reference)."}})
    # the robustness phase's budget of runtime encode seconds (`verify.robust`; None: off): the phase
    # may add a fifth to a default export's time (Qwen2.5, 8 s warm: 1.5 s measured +22% wall)
    robust: float | None = opt(
        ROBUST_SECONDS, "--robust-seconds", commands=_GATE, param="robust_seconds", type=Optional[float],
        cli_type=Optional[float], cli=_robust, typer={"min": 0.1, "show_default": False},
        help="Runtime seconds the robustness phase may spend on its encodes (longer runs as it allows) "
        "[default: 1.0].",
        after=(switch("no_robust", "--no-robust", type=bool, commands=_GATE, keyword=False, help="Leave out the "
                      "robustness phase (long runs of each character class and long documents on the runtime: "
                      "crashes, time growth)."),))
    # the time budget (`verify.budget`; 0: none): the sweep ends where it is, named in the verdict
    seconds: float = opt(
        60.0, "--verify-seconds", key="verify_seconds", commands=_GATE, typer={"min": 0.0},
        help="Seconds verification may take before the vocabulary sweep ends where it is, named in the verdict "
        "(\"passed (partial)\": the rest of the sweep not checked); 0: no limit.")


@dataclass(frozen=True)
class JobFields:
    """What a job holds, each field its option or its options' holder; `job.Job` adds what a job
    does (declared here, beside the holders, for the start-up reason in the module's docstring)."""

    source: Path  # a model folder or a file; for the API also a Hub id `org/name[@revision]` (no such path)
    read: ReadOptions = holder(ReadOptions, "Input", manifest="read")
    # the runtime the file is for: any `Target` object (None: the registry's default); `--target` and
    # `--format` are names, resolved once at the edge (`Job.build`, `Job.from_manifest`)
    target: Target = opt(  # type: ignore[assignment]
        None, "--target", manifest="target", commands=("export", "convert", "verify"), type="str | Target | None",
        panel="Output", cli_type=Optional[str], json={"dump": lambda t: t.name}, typer={"show_default": False},
        help="Runtime the .mtok is for: {targets} [default: {default_target}].",
        per_command={"convert": {"help": "For --to mtok: {targets} [default: {default_target}]."},
                     "verify": {"help": "Target the file was exported for: {targets} [default: the manifest's, "
                                "else {default_target}].", "typer": {}}},
        before=(switch("fmt", "--format", type=str, default="mtok", manifest="format", panel="Output",
                       get=lambda job: job.fmt,  # the format the job's target writes (`Job.fmt`)
                       help="mtok (MNN >= 3.5) or txt (legacy tokenizer.txt, types 0-3, for MNN <= 3.4; the type "
                       "follows the model family)."),))
    bos: str = opt(
        "auto", "--bos", manifest="bos", choices=("auto", "prefix", "none"), commands=("export", "verify"),
        panel="Forms", help="BOS policy when the chat template renders BOS itself: auto (template only), prefix "
        "(header prefix too), none.",
        per_command={"verify": {"help": "BOS policy the file was exported with [default: the manifest's, else "
                                "auto].", "default": None, "type": Optional[str]}})
    forms: Forms = holder(Forms, "Forms")
    policy: Policy = holder(Policy, "Policy", manifest="policy")
    input: Path | None = opt(  # the file in `source` to read instead of the best candidate
        None, "--input", param="input_file", type=Optional[Path], panel="Input", help="The file in --path to read "
        "when it holds several (the choice made is shown as a note; one model only).")
    verify: VerifyOptions | None = holder(  # None: --no-verify
        VerifyOptions, "Verification", manifest=None, key="verify_on_runtime", flags=("--no-verify",), type=bool,
        default=True, param="no_verify", cli_type=bool, cli_default=False, cli=_no("no_verify"),
        get=lambda job: job.verify is not None, help="Skip verification against the MNN runtime (loss severities "
        "are then the declared ones).")
