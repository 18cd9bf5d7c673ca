"""Wrong files made on purpose, for testing verify (DESIGN 4.1): each mutation takes the honest
lowered IR of a source and returns a wrong one (or None when it does not apply to that tokenizer).
A test writes the mutant, verifies it against the *source*, and checks that verify fails whenever
the runtime can tell the mutant from the honest file."""

from __future__ import annotations

from dataclasses import replace

from mtok_export.ir import Pattern
from mtok_export.ir import decoders as D
from mtok_export.ir import models as M
from mtok_export.ir import normalizers as N
from mtok_export.ir import pre_tokenizers as P


def _common_ids(low, k=2):
    """Two ordinary vocabulary ids that everyday text uses (single ASCII letters' neighbours)."""
    vocab = M.vocab_of(low.model)
    for a, b in (("the", "and"), ("Ġthe", "Ġand"), ("▁the", "▁and"), ("e", "t"), ("Ġt", "Ġa")):
        if a in vocab and b in vocab:
            return vocab[a], vocab[b]
    return None


def vocab_ids(low):
    """Two tokens swap ids."""
    pair = _common_ids(low)
    if pair is None:
        return None
    a, b = pair
    m = low.model
    if isinstance(m, M.Unigram):
        v = list(m.vocab)
        v[a], v[b] = v[b], v[a]
        return replace(low, model=replace(m, vocab=tuple(v)))
    swapped = {t: (b if i == a else a if i == b else i) for t, i in m.vocab.items()}
    return replace(low, model=replace(m, vocab=swapped))


def merges_dropped(low):
    """The 200 highest-ranked merges are gone."""
    m = low.model
    if not isinstance(m, M.BPE) or len(m.merges) < 400:
        return None
    return replace(low, model=replace(m, merges=m.merges[200:]))


def normalizer_removed(low):
    if low.normalizer is None:
        return None
    return replace(low, normalizer=None)


def normalizer_added(low):
    """A Lowercase step (as the runtime's BERT normalizer) in front of whatever there was."""
    lower = N.MnnBertNormalizer(False, False, False, True, None)
    kids = (lower,) + ((low.normalizer,) if low.normalizer is not None else ())
    return replace(low, normalizer=N.Sequence(kids))


COARSE = r"\S+|\s+"


def split_coarser(low):
    """The split regex replaced by a coarser one (whole whitespace-separated words)."""
    pre = low.pre_tokenizer
    kids = list(pre.pretokenizers) if isinstance(pre, P.Sequence) else [pre] if pre is not None else []
    splits = [i for i, k in enumerate(kids) if isinstance(k, P.Split)]
    if splits:
        kids[splits[0]] = P.Split(Pattern(COARSE, True), "Isolated")
    else:
        kids = [P.Split(Pattern(COARSE, True), "Isolated")] + [
            replace(k, use_regex=False) if isinstance(k, P.ByteLevel) else k for k in kids]
    return replace(low, pre_tokenizer=P.Sequence(tuple(kids)))


def decoder_removed(low):
    if low.decoder is None or low.decoder == D.Sequence(()):
        return None
    return replace(low, decoder=D.Sequence(()))


def bos_changed(low):
    """encode() adds another BOS (or one where there was none)."""
    vocab = M.vocab_of(low.model)
    other = next(i for t, i in sorted(vocab.items(), key=lambda kv: kv[1]) if i not in low.prefix_ids and i > 3)
    return replace(low, prefix_ids=(other,))


def eos_changed(low):
    """Another EOS: the stop list and the embedded eos_token name a different token."""
    names = {i: t for t, i in M.vocab_of(low.model).items()}
    other = next(i for i in sorted(names) if i not in low.stop_ids and i > 3)
    return replace(low, stop_ids=(other,), chat=replace(low.chat, eos_token=names[other]))


def added_token_removed(low):
    """The first special added token that ordinary prompts contain is no longer split out."""
    from mtok_export.corpus import builtin_corpus

    texts = [s.text for s in builtin_corpus() if "special" in s.tags]
    specials = [t for t in low.added_tokens if t.special and len(t.content) > 2 and any(t.content in x for x in texts)]
    if not specials:
        return None
    t = specials[0]
    vocab = dict(M.vocab_of(low.model))
    model = low.model
    if not isinstance(model, M.Unigram) and vocab.get(t.content) == t.id:  # also out of the vocab: a plain word
        del vocab[t.content]
        vocab[f"\ue000removed{t.id}"] = t.id
        model = replace(model, vocab=vocab)
    return replace(low, model=model, added_tokens=tuple(a for a in low.added_tokens if a is not t),
                   special_ids=tuple(i for i in low.special_ids if i != t.id))


def chat_template_changed(low):
    if not low.chat.text:
        return None
    return replace(low, chat=replace(low.chat, text="Note: " + low.chat.text))  # text before the first tag


def stop_id_extra(low):
    """An extra, wrong stop id (the source's are all still there)."""
    names = {i: t for t, i in M.vocab_of(low.model).items()}
    extra = next(i for i in sorted(names) if i not in low.stop_ids and i > 10)
    return replace(low, stop_ids=tuple(low.stop_ids) + (extra,))


def byte_fallback_off(low):
    m = low.model
    if not getattr(m, "byte_fallback", False):
        return None
    return replace(low, model=replace(m, byte_fallback=False))


MUTATIONS = {f.__name__.replace("_", "-"): f for f in (
    vocab_ids, merges_dropped, normalizer_removed, normalizer_added, split_coarser, decoder_removed, bos_changed,
    eos_changed, added_token_removed, chat_template_changed, stop_id_extra, byte_fallback_off)}
