"""`mtok inspect`'s library side: what a `.mtok` or legacy `tokenizer.txt` (or the one an MNN model
folder names) holds, with the file's provenance.  Its own module, below `api`, so that inspecting a
file loads only the readers and the dump, not the export and verification stack."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .dump.jsonify import describe
from .errors import FormatError, InputError
from .formats import candidates, classify
from .ir import Tokenizer
from .manifest import manifest_path, read_manifest, sha256_bytes
from .model_folder import describe as describe_folder
from .model_folder import find
from .mtok import Layout
from .readers.formats.mnn import LEGACY, MTOK
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
            e = InputError(f"{file}: a folder with no config.json (with tokenizer_file / llm_model) or "
                           "llm_config.json: not an MNN model folder; pass the tokenizer file")
            if candidates(file):
                e.hint = f"it holds a tokenizer source: export it with `mtok-export --path {file}`, then inspect that"
            raise e
        engine = describe_folder(folder)
        if not engine["tokenizer_found"]:
            raise InputError(f"{file}: the engine would load {engine['tokenizer_file']!r} "
                             f"(from {engine['tokenizer_file_from']}), which does not exist")
        file = folder.tokenizer_path
    try:
        tok, layout = read_mnn_file(file, strict=strict, lazy=True)
    except FormatError as e:
        _refuse_source(file, e)
        raise
    info = describe(tok, layout, limit)
    info["file"].update(_provenance(file))
    if engine is not None:
        jinja = engine["jinja"] or {}
        engine["template_equals_embedded"] = jinja.get("chat_template") == tok.chat.text if jinja else None
        engine["eos_equals_embedded"] = jinja.get("eos", "") == tok.chat.eos_token if jinja else None
        info["engine"] = engine
    return InspectResult(file, tok, layout, info)


def _refuse_source(file: Path, why: FormatError) -> None:
    """When `file`, which is not an MNN tokenizer, is a tokenizer source (tokenizer.json, a
    SentencePiece model...): say so and what to run first; which byte is not a header follows as the
    cause (a damaged tokenizer.txt may look like a vocab.txt)."""
    fmt = classify(file)
    if fmt is None or fmt in (MTOK, LEGACY) or fmt.read is None:
        return
    e = InputError(f"{file}: a {fmt.name} file, a tokenizer source: `mtok inspect` reads the .mtok or "
                   "tokenizer.txt that mtok-export writes from it")
    e.hint = f"export it with `mtok-export --path {file}`, then inspect the file it writes"
    raise e from why


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
