"""Lowering to legacy type 2 (BERT): ASCII word splitting and WordPiece with a hard-coded `##`.

Writing needs a WordPiece with the `##` prefix and dense ids.  The projection (== reading the
written file back), one loss code per step: normalizer -> ASCII lowercasing
(`legacy-bert-normalizer`); prefix-only post-processor (`suffix-not-appended`); plain added tokens
(`legacy-added-flags`); pre-tokenizer `WORDS` (`legacy-bert-split`); WordPiece without word limit
and with `[UNK]` (`legacy-bert-wordpiece`); decoder Fuse (`legacy-bert-decode`); then the
behaviour-neutral `representation` (vocabulary = the lines with added tokens, first id winning, all
added tokens special, header special order, no chat template).  `legacy-bert-unk` is listed but has
no step: the projection cannot express it."""

from __future__ import annotations

from dataclasses import replace
from operator import methodcaller

from ... import losses as L
from ...errors import UnsupportedError
from ...ir import decoders as D
from ...ir import models as M
from ...ir import normalizers as N
from ...legacy.bert_txt import (
    ASCII_LOWER,
    UNK,
    UNK_FALLBACK_ID,
    WORDS,
    first_ids,
    runtime_model,
)
from ...legacy.text import NO_LIMIT, TokenLines, added_from_header, finish, token_names
from ...losses import Loss
from ...mtok.constants import FileType
from .chain import (
    Chain,
    LegacyPlan,
    common_steps,
    dense_size,
    header_lists,
    memo_last,
    overlay_added,
    template_loss,
)


def _describe_normalizer(n) -> str:
    if isinstance(n, N.BertNormalizer):
        parts = []
        if n.lowercase:
            parts.append("Unicode lowercasing")
        elif n.lowercase is False:
            parts.append("case (the source is cased, the runtime lowercases ASCII letters)")
        if n.strip_accents or (n.strip_accents is None and n.lowercase):
            parts.append("accent stripping")
        if n.clean_text:
            parts.append("control-character cleanup")
        if n.handle_chinese_chars:
            parts.append("CJK spacing")
        return ", ".join(parts)
    return f"normalizer {getattr(n, 'kind', 'none')}"


@memo_last
def plan(tok) -> LegacyPlan:
    what = "type 2 (BERT)"
    m = tok.model
    if not isinstance(m, M.WordPiece):
        raise UnsupportedError(f"{what} is a WordPiece tokenizer; model {m.kind} is not one")
    if m.continuing_subword_prefix != "##":
        raise UnsupportedError(f"{what}: the runtime hard-codes the continuation prefix '##'; this WordPiece uses "
                               f"{m.continuing_subword_prefix!r}")
    n = dense_size(tok, m.vocab, what)
    tokens: list[bytes | None] = [None] * n
    for t, i in m.vocab.items():
        tokens[i] = t.encode("utf-8")
    notes = overlay_added(tok, tokens, methodcaller("encode", "utf-8"))
    chain = Chain(tok)
    special, stop, prefix, suffix = header_lists(chain)
    if tok.normalizer != ASCII_LOWER:
        chain.step(L.LEGACY_BERT_NORMALIZER, f"normalizer {getattr(tok.normalizer, 'kind', None)}", "$.normalizer",
                   f"{what} only lowercases ASCII letters; not applied: {_describe_normalizer(tok.normalizer)}",
                   replace(chain.tok, normalizer=ASCII_LOWER), "\u00c9cole \u4e2d\u6587")
    common_steps(chain, suffix, what, normalizer=False)
    chain.step(L.LEGACY_BERT_SPLIT, f"pre_tokenizer {getattr(tok.pre_tokenizer, 'kind', None)}", "$.pre_tokenizer",
               f"{what} makes words of ASCII letter/digit runs and of every other character alone (so a non-ASCII "
               "letter splits a word: 'café' -> 'caf', 'é')", replace(chain.tok, pre_tokenizer=WORDS), "caf\u00e9")
    vocab = first_ids(tokens, notes)
    wp = chain.tok.model
    if (wp.max_input_chars_per_word, wp.unk_token) != (NO_LIMIT, UNK):
        chain.step(L.LEGACY_BERT_WORDPIECE, "model WordPiece", "$.model",
                   f"{what} has no word-length limit (HF: words over {wp.max_input_chars_per_word} characters become "
                   f"{wp.unk_token}) and always uses {UNK!r} (else id {UNK_FALLBACK_ID}) as unk",
                   replace(chain.tok, model=replace(wp, unk_token=UNK, max_input_chars_per_word=NO_LIMIT)), "a" * 120)
    chain.step(L.LEGACY_BERT_DECODE, f"decoder {getattr(tok.decoder, 'kind', None)}", "$.decoder",
               f"{what} decodes each id to its raw token ('##' kept) and joins them without spaces or cleanup",
               replace(chain.tok, decoder=D.Fuse()), "playing")
    if UNK not in vocab:
        notes.append(f"no {UNK!r} token: the runtime emits id {UNK_FALLBACK_ID} for unknown words")
    chain.losses.append(Loss(L.LEGACY_BERT_UNK, "model WordPiece", "$.model",
                             f"{what} keeps the pieces found before a position nothing matches and then emits "
                             f"{UNK} (HF emits only {UNK} for the word)", "a\u2603"))
    added = added_from_header(special, {i: tokens[i] for i in special}, notes)
    canonical = finish(model=runtime_model(vocab), normalizer=ASCII_LOWER, pre_tokenizer=WORDS, decoder=D.Fuse(),
                       header=(special, stop, prefix), added=added, notes=[],
                       names=token_names({i: tokens[i] for i in prefix if i < n}))
    chain.step("representation", "", "", "", canonical, loss=False)
    return LegacyPlan(FileType.BERT, TokenLines(FileType.BERT, tuple(tokens), (special, stop, prefix)),
                      chain.losses + template_loss(tok, "type 2"), chain.tok, chain.steps, notes)

