"""Lowering to legacy type 3 (HUGGINGFACE): byte-level BPE behind a fixed ASCII-only std::regex.

Writing needs a BPE whose tokens are all GPT-2 byte-level strings, a ByteLevel decoder, dense ids,
and a single-byte token for all 256 bytes (otherwise the runtime aborts on text holding the
missing byte: refused).  Added tokens are written as the byte-level string of their content, so
the runtime decodes (and so splits out) exactly that content.

The projection (== reading the written file back), one loss code per step: no normalizer
(`legacy-normalizer`); prefix-only post-processor (`suffix-not-appended`); plain added tokens
(`legacy-added-flags`); no prefix space (`prefix-space`); pre-tokenizer `RUNTIME_PRE`
(`legacy-hf-regex`); no `ignore_merges` (`ignore-merges`) and no other BPE options (`bpe-field`);
duplicate merges keep their first rank (`legacy-duplicate-merge`); then the behaviour-neutral
`representation`: vocabulary = the lines (added tokens as byte-level strings, first id winning),
all added tokens special, special ids = the header list (every added token, longest first), stop
ids kept, prefix as TemplateProcessing, ByteLevel decoder, no chat template, no metadata."""

from __future__ import annotations

from dataclasses import replace

from ... import losses as L
from ...errors import UnsupportedError
from ...ir import decoders as D
from ...ir import models as M
from ...ir import pre_tokenizers as P
from ...ir.byte_level import BYTE_CHARS, bytes_to_token, token_to_bytes
from ...legacy.hf_txt import CPP_REGEX, RUNTIME_PRE, Type3, first_ids, runtime_decode
from ...legacy.text import added_from_header, finish, token_names
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


def _dedupe(merges) -> tuple[tuple[tuple[str, str], ...], int]:
    seen, out = set(), []
    for m in merges:
        if m not in seen:
            seen.add(m)
            out.append(m)
    return tuple(out), len(merges) - len(out)


@memo_last
def plan(tok) -> LegacyPlan:
    what = "type 3 (HUGGINGFACE)"
    m = tok.model
    if not isinstance(m, M.BPE):
        raise UnsupportedError(f"{what} is a byte-level BPE; model {m.kind} is not one")
    if not decoder_is_byte_level(tok.decoder):
        raise UnsupportedError(f"{what} is byte-level: decoder must be ByteLevel, not "
                               f"{getattr(tok.decoder, 'kind', None)}")
    n = dense_size(tok, m.vocab, what)
    lines: list[str | None] = [None] * n
    for t, i in m.vocab.items():
        if token_to_bytes(t) is None or "\n" in t:
            raise UnsupportedError(f"{what}: vocabulary token {t!r} (id {i}) is not a GPT-2 byte-level string")
        lines[i] = t
    notes = overlay_added(tok, lines, lambda c: bytes_to_token(c.encode("utf-8")))
    if any(x is None for x in lines):  # cannot happen after dense_size; kept as a guard
        raise UnsupportedError(f"{what}: id {lines.index(None)} has no token")
    missing = [b for b, c in enumerate(BYTE_CHARS) if c not in m.vocab]
    if missing:
        raise UnsupportedError(f"{what}: byte 0x{missing[0]:02x} ({len(missing)} in all) has no single-byte token; "
                               "MNN 3.4.1 throws std::out_of_range (aborting the app) on any text holding it")
    merges, dups = _dedupe(m.merges)
    chain = Chain(tok)
    special, stop, prefix, suffix = header_lists(chain)
    common_steps(chain, suffix, what)
    pre = chain.tok.pre_tokenizer
    if _prefix_space(pre):
        chain.step(L.PREFIX_SPACE, "pre_tokenizer ByteLevel", "$.pre_tokenizer",
                   "add_prefix_space: HF adds a space before the first word, the runtime never does",
                   replace(chain.tok, pre_tokenizer=_no_prefix_space(pre)), "Hello")
    chain.step(L.LEGACY_HF_REGEX, "pre_tokenizer", "$.pre_tokenizer",
               f"{what} pre-tokenizes with a fixed C-locale std::regex, /{CPP_REGEX}/ with icase, instead of "
               f"{_describe(chain.tok.pre_tokenizer)}: letters, digits and spaces are ASCII only (non-ASCII "
               "text is split like punctuation), digits are single, contractions match in any case",
               replace(chain.tok, pre_tokenizer=RUNTIME_PRE), "caf\u00e9 2024")
    model = chain.tok.model
    fields = {k: getattr(model, k) for k in ("dropout", "unk_token", "continuing_subword_prefix",
                                              "end_of_word_suffix", "fuse_unk", "byte_fallback")}
    if model.ignore_merges:
        chain.step(L.IGNORE_MERGES, "model BPE", "$.model.ignore_merges",
                   "ignore_merges: the runtime never looks a whole word up before merging",
                   replace(chain.tok, model=replace(model, ignore_merges=False)))
    if any(v not in (None, "", 0.0, False) for v in fields.values()):
        chain.step(L.BPE_FIELD, "model BPE", "$.model", "dropout / unk / subword prefix / suffix / byte_fallback "
                   "are not applied", replace(chain.tok, model=M.BPE(model.vocab, model.merges)))
    if dups:
        chain.step(L.LEGACY_DUPLICATE_MERGE, "model BPE", "$.model.merges",
                   f"{dups} merge(s) appear twice: the runtime keeps the first rank, HF the last",
                   replace(chain.tok, model=replace(chain.tok.model, merges=merges)))
    added = added_from_header(special, {i: runtime_decode(lines[i]) for i in special}, notes)
    canonical = finish(model=M.BPE(first_ids(lines), merges), normalizer=None, pre_tokenizer=RUNTIME_PRE,
                       decoder=D.ByteLevel(), header=(special, stop, prefix), added=added, notes=[],
                       names=token_names({i: runtime_decode(lines[i]) for i in prefix if i < n}))
    chain.step("representation", "", "", "", canonical, loss=False)
    return LegacyPlan(FileType.HUGGINGFACE, Type3(tuple(lines), merges, (special, stop, prefix)),
                      chain.losses + template_loss(tok, "type 3"), chain.tok, chain.steps, notes)


def _prefix_space(p) -> bool:
    if isinstance(p, P.Sequence):
        return any(_prefix_space(c) for c in p.pretokenizers)
    return isinstance(p, P.ByteLevel) and p.add_prefix_space


def _no_prefix_space(p):
    if isinstance(p, P.Sequence):
        return P.Sequence(tuple(_no_prefix_space(c) for c in p.pretokenizers))
    return replace(p, add_prefix_space=False) if isinstance(p, P.ByteLevel) else p


def _describe(p) -> str:
    if isinstance(p, P.Sequence):
        return " + ".join(_describe(c) for c in p.pretokenizers) or "no pre-tokenizer"
    if isinstance(p, P.Split):
        return f"Split(/{p.pattern.value}/)"
    if isinstance(p, P.ByteLevel):
        return "ByteLevel(GPT-2 regex)" if p.use_regex else "ByteLevel"
    return getattr(p, "kind", "no pre-tokenizer")

