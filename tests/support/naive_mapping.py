"""The naive mapping: what MNN's own exporter writes (spec section 3, "writer" columns), each HF
component replaced by its nearest code with no rewriting and no loss records.  Used only to show
what lowering buys (`tests/lower/test_lower.py`, `python -m tests.support.parity_table --naive`); never used
for real exports."""

from __future__ import annotations

from dataclasses import replace

from mtok_export.ir import Pattern
from mtok_export.ir import decoders as D
from mtok_export.ir import models as M
from mtok_export.ir import normalizers as N
from mtok_export.ir import pre_tokenizers as P
from mtok_export.ir import processors as R
from mtok_export.unicode.tables import table


def naive(tok, encode=None, decode=None):
    """`encode(text) -> ids` / `decode(id) -> str` are the HF tokenizer's, for MNN's prefix heuristic."""
    def norm(n):
        if n is None:
            return None
        if isinstance(n, N.Sequence):
            return N.Sequence(tuple(k for k in map(norm, n.normalizers) if k is not None))
        if isinstance(n, (N.NFC,)):
            return N.CodepointMap(table("NFC"))
        if isinstance(n, (N.NFKC, N.NFKD, N.Precompiled)):
            return N.CodepointMap(table("NFKC"))  # NFKD and the SentencePiece charsmap too
        if isinstance(n, N.Lowercase):
            return N.MnnBertNormalizer(False, False, False, True)
        if isinstance(n, N.StripAccents):
            return N.MnnBertNormalizer(False, False, True, False, table("NFD"))
        if isinstance(n, N.BertNormalizer):
            strip = n.lowercase if n.strip_accents is None else n.strip_accents
            return N.MnnBertNormalizer(n.clean_text, n.handle_chinese_chars, strip, n.lowercase,
                                       table("NFD") if strip else None)
        if isinstance(n, N.Replace):
            return N.Replace(Pattern("" if n.pattern.regex else n.pattern.value), n.content)
        if isinstance(n, (N.Strip, N.Prepend)):
            return n
        return None

    def pre(p):
        if p is None:
            return None
        if isinstance(p, P.Sequence):
            return P.Sequence(tuple(k for k in map(pre, p.pretokenizers) if k is not None))
        if isinstance(p, P.ByteLevel):
            return P.ByteLevel(False, True, p.use_regex)
        if isinstance(p, P.Metaspace):  # add_prefix_space defaults to True; split is dropped
            return P.Metaspace(p.replacement, "never" if p.prepend_scheme == "never" else "always", False)
        if isinstance(p, P.Split):
            b = p.behavior if p.behavior in ("Isolated", "MergedWithPrevious") else "Removed"
            return P.Split(Pattern(p.pattern.value, True), b, p.invert)
        if isinstance(p, P.WhitespaceSplit):
            return P.Split(Pattern(r"\s+", True), "Removed")
        if isinstance(p, (P.Digits, P.BertPreTokenizer)):
            return p
        return None  # Whitespace, Punctuation, CharDelimiterSplit, ...: silently dropped

    def dec(d):
        if isinstance(d, D.Sequence):
            return D.Sequence(tuple(map(dec, d.decoders)))
        if isinstance(d, D.Metaspace):
            return D.Metaspace(d.replacement, "never" if d.prepend_scheme == "never" else "always", True)
        if isinstance(d, D.Replace):
            return D.Replace(Pattern("" if d.pattern.regex else d.pattern.value), d.content)
        if isinstance(d, (D.ByteFallback, D.WordPiece, D.Fuse, D.Strip)):
            return d
        return D.ByteLevel()  # None, ByteLevel, CTC, BPEDecoder, ...

    m = tok.model
    if isinstance(m, M.WordLevel):
        raise ValueError("MNN's exporter writes no model section for WordLevel (a corrupt file)")
    if isinstance(m, M.BPE):
        m = M.BPE(m.vocab, m.merges, byte_fallback=m.byte_fallback, mnn_byte_level=_byte_level_flag(tok))
    elif isinstance(m, M.Unigram) and m.unk_id is None:
        m = replace(m, unk_id=0)
    program = None
    p = tok.post_processor
    if isinstance(p, R.Sequence):
        p = next((c for c in p.processors if isinstance(c, R.TemplateProcessing)), None)
    if isinstance(p, R.TemplateProcessing):
        ops = []
        for piece in p.single:
            if not piece.special and piece.id != "A":
                ops = []
                break
            ops += [None] if not piece.special else list(p.special_ids(piece.id))
        program = R.PostProgram(tuple(ops)) if ops else None
    prefix = ()
    if encode is not None:
        ids = encode("A")
        if len(ids) > 1 and decode(ids[-1]) == "A":
            prefix = tuple(ids[:-1])
    added = tuple(replace(t, single_word=False, normalized=False) for t in tok.added_tokens)
    return replace(tok, normalizer=norm(tok.normalizer), pre_tokenizer=pre(tok.pre_tokenizer),
                   decoder=dec(tok.decoder), model=m, post_processor=program, prefix_ids=prefix,
                   added_tokens=added, chat=replace(tok.chat, others=()))


def _byte_level_flag(tok) -> bool:
    """MNN's rule: a pre-tokenizer Sequence without ByteLevel and a ByteLevel decoder (spec 2.5)."""
    pre, dec = tok.pre_tokenizer, tok.decoder
    has = lambda seq, cls: any(isinstance(c, cls) for c in seq)  # noqa: E731
    dec_bl = isinstance(dec, D.ByteLevel) or (isinstance(dec, D.Sequence) and has(dec.decoders, D.ByteLevel))
    return isinstance(pre, P.Sequence) and not has(pre.pretokenizers, P.ByteLevel) and dec_bl
