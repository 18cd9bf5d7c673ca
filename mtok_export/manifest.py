"""The export manifest (DESIGN 4.3): `tokenizer.mtok.json` beside `tokenizer.mtok` (and
`tokenizer.txt.json` beside a legacy file) says what made the file and what it was checked against:
tool version, inputs and output with sha256, target, BOS policy, original and embedded chat template,
every loss with its severity and how it was accepted, verification per check (k/n, runtime and
version, corpus sha256), Unicode version and normalizer forms, and the job that made it (`job.Job`: reader
options, target, lowering choices, policy).  `mtok verify FILE` reads the job back instead of asking
again for them; `mtok inspect` checks the file's hash."""

from __future__ import annotations

import hashlib
import os
import json
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .dump.render import one_line
from .errors import InputError
from .io import atomic_write
from .job import Job

if TYPE_CHECKING:
    from .ir import Tokenizer
    from .lower import Lowering
    from .policy import Decision

MANIFEST_VERSION = 1


def manifest_path(output: Path) -> Path:
    return Path(output).with_name(Path(output).name + ".json")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_manifest(job: Job, *, source: Tokenizer, lowered: Tokenizer, lowering: Lowering, output: Path, data: bytes,
                   decisions: list[Decision], report=None, hub: dict | None = None) -> dict:
    """`job.source`: the path read (a file picked with --input, or the model folder); `report`: the
    `verify.check.Report` when verification ran (a layer above: not imported here)."""
    chat_src, chat_out = source.chat, lowered.chat
    source_path = Path(job.source).resolve()
    return {
        "manifest_version": MANIFEST_VERSION,
        "tool": {"name": "mtok-export", "version": __version__},
        "source": str(source_path),
        # the same from the manifest's folder: a model folder moved with its source still verifies
        "source_relative": os.path.relpath(source_path, Path(output).resolve().parent),
        "hub": hub,  # {repo_id, revision, sha} of a Hub input: `mtok verify` fetches that commit again
        "job": job.to_json(),  # what `mtok verify` reads and lowers the source with again (`Job.from_manifest`)
        "inputs": [{"path": f.path, "sha256": f.sha256} for f in source.provenance.inputs],
        # the decisions the folder left open, taken once: the reader and the reference followed them
        "interpretation": source.meta.interpretation.to_json() if source.meta.interpretation is not None else None,
        "output": {"path": Path(output).name, "format": job.fmt, "sha256": sha256_bytes(data), "size": len(data)},
        "target": lowering.target.name,
        "runtime_required": lowering.target.requires,
        "bos_policy": lowering.bos,
        "chat_template": {
            "name": chat_src.name or "default", "source": chat_src.source,
            # where it came from (`readers.chat_source`): kind, and the encoder / generator / reason
            "origin": {"kind": chat_src.kind or "none", **dict(chat_src.detail)},
            "original_sha256": sha256_bytes(chat_src.text.encode("utf-8")) if chat_src.text else None,
            "embedded_sha256": sha256_bytes(chat_out.text.encode("utf-8")) if chat_out.text else None,
            "original": chat_src.text, "embedded": chat_out.text if chat_out.text != chat_src.text else "(same)",
            "bos_token": chat_out.bos_token, "eos_token": chat_out.eos_token,
        },
        "unicode_version": source.provenance.unicode_version,
        "normalizer": {"source": one_line(source.normalizer, 200), "written": one_line(lowered.normalizer, 200)},
        "passes": lowering.applied,
        "warnings": list(lowering.warnings),
        "losses": [d.to_json() for d in decisions],
        "verification": verification_json(report, str(job.verify.python) if job.verify and job.verify.python
                                          else None),
    }


def verification_json(report, runtime_python: str | None = None) -> dict | None:
    if report is None:
        return None
    return {
        "result": report.verdict,  # "passed (partial)": `partial` names what the time budget left unchecked
        "runtime": f"MNN {report.runtime}", "runtime_python": runtime_python,
        "corpus_sha256": report.corpus_sha256,
        "reference": report.reference,
        "checks": {c.name: {"ok": c.ok, "total": c.total, "unexplained": sum(1 for m in c.mismatches
                                                                             if not m.explanation),
                            "note": c.skipped, "reference": c.reference} for c in report.checks},
        "robustness": report.robustness.to_json() if report.robustness is not None else None,
        "partial": report.partial,
        "special_tokens": report.surface_json,
    }



def write_manifest(output: Path, manifest: dict):
    atomic_write(manifest_path(output), (json.dumps(manifest, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))


def read_manifest(output: Path) -> dict | None:
    """The manifest beside `output`, or None when there is none.  A malformed one is an error."""
    p = manifest_path(output)
    if not p.is_file():
        return None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise InputError(f"{p}: not a readable manifest ({e.__class__.__name__}: {e})") from e
    if not isinstance(data, dict) or data.get("manifest_version") != MANIFEST_VERSION:
        raise InputError(f"{p}: not an mtok-export manifest (version {data.get('manifest_version')!r}, "
                         f"expected {MANIFEST_VERSION})" if isinstance(data, dict) else f"{p}: not a JSON object")
    return data
