"""The job: one value for what an export, a conversion or a verification is asked to do.

What is read (the source, the file in it, the reader's `formats.Options`), the `Target` it is
lowered for (resolved by `targets.target_for` from a name: `--format txt` is `mnn-legacy`) and the
lowering's `lower.Forms`, the acceptance `Policy`, and how the file is verified on the runtime.
Each of these choices is an option of `options.TABLE`, declared there once.

The CLI builds it from its options and the API from its keywords, both with `Job.build` (its
keywords are the table's); it is checked once, when made (`__post_init__`, whichever way: `build`,
`dataclasses.replace` with a target name or object, `from_manifest`), and a bad value is an
`InputError` naming the CLI option, which the API shares.
The export writes its JSON form into the manifest (the target by its name; the table's
`options.to_json`); `mtok verify` reads it back (`from_manifest`),
so the file is re-lowered with exactly the recorded choices.  The source is not in that form: the
manifest records it beside it (`source`, `source_relative`, `hub`), where verify finds it again
after a move; a file picked with `--input` is the source recorded there."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import options as table
from .errors import InputError
from .formats import Format, Options, read_source, resolve_input
from .ir.tokenizer import NO_CHAT
from .lower import Forms, Lowering
from .policy import Policy
from .target import Target
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
    robust: float | None = table.ROBUST_SECONDS
    # the time budget (`verify.budget`; 0: none): the sweep ends where it is, named in the verdict
    seconds: float = 60.0


@dataclass(frozen=True)
class Job:
    """An export's (or a conversion's) every choice; see the module's docstring."""

    source: Path  # a model folder or a file; for the API also a Hub id `org/name[@revision]` (no such path)
    input: Path | None = None  # --input: the file in `source` to read instead of the best candidate
    read: Options = field(default_factory=Options)
    fmt: str = "mtok"  # the output format: mtok or txt (legacy)
    # the runtime: given as a Target or its name (None: the default), held as the registry's Target for
    # `fmt` (with fmt txt the legacy target, whatever was asked)
    target: Target = None  # type: ignore[assignment]
    bos: str = "auto"
    forms: Forms = field(default_factory=Forms)
    policy: Policy = field(default_factory=Policy)
    verify: VerifyOptions | None = field(default_factory=VerifyOptions)  # None: --no-verify

    def __post_init__(self):
        name = self.target.name if isinstance(self.target, Target) else self.target or DEFAULT
        object.__setattr__(self, "target", target_for(self.fmt, name))  # names --format / --target
        values = {"job": {"bos": self.bos}, "forms": vars(self.forms)}
        for o in table.TABLE:
            if o.choices:
                table.check(o, values[o.owner][o.attr])
        w = self.forms.max_word
        if w is not None and (w < 1 or self.fmt == "txt"):
            raise InputError(f"{table.spell('max_word', w)}: " + ("a positive length" if w < 1 else
                             "the legacy tokenizer.txt has no split to cap words with "
                             f"(use {table.spell('fmt', 'mtok')})"))

    @classmethod
    def build(cls, source: str | os.PathLike, **keywords) -> Job:
        """The job from the CLI's options, as keywords (the API's: `options.TABLE`, this function's
        signature): `target` None is the default one; `accept`, `accept_file`, `allow_lossy`,
        `strict` and `allow_crash` are the policy; `verify_on_runtime`, `corpus`, `runtime_python`,
        `sweep` and `robust` (seconds, None: off) the verification."""
        g = table.groups(table.bind("build", keywords))
        job, verify = g["job"], VerifyOptions(**g["verify"]) if g["job"]["verify_on_runtime"] else None
        return cls(Path(source), job["input"], Options(**g["read"]), job["fmt"], job["target"], job["bos"],
                   Forms(**g["forms"]), Policy.from_options(**g["policy"]), verify)

    @property
    def output(self) -> Format:
        """The format the target writes (`.names[0]` is the file's conventional name)."""
        return self.target.output

    def path(self) -> Path:
        """What is read: the `--input` file inside the source, else the source itself."""
        return resolve_input(self.source, self.input)

    def read_source(self) -> Tokenizer:
        o = self.read
        return read_source(self.path(), o.chat_template, pattern=o.pattern, special=o.special, family=o.family)

    def lower(self, tok: Tokenizer, progress: Callable[[int, int], None] | None = None) \
            -> tuple[bytes, Tokenizer, Lowering]:
        """-> (the file's bytes, the IR the runtime will run, the Lowering with losses and passes)."""
        return build(tok, target=self.target, bos=self.bos, progress=progress, forms=self.forms)

    def to_json(self) -> dict:
        """What the manifest records (`source`, `input` and `verify` are recorded beside it)."""
        values = {"read": vars(self.read), "forms": vars(self.forms),
                  "job": {"fmt": self.fmt, "target": self.target.name, "bos": self.bos}}
        return table.to_json(values, self.policy.to_json())

    def argv(self) -> list[str]:
        """The export options that make this job (`mtok-export`'s, from the option table), each one
        that differs from its default; the source and output are the caller's (`next_command`)."""
        p, v = self.policy, self.verify or VerifyOptions()
        held = {"read": vars(self.read), "forms": vars(self.forms),
                "job": {"input": self.input, "fmt": self.fmt, "bos": self.bos, "verify_on_runtime": self.verify is not None,
                        "target": None if self.target.default or self.fmt != "mtok" else self.target.name},
                "policy": {"accept": sorted(p.accept), "accept_file": p.accept_file_path or None,
                           "allow_lossy": p.allow_lossy, "strict": p.strict, "allow_crash": p.allow_crash},
                "verify": vars(v)}
        out: list[str] = []
        for o in table.options_of("export"):
            if not o.keyword:
                continue
            value = held[o.owner][o.attr]
            if value == o.default or (o.default == () and not value):
                continue
            if o.key == "chat_template" and value == NO_CHAT:
                out.append("--no-chat")
            elif o.key == "robust" and value is None:
                out.append("--no-robust")
            elif o.type is bool:  # a switch: its flag says the non-default value
                out.append(o.flags[0])
            else:
                shown = json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) and o.key == "special" \
                    else ",".join(value) if isinstance(value, list) else str(value)
                out += [o.flags[0], shown]
        return out

    @classmethod
    def from_manifest(cls, manifest: dict, source: Path, *, where: str = "the manifest",
                      fmt: str = "mtok") -> Job:
        """The recorded job, reading `source`; `fmt`: the file's format, for a manifest that does not
        record it.  One written before the job was recorded has its choices under other keys
        (`_earlier`); one with neither records the defaults."""
        try:
            j = _object(manifest["job"], "$.job") if "job" in manifest else _earlier(manifest)
            _object(j.get("read") or {}, "$.job.read")
            v = {**table.bind("from_manifest", {}), **table.from_json(j)}
            if "regex_form" not in j:  # recorded since the choice existed; before, every file was explicit
                v["regex_form"] = "explicit"
            v["fmt"] = j.get("format") or fmt
            g = table.groups(v)
            return cls(Path(source), None, Options(**g["read"]), v["fmt"], v["target"], v["bos"], Forms(**g["forms"]),
                       Policy.from_json(_object(j.get("policy") or {}, "$.job.policy")), None)
        except InputError as e:
            raise InputError(f"{where}: {e}") from None


# the keywords `build` takes, as its signature says them (help(), editors, `inspect`)
Job.build.__func__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [inspect.Parameter("cls", inspect.Parameter.POSITIONAL_OR_KEYWORD),
     inspect.Parameter("source", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="str | os.PathLike"),
     *table.signature()], return_annotation="Job")


def _earlier(manifest: dict) -> dict:
    """The job's JSON form from the keys a manifest had before it recorded the job: `read_options`
    (the reader's four and the two lowering choices), `target`, `bos_policy`, `policy`."""
    opts = _object(manifest.get("read_options") or {}, "$.read_options")
    return {"read": {k: opts.get(k) for k in ("chat_template", "pattern", "special", "family")},
            "target": manifest.get("target"), "bos": manifest.get("bos_policy"),
            "header_specials": opts.get("header_specials"), "normalizer_form": opts.get("normalizer_form"),
            "policy": _object(manifest.get("policy") or {}, "$.policy")}


def _object(value, json_path: str) -> dict:
    if not isinstance(value, dict):
        raise InputError(f"{json_path}: not a JSON object")
    return value

