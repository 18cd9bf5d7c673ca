"""The Python API for pipelines: `from mtok_export import export, verify, inspect, convert`.

Each function returns a typed result and prints nothing.  Failures are exceptions from
`mtok_export.errors`, whose `exit_code` is the CLI's for the same failure:

| exception | exit_code | when |
|---|---|---|
| `InputError`, `FormatError`, `UnsupportedError` | 2 | unreadable, malformed or unsupported input (names the file and the JSON path or byte offset) |
| `OutputError` | 2 | the output location cannot be written (names the path and the reason) |
| `LossError` | 3 | the acceptance policy refuses a loss (`.decisions`, `.losses` with their codes, `.hint`: which `accept=` / `allow_lossy=` would accept them) |
| `VerificationError` | 1 | `export` only: a runtime mismatch no recorded loss reproduces (the file is kept as `.rejected`) |
| `RuntimeEngineError` | 1 | the MNN runtime crashed, hung or is missing |
| `Interrupted` (a `KeyboardInterrupt`) | 143, 129 | SIGTERM or SIGHUP while the runtime worker ran (Ctrl-C stays a plain `KeyboardInterrupt`); the worker and its files are gone |

`verify` returns its outcome instead of raising: `.ok`, and `.exit_code` (0, 1 or 3) as the CLI's.

    from mtok_export import export, verify
    result = export("models/qwen", "out/qwen", allow_lossy=True)   # verified on MNN, then written
    checked = verify(result.path, "models/qwen", allow_lossy=True)
    assert checked.ok, checked.report.classes()

`export` and `convert` take a `job.Job` (every choice of the export, checked when made: what the CLI
builds from its options) or a path and `Job.build`'s keywords.  The CLI (`mtok`, `mtok-export`) is a
thin layer over these functions plus printing."""

from __future__ import annotations

import dataclasses
import inspect as pyinspect  # `inspect` is the API's (`__getattr__`)
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import gc_pause
from . import options as table
from .errors import InputError, LossError, OutputError
from .export import ExportResult
from .export import export as export_job
from .hub import fetch as fetch_hub
from .hub import parse_repo_id
from .io import atomic_write
from .job import Job, VerifyOptions, resolve_target
from .losses import Loss
from .policy import Decision, Policy, decide, refusal_hint, usage_of

if TYPE_CHECKING:  # verification and the HF writer are loaded by the call that uses them
    from .verify.check import Report

PathLike = str | os.PathLike


