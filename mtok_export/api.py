"""The Python API for pipelines: `from mtok_export import export, verify, inspect, convert`.

Each function returns a typed result and prints nothing.  Failures are exceptions from
`mtok_export.errors`, whose `exit_code` is the CLI's for the same failure:

| exception | exit_code | when |
|---|---|---|
| `InputError`, `FormatError`, `UnsupportedError` | 2 | unreadable, malformed or unsupported input (names the file and the JSON path or byte offset) |
| `OutputError` | 2 | the output location cannot be written (names the path and the reason) |
| `LossError` | 3 | the export would lose information and `allow_lossy` is off (`.losses` lists each, with its code) |
| `RuntimeEngineError` | 1 | the MNN runtime crashed, hung or is missing |
| `Interrupted` | 143 | SIGTERM while the runtime worker ran (Ctrl-C stays `KeyboardInterrupt`); the worker is gone |

A verification mismatch is not an exception: `verify(...).ok` is False (the CLI's exit 1).

    from mtok_export import export, verify
    result = export("models/qwen", "out/qwen", allow_lossy=True)
    report = verify(result.path, "models/qwen", allow_lossy=True)
    assert report.ok, report.classes()

The CLI (`mtok`, `mtok-export`) is a thin layer over these functions plus printing."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError, OutputError

PathLike = str | os.PathLike


@dataclass(frozen=True)
class InspectResult:
    """What a `.mtok` (or legacy `tokenizer.txt`) holds."""

    path: Path
    tokenizer: object  # ir.Tokenizer as read
    layout: object  # mtok.Layout: sections with offsets and sizes, reader warnings
    info: dict  # everything `mtok inspect` shows (the `--json` document)

    @property
    def warnings(self) -> list[str]:
        return list(self.info.get("warnings", ()))


@dataclass(frozen=True)
class ConvertResult:
    """What `convert` wrote."""

    paths: tuple[Path, ...]  # one file for mtok/txt; tokenizer.json and its configs for hf
    size: int  # bytes written in all
    losses: tuple = ()  # lower.Loss accepted with allow_lossy (empty for hf, which keeps everything)
    passes: dict = field(default_factory=dict)  # lowering pass -> details


def _check_choice(flag: str, value: str, choices) -> None:
    """Named as the CLI option, so the CLI (a thin layer over this module) reports it as typed."""
    if value not in choices:
        raise InputError(f"{flag} {value!r}: choose one of {', '.join(choices)}")


def export(path: PathLike, output_dir: PathLike | None = None, *, target: str = "mnn-3.6", fmt: str = "mtok",
           allow_lossy: bool = False, bos: str = "auto", chat_template: str | None = None,
           pattern: str | None = None, special=None, family: str | None = None, progress=None):
    """Read any supported input, lower it for `target` and write `tokenizer.mtok` (or `.txt` with
    `fmt="txt"`) into `output_dir` (default: beside the input).  -> `export.ExportResult` (path,
    size, the source and lowered IRs, the lowering with its losses and passes).  Does not verify:
    call `verify` on the result.  `special` is a dict {token: id} or a list of tokens (rank files)."""
    from .export import export as run
    from .lower import BOS_POLICIES, TARGETS

    _check_choice("--format", fmt, ("mtok", "txt"))
    _check_choice("--target", target, TARGETS)
    _check_choice("--bos", bos, BOS_POLICIES)
    return run(Path(path), Path(output_dir) if output_dir is not None else None, target=target,
               allow_lossy=allow_lossy, bos=bos, chat_template=chat_template, progress=progress, pattern=pattern,
               special=special, family=family, fmt=fmt)


def verify(file: PathLike, against: PathLike, *, target: str = "mnn-3.6", bos: str = "auto",
           allow_lossy: bool = False, corpus: PathLike | None = None, runtime_python: PathLike | None = None,
           timeout: float = 300.0, progress=None):
    """Run the MNN runtime on `file` and the reference on the source `against`, over the built-in
    corpus (plus `corpus`, JSONL).  Our strict reader checks `file` first.  -> `verify.check.Report`
    (`.ok`, `.checks` with k/n and mismatches, `.classes()`, `.unexplained`).  `progress(step)` is
    told each phase.  This is today's verification; the release-gate work may add to it."""
    from .export import read_source
    from .lower import BOS_POLICIES, TARGETS, lower
    from .verify.check import verify as run
    from .verify.corpus import builtin_chats, builtin_corpus, load_corpus_file
    from .verify.reference import reference_for

    _check_choice("--target", target, TARGETS)
    _check_choice("--bos", bos, BOS_POLICIES)
    file, against = Path(file), Path(against)
    if not file.is_file():
        raise InputError(f"{file}: no such file")
    tok = read_source(against)
    low, lw = lower(tok, target, bos)
    samples = list(builtin_corpus()) + (list(load_corpus_file(corpus)) if corpus is not None else [])
    return run(file, against if against.is_dir() else against.parent, low, lw, samples=samples,
               chats=list(builtin_chats()), python=runtime_python, accepted=allow_lossy, timeout=timeout,
               progress=progress, reference=reference_for(tok))


def inspect(file: PathLike, *, limit: int = 5, strict: bool = False) -> InspectResult:
    """Read a `.mtok` or legacy `tokenizer.txt`.  `strict=False` (as `mtok inspect`) reports an
    unsorted vocab or merge table as a warning instead of failing, so a broken file can be looked at."""
    from .dump.jsonify import describe
    from .readers.mnn_file import read_mnn_file

    file = Path(file)
    tok, layout = read_mnn_file(file, strict=strict)
    return InspectResult(file, tok, layout, describe(tok, layout, limit))


def convert(src: PathLike, out: PathLike, *, to: str = "mtok", target: str = "mnn-3.6", allow_lossy: bool = False,
            chat_template: str | None = None, pattern: str | None = None, special=None,
            force: bool = False) -> ConvertResult:
    """Any input to `to` = "mtok", "txt" (legacy) or "hf" (tokenizer.json + configs in the folder
    `out`).  `out` may be a folder for mtok/txt (gets tokenizer.mtok / tokenizer.txt).  An existing
    output is replaced only with `force`; the bytes are read back by our strict reader before the
    rename.  No verification."""
    from . import legacy
    from .export import FORMATS, build, read_source
    from .io import atomic_write
    from .lower import TARGETS
    from .mtok import check_written

    _check_choice("--to", to, ("mtok", "txt", "hf"))
    _check_choice("--target", target, TARGETS)
    out = Path(out)
    tok = read_source(Path(src), chat_template, pattern=pattern, special=special)
    if to == "hf":
        from .writers.hf_json import write_hf_dir

        if (out / "tokenizer.json").exists() and not force:
            raise OutputError(out / "tokenizer.json", "exists; pass --force to replace it")
        paths = tuple(write_hf_dir(tok, out))
        return ConvertResult(paths, sum(p.stat().st_size for p in paths))
    data, _, lw = build(tok, to, target=target, allow_lossy=allow_lossy)
    path = out / FORMATS[to] if out.is_dir() else out
    if path.exists() and not force:
        raise OutputError(path, "exists; pass --force to replace it")
    (check_written if to == "mtok" else legacy.check_written)(data, path)
    atomic_write(path, data)
    return ConvertResult((path,), len(data), tuple(lw.losses), dict(lw.applied))
