"""Lowering to legacy type 0 (SENTENCEPIECE): SentencePiece BPE by piece score over raw characters.

`plan` gives the rows of the file (`legacy.sentencepiece_txt.Type0`), the losses (what the type-0
runtime would do differently: a Unigram model, a normalizer, non-SentencePiece merges, ...) and
the projection `tokenizer_from_type0(rows)` (== reading the written file back).  It refuses what
type 0 cannot represent at all: WordPiece/WordLevel, byte-level BPE, non-dense ids."""

from __future__ import annotations

from ... import losses as L
from ...errors import UnsupportedError
from ...ir import decoders as D
from ...ir import models as M
from ...ir import normalizers as N
from ...ir import pre_tokenizers as P
from ...ir import processors as R
from ...ir.walk import walk
from ...legacy.sentencepiece_txt import BYTE_PIECE, Type0, tokenizer_from_type0
from ...losses import Loss
from ...mtok.constants import FileType
from ...ir.sentencepiece import (
    SPACE,
    PieceType,
    sp_decoder,
    sp_merges,
    sp_normalizer,
)
from ..processors import single_parts
from .chain import LegacyPlan, memo_last


def _fatal(tok) -> None:
    m = tok.model
    if not isinstance(m, (M.BPE, M.Unigram)):
        hint = " (legacy type 2 holds a BERT WordPiece)" if isinstance(m, M.WordPiece) else ""
        raise UnsupportedError(f"type 0 runs SentencePiece BPE over characters; a {m.kind} model cannot be "
                               f"represented{hint}")
    byte_level = (getattr(m, "mnn_byte_level", False)
                  or any(isinstance(c, P.ByteLevel) for c in walk(tok.pre_tokenizer))
                  or any(isinstance(c, D.ByteLevel) for c in walk(tok.decoder))
                  or any(isinstance(c, N.ByteLevel) for c in walk(tok.normalizer)))
    if byte_level:
        raise UnsupportedError("a byte-level BPE cannot be represented in type 0: its vocabulary is in GPT-2 "
                               "byte-mapped characters, and type 0 matches raw UTF-8 characters with '▁' for "
                               "spaces (legacy type 3 holds a byte-level BPE with merges)")


def _dense(tok) -> list[str]:
    vocab = M.vocab_of(tok.model)
    by_id: dict[int, str] = {}
    for t, i in vocab.items():
        by_id.setdefault(i, t)
    for t in tok.added_tokens:
        by_id.setdefault(t.id, t.content)
    n = len(by_id)
    if set(by_id) != set(range(n)):
        gap = min(set(range(n)) - set(by_id))
        raise UnsupportedError(f"type 0 numbers pieces by line, so ids must be dense 0..{n - 1}; id {gap} is missing")
    return [by_id[i] for i in range(n)]


