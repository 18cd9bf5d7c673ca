"""Run a tokenizer IR on texts through its reference engine, keeping every intermediate layer
`diff` compares: normalized text, pre-tokenized pieces, ids (with and without special tokens) and
decoded text.

The engine is the one verification trusts for that input (`verify.references.choose`: the
source format's independent reference), else HF `tokenizers` built from the IR, named as such.  The
normalized and pre-tokenized views always come from HF `tokenizers` (the only engine exposing
them); they are None when the IR has no tokenizer.json form.  For a `.mtok` file the ids and
decodes may instead come from the real MNN runtime (`runtime=True`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import UnsupportedError
from ..verify.reference import ReferenceUnavailable, hf_tokenizer as reference_tokenizer, run_hf
from ..verify.references import choose
from ..verify.reference_tiktoken import hf_from_ir
from ..verify.runtime import run_runtime


@dataclass
class Run:
    engine: str  # which engine produced ids/decodes
    ids: list[list[int]]  # encode with special tokens (what encode() returns)
    raw: list[list[int]]  # encode without them
    decoded: list[str] | None  # decode(raw), special tokens kept; None: the engine has no full decode
    normalized: list[str] | None = None
    pieces: list[list[str]] | None = None


def hf_tokenizer(tok):
    """(HF `Tokenizer` for `tok`, description): the source tokenizer.json when the IR came from one
    (with the added tokens its configs declare, as verification's reference), else one built from the
    IR; (None, reason) when the IR has no tokenizer.json form."""
    inputs = tok.provenance.inputs
    if inputs and Path(inputs[0].path).name == "tokenizer.json" and Path(inputs[0].path).is_file():
        hf = reference_tokenizer(Path(inputs[0].path))
        hf.no_truncation()
        hf.no_padding()
        return hf, "tokenizers on tokenizer.json"
    try:
        return hf_from_ir(tok), "tokenizers built from the IR"
    except UnsupportedError as e:
        return None, f"no tokenizers form ({e})"


def run_reference(tok, texts: list[str], views: bool = True) -> Run:
    """Ids, decodes and (with `views`) the intermediate views of `tok` on `texts` (see the module
    docstring)."""
    try:
        chosen = choose(tok) if tok.provenance.inputs else None
    except ReferenceUnavailable:
        chosen = None
    hf, hf_name = hf_tokenizer(tok) if views or chosen is None else (None, "")
    if chosen is not None:
        ref, name = chosen.run(texts, []), chosen.line().removeprefix("reference: ")
    elif hf is not None:
        ref, name = run_hf(hf, texts), hf_name
    else:
        raise UnsupportedError(f"no reference engine can run this tokenizer: {hf_name}")
    return _with_views(Run(name, ref.engine, ref.raw, ref.decoded), hf if views else None, texts)


def _with_views(run: Run, hf, texts: list[str]) -> Run:
    """Fill the normalized and pre-tokenized views from HF `tokenizers`, when it can run the IR."""
    if hf is not None:
        norm = hf.normalizer.normalize_str if hf.normalizer is not None else (lambda s: s)
        run.normalized = [norm(t) for t in texts]
        pre = hf.pre_tokenizer
        run.pieces = [[p for p, _ in pre.pre_tokenize_str(n)] if pre is not None else [n] for n in run.normalized]
    return run


def run_mnn(tok, path, texts: list[str], python=None) -> Run:
    """Ids from the MNN runtime loading `path` (a `.mtok`).  No decoded view: MNN's Python API has
    only the streaming single-id decode, which keeps what a full decode strips (SentencePiece's
    leading space), so it is not comparable.  The normalized/pre-tokenized views come from the IR."""
    prefix = list(tok.prefix_ids)
    result = run_runtime(path, texts=texts, python=python)
    raw = [ids[len(prefix):] if ids[:len(prefix)] == prefix else ids for ids in result.encodes]
    run = Run(f"MNN {result.version} runtime (ids only)", result.encodes, raw, None)
    return _with_views(run, hf_tokenizer(tok)[0], texts)
