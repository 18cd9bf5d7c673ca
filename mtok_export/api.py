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

The CLI (`mtok`, `mtok-export`) is a thin layer over these functions plus printing."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from . import gc_pause
from .errors import InputError, LossError, OutputError
from .export import ExportResult, VerifyOptions
from .export import export as export_dir
from .formats import read_source
from .hub import fetch as fetch_hub
from .hub import parse_repo_id
from .inspection import InspectResult, inspect  # noqa: F401  the API's inspect
from .io import atomic_write
from .losses import Loss
from .lower import BOS_POLICIES, HEADER_SPECIALS, NORMALIZER_FORMS
from .policy import Decision, Policy, decide, refusal_hint
from .targets import build, target_for
from .verification import engine_path, prepare, run
from .verify.check import Report
from .writers.hf_json import write_hf_dir

PathLike = str | os.PathLike
Special = dict[str, int] | list[str]  # a rank file's special tokens: {token: id}, or tokens whose ids follow the ranks


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

    @property
    def exit_code(self) -> int:
        """What `mtok verify` exits with: 1 for an unreproduced mismatch, 3 for a refused loss."""
        if not self.report.ok:
            return 1
        return 3 if any(not d.accepted for d in self.decisions) else 0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def _check_choice(flag: str, value: str, choices) -> None:
    """Named as the CLI option, so the CLI (a thin layer over this module) reports it as typed."""
    if value not in choices:
        raise InputError(f"{flag} {value!r}: choose one of {', '.join(choices)}")


def export(path: PathLike, output_dir: PathLike | None = None, *, target: str = "mnn-3.6", fmt: str = "mtok",
           allow_lossy: bool = False, accept: Iterable[str] = (), accept_file: PathLike | None = None,
           strict: bool = False, bos: str = "auto", chat_template: str | None = None, pattern: str | None = None,
           special: Special | None = None, family: str | None = None, verify_on_runtime: bool = True,
           corpus: PathLike | None = None, runtime_python: PathLike | None = None,
           progress: Callable[[int, int], None] | None = None, header_specials: str = "needed",
           normalizer_form: str = "compose", sweep: bool = True) -> ExportResult:
    """Read any supported input, lower it for `target`, and write `tokenizer.mtok` (or `.txt` with
    `fmt="txt"`) into `output_dir` (default: beside the input) with its manifest, as `mtok-export`
    does: unless `verify_on_runtime=False` the file is verified on the MNN runtime first and only
    replaces the output when it passed.  `allow_lossy`, `accept` (codes), `accept_file` and `strict`
    are the acceptance policy.  -> `ExportResult` (path, size, the source and lowered IRs, the
    lowering with its losses and passes, the verify report, the decisions, the manifest).

    `path` may also be a HuggingFace Hub repository `"org/name[@revision]"` when no such local path
    exists: its tokenizer files are fetched (`hub.fetch`), the commit is recorded in the manifest,
    and `output_dir` is then required.  `special` is a dict {token: id} or a list of tokens (rank
    files); `progress(done, total)` is told while a Unicode table is built; `header_specials` and
    `normalizer_form` are the CLI's `--header-specials` and `--normalizer-form`."""
    _check_choice("--format", fmt, ("mtok", "txt"))
    target_for(fmt, target)  # --target: one of the format's
    _check_choice("--bos", bos, BOS_POLICIES)
    _check_choice("--header-specials", header_specials, HEADER_SPECIALS)
    _check_choice("--normalizer-form", normalizer_form, NORMALIZER_FORMS)
    policy = Policy.from_options(accept, Path(accept_file) if accept_file is not None else None, allow_lossy, strict)
    options = VerifyOptions(Path(corpus) if corpus else None, Path(runtime_python) if runtime_python else None,
                            sweep=sweep) \
        if verify_on_runtime else None
    source, hub = Path(path), None
    repo = None if source.exists() else parse_repo_id(str(path))
    if repo is not None:
        if output_dir is None:
            raise InputError(f"{path}: a Hub repository needs output_dir (its cache folder is no place for the output)")
        snapshot = fetch_hub(*repo)
        source, hub = snapshot.path, snapshot.to_json()
    return export_dir(source, Path(output_dir) if output_dir is not None else None, target=target,
                      policy=policy, bos=bos, chat_template=chat_template, progress=progress, pattern=pattern,
                      special=special, family=family, fmt=fmt, verify=options, header_specials=header_specials,
                      normalizer_form=normalizer_form, hub=hub)


def verify(file: PathLike, against: PathLike | None = None, *, target: str | None = None, bos: str | None = None,
           allow_lossy: bool = False, accept: Iterable[str] = (), accept_file: PathLike | None = None,
           strict: bool = False, corpus: PathLike | None = None, runtime_python: PathLike | None = None,
           progress: Callable[[str], None] | None = None, sweep: bool = True) -> VerifyResult:
    """Check `file` (or the tokenizer an MNN model folder names) with our strict reader, then run the
    MNN runtime on it and the reference on the source (`against`, else the one its manifest names)
    over the built-in corpus (plus `corpus`, JSONL), and apply the acceptance policy (the manifest's
    unless one is given here).  `progress(step)` is told each phase.

    The steps are `verification.engine_path`, `prepare` and `run`, shared with `mtok verify`."""
    file, llm_config = engine_path(Path(file))  # an MNN model folder: its tokenizer, through its llm_config
    manifest, source, low, lw, read_opts = prepare(file, Path(against) if against is not None else None, target,
                                                    bos)
    policy = Policy.for_verify(manifest, accept, Path(accept_file) if accept_file is not None else None, allow_lossy,
                               strict)
    report = run(file, source, low, lw, corpus=corpus, python=runtime_python,
                 progress=progress, llm_config=llm_config, sweep=sweep)
    return VerifyResult(report, decide(lw.losses, policy, report.reach()))


def convert(src: PathLike, out: PathLike, *, to: str = "mtok", target: str = "mnn-3.6", allow_lossy: bool = False,
            chat_template: str | None = None, pattern: str | None = None, special: Special | None = None,
            force: bool = False) -> ConvertResult:
    """Any input to `to` = "mtok", "txt" (legacy) or "hf" (tokenizer.json + configs in the folder
    `out`).  `out` may be a folder for mtok/txt (gets tokenizer.mtok / tokenizer.txt).  An existing
    output is replaced only with `force`; the bytes are read back by our strict reader before the
    rename.  No verification."""
    _check_choice("--to", to, ("mtok", "txt", "hf"))
    output = target_for("mtok" if to == "hf" else to, target).output
    out = Path(out)
    with gc_pause.paused():
        tok = read_source(Path(src), chat_template, pattern=pattern, special=special)
        if to == "hf":
            if (out / "tokenizer.json").exists() and not force:
                raise OutputError(out / "tokenizer.json", "exists; pass --force to replace it")
            paths = tuple(write_hf_dir(tok, out))
            return ConvertResult(paths, sum(p.stat().st_size for p in paths))
        data, _, lw = build(tok, to, target=target)
    decisions = decide(lw.losses, Policy(allow_lossy=allow_lossy))  # declared severities: convert does not verify
    if any(not d.accepted for d in decisions):
        raise LossError(decisions, hint=refusal_hint(decisions, target, api=True))
    path = out / output.names[0] if out.is_dir() else out
    if path.exists() and not force:
        raise OutputError(path, "exists; pass --force to replace it")
    with gc_pause.paused():
        output.check(data, path)
    atomic_write(path, data)
    return ConvertResult((path,), len(data), tuple(lw.losses), dict(lw.applied))