@memo_last  # export, attribution and the writer each ask for the same plan
def plan(tok) -> LegacyPlan:
    """The file's rows for `tok`, and what the type-0 runtime would do differently.
    Raises `UnsupportedError` for what it cannot represent at all."""
    _fatal(tok)
    m = tok.model
    pieces = _dense(tok)
    losses: list[Loss] = []

    def loss(code, component, jp, reason, example="", trigger=""):
        losses.append(Loss(code, component, jp, reason, example, trigger))

    added = {t.id: t for t in tok.added_tokens}
    if isinstance(m, M.Unigram):
        unk = m.unk_id
        byte_fallback = m.byte_fallback
    else:
        unk = m.vocab.get(m.unk_token) if m.unk_token is not None else None
        byte_fallback = m.byte_fallback
    types = []
    for i, p in enumerate(pieces):
        if i == unk:
            types.append(PieceType.UNKNOWN)
        elif i in added:
            types.append(PieceType.CONTROL if added[i].special else PieceType.USER_DEFINED)
        elif byte_fallback and BYTE_PIECE.fullmatch(p):
            types.append(PieceType.BYTE)
        else:
            types.append(PieceType.NORMAL)
    has_bytes = PieceType.BYTE in types

    if isinstance(m, M.Unigram):
        scores = [s for _, s in m.vocab] + [0.0] * (len(pieces) - len(m.vocab))
        loss(L.TYPE0_UNIGRAM, "model Unigram", "$.model", "type 0 runs SentencePiece BPE (merge the pair whose "
             "result scores highest): a Unigram model's Viterbi segmentation is not reproduced", "Hello world")
    else:
        first: dict[str, int] = {}
        for r, (a, b) in enumerate(m.merges):
            first.setdefault(a + b, r)
        scores = [-(first[p] + 1.0) if p in first and t == PieceType.NORMAL else 0.0 for p, t in zip(pieces, types)]
        regen = sp_merges(list(zip(pieces, scores, types)))
        if regen != tuple(m.merges):
            diff = len(set(regen) ^ set(m.merges))
            loss(L.TYPE0_MERGES, "model BPE", "$.model.merges", "type 0 derives merges from piece scores (every "
                 "split of a normal piece into two normal pieces, ranked by the piece's score): "
                 + (f"{diff} merge(s) differ" if diff else "the same merges in another order"))
        for field, why in (("dropout", "dropout"), ("continuing_subword_prefix", "continuing_subword_prefix"),
                           ("end_of_word_suffix", "end_of_word_suffix"), ("ignore_merges", "ignore_merges")):
            if getattr(m, field) not in (None, "", 0.0, False):
                loss(L.TYPE0_BPE_FIELD, "model BPE", f"$.model.{field}", f"{why} is not applied by type 0")
    if not has_bytes and unk is not None:
        loss(L.TYPE0_UNK, f"model {m.kind}", "$.model", "no <0xHH> byte pieces: the runtime maps each UTF-8 byte "
             "of an unknown character to the unknown piece (HF: one unk per character or run)", "\U0001fae0")
    if has_bytes and not byte_fallback:
        loss(L.TYPE0_UNK, f"model {m.kind}", "$.model.byte_fallback", "the runtime always falls back to <0xHH> "
             "byte pieces; this model maps unknown characters to unk", "\U0001fae0")

    canon_norm, canon_pre = sp_normalizer(b"", add_dummy_prefix=True, remove_extra_whitespaces=False,
                                          escape_whitespaces=True)
    if tok.normalizer != canon_norm or tok.pre_tokenizer != canon_pre:
        loss(L.TYPE0_NORMALIZER, "normalizer/pre_tokenizer", "$.normalizer", "type 0 only prepends '▁' to each "
             "chunk and turns ' ' into '▁': this normalizer and pre-tokenizer are not applied", "a  b ")
    if tok.decoder != sp_decoder(byte_fallback=has_bytes):
        loss(L.TYPE0_DECODER, f"decoder {getattr(tok.decoder, 'kind', None)}", "$.decoder",
             "type 0 decodes pieces as SentencePiece does ('▁' -> ' ', byte pieces, dummy prefix): this decoder "
             "is not applied")
    loss(L.TYPE0_DECODE, "decoder (runtime)", "$.decoder", "decode(id) turns only the first '▁' into ' ' (and "
         "drops the bytes after it when it is not at the start), keeping the dummy-prefix space", "Hello")

    for t in tok.added_tokens:
        if t.lstrip or t.rstrip or t.single_word or (t.normalized and tok.normalizer is not None):
            loss(L.TYPE0_ADDED_FLAGS, f"added token {t.content!r}", "$.added_tokens", "lstrip/rstrip/single_word/"
                 "normalized are not carried: the runtime splits the token out of the raw text", trigger=t.content)
        if not t.content or SPACE in t.content:
            loss(L.TYPE0_SPECIAL_TEXT, f"added token {t.content!r}", "$.added_tokens", "the runtime matches added "
                 "tokens by decode(id), which mangles '▁' (or is empty): this token is never matched",
                 trigger=t.content)

    special = list(dict.fromkeys(i for i in tok.special_ids if i < len(pieces)))
    special += [t.id for t in tok.added_tokens if t.id not in special]
    if isinstance(tok.post_processor, R.PostProgram) or tok.prefix_ids:  # a lowered IR
        ops = tok.post_processor.ops if isinstance(tok.post_processor, R.PostProgram) else (None,)
        k = ops.index(None) if None in ops else len(ops)
        prefix, suffix = tuple(ops[:k]) + tuple(tok.prefix_ids), tuple(ops[k + 1:])
    else:
        parts, dropped = single_parts(tok.post_processor)
        for component, jp, reason in dropped:
            loss(L.TYPE0_POST, component, jp, reason)
        prefix, suffix = parts if parts is not None else ((), ())
    if suffix:
        loss(L.TYPE0_SUFFIX, "post_processor", "$.post_processor", f"type 0 has only a prefix list: encode() does "
             f"not append {list(suffix)}", "Hi")
    rows = Type0(tuple(zip(pieces, map(float, scores), types)), tuple(special), tuple(tok.stop_ids), prefix)
    return LegacyPlan(FileType.SENTENCEPIECE, rows, losses, tokenizer_from_type0(rows))

