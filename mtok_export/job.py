"""The job: one value for what an export, a conversion or a verification is asked to do.

What is read (the source, the file in it, the reader's `formats.Options`), the target it is lowered
for (its registry name, resolved by `targets.target_for`: `--format txt` is `mnn-legacy`) and the
lowering's choices, the acceptance policy, and how the file is verified on the runtime.

The CLI builds it from its options and the API from its keywords, both with `Job.build`; it is
checked once, when made (`__post_init__`, whichever way: `build`, `dataclasses.replace`,
`from_manifest`), and a bad value is an `InputError` naming the CLI option, which the API shares.
The export writes its JSON form into the manifest; `mtok verify` reads it back (`from_manifest`),
so the file is re-lowered with exactly the recorded choices.  The source is not in that form: the
manifest records it beside it (`source`, `source_relative`, `hub`), where verify finds it again
after a move; a file picked with `--input` is the source recorded there."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import InputError
from .formats import Format, Options, read_source, resolve_input
from .lower import BOS_POLICIES, HEADER_SPECIALS, NORMALIZER_FORMS, REGEX_FORMS, Forms, Lowering
from .policy import Policy
from .targets import DEFAULT, build, target_for

if TYPE_CHECKING:
    import os

    from .ir import Tokenizer


@dataclass(frozen=True)
class VerifyOptions:
    """How a file is verified on the MNN runtime (the built-in corpus is always run)."""

    corpus: Path | None = None  # extra strings (JSONL)
    python: Path | None = None  # interpreter with the MNN runtime
    sweep: bool = True  # the vocabulary sweep (every token's own text) besides the corpus
    # the robustness phase's budget of runtime encode seconds (`verify.robust`; None: off): the phase
    # may add a fifth to a default export's time (Qwen2.5, 8 s warm: 1.5 s measured +22% wall)
    robust: float | None = 1.0


@dataclass(frozen=True)
class Job:
    """An export's (or a conversion's) every choice; see the module's docstring."""

    source: Path  # a model folder or a file; for the API also a Hub id `org/name[@revision]` (no such path)
    input: Path | None = None  # --input: the file in `source` to read instead of the best candidate
    read: Options = field(default_factory=Options)
    fmt: str = "mtok"  # the output format: mtok or txt (legacy)
    target: str = DEFAULT  # the registry's name; with fmt txt, the legacy target whatever was asked
    bos: str = "auto"
    header_specials: str = "needed"
    normalizer_form: str = "compose"
    regex_form: str = "explicit"
    policy: Policy = field(default_factory=Policy)
    verify: VerifyOptions | None = field(default_factory=VerifyOptions)  # None: --no-verify
    max_word: int | None = None  # --max-word: cap a pre-tokenized word's length (`lower.Forms.max_word`)

    def __post_init__(self):
        object.__setattr__(self, "target", target_for(self.fmt, self.target).name)  # names --format / --target
        _choice("--bos", self.bos, BOS_POLICIES)
        _choice("--header-specials", self.header_specials, HEADER_SPECIALS)
        _choice("--normalizer-form", self.normalizer_form, NORMALIZER_FORMS)
        _choice("--regex-form", self.regex_form, REGEX_FORMS)
        if self.max_word is not None and (self.max_word < 1 or self.fmt == "txt"):
            raise InputError(f"--max-word {self.max_word}: " + ("a positive length" if self.max_word < 1 else
                             "the legacy tokenizer.txt has no split to cap words with (use --format mtok)"))

    @classmethod
    def build(cls, source: str | os.PathLike, *, input: str | os.PathLike | None = None,
              chat_template: str | None = None, pattern: str | None = None,
              special: dict[str, int] | list[str] | None = None, family: str | None = None, fmt: str = "mtok",
              target: str | None = None, bos: str = "auto", header_specials: str = "needed",
              normalizer_form: str = "compose", regex_form: str = "explicit", allow_lossy: bool = False,
              accept: Iterable[str] = (),
              accept_file: str | os.PathLike | None = None, strict: bool = False, verify_on_runtime: bool = True,
              corpus: str | os.PathLike | None = None, runtime_python: str | os.PathLike | None = None,
              sweep: bool = True, robust: float | None = VerifyOptions.robust, allow_crash: bool = False,
              max_word: int | None = None) -> Job:
        """The job from the CLI's options, as keywords (the API's): `target` None is the default one;
        `accept`, `accept_file`, `allow_lossy`, `strict` and `allow_crash` are the policy;
        `verify_on_runtime`, `corpus`, `runtime_python`, `sweep` and `robust` (seconds, None: off) the
        verification."""
        policy = Policy.from_options(accept, _path(accept_file), allow_lossy, strict, allow_crash)
        verify = VerifyOptions(_path(corpus), _path(runtime_python), sweep, robust) if verify_on_runtime else None
        return cls(Path(source), _path(input), Options(chat_template, pattern, special, family), fmt,
                   target or DEFAULT, bos,
                   header_specials, normalizer_form, regex_form, policy, verify, max_word)

    @property
    def output(self) -> Format:
        """The format the target writes (`.names[0]` is the file's conventional name)."""
        return target_for(self.fmt, self.target).output

    def path(self) -> Path:
        """What is read: the `--input` file inside the source, else the source itself."""
        return resolve_input(self.source, self.input)

    def read_source(self) -> Tokenizer:
        o = self.read
        return read_source(self.path(), o.chat_template, pattern=o.pattern, special=o.special, family=o.family)

    @property
    def forms(self) -> Forms:
        return Forms(self.header_specials, self.normalizer_form, self.regex_form, self.max_word)

    def lower(self, tok: Tokenizer, progress: Callable[[int, int], None] | None = None) \
            -> tuple[bytes, Tokenizer, Lowering]:
        """-> (the file's bytes, the IR the runtime will run, the Lowering with losses and passes)."""
        return build(tok, self.fmt, target=self.target, bos=self.bos, progress=progress, forms=self.forms)

    def to_json(self) -> dict:
        """What the manifest records (`source`, `input` and `verify` are recorded beside it)."""
        o = self.read
        return {"read": {"chat_template": o.chat_template, "pattern": o.pattern, "special": o.special,
                         "family": o.family},
                "format": self.fmt, "target": self.target, "bos": self.bos, "header_specials": self.header_specials,
                "normalizer_form": self.normalizer_form, "regex_form": self.regex_form,
                "policy": self.policy.to_json(), **({"max_word": self.max_word} if self.max_word else {})}

    @classmethod
    def from_manifest(cls, manifest: dict, source: Path, *, where: str = "the manifest",
                      fmt: str = "mtok") -> Job:
        """The recorded job, reading `source`; `fmt`: the file's format, for a manifest that does not
        record it.  One written before the job was recorded has its choices under other keys
        (`_earlier`); one with neither records the defaults."""
        try:
            j = _object(manifest["job"], "$.job") if "job" in manifest else _earlier(manifest)
            read = _object(j.get("read") or {}, "$.job.read")
            return cls(Path(source), None, Options(read.get("chat_template"), read.get("pattern"), read.get("special"),
                                                   read.get("family")),
                       j.get("format") or fmt, j.get("target") or DEFAULT, j.get("bos") or "auto",
                       j.get("header_specials") or "needed", j.get("normalizer_form") or "compose",
                       j.get("regex_form") or "explicit", Policy.from_json(_object(j.get("policy") or {}, "$.job.policy")), None,
                       j.get("max_word"))
        except InputError as e:
            raise InputError(f"{where}: {e}") from None


def _earlier(manifest: dict) -> dict:
    """The job's JSON form from the keys a manifest had before it recorded the job: `read_options`
    (the reader's four and the two lowering choices), `target`, `bos_policy`, `policy`."""
    opts = _object(manifest.get("read_options") or {}, "$.read_options")
    return {"read": {k: opts.get(k) for k in ("chat_template", "pattern", "special", "family")},
            "target": manifest.get("target"), "bos": manifest.get("bos_policy"),
            "header_specials": opts.get("header_specials"), "normalizer_form": opts.get("normalizer_form"),
            "policy": _object(manifest.get("policy") or {}, "$.policy")}


def _choice(flag: str, value: str, choices) -> None:
    if value not in choices:
        raise InputError(f"{flag} {value!r}: choose one of {', '.join(choices)}")


def _path(value) -> Path | None:
    return Path(value) if value is not None else None


def _object(value, json_path: str) -> dict:
    if not isinstance(value, dict):
        raise InputError(f"{json_path}: not a JSON object")
    return value

