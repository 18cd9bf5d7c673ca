"""The job: one value for what an export, a conversion or a verification is asked to do.

What is read (the source, the file in it, the reader's `ReadOptions`), the `Target` it is lowered
for (any `Target` object; a name from the command line or a manifest is resolved once, at the edge:
`Job.build`, `from_manifest`, `resolve_target`, where `--format txt` is `mnn-legacy`) and the
lowering's `Forms`, the acceptance `Policy`, and how the file is verified on the runtime.  Its fields
are `job_options.JobFields`, each one option or a holder of options, declared there once
(`options.TABLE` is derived from them).

The CLI builds it from its options and the API from its keywords, both with `Job.build` (its
keywords are the table's); it is checked once, when made (`__post_init__`, whichever way: `build`,
`dataclasses.replace`, `from_manifest`), and a bad value is an `InputError` naming the CLI option,
which the API shares.  The export writes its JSON form into the manifest (the target by its name;
`options.to_json`, from the fields); `mtok verify` reads it back (`from_manifest`), so the file is
re-lowered with exactly the recorded choices.  The source is not in that form: the manifest records
it beside it (`source`, `source_relative`, `hub`), where verify finds it again after a move; a file
picked with `--input` is the source recorded there."""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import options as table
from .errors import InputError
from .formats import Format, read_source, resolve_input
from .ir.tokenizer import NO_CHAT
from .job_options import JobFields, Policy, ReadOptions, VerifyOptions
from .lower import Forms, Lowering
from .target_type import Target
from .targets import DEFAULT, build, format_name, target_for

if TYPE_CHECKING:
    import os

    from .ir import Tokenizer

__all__ = ["Job", "VerifyOptions"]


@dataclass(frozen=True)
class Job(JobFields):
    """An export's (or a conversion's) every choice; see the module's docstring.  Its fields are
    `job_options.JobFields` (each its option): `source`, `read`, `target`, `bos`, `forms`, `policy`,
    `input`, `verify`."""

    def __post_init__(self):
        if self.target is None:
            object.__setattr__(self, "target", target_for("mtok", DEFAULT))
        elif not isinstance(self.target, Target):
            raise TypeError(f"a Job holds a Target object, not {self.target!r}: Job.build resolves a name")
        table.check_all(self)
        table.check_all(self.forms)
        w = self.forms.max_word
        if w is not None and (w < 1 or self.target.legacy):
            raise InputError(f"{table.spell('max_word', w)}: " + ("a positive length" if w < 1 else
                             "the legacy tokenizer.txt has no split to cap words with "
                             f"(use {table.spell('fmt', 'mtok')})"))

    @classmethod
    def build(cls, source: str | os.PathLike, **keywords) -> Job:
        """The job from the CLI's options, as keywords (the API's: `options.TABLE`, this function's
        signature): `target` a name (None: the default one) or a `Target` object, `fmt` the output
        format it writes; `accept`, `accept_file`, `allow_lossy`, `strict` and `allow_crash` are the
        policy; `verify_on_runtime`, `corpus`, `runtime_python`, `sweep` and `robust` (seconds, None:
        off) the verification."""
        g = table.groups(table.bind("build", keywords))
        job = g["job"]
        return cls(Path(source), ReadOptions(**g["read"]), resolve_target(job["fmt"], job["target"]), job["bos"],
                   Forms(**g["forms"]), Policy.from_options(**g["policy"]), job["input"],
                   VerifyOptions(**g["verify"]) if job["verify_on_runtime"] else None)

    @property
    def output(self) -> Format:
        """The format the target writes (`.names[0]` is the file's conventional name)."""
        return self.target.output

    @property
    def fmt(self) -> str:
        """`--format`'s name of the format the target writes (mtok, txt)."""
        return format_name(self.target)

    def path(self) -> Path:
        """What is read: the `--input` file inside the source, else the source itself."""
        return resolve_input(self.source, self.input)

    def read_source(self) -> Tokenizer:
        return read_source(self.path(), self.read)

    def lower(self, tok: Tokenizer, progress: Callable[[int, int], None] | None = None) \
            -> tuple[bytes, Tokenizer, Lowering]:
        """-> (the file's bytes, the IR the runtime will run, the Lowering with losses and passes)."""
        return build(tok, target=self.target, bos=self.bos, progress=progress, forms=self.forms)

    def to_json(self) -> dict:
        """What the manifest records (`source`, `input` and `verify` are recorded beside it): the
        fields' JSON (`options.to_json`), the target by its name."""
        return table.to_json(self)

    def argv(self) -> list[str]:
        """The export options that make this job (`mtok-export`'s, from the option table), each one
        that differs from its default; the source and output are the caller's (`next_command`)."""
        held = table.held(self)
        held["accept"] = sorted(held["accept"])
        held["accept_file"] = held["accept_file"] or None
        held["target"] = None if self.target.default or self.target.legacy else self.target.name
        held["fmt"] = self.fmt
        out: list[str] = []
        for o in table.options_of("export"):
            if not o.keyword:
                continue
            value = held[o.key]
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
            _object(j.get("policy") or {}, "$.job.policy")
            v = table.from_json(JobFields, j)
            if "regex_form" not in j:  # recorded since the choice existed; before, every file was explicit
                v["forms"] = dataclasses.replace(v["forms"], regex_form="explicit")
            target = resolve_target(v.pop("fmt") or fmt, v.pop("target", None))
            return cls(Path(source), **v, target=target, verify=None)
        except InputError as e:
            raise InputError(f"{where}: {e}") from None


def resolve_target(fmt: str = "mtok", target: str | Target | None = None) -> Target:
    """The edge's one resolution of `--format` and `--target` (names) into the `Target` a job holds;
    a `Target` object is taken as it is (registered or not)."""
    if isinstance(target, Target):
        return target
    return target_for(fmt or "mtok", target or DEFAULT)


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

