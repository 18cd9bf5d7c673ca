"""`mtok doctor --fix`: the file the source gives, written through the export (verified on the
runtime before it replaces anything, atomically) in place of the deployed one, which is kept beside
it as `NAME.orig` (never over an earlier backup: `NAME.orig.1`, ...).  In an MNN model folder the
export also sets `llm_config.json`'s jinja block to the template and EOS it embeds (`export`'s
`_llm_config_plan`); the previous `llm_config.json` is kept the same way."""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from ..errors import InputError, MtokError
from ..export import export
from ..io import atomic_write
from ..job import VerifyOptions
from ..manifest import manifest_path
from ..model_folder import find, with_jinja
from ..policy import Policy


def free_name(path: Path) -> Path:
    """`path` when nothing is there, else `path.1`, `path.2`, ...: a backup never clobbers another."""
    if not path.exists():
        return path
    n = 1
    while path.with_name(f"{path.name}.{n}").exists():
        n += 1
    return path.with_name(f"{path.name}.{n}")


def repair(diagnosis, *, python: Path | None = None, accept: tuple[str, ...] = (),
           progress: Callable[[str], None] | None = None) -> dict:
    """Replace `diagnosis.file` with the verified file its source gives; -> what was written and
    kept.  Raises what the export raises (a mismatch: exit 1, a refused loss: exit 3) with the
    deployed file untouched and no backup left behind."""
    if diagnosis.job is None:
        raise InputError("--fix needs --against SOURCE: the repaired file is made from the source")
    target = Path(diagnosis.file)
    policy = diagnosis.job.policy
    if accept:
        policy = dataclasses.replace(policy, accept=policy.accept | Policy.from_options(accept=accept).accept)
    job = dataclasses.replace(diagnosis.job, verify=VerifyOptions(python=python), policy=policy)
    folder = find(target.parent)
    llm = target.parent / "llm_config.json"
    patch = folder is not None and folder.jinja is not None
    kept = free_name(target.with_name(target.name + ".orig"))
    kept_llm = free_name(llm.with_name(llm.name + ".orig")) if patch else None
    shutil.copy2(target, kept)
    if kept_llm is not None:
        shutil.copy2(llm, kept_llm)
    try:
        name = job.output.names[0]
        if target.name == name:
            result = export(job, target.parent, steps=progress)
        else:  # the folder names another file: export beside it, then put it (and its manifest) there
            result = _export_renamed(job, target, folder if patch else None, progress)
    except (MtokError, KeyboardInterrupt):
        kept.unlink()
        if kept_llm is not None:
            kept_llm.unlink()
        raise
    patched = kept_llm is not None and kept_llm.read_bytes() != llm.read_bytes()
    if kept_llm is not None and not patched:
        kept_llm.unlink()
    return {"written": str(target), "kept": str(kept), "llm_config_kept": str(kept_llm) if patched else None,
            "verified": result.verify is not None and result.verify.ok, "size": result.size,
            "seconds": round(result.seconds, 2)}


def _export_renamed(job, target: Path, folder, progress):
    tmp = target.parent / f".mtok-doctor-{os.getpid()}"
    tmp.mkdir()
    try:
        result = export(job, tmp, steps=progress)
        os.replace(result.path, target)
        os.replace(manifest_path(result.path), manifest_path(target))
        if folder is not None:  # the export ran outside the folder: its jinja block is set here
            chat = result.lowered.chat
            text, _ = with_jinja(folder, chat.text, chat.bos_token, chat.eos_token)
            atomic_write(folder.dir / "llm_config.json", text.encode("utf-8"))
        result.path = target
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
