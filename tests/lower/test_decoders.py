"""Decoder lowering (`lower.decoders`): the runtime's decode(int), which the engine streams, ignores the
decoder chain and rewrites every token the same way (spec 3.7: U+2581 is a space, '<0xHH' a byte); a
chain that does otherwise is a `stream-decode` loss, which verify reproduces (its `stream`
projection).  The generated zoo's classes (`gen_zoo.FOUND['stream-*']`) were exit 1 without it."""

from __future__ import annotations

import pytest

from mtok_export import losses as L
from mtok_export.ir import Pattern
from mtok_export.ir import decoders as D
from mtok_export.lower import Lowering
from mtok_export.lower.decoders import lower_decoder
from mtok_export.targets import DEFAULT, TARGETS

MARK = "\u2581"
PLAIN = ("a", "b", "ab")
META = D.Metaspace(MARK, "never", True)


def _stream(d, tokens) -> list[str]:
    lw = Lowering(TARGETS[DEFAULT], "auto")
    lower_decoder(lw, d, "$.decoder", tokens=tokens)
    return [x.reason for x in lw.losses if x.kind is L.STREAM_DECODE]


@pytest.mark.parametrize("d, tokens, why", [
    (D.Fuse(), (MARK + "a", "b"), "'\u2581' into a space"),
    (D.ByteFallback(), (MARK + "a", "<0x41>"), "'\u2581' into a space"),
    (D.Fuse(), ("<0x41>", "a"), "into its byte"),
    (D.Sequence((D.Fuse(), D.ByteFallback())), PLAIN, "ByteFallback after Fuse"),
    (D.Replace(Pattern(" "), MARK), PLAIN, "ignores Replace"),
    (D.ByteLevel(), (MARK + "caf\u00e9", "b"), "byte map"),
])
def test_a_chain_decode_int_does_not_follow_is_a_stream_loss(d, tokens, why):
    reasons = _stream(d, tokens)
    assert len(reasons) == 1 and why in reasons[0]


@pytest.mark.parametrize("d, tokens", [
    (D.Fuse(), PLAIN),  # nothing to rewrite
    (META, (MARK + "a", "b")),  # Metaspace makes U+2581 a space too
    (D.Sequence((D.Replace(Pattern(MARK), " "), D.ByteFallback(), D.Fuse())), (MARK + "a", "<0x41>")),  # Llama's
    (D.Sequence((D.ByteFallback(), D.Fuse())), PLAIN),  # ByteFallback before Fuse sees single tokens
    (D.ByteLevel(), ("\u0120a", "b")),
])
def test_a_chain_that_decodes_as_decode_int_is_no_loss(d, tokens):
    assert _stream(d, tokens) == []
