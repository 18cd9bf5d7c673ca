"""Verifying a written file against its source (the library side of `mtok verify` and of the export's
verify-before-replace): resolve an MNN model folder as the engine does, check the file with the
strict reader, re-read the source and lower it honestly with the options the manifest records,
and run `verify.check.verify` on the built-in corpus plus the user's."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import NamedTuple

from .. import documents
from ..dump.layer_diff import diff_layers
from ..corpus import builtin_chats, builtin_corpus, load_corpus_file
from ..dump.sanitize import show
from ..errors import IdentityError, InputError
from ..formats import HEAD
from ..hub import fetch as fetch_hub
from ..job import Job, VerifyOptions, resolve_target
from ..manifest import manifest_path, read_manifest, sha256_bytes
from ..model_folder import find, jinja_block
from ..readers.finish import sha256
from ..readers.mnn_file import read_mnn_bytes
from ..targets import OUTPUTS
from . import surface
from .check import TEXT_CHECKS, VerifyJob, verify
from ..losses import REFERENCE_UNAVAILABLE, Loss
from .reference import ReferenceUnavailable
from .references import choose_or_self_check, self_check
from .runtime import require_runtime


def engine_path(path: Path):
    """(tokenizer file, llm_config the engine reads): a model folder resolves as the engine does."""
    path = Path(path)
    if not path.is_dir():
        return path, None
    folder = find(path)
    if folder is None:
        raise InputError(f"{path}: a folder that is not an MNN model folder (no config.json with tokenizer_file "
                         "or llm_config.json); pass the tokenizer file")
    return folder.tokenizer_path, folder.engine_llm_config()


def read_file(file: Path) -> tuple[bytes, object]:
    """(the file's bytes, the IR the strict reader reads from them): the one read and the one strict
    parse of the file `mtok verify` checks (exit 2 with an offset), handed to `prepare` and `run`."""
    file = Path(file)
    if not file.is_file():
        raise InputError(f"{file}: no such file")
    data = file.read_bytes()
    return data, read_mnn_bytes(data, str(file), strict=True)[0]


def output_format(data: bytes) -> str:
    """The `--format` name of the MNN file `data` is, by its content (never its file name)."""
    return next(name for name, fmt in OUTPUTS.items() if fmt.sniff(data[:HEAD], None, None))


class Prepared(NamedTuple):
    """What a file is verified against: its source re-read and lowered honestly by the job that made it."""

    manifest: dict | None  # the manifest beside the file (None: --against, no manifest)
    source: object  # the source's IR
    lowered: object  # its honest lowering (what a correct file holds)
    lowering: object  # the `Lowering` (its losses, target, prefix)
    job: Job  # the job that re-made it


def prepare(file: Path, against: Path | None = None, target: str | None = None, bos: str | None = None,
            checked: tuple[bytes, object] | None = None, *, job: Job | None = None) -> Prepared:
    """-> `Prepared` (the manifest or None, the source IR, its honest lowering, the Lowering, the job that
    re-made it: the recorded one (`Job.from_manifest`, today's and older manifests), reading
    `against` or the manifest's source, with `target` and `bos` when given), after the file's own
    strict checks (exit 2 with an offset; `checked`: `read_file`'s result, when the caller has it)
    and, for a file this tool made (its manifest is beside it), the identity check (`identity`, exit 1).
    `job`: the one to re-make the file with instead of the recorded one (`api.verify` given a job)."""
    file = Path(file)
    checked = checked if checked is not None else read_file(file)
    data = checked[0]
    manifest = read_manifest(file)
    m = manifest or {}
    source = against or _manifest_source(m, file)
    if source is None:
        raise InputError(f"{file}: no manifest beside it ({file.name}.json); pass --against SOURCE")
    if job is None:
        job = Job.from_manifest(m, Path(source), where=str(manifest_path(file)), fmt=output_format(data))
    changed = {} if bos is None else {"bos": bos}
    if target is not None:  # a name from the command line: resolved for the file's format, as the export's
        changed["target"] = resolve_target(job.fmt, target)
    job = dataclasses.replace(job, **changed) if changed else job  # checked as the export's options are
    tok = job.read_source()
    # the honest lowering only: the file under test is the one on disk, no bytes are written here
    expected, low, lw = job.lower(tok)
    if manifest is not None:
        # the recorded inputs are the export's: compared only when the source is the manifest's
        identity(file, _relocated(manifest, source) if against is None else {}, tok, expected, source,
                 checked=checked)
    return Prepared(manifest, tok, low, lw, job)


def identity(file: Path, manifest: dict, tok, expected: bytes, source,
             checked: tuple[bytes, object]) -> None:
    """A file this tool made is what its source produces: the export is deterministic, so the file
    re-derived from the source with the recorded options must be the same bytes.  Raises
    `IdentityError` naming every input whose sha256 changed since the export and the first section
    (and entry) where the file differs from what the source now gives.  `checked`: the file as
    `read_file` read it."""
    changed = []
    now = {Path(f.path).resolve(): f.sha256 for f in tok.provenance.inputs}
    for f in manifest.get("inputs") or ():
        p = Path(f.get("path", ""))
        if not p.is_file():
            changed.append(f"{p} is gone")
        elif sha256(p) != f.get("sha256"):
            changed.append(f"{p} changed since the export (sha256 {sha256(p)[:12]}, the manifest has "
                           f"{str(f.get('sha256'))[:12]})")
    recorded = {Path(f.get("path", "")).resolve() for f in manifest.get("inputs") or ()}
    changed += [f"{p} is read now but was not at export" for p in now if recorded and p not in recorded]
    data, have = checked
    if data == expected and not changed:
        return
    first = first_difference(data, file, expected, have) if data != expected else ""
    raise IdentityError(file, source, changed, first)


def first_difference(data: bytes, file: Path, expected: bytes, have) -> str:
    """The first layer where the file differs from the expected bytes, with its first change, as
    `mtok diff --static` shows it; `have`: the file's IR, read from `data`."""
    fmt = output_format(data)
    want = read_mnn_bytes(expected, f"{file.name} as the source gives it", strict=True)[0]
    for d in diff_layers(have, want):
        if not d.equal:
            counts = ", ".join(f"{n} {k}" for k, n in d.counts.items() if n)
            c = d.changes[0] if d.changes else None
            entry = ""
            if c is not None and c.op == "+":
                entry = f"; first: {show(c.where)!r} {c.b} is in what the source gives, not in the file"
            elif c is not None and c.op == "-":
                entry = f"; first: {show(c.where)!r} {c.a} is in the file, not in what the source gives"
            elif c is not None:
                entry = f"; first: {show(c.where)!r}: the file has {show(c.a)}, the source gives {show(c.b)}"
            return f"section {d.name} differs first ({counts or d.note}){entry}"
    return f"the bytes differ (same {fmt} content when read back: layout or ordering)"


def _manifest_source(m: dict, file: Path) -> Path | None:
    """The source the manifest names: for a Hub input, the snapshot of the exact commit exported
    (fetched again when this cache lacks it), else the recorded path, else the same path from the
    manifest's folder (the two moved together).  Neither there: an error pointing at --against."""
    hub = m.get("hub")
    if isinstance(hub, dict) and hub.get("repo_id") and hub.get("sha"):
        return fetch_hub(hub["repo_id"], hub["sha"]).path
    if not m.get("source"):
        return None
    recorded = Path(m["source"])
    if recorded.exists():
        return recorded
    relative = Path(file).resolve().parent / m["source_relative"] if m.get("source_relative") else None
    if relative is not None and relative.exists():
        inputs = _relocated(m, relative).get("inputs") or []
        if inputs and all(Path(x.get("path", "")).exists() for x in inputs):
            return relative  # the same source (its inputs are there), moved with the manifest
    raise InputError(f"{file}: the source its manifest names, {recorded}, is not there"
                     + (f" (nor {relative})" if relative is not None else "")
                     + "; pass the source it was made from with --against SOURCE")


def _relocated(m: dict, source: Path) -> dict:
    """`m` with the recorded inputs under its source folder moved to where that source is now (a Hub
    snapshot of the same commit in another cache holds the same files under another path)."""
    old = m.get("source")
    if not old or Path(old) == Path(source).resolve():
        return m

    def moved(path: str) -> str:
        try:
            return str(Path(source).resolve() / Path(os.path.abspath(path)).relative_to(old))
        except ValueError:  # not under the source folder: compared where it was
            return path

    return {**m, "inputs": [{**f, "path": moved(f.get("path", ""))} for f in m.get("inputs") or ()]}


def run(file, source, lowered, lowering, options: VerifyOptions = VerifyOptions(), *, progress=None,
        llm_config=None, checked: tuple[bytes, object] | None = None):
    """`verify.check.verify` of `file` (its `VerifyJob`: the built-in corpus plus `options.corpus`, the
    built-in chats, the file's special-token surface, `options`), against the independent
    reference of the source's format (`verify.references`); where none runs here, against HF built
    from our reading, with the loss `reference-unavailable` recorded (refused by default); `checked`:
    (bytes, the IR the strict reader read from them) when the caller has just read the file (the export
    what it wrote, `mtok verify` the file it checks: `read_file`);
    `options.sweep`: the vocabulary sweep too (on by default); `options.robust`: the robustness
    phase's budget (on by default, `verify.robust`).  A runtime outside the target's release range is
    refused before the corpus runs (`require_runtime`)."""
    require_runtime(lowering.target, options.python)
    docs = documents.load()
    samples = list(builtin_corpus()) + list(docs or ()) + (list(load_corpus_file(options.corpus)) if options.corpus
                                                           else [])
    file_tok = checked[1] if checked is not None else read_file(Path(file))[1]
    specials = surface.candidates(file_tok)  # the special-token surface, run in the checks' runtime call
    job = VerifyJob(source, lowered, lowering, samples, list(builtin_chats()), options, extra=surface.texts(specials),
                    llm_config=llm_config, progress=progress)

    def against(reference):
        if reference.self_check and not any(x.kind is REFERENCE_UNAVAILABLE for x in lowering.losses):
            why = reference.unavailable
            lowering.losses.append(Loss(REFERENCE_UNAVAILABLE, f"reference of {source.provenance.format or 'the source'}",
                                        "$", f"{why.why}" + (f"; to run it: {why.install}" if why.install else "")))
        return verify(job, file, reference, checked)

    try:
        report = against(choose_or_self_check(source))
    except ReferenceUnavailable as e:  # known only once it ran (e.g. llama.cpp cannot load this tokenizer)
        report = against(self_check(source, e))
    if docs is None:
        for c in report.checks:
            if c.name in TEXT_CHECKS and c.total:
                c.skipped = "; ".join(filter(None, (c.skipped, DOCUMENTS_MISSING)))
    got, ref = report.extra
    if len(got) == len(specials):  # (a reader-disagreement report ran nothing)
        report.surface = surface.rows(file_tok, specials, got, list(ref) if ref else None,
                                      (jinja_block(llm_config) or {}).get("chat_template"))
    return report


# what the text checks say on a machine where the set-up has not fetched the long documents
DOCUMENTS_MISSING = ("the documents slice did not run: its long documents are not fetched here "
                     "(make setup runs scripts/documents_fetch.py)")


def template_drift(file: Path, against: Path | None = None) -> dict:
    """The chat template the manifest recorded against the one its source gives now (issue 32): for a
    Hub input, the revision the export asked for (its branch or tag) as the Hub (or, offline, the
    cache) resolves it today; else the source folder, or `against`.  A different sha256 is a
    re-issued template.  {"drift", "recorded": {sha256, revision}, "current": {sha256, revision, source}}."""
    file = Path(file)
    m = read_manifest(file)
    if m is None:
        raise InputError(f"{file}: no manifest beside it ({manifest_path(file).name}): nothing records its template")
    chat = m.get("chat_template") or {}
    hub = m.get("hub") if isinstance(m.get("hub"), dict) else None
    revision = None
    if against is not None:
        source = Path(against)
    elif hub and hub.get("repo_id"):
        snap = fetch_hub(hub["repo_id"], hub.get("revision"))
        source, revision = snap.path, snap.sha
    else:
        source = _manifest_source(m, file)
    now = Job.from_manifest(m, Path(source), where=str(manifest_path(file))).read_source().chat
    current = sha256_bytes(now.text.encode("utf-8")) if now.text else None
    return {"drift": current != chat.get("original_sha256"),
            "recorded": {"sha256": chat.get("original_sha256"), "revision": (hub or {}).get("sha"),
                         "origin": chat.get("origin")},
            "current": {"sha256": current, "revision": revision, "source": str(source),
                        "origin": {"kind": now.kind or "none", **dict(now.detail)}}}

