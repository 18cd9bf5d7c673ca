"""Lowering to the legacy `tokenizer.txt` types (MNN <= 3.4.1, spec section 5): which type carries a
model family, and each type's plan (`chain.LegacyPlan`: the file's content, the losses, the IR the
legacy runtime will run).  The format itself (reading, and writing a plan's content) is
`mtok_export.legacy`."""

from __future__ import annotations

from ...errors import UnsupportedError
from ...ir import decoders as D
from ...ir import models as M
from ...ir import pre_tokenizers as P
from ...ir.walk import members
from ...legacy import describe
from ...mtok.constants import FileType
from ...target_type import Target
from .. import Lowering
from . import type0, type1, type2, type3
from .chain import LegacyPlan

PLANS = {FileType.SENTENCEPIECE: type0.plan, FileType.TIKTOKEN: type1.plan, FileType.BERT: type2.plan,
         FileType.HUGGINGFACE: type3.plan}


def choose_type(tok) -> tuple[FileType, str]:
    """The legacy type for a model family, and why; `UnsupportedError` when none can carry it."""
    m, pre, dec = tok.model, tok.pre_tokenizer, tok.decoder
    byte_level = any(isinstance(p, P.ByteLevel) for p in members(pre)) or \
        any(isinstance(d, D.ByteLevel) for d in members(dec))
    if isinstance(m, M.WordPiece):
        return FileType.BERT, "a WordPiece model: type 2 (BERT)"
    if isinstance(m, M.BPE) and byte_level:
        return FileType.HUGGINGFACE, ("a byte-level BPE: type 3 runs its merges (type 1, TIKTOKEN, would only "
                                      "match greedily)")
    if isinstance(m, (M.BPE, M.Unigram)):
        return FileType.SENTENCEPIECE, f"a SentencePiece-style {m.kind}: type 0 (SENTENCEPIECE)"
    raise UnsupportedError(f"no legacy tokenizer.txt type can carry a {m.kind} model (types: 0 SentencePiece, "
                           "1 tiktoken, 2 BERT WordPiece, 3 byte-level BPE); export .mtok instead")


def lower_legacy(tok, target: Target, bos: str = "auto") -> tuple[LegacyPlan, Lowering]:
    """-> (the plan of the type chosen for `tok`, a Lowering for `target` holding its losses and the
    choice).
    A byte-level vocabulary type 3 cannot hold (a missing byte, a token that is not a byte-level
    string) falls back to type 1, which holds any byte-level vocabulary (greedy, always lossy)."""
    kind, why = choose_type(tok)
    try:
        plan = PLANS[kind](tok)
    except UnsupportedError as e:
        if kind != FileType.HUGGINGFACE:
            raise
        kind, why = FileType.TIKTOKEN, f"{why}, but type 3 cannot hold it ({str(e).split(';')[0]})"
        plan = PLANS[kind](tok)
    lw = Lowering(target, bos, losses=list(plan.losses) + list(tok.meta.differences), meta=tok.meta)
    lw.did("legacy-type", f"{describe(kind)}; chosen because the source is {why}")
    return plan, lw
