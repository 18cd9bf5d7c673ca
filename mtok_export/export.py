"""The `mtok-export` job as a library call: read a model directory, lower it for a target, refuse
(or, when allowed, report) every loss, and write the file atomically."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from . import gc_pause, model_folder, signals
from .errors import LossError, RuntimeEngineError, VerificationError
from .io import atomic_write, remove_stale_temps
from .ir import Tokenizer
from .job import Job
from .lower import Lowering
from .manifest import build_manifest, write_manifest
from .policy import Decision, decide, refusal_hint, usage_of

if TYPE_CHECKING:  # verification is imported only when it runs
    from .verify.check import Report


@dataclass
class ExportResult:
    """What `export` did: the job, the IRs, the lowering, where the file went, and how it was checked."""

    job: Job  # what was asked, its source the path read
    source: Tokenizer  # the IR as read
    lowered: Tokenizer  # the IR as written
    lowering: Lowering  # losses, passes, notes
    path: Path
    size: int
    seconds: float
    verify: Report | None = None  # when verification ran
    decisions: list[Decision] = field(default_factory=list)  # one per loss code
    manifest: dict | None = None  # what was written beside the output
    rejected: Path | None = None  # where a file that failed was kept
    written: bool = False  # the output was replaced


def rejected_path(out: Path) -> Path:
    return out.with_name(out.name + ".rejected")


def export(job: Job, output_dir: Path | None = None, *, progress: Callable[[int, int], None] | None = None,
           steps: Callable[[str], None] | None = None, keep_llm_config: bool = False,
           hub: dict | None = None) -> ExportResult:
    """Read, lower, write to a temporary file, verify it on the runtime (unless `job.verify` is None),
    apply the job's acceptance policy, and only then replace the output and write its manifest.

    Raises `LossError` (exit 3) when the policy refuses a loss and `VerificationError` (exit 1) when a
    mismatch is not reproduced by a recorded loss; both carry the `ExportResult`.  A file that fails
    either is kept as `<output>.rejected` (when it was written) and never replaces the output.

    When the output folder is an MNN model folder whose `llm_config.json` has a `jinja` block (which
    the engine uses instead of the embedded template and EOS), that block is updated to what the file
    embeds, unless `keep_llm_config`; verification runs with the folder's llm_config as the engine
    will see it, so a kept block that differs from the source's template fails verification.

    `job.source` is a local path here (`api.export` fetches a Hub repository first); `hub`: the
    repository id, revision and commit it was fetched from (`hub.Snapshot.to_json`), recorded in the
    manifest.  `progress(done, total)` is told while a Unicode table is built, `steps(phase)` each
    phase of verification (or `steps(phase, done, total)`, `verify.steps`)."""
    start = time.perf_counter()
    path = job.path()
    job = dataclasses.replace(job, source=path, input=None)  # the path read is the job's source from here on
    verify = job.verify
    if verify is not None:
        from .verify.runtime import check_python, require_runtime  # verification's: not with --no-verify

        require_runtime(job.target, verify.python)  # before anything is read or loaded: a wrong runtime costs nothing
        # verification (the runtime, references, corpus and checks) is loaded only when it runs
        from .verify.pipeline import run as run_verify

        if verify.python is not None:
            check_python(verify.python)
    with gc_pause.paused():
        tok = job.read_source()
        data, low, lw = job.lower(tok, progress)
        out = Path(output_dir or (path if path.is_dir() else path.parent)) / job.output.names[0]
        # nothing the strict reader rejects; verify reads its chat fields and gap fillers
        written = job.output.check(data, out)
    result = ExportResult(job, tok, low, lw, out, len(data), 0.0)
    folder = model_folder.find(out.parent)
    new_llm_config, engine_llm_config = _llm_config_plan(folder, low, keep_llm_config, lw.notes)
    if folder is not None:
        lw.notes.extend(model_folder.check_tokenizer_file(folder, out))
    result.decisions = decide(lw.losses, job.policy, usage=usage_of(tok))
    commit = functools.partial(_commit, result, data=data, folder=folder, new_llm_config=new_llm_config,
                               keep_llm_config=keep_llm_config, hub=hub)
    if verify is None:
        result.seconds = time.perf_counter() - start
        if any(not d.accepted for d in result.decisions):
            raise LossError(result.decisions, result, refusal_hint(result.decisions, job.target, api=True))
        commit(lambda: atomic_write(out, data))
    else:
        remove_stale_temps(out)  # the .verifying files of runs killed without unwinding (kill -9)
        tmp = out.with_name(f".{out.name}.{os.getpid()}.verifying")
        atomic_write(tmp, data)
        try:
            try:
                result.verify = run_verify(tmp, tok, low, lw, verify, progress=steps, llm_config=engine_llm_config,
                                           checked=(data, written))
            except RuntimeEngineError:  # the runtime crashed or hung on the file: keep it for a bug report
                result.rejected = rejected_path(out)
                os.replace(tmp, result.rejected)
                raise
            result.verify.file = str(out)
            result.decisions = decide(lw.losses, job.policy, result.verify.reach(), usage_of(tok))
            result.seconds = time.perf_counter() - start
            refused = any(not d.accepted for d in result.decisions)
            if not result.verify.ok or refused:
                result.rejected = rejected_path(out)
                os.replace(tmp, result.rejected)
                if not result.verify.ok:
                    raise VerificationError(result)
                raise LossError(result.decisions, result, refusal_hint(result.decisions, job.target, api=True))
            commit(lambda: os.replace(tmp, out))
        finally:
            if tmp.exists():
                tmp.unlink()
    return result


def _commit(result: ExportResult, replace: Callable[[], None], *, data: bytes, folder: model_folder.ModelFolder | None,
            new_llm_config: tuple[str, dict | None] | None, keep_llm_config: bool, hub: dict | None) -> None:
    """Replace the output (`replace()`), then write what goes beside it: a stop signal arriving in
    between is held until all of it is written, so the output never stands beside an older
    manifest or llm_config (one arriving before is raised before anything is replaced)."""
    out = result.path
    with signals.deferred():
        replace()
        result.written = True
        stale = rejected_path(out)
        if stale.exists():
            stale.unlink()
        if new_llm_config is not None:
            atomic_write(folder.dir / "llm_config.json", new_llm_config[0].encode("utf-8"))
        result.manifest = build_manifest(result.job, source=result.source, lowered=result.lowered,
                                         lowering=result.lowering, output=out, data=data, decisions=result.decisions,
                                         report=result.verify, hub=hub)
        if folder is not None and folder.llm_config is not None:
            result.manifest["llm_config"] = {
                "path": str(folder.dir / "llm_config.json"),
                "action": "updated" if new_llm_config is not None else "kept" if keep_llm_config else "unchanged",
                "previous_jinja": new_llm_config[1] if new_llm_config is not None else folder.jinja}
        write_manifest(out, result.manifest)


def _llm_config_plan(folder, low, keep: bool, notes: list[str]):
    """-> (new llm_config.json text and the previous jinja block, or None when it stays as it is;
    the llm_config the engine will read, for verification)."""
    if folder is None or folder.llm_config is None:
        return None, None
    jinja = folder.jinja
    if keep:
        if jinja is not None:
            notes.append(f"{folder.dir / 'llm_config.json'}: its jinja block is kept (--keep-llm-config): the "
                         "engine renders that template and EOS, not the embedded ones; verification does too")
        return None, folder.engine_llm_config()
    if jinja is None:  # the engine uses the embedded template: nothing to keep consistent
        return None, folder.engine_llm_config()
    chat = low.chat
    text, previous = model_folder.with_jinja(folder, chat.text, chat.bos_token, chat.eos_token)
    if (previous or {}).get("chat_template") == chat.text and (previous or {}).get("eos") == chat.eos_token \
            and (previous or {}).get("bos") == chat.bos_token:
        return None, folder.engine_llm_config()
    notes.append(f"{folder.dir / 'llm_config.json'}: jinja chat_template/bos/eos updated to what the file embeds "
                 "(the engine uses that block instead of the embedded ones); the previous values are in the manifest")
    return (text, previous), json.loads(text)