@dataclass(frozen=True)
class ConvertResult:
    """What `convert` wrote."""

    paths: tuple[Path, ...]  # one file for mtok/txt; tokenizer.json and its configs for hf
    size: int  # bytes written in all
    losses: tuple[Loss, ...] = ()  # accepted with allow_lossy (empty for hf, which keeps everything)
    passes: dict[str, list[str]] = field(default_factory=dict)  # lowering pass -> details


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of `verify`: the runtime against the reference, and the policy's decisions."""

    report: Report  # checks with k/n and mismatches, classes(), unexplained
    decisions: list[Decision]  # one per loss code, severities measured on the corpus
    job: Job  # the job the file was re-made with: the recorded one, its source the one read
    file: Path  # the file checked (an MNN model folder's tokenizer file)

    @property
    def exit_code(self) -> int:
        """What `mtok verify` exits with: 1 for an unreproduced mismatch, 3 for a refused loss."""
        if not self.report.ok:
            return 1
        return 3 if any(not d.accepted for d in self.decisions) else 0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def export(source: Job | PathLike, output_dir: PathLike | None = None, *,
           progress: Callable[[int, int], None] | None = None, steps: Callable[[str], None] | None = None,
           keep_llm_config: bool = False, **options) -> ExportResult:
    """Read any supported input, lower it for its target, and write `tokenizer.mtok` (or `.txt` with
    `fmt="txt"`) into `output_dir` (default: beside the input) with its manifest, as `mtok-export`
    does: unless `verify_on_runtime=False` the file is verified on the MNN runtime first and only
    replaces the output when it passed.  `source` is a `Job`, or a path and `options`, the keywords
    of `Job.build` (`options.TABLE`, in this function's signature; each declared as a field of its
    holder, `job_options`): `target` (a name or a `Target` object), `fmt`, the reader's, the forms',
    the acceptance policy's (`allow_lossy`, `accept` codes, ...), `verify_on_runtime` and the
    verification's (`robust`: the robustness phase's seconds, None: off).
    -> `ExportResult` (the job, path, size, the source and lowered IRs, the lowering with its
    losses and passes, the verify report, the decisions, the manifest).

    The path may also be a HuggingFace Hub repository `"org/name[@revision]"` when no such local path
    exists: its tokenizer files are fetched (`hub.fetch`), the commit is recorded in the manifest,
    and `output_dir` is then required.  `special` is a dict {token: id} or a list of tokens (rank
    files); `progress(done, total)` is told while a Unicode table is built, `steps(phase)` each phase of
    verification, or `steps(phase, done, total)` also its counts (`verify.steps`); `keep_llm_config`: the CLI's `--keep-llm-config` (an MNN model folder's jinja block)."""
    job = _job(source, options)
    hub = None
    repo = None if job.source.exists() else parse_repo_id(str(job.source))
    if repo is not None:
        if output_dir is None:
            raise InputError(f"{job.source}: a Hub repository needs output_dir (its cache folder is no place for the "
                             "output)")
        snapshot = fetch_hub(*repo)
        job, hub = dataclasses.replace(job, source=snapshot.path), snapshot.to_json()
    return export_job(job, Path(output_dir) if output_dir is not None else None, progress=progress, steps=steps,
                      keep_llm_config=keep_llm_config, hub=hub)


def verify(file: PathLike, against: PathLike | Job | None = None, *, progress: Callable[[str], None] | None = None,
           **options) -> VerifyResult:
    """Check `file` (or the tokenizer an MNN model folder names) with our strict reader, then run the
    MNN runtime on it and the reference on the source (`against`, else the one its manifest names)
    over the built-in corpus (plus `corpus`, JSONL), and apply the acceptance policy (the manifest's
    unless one is given here); `robust`: the robustness phase's seconds (None: off).  The source is
    read and lowered with the job the manifest records (`target` and `bos` replace its own when given),
    or with `against` when it is a `Job`: its source, every choice and its verify options (no options
    beside it).  `options`: the keywords of `mtok verify`'s options (`options.TABLE`, in this
    function's signature).  `progress(phase)` is told each phase, or
    `progress(phase, done, total)` also its counts when it takes them (`verify.steps`).

    The steps are `verify.pipeline.engine_path`, `prepare` and `run`, shared with the export."""
    from .verify.pipeline import engine_path, prepare, read_file, run  # the runtime and references: only when verifying

    file, llm_config = engine_path(Path(file))  # an MNN model folder: its tokenizer, through its llm_config
    if isinstance(against, Job):
        _job(against, options)  # no options beside a job: refused before the file is read
    checked = read_file(file)  # read and strictly parsed once, for prepare and run
    if isinstance(against, Job):
        _, source, low, lw, job = prepare(file, against.source, checked=checked, job=against)
        job = job if job.verify is not None else dataclasses.replace(job, verify=VerifyOptions())  # it verifies
    else:
        given = _verify_options(options)
        _, source, low, lw, job = prepare(file, Path(against) if against is not None else None, given["target"],
                                          given["bos"], checked)
        g = table.groups(given, table.options_of("verify"))  # by holder: the policy's and the verification's
        if any(g["policy"].values()):  # the options given replace the recorded policy
            job = dataclasses.replace(job, policy=Policy.from_options(**g["policy"]))
        job = dataclasses.replace(job, verify=VerifyOptions(**g["verify"]))
    report = run(file, source, low, lw, job.verify, progress=progress, llm_config=llm_config, checked=checked)
    return VerifyResult(report, decide(lw.losses, job.policy, report.reach(), usage_of(source)), job, file)


