"""`mtok inspect`'s library side: what a `.mtok` or legacy `tokenizer.txt` (or the one an MNN model
folder names) holds, with the file's provenance.  Its own module, below `api`, so that inspecting a
file loads only the readers and the dump, not the export and verification stack."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .dump.jsonify import describe
from .errors import InputError
from .ir import Tokenizer
from .manifest import manifest_path, read_manifest, sha256_bytes
from .model_folder import describe as describe_folder
from .model_folder import find
from .mtok import Layout
from .readers.mnn_file import read_mnn_file


@dataclass(frozen=True)
class InspectResult:
    """What a `.mtok` (or legacy `tokenizer.txt`) holds."""

    path: Path
    tokenizer: Tokenizer  # as read; a .mtok's vocab and merges as views (mtok/views.py)
    layout: Layout  # sections with offsets and sizes, reader warnings
    info: dict  # everything `mtok inspect` shows (the `--json` document)

    @property
    def warnings(self) -> list[str]:
        return list(self.info.get("warnings", ()))



def inspect(file: str | os.PathLike, *, limit: int = 5, strict: bool = False) -> InspectResult:
    """Read a `.mtok` or legacy `tokenizer.txt`, or the one an MNN model folder's config names (then
    `info["engine"]` says what the engine loads and whether llm_config.json overrides the template).
    `strict=False` (as `mtok inspect`) reports an unsorted vocab or merge table as a warning instead
    of failing, so a broken file can be looked at."""
    file = Path(file)
    engine = None
    if file.is_dir():  # an MNN model folder: the tokenizer its config names, and what the engine uses
        folder = find(file)
        if folder is None:
            raise InputError(f"{file}: a folder with no config.json (with tokenizer_file / llm_model) or "
                             "llm_config.json: not an MNN model folder; pass the tokenizer file")
        engine = describe_folder(folder)
        if not engine["tokenizer_found"]:
            raise InputError(f"{file}: the engine would load {engine['tokenizer_file']!r} "
                             f"(from {engine['tokenizer_file_from']}), which does not exist")
        file = folder.tokenizer_path
    tok, layout = read_mnn_file(file, strict=strict, lazy=True)
    info = describe(tok, layout, limit)
    info["file"].update(_provenance(file))
    if engine is not None:
        jinja = engine["jinja"] or {}
        engine["template_equals_embedded"] = jinja.get("chat_template") == tok.chat.text if jinja else None
        engine["eos_equals_embedded"] = jinja.get("eos", "") == tok.chat.eos_token if jinja else None
        info["engine"] = engine
    return InspectResult(file, tok, layout, info)


def _provenance(file: Path) -> dict:
    """The file's sha256 and what the export manifest beside it says of it."""
    digest = sha256_bytes(file.read_bytes())
    m = read_manifest(file)
    if m is None:
        return {"sha256": digest, "manifest": None}
    verification = (m.get("verification") or {}).get("result", "not run")
    return {"sha256": digest, "manifest": {
        "path": str(manifest_path(file)), "matches": m.get("output", {}).get("sha256") == digest,
        "target": m.get("target"), "tool_version": m.get("tool", {}).get("version"), "verification": verification}}
