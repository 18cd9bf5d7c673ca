"""Lowering to legacy type 1 (TIKTOKEN): greedy longest-prefix matching over byte tokens.

Writing needs a byte-level IR: a BPE (or the greedy WordPiece `legacy.tiktoken_txt` reads) whose
tokens are all GPT-2 byte strings, decoder ByteLevel, ids dense 0..N-1 over vocabulary and added
tokens.  Greedy longest-prefix matching equals the source's BPE only where both happen to pick
the same segmentation: that is a property of each input, not of the vocabulary, so any BPE source
gets the `legacy-greedy` loss (it is never exact in general).  All added tokens go to the header
special list (longest first), so they are split out as HF does.

The projection (== reading the written file back), one loss code per step: no normalizer
(`legacy-normalizer`); the post-processor reduced to its prefix (`suffix-not-appended`); added
tokens without lstrip/rstrip/single_word (`legacy-added-flags`); model and pre-tokenizer replaced
by the greedy WordPiece over every line, first id winning (`legacy-greedy`); then a re-spelling
that changes no behaviour (`representation`): all added tokens special and not normalized, special
ids = the header list, stop ids kept, prefix as TemplateProcessing named by token text, no chat
template, no metadata."""

from __future__ import annotations

from dataclasses import replace
from operator import methodcaller

from ... import losses as L
from ...errors import UnsupportedError
from ...ir import decoders as D
from ...ir import models as M
from ...ir.byte_level import bytes_to_token, token_to_bytes
from ...legacy.text import NO_LIMIT, TokenLines, added_from_header, finish, token_names
from ...legacy.tiktoken_txt import GREEDY_PRE, GREEDY_UNK
from ...losses import Loss
from ...mtok.constants import FileType
from .chain import (
    Chain,
    LegacyPlan,
    common_steps,
    decoder_is_byte_level,
    dense_size,
    header_lists,
    memo_last,
    overlay_added,
    template_loss,
)


@memo_last
def plan(tok) -> LegacyPlan:
    what = "type 1 (TIKTOKEN)"
    m = tok.model
    greedy = isinstance(m, M.WordPiece) and m.continuing_subword_prefix == ""
    if not (isinstance(m, M.BPE) or greedy):
        raise UnsupportedError(f"{what} holds the token bytes of a byte-level BPE; model {m.kind} is not one")
    if not decoder_is_byte_level(tok.decoder):
        raise UnsupportedError(f"{what} holds token bytes: the vocabulary must be byte-level (decoder ByteLevel), "
                               f"not decoder {getattr(tok.decoder, 'kind', None)}")
    vocab = M.vocab_of(m)
    n = dense_size(tok, vocab, what)
    tokens: list[bytes | None] = [None] * n
    for t, i in vocab.items():
        b = token_to_bytes(t)
        if b is None:
            raise UnsupportedError(f"{what}: vocabulary token {t!r} (id {i}) is not a GPT-2 byte-level string")
        tokens[i] = b
    notes = overlay_added(tok, tokens, methodcaller("encode", "utf-8"))
    empty = [i for i, b in enumerate(tokens) if not b]
    if empty:
        raise UnsupportedError(f"{what}: id {empty[0]} has an empty token, which the runtime's trie matches "
                               "everywhere (encode never ends)")
    chain = Chain(tok)
    special, stop, prefix, suffix = header_lists(chain)
    common_steps(chain, suffix, what)
    t = chain.tok
    greedy_model = M.WordPiece({bytes_to_token(b): i for i, b in reversed(list(enumerate(tokens)))},
                               GREEDY_UNK, "", NO_LIMIT)
    greedy_pre = GREEDY_PRE
    if not greedy or t.pre_tokenizer != greedy_pre:
        chain.step(L.LEGACY_GREEDY, f"model {m.kind}", "$.model",
                   f"{what} encodes by greedy longest-prefix matching over each chunk between special tokens: "
                   "no split regex and no BPE merges, so ids differ wherever the longest vocabulary match is "
                   "not what the source's pre-tokenizer and merges produce",
                   replace(t, model=greedy_model, pre_tokenizer=greedy_pre), "Hello world, 12345")
    present = set(tokens)
    missing = [b for b in range(256) if bytes([b]) not in present]
    if missing:
        chain.losses.append(Loss(L.LEGACY_UNKNOWN_BYTES, "model", "$.model.vocab",
                                 f"{len(missing)} byte(s) have no token (e.g. 0x{missing[0]:02x}): the runtime "
                                 "prints an error and skips them", bytes([missing[0]]).decode("latin-1")))
    added = added_from_header(special, {i: tokens[i] for i in special}, notes)
    canonical = finish(model=greedy_model, normalizer=None, pre_tokenizer=greedy_pre, decoder=D.ByteLevel(),
                       header=(special, stop, prefix), added=added, notes=[],
                       names=token_names({i: tokens[i] for i in prefix if i < n}))
    chain.step("representation", "", "", "", canonical, loss=False)
    return LegacyPlan(FileType.TIKTOKEN, TokenLines(FileType.TIKTOKEN, tuple(tokens), (special, stop, prefix)),
                      chain.losses + template_loss(tok, "type 1"), chain.tok, chain.steps, notes)