def convert(source: Job | PathLike, out: PathLike, *, to: str = "mtok", force: bool = False,
            **options) -> ConvertResult:
    """Any input to `to` = "mtok", "txt" (legacy) or "hf" (tokenizer.json + configs in the folder
    `out`).  `out` may be a folder for mtok/txt (gets tokenizer.mtok / tokenizer.txt).  An existing
    output is replaced only with `force`; the bytes are read back by our strict reader before the
    rename.  No verification: loss severities are the declared ones.  `source` is a `Job` (written in
    `to`'s format; for hf its reader options only), or a path and `options`, `Job.build`'s keywords
    (`target`, `allow_lossy`, `chat_template`, `pattern`, `special`, ...)."""
    if to not in ("mtok", "txt", "hf"):
        raise InputError(f"--to {to!r}: choose one of mtok, txt, hf")
    job = _job(source, options, fmt="txt" if to == "txt" else "mtok")
    out = Path(out)
    with gc_pause.paused():
        tok = job.read_source()
        if to == "hf":
            from .writers.hf_json import write_hf_dir  # the HF writer: only for --to hf

            if (out / "tokenizer.json").exists() and not force:
                raise OutputError(out / "tokenizer.json", "exists; pass --force to replace it")
            paths = tuple(write_hf_dir(tok, out))
            return ConvertResult(paths, sum(p.stat().st_size for p in paths))
        data, _, lw = job.lower(tok)
    decisions = decide(lw.losses, job.policy, usage=usage_of(tok))  # declared severities: convert does not verify
    if any(not d.accepted for d in decisions):
        raise LossError(decisions, hint=refusal_hint(decisions, job.target, api=True))
    path = out / job.output.names[0] if out.is_dir() else out
    if path.exists() and not force:
        raise OutputError(path, "exists; pass --force to replace it")
    with gc_pause.paused():
        job.output.check(data, path)
    atomic_write(path, data)
    return ConvertResult((path,), len(data), tuple(lw.losses), dict(lw.applied))


def __getattr__(name: str):
    """`inspect` and `InspectResult` (`deployed_file`), loaded on first use: they read the legacy
    formats, which the CLI's export (it calls this module) does not load for a `.mtok`."""
    if name in ("inspect", "InspectResult"):
        from . import deployed_file  # it loads the legacy readers, which an export of a .mtok never needs

        return getattr(deployed_file, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_VERIFY = tuple(o.key for o in table.options_of("verify"))  # what `verify` takes beside a manifest's job


def _verify_options(options: dict) -> dict:
    """`verify`'s keywords, each its default when not given (`bos` and `target`: None, the manifest's)."""
    unknown = sorted(set(options) - set(_VERIFY))
    if unknown:
        raise TypeError(f"verify() got an unexpected keyword argument {unknown[0]!r}")
    given = {k: v for k, v in table.bind("verify", options).items() if k in _VERIFY}
    return {**given, "bos": options.get("bos")}


def _typed(fn, options: list[pyinspect.Parameter]):
    """`fn`'s signature with its `**options` as the table's keywords (help(), editors, `inspect`)."""
    sig = pyinspect.signature(fn)
    own = [p for p in sig.parameters.values() if p.kind is not pyinspect.Parameter.VAR_KEYWORD]
    fn.__signature__ = sig.replace(parameters=own + options)


_typed(export, table.signature())
_typed(convert, [p for p in table.signature() if p.name != "fmt"])  # `to` decides the format
_typed(verify, [p.replace(default=None) if p.name == "bos" else p for p in table.signature() if p.name in _VERIFY])


def _job(source: Job | PathLike, options: dict, **fixed) -> Job:
    """`source` as a job: a `Job` as it is (no options beside it), else `Job.build(source, **options)`;
    `fixed`: what the call itself decides (convert's format)."""
    if not isinstance(source, Job):
        return Job.build(source, **options, **fixed)
    if options:
        raise TypeError(f"a Job carries its options; got {', '.join(sorted(options))} beside it")
    if fixed and fixed["fmt"] != source.fmt:  # convert's format: the target writing it, by the job's target's name
        return dataclasses.replace(source, target=resolve_target(fixed["fmt"], source.target.name))
    return source
