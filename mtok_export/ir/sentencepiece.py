"""SentencePiece's pipeline as IR components: the piece types of `ModelProto`, the HF merge list
equal to SentencePiece BPE, and the normalizer, pre-tokenizer, decoder and BOS/EOS template that do
what SentencePiece does (the reasons for each form are in `readers/sentencepiece.py`'s docstring).
The `.model` reader, the legacy type-0 codec and its lowering build the same IR from these, and the
`.mtok` lowering recognizes the trailing-space split by `TRAILING_SPACE`."""

from __future__ import annotations

import re
from enum import IntEnum

from . import decoders as D
from . import normalizers as N
from . import pre_tokenizers as P
from .base import Pattern
from .processors import Piece, SpecialToken, TemplateProcessing

SPACE = "\u2581"
COLLAPSE_PASSES = 16  # Replace('  ', ' ') halves a run of spaces: 16 passes collapse runs up to 65,536
BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")  # byte fallback's pieces, one per byte
TRAILING_SPACE = r" (?![\s\S])"  # one space at the very end (runs are collapsed before)


class PieceType(IntEnum):
    """`ModelProto.SentencePiece.Type`; also the numbers of the legacy type-0 file."""

    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


def sp_merges(pieces) -> tuple[tuple[str, str], ...]:
    """HF merges equal to SentencePiece BPE over `pieces` = [(piece, score, type), ...] (id = index):
    every split of a normal piece into two normal pieces, by (-score, id, left, right)."""
    normal_type = int(PieceType.NORMAL)
    normal = {p: i for i, (p, _, t) in enumerate(pieces) if t == normal_type}
    ranked = []
    add = ranked.append
    for p, i in normal.items():
        for k in range(1, len(p)):
            left = p[:k]
            if left in normal:
                right = p[k:]
                if right in normal:
                    add((-pieces[i][1], i, left, right))
    ranked.sort()
    return tuple([(a, b) for _, _, a, b in ranked])


def sp_normalizer(charsmap: bytes = b"", *, add_dummy_prefix: bool = True, remove_extra_whitespaces: bool = False,
                  escape_whitespaces: bool = True, legacy: bool = True):
    """-> (normalizer, pre_tokenizer) doing SentencePiece's normalization (see the module doc)."""
    norms: list = [N.Precompiled(charsmap)] if charsmap else []
    pres: list = []
    if remove_extra_whitespaces:
        if add_dummy_prefix:
            norms.append(N.Prepend(" "))
        norms += [N.Replace(Pattern("  "), " ")] * COLLAPSE_PASSES
        if not add_dummy_prefix:
            norms.append(N.Strip(True, False))
        pres.append(P.Split(Pattern(TRAILING_SPACE, regex=True), "Removed"))
        if escape_whitespaces:
            pres.append(P.Metaspace(SPACE, "never", split=False))
    elif add_dummy_prefix and not legacy and escape_whitespaces:
        pres.append(P.Metaspace(SPACE, "first", split=False))  # transformers' non-legacy Llama form
    else:
        if add_dummy_prefix:
            norms.append(N.Prepend(SPACE if escape_whitespaces else " "))
        if escape_whitespaces:
            norms.append(N.Replace(Pattern(" "), SPACE))
    normalizer = N.Sequence(tuple(norms)) if norms else None
    pre = None if not pres else pres[0] if len(pres) == 1 else P.Sequence(tuple(pres))
    return normalizer, pre


def sp_decoder(*, byte_fallback: bool, add_dummy_prefix: bool = True, escape_whitespaces: bool = True):
    ds: list = [D.Replace(Pattern(SPACE), " ")] if escape_whitespaces else []
    if byte_fallback:
        ds.append(D.ByteFallback())
    ds.append(D.Fuse())
    if add_dummy_prefix:
        ds.append(D.Strip(" ", 1, 0))
    return D.Sequence(tuple(ds))


def bos_eos_template(prefix=(), suffix=()) -> TemplateProcessing | None:
    """LlamaTokenizerFast's template: `prefix $A suffix` / `prefix $A suffix prefix:1 $B:1 suffix:1`.
    `prefix`/`suffix` are (text, id) pairs."""
    if not prefix and not suffix:
        return None
    pre = [Piece(t, 0, True) for t, _ in prefix]
    post = [Piece(t, 0, True) for t, _ in suffix]
    single = (*pre, Piece("A"), *post)
    pair = (*single, *(Piece(t, 1, True) for t, _ in prefix), Piece("B", 1), *(Piece(t, 1, True) for t, _ in suffix))
    names = {}
    for t, i in (*prefix, *suffix):
        names.setdefault(t, i)
    specials = tuple(SpecialToken(t, (i,), (t,)) for t, i in sorted(names.items()))
    return TemplateProcessing(single, pair, specials)
