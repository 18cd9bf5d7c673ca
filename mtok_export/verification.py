"""Verifying a written file against its source (the library side of `mtok verify` and of the export's
verify-before-replace): resolve an MNN model folder as the engine does, check the file with the
strict reader, re-read the source and lower it honestly with the options the manifest records,
and run `verify.check.verify` on the built-in corpus plus the user's."""

from __future__ import annotations

from pathlib import Path

from .corpus import builtin_chats, builtin_corpus, load_corpus_file
from .errors import InputError
from .formats import read_source
from .lower import BOS_POLICIES
from .manifest import read_manifest
from .model_folder import find
from .readers.mnn_file import read_mnn_file
from .targets import TARGETS
from .verify.check import verify
from .losses import REFERENCE_UNAVAILABLE, Loss
from .verify.references import choose_or_self_check


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


def prepare(file: Path, against=None, target=None, bos=None):
    """-> (the manifest or None, the source IR, its honest lowering, the Lowering, the reader options
    with the source path), after the file's own strict checks (exit 2 with an offset)."""
    file = Path(file)
    if not file.is_file():
        raise InputError(f"{file}: no such file")
    read_mnn_file(file, strict=True)
    manifest = read_manifest(file)
    m = manifest or {}
    opts = dict(m.get("read_options") or {})
    source = against or (Path(m["source"]) if m.get("source") else None)
    if source is None:
        raise InputError(f"{file}: no manifest beside it ({file.name}.json); pass --against SOURCE")
    target = target or m.get("target") or "mnn-3.6"
    bos = bos or m.get("bos_policy") or "auto"
    if target not in TARGETS:
        raise InputError(f"--target {target!r}: choose one of {', '.join(TARGETS)}")
    if bos not in BOS_POLICIES:
        raise InputError(f"--bos {bos!r}: choose one of {', '.join(BOS_POLICIES)}")
    tok = read_source(source, opts.get("chat_template"), pattern=opts.get("pattern"), special=opts.get("special"),
                      family=opts.get("family"))
    # the honest lowering only: the file under test is the one on disk, no bytes are written here
    lowered = TARGETS["mnn-legacy" if file.suffix == ".txt" else target].lower(
        tok, bos=bos, header_specials=opts.get("header_specials") or "needed",
        normalizer_form=opts.get("normalizer_form") or "compose")
    return manifest, tok, lowered.ir, lowered.lowering, {**opts, "path": Path(source)}


def run(file, source, lowered, lowering, *, corpus=None, python=None, progress=None, llm_config=None, checked=None):
    """`verify.check.verify` of `file` on the built-in corpus plus `corpus`, against the independent
    reference of the source's format (`verify.references`); where none runs here, against HF built
    from our reading, with the loss `reference-unavailable` recorded (refused by default); `checked`:
    (bytes, the chat fields read from them) when the strict reader has just read what was written."""
    samples = list(builtin_corpus()) + (list(load_corpus_file(corpus)) if corpus else [])
    reference = choose_or_self_check(source)
    if reference.self_check and not any(x.kind is REFERENCE_UNAVAILABLE for x in lowering.losses):
        why = reference.unavailable
        lowering.losses.append(Loss(REFERENCE_UNAVAILABLE, f"reference of {source.provenance.format or 'the source'}",
                                    "$", f"{why.why}" + (f"; to run it: {why.install}" if why.install else "")))
    return verify(file, source, lowered, lowering, samples=samples, chats=list(builtin_chats()), python=python,
                  progress=progress, reference=reference, llm_config=llm_config, checked=checked)
