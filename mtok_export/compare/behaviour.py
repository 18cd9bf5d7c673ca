"""The behavioural diff: run two tokenizers on the same strings and, for each string they treat
differently, name the first layer where they part (normalized text, pre-tokenized pieces, the
model's ids, the ids with special tokens, decoded text) with both sides' values.  A layer one side
cannot show (no tokenizers form, no full decode in MNN) is skipped, so the first *comparable*
differing layer is reported."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import BEHAVIOUR_LAYERS
from .engines import Run, run_mnn, run_reference

LAYERS = BEHAVIOUR_LAYERS


@dataclass(frozen=True)
class StringDiff:
    sample: str  # sample id
    text: str
    layer: str  # first differing layer (one of LAYERS)
    a: object
    b: object


@dataclass
class Behaviour:
    engine_a: str
    engine_b: str
    compared: int
    skipped: int = 0  # samples left out (NUL bytes, which the runtime truncates at)
    diffs: list[StringDiff] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {layer: sum(1 for d in self.diffs if d.layer == layer) for layer in LAYERS}


def first_difference(ra: Run, rb: Run, i: int):
    """(layer, a, b) of the first layer where sample `i` differs, or None."""
    views = (("normalized", ra.normalized, rb.normalized), ("pre_tokenized", ra.pieces, rb.pieces),
             ("ids", ra.raw, rb.raw), ("post_processed", ra.ids, rb.ids), ("decoded", ra.decoded, rb.decoded))
    for layer, va, vb in views:
        if va is None or vb is None:
            continue
        if va[i] != vb[i]:
            return layer, va[i], vb[i]
    return None


def compare_runs(samples, ra: Run, rb: Run, skipped: int = 0) -> Behaviour:
    out = Behaviour(ra.engine, rb.engine, len(samples), skipped)
    for i, s in enumerate(samples):
        found = first_difference(ra, rb, i)
        if found is not None:
            out.diffs.append(StringDiff(s.id, s.text, *found))
    return out


def diff_behaviour(tok_a, tok_b, samples, *, runtime_a=None, runtime_b=None, python=None) -> Behaviour:
    """Both IRs on `samples` (verify `Sample`s).  `runtime_a`/`runtime_b`: a `.mtok` path to run on
    the MNN runtime instead of the reference engine."""
    skipped = 0
    if runtime_a or runtime_b:  # MNN's input is a C string: everything after a NUL is dropped
        kept = [s for s in samples if "\x00" not in s.text]
        skipped, samples = len(samples) - len(kept), kept
    texts = [s.text for s in samples]
    ra = run_mnn(tok_a, runtime_a, texts, python) if runtime_a else run_reference(tok_a, texts)
    rb = run_mnn(tok_b, runtime_b, texts, python) if runtime_b else run_reference(tok_b, texts)
    return compare_runs(samples, ra, rb, skipped)


def divergence(a: list, b: list) -> int:
    """Index of the first element where two lists differ (the shorter length if one is a prefix)."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))
