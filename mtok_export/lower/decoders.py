"""Decoder lowering (spec 2.6, 3.5).  A missing or unknown decoder never becomes ByteLevel."""

from __future__ import annotations

from .. import losses as L
from ..ir import Pattern
from ..ir import decoders as D
from ..ir.byte_level import BYTE_CHARS
from .regex import literal_of

_BYTE_CHARS = frozenset(BYTE_CHARS)


def lower_decoder(lw, d, jp: str, tokens=()):
    """`tokens`: the model's vocabulary (what decode(int) writes out token by token)."""
    if d is None:
        lw.loss(L.NO_DECODER, "decoder (none)", jp, "HF joins tokens with spaces when there is no decoder; "
                "the runtime concatenates them (written as an empty Sequence, not ByteLevel)", "a b")
        return D.Sequence(())
    out = _lower(lw, d, jp)
    if _stream_differs(d):
        lw.loss(L.STREAM_DECODE, f"decoder {d.kind}", jp, "decode(int), which the engine streams, ignores the "
                "decoder chain (Strip, Metaspace prefix, WordPiece spacing and cleanup): e.g. the first token "
                "keeps the leading space HF removes", "Hello")
    else:
        marks = _stream_marks(d, tokens)
        if marks:
            lw.loss(L.STREAM_DECODE, f"decoder {d.kind}", jp, "decode(int), which the engine streams, is not this "
                    "decoder chain: " + "; ".join(why for why, _ in marks), marks[0][1])
    return D.Sequence(()) if out is None else out


def _stream_marks(d, tokens) -> list[tuple[str, str]]:
    """(why, example) of what decode(int) does to a token whatever the decoder (spec 3.7) and HF's
    chain `d` does not: U+2581 becomes a space (unless a Metaspace or Replace decoder makes it one),
    '<0xHH' a byte (unless a ByteFallback decoder does); only where a token of `tokens` holds them.
    And HF's ByteFallback after Fuse sees the fused text: '<0x41>' spelled by several tokens."""
    chain = _walk(d)
    out = []
    if not any(isinstance(x, D.Metaspace) or (isinstance(x, D.Replace) and x.pattern.value == "\u2581"
                                               and x.content == " ") for x in chain) \
            and any("\u2581" in t for t in tokens):
        out.append(("it turns '\u2581' into a space, which the chain keeps", "a\u2581b"))
    if not any(isinstance(x, D.ByteFallback) for x in chain) and any("<0x" in t for t in tokens):
        out.append(("it turns '<0x41>' (any '<0xHH') into its byte, which the chain keeps", "<0x41>"))
    if any(isinstance(x, D.ByteLevel) for x in chain) and any(c not in _BYTE_CHARS for t in tokens for c in t):
        out.append(("it maps each character of a token the byte map does not cover whole, which HF's ByteLevel "
                    "decoder keeps as it is", "caf\u00e9"))
    for x in chain:
        if isinstance(x, D.Replace) and not (x.pattern.value == "\u2581" and x.content == " "):
            out.append((f"it ignores Replace({x.pattern.value!r}, {x.content!r})", x.pattern.value))
    fuse = next((i for i, x in enumerate(chain) if isinstance(x, D.Fuse)), None)
    if fuse is not None and any(isinstance(x, D.ByteFallback) for x in chain[fuse + 1:]):
        out.append(("'<0x41>' spelled by several tokens stays text, which ByteFallback after Fuse makes 'A'",
                    "<0x41>"))
    return out


def _walk(d) -> list:
    return [x for c in d.decoders for x in _walk(c)] if isinstance(d, D.Sequence) else [d]


def _stream_differs(d) -> bool:
    if isinstance(d, D.Sequence):
        return any(_stream_differs(c) for c in d.decoders)
    return (isinstance(d, (D.Strip, D.WordPiece))
            or (isinstance(d, D.Metaspace) and d.prepend_scheme != "never"))


def _lower(lw, d, jp: str, prev=None):
    name = f"decoder {d.kind}"
    if isinstance(d, D.Sequence):
        kids, last = [], None
        for i, c in enumerate(d.decoders):
            k = _lower(lw, c, f"{jp}.decoders[{i}]", last)
            if k is not None:
                kids.append(k)
                last = k
        return D.Sequence(tuple(kids))
    if isinstance(d, D.ByteLevel):
        return D.ByteLevel()
    if isinstance(d, (D.ByteFallback, D.Fuse)):
        return d
    if isinstance(d, D.Metaspace):
        # For decoding, 'first' and 'always' both drop the first token's leading space.
        return D.Metaspace(d.replacement, "never" if d.prepend_scheme == "never" else "always", True)
    if isinstance(d, D.WordPiece):
        if not d.cleanup:
            lw.loss(L.WORDPIECE_CLEANUP, name, jp, "the runtime always applies WordPiece cleanup", "a .")
        return d
    if isinstance(d, D.Replace):
        value = d.pattern.value if not d.pattern.regex else literal_of(d.pattern.value)
        if not value:
            lw.loss(L.DECODER_DROPPED, name, jp, f"Replace {d.pattern} has no runtime form (an empty pattern hangs decode); dropped")
            return None
        return D.Replace(Pattern(value), d.content)
    if isinstance(d, D.Strip):
        if d.start > 1 or d.stop > 1 or not isinstance(prev, D.Fuse):
            lw.loss(L.DECODER_STRIP, name, jp, "the runtime strips one occurrence from the first/last token only "
                    "(exact only after Fuse with start, stop <= 1)")
        return d
    lw.loss(L.DECODER_DROPPED, name, jp, "no runtime decoder does this; dropped")
    return None
