"""The `mtok-export` job as a library call: read a model directory, lower it for a target, refuse
(or, when allowed, report) every loss, and write the file atomically."""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError, LossError, UnsupportedError
from .formats import read_source  # noqa: F401  (moved there; callers import it from here too)
from .mtok.constants import FileType


@dataclass
class ExportResult:
    source: object  # the IR as read
    lowered: object  # the IR as written
    lowering: object  # lower.Lowering: losses, passes, notes
    path: Path
    size: int
    seconds: float
    verify: object = None  # verify.Report when verification ran


def atomic_write(path: Path, data: bytes):
    """Write to a temporary file beside `path` and rename it, so a failure never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def llm_config_notes(out_dir: Path, chat) -> list[str]:
    """MNN's llm_config.json `jinja` block overrides the embedded template and EOS (spec 2.8)."""
    import json

    p = out_dir / "llm_config.json"
    if not p.is_file():
        return []
    try:
        jinja = json.loads(p.read_text(encoding="utf-8")).get("jinja")
    except (OSError, ValueError, AttributeError):
        return [f"{p}: not valid JSON; MNN will fail to read it"]
    if not isinstance(jinja, dict) or not isinstance(jinja.get("chat_template"), str):
        return []
    same = jinja["chat_template"] == chat.text
    eos_same = jinja.get("eos", "") == chat.eos_token
    return [f"{p.name} has a jinja block: MNN uses its chat_template and eos instead of the embedded ones "
            f"(template {'identical' if same else 'DIFFERENT'}, eos {'identical' if eos_same else 'DIFFERENT'})"]


FORMATS = {"mtok": "tokenizer.mtok", "txt": "tokenizer.txt"}


def build(tok, fmt: str = "mtok", *, target: str = "mnn-3.6", bos: str = "auto", allow_lossy: bool = False,
          progress=None):
    """IR -> (file bytes, the IR the runtime will run, the Lowering with losses and passes).
    Refuses with `LossError` when something would be lost and `allow_lossy` is off."""
    from .lower import Lowering, lower

    if fmt == "mtok":
        from .mtok import write_mtok

        low, lw = lower(tok, target, bos, progress)
        if lw.losses and not allow_lossy:
            raise LossError(lw.losses, lw.applied)
        return write_mtok(low), low, lw
    if fmt != "txt":
        raise InputError(f"unknown format {fmt!r}: choose mtok or txt")
    from . import legacy

    kind, why = legacy.choose_type(tok)
    try:
        losses = legacy.legacy_losses(tok, kind)
    except UnsupportedError as e:
        if kind != FileType.HUGGINGFACE:
            raise
        # Type 1 holds any byte-level vocabulary (greedy matching, always lossy).
        kind, why = FileType.TIKTOKEN, f"{why}, but type 3 cannot hold it ({str(e).split(';')[0]})"
        losses = legacy.legacy_losses(tok, kind)
    lw = Lowering("mnn-legacy", bos, losses=losses, meta=tok.meta)
    lw.did("legacy-type", f"{legacy.describe(kind)}; chosen because the source is {why}")
    if lw.losses and not allow_lossy:
        raise LossError(lw.losses, lw.applied)
    return legacy.write_legacy(tok, kind), legacy.project_legacy(tok, kind), lw


def export(path: Path, output_dir: Path | None = None, *, target: str = "mnn-3.6", allow_lossy: bool = False,
           bos: str = "auto", chat_template: str | None = None, progress=None, pattern: str | None = None,
           special=None, family: str | None = None, fmt: str = "mtok") -> ExportResult:
    start = time.perf_counter()
    path = Path(path)
    tok = read_source(path, chat_template, pattern=pattern, special=special, family=family)
    data, low, lw = build(tok, fmt, target=target, bos=bos, allow_lossy=allow_lossy, progress=progress)
    out = Path(output_dir or (path if path.is_dir() else path.parent)) / FORMATS[fmt]
    atomic_write(out, data)
    lw.notes.extend(llm_config_notes(out.parent, low.chat))
    return ExportResult(tok, low, lw, out, len(data), time.perf_counter() - start)
