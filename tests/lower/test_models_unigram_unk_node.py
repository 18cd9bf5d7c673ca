"""Where the runtime's Unigram lattice has its unk nodes (issue 40 follow-up, `unigram-unk-node`).

MNN 3.6.1 `UnigramModel::tokenize` (transformers/llm/engine/src/tokenizer/tokenizer.cpp) adds an unk
node for the character ending at byte i only `if (best_scores[i] <= -1e17)` (no piece ended at i),
scored `scores_[unk_token_id_]`; HF adds one wherever no one-character piece starts, scored
`min_score - 10`.  The hand-built model below has both shapes: `\\r` has no piece of its own, ends
`#\\r` and starts `\\rb`.  Its expected ids are written by hand from the two rules (scores in the
comments), then checked against HF and MNN themselves."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mtok_export import losses as L
from mtok_export.ir import AddedToken, Tokenizer
from mtok_export.ir import models as M
from mtok_export.lower import lower
from mtok_export.lower import unigram_viterbi as UV
from mtok_export.mtok import write_mtok
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.attribution import Attribution
from mtok_export.verify.reference_tiktoken import hf_from_ir

from tests.support.marks import needs_mnn

# id: piece, score.  min_score -30, so HF's unk node scores -40; the file's unk piece scores 0.0
VOCAB = (("<unk>", 0.0), ("\u2581", -15.0), ("#", -4.0), ("\u2581#", -1.0), ("#\r", -30.0), ("\r\r", -3.0),
         ("a", -1.0), ("b", -1.0), ("\rb", -5.0))
UNK, SPACE, HASH, SPACE_HASH, HASH_CR, CR_CR, A, B, CR_B = range(9)
# text -> (HF, the runtime), by hand:
EXPECTED = {
    # HF: ▁# + unk = -41 beats ▁ + #\r = -45.  The runtime: #\r ends at the end, so no unk node there
    "\u2581#\r": ([SPACE_HASH, UNK], [SPACE, HASH_CR]),
    # HF: a + \rb = -6 beats a + unk + b = -42.  The runtime: nothing ends after a\r, so its unk node
    # (0.0): a + unk + b = -2 beats -6
    "a\rb": ([A, CR_B], [A, UNK, B]),
    # both: a + \r\r + b = -5 (the runtime's other path a + unk + \rb = -6)
    "a\r\rb": ([A, CR_CR, B], [A, CR_CR, B]),
    "ab": ([A, B], [A, B]),
    "x#": ([UNK, HASH], [UNK, HASH]),  # x: no piece at all, unk in both
}


def _tok(vocab=VOCAB, byte_fallback=False) -> Tokenizer:
    return Tokenizer(model=M.Unigram(vocab, 0, byte_fallback))


def _loss(tok):
    low, lw = lower(tok, TARGETS[DEFAULT])
    return low, lw, [x for x in lw.losses if x.kind is L.UNIGRAM_UNK_NODE]


def test_the_loops_are_hf_and_the_rule_by_hand():
    tok = _tok()
    hf = hf_from_ir(tok)
    low, _, _ = _loss(tok)
    pieces = UV.Pieces.of(low.model)
    for text, (want, runtime) in EXPECTED.items():
        assert hf.encode(text, add_special_tokens=False).ids == want, text
        assert UV.hf_ids(pieces, text) == want, text
        assert UV.runtime_ids(pieces, text) == runtime, text


def test_recorded_only_for_the_vocabulary_shape():
    low, lw, found = _loss(_tok())
    assert [x.trigger for x in found] == [("\r",)]
    assert found[0].spans("x\ry\r") == [(1, 2), (3, 4)] and found[0].spans("xy") == []
    no_cr = tuple((p.replace("\r", "a"), s) for p, s in VOCAB if p not in ("\r\r", "\rb"))
    assert _loss(_tok(no_cr))[2] == []  # \r in no longer piece (#a, no \r\r, no \rb)
    assert _loss(_tok(VOCAB + (("\r", -2.0),)))[2] == []  # \r has a piece of its own
    assert _loss(_tok(byte_fallback=True))[2] == []  # its byte piece covers it in both
    # a piece the added-token pass splits out before the model ends nothing in it
    tag = VOCAB + (("<x>", -2.0),)
    assert [x.trigger for x in _loss(_tok(tag))[2]] == [("\r", "<", ">", "x")]
    split = replace(_tok(tag), added_tokens=(AddedToken(len(VOCAB), "<x>", special=True, normalized=False),))
    assert [x.trigger for x in _loss(split)[2]] == [("\r",)]
    # nor one scored as no piece (`lower.models.UNREACHABLE`: a bare SentencePiece model's controls)
    assert [x.trigger for x in _loss(_tok(VOCAB + (("<x>", -1e18),)))[2]] == [("\r",)]
    # a file whose unk piece scored as HF's unk node (min -30 - 10; never the source's own: HF's
    # min counts the unk piece): then a piece starting with \r no longer matters, one ending does
    hf_unk = (("<unk>", -40.0),) + VOCAB[1:]
    starts_only = tuple(v for v in hf_unk if v[0] not in ("#\r", "\r\r"))
    assert UV.differing_chars(M.Unigram(starts_only, 0), hf_min_score=-30.0) == frozenset()
    assert UV.differing_chars(M.Unigram(hf_unk, 0), hf_min_score=-30.0) == {"\r"}
    assert UV.differing_chars(M.Unigram(starts_only, 0)) == {"\r"}  # its own min -40: HF's unk -50


def test_attribution_reproduces_the_runtime_rule_and_nothing_else():
    tok = _tok()
    low, lw, _ = _loss(tok)
    why = Attribution(tok, low, lw)
    for text, (want, runtime) in EXPECTED.items():
        if want != runtime:
            assert [x.code for x in why.raw(text, want, runtime)] == ["unigram-unk-node"], text
    # another segmentation of the same text, not the runtime's: unexplained
    assert why.raw("\u2581#\r", [SPACE_HASH, UNK], [SPACE, HASH, UNK]) == ()
    # what a file with \r\r scored -30 gives (test_a_wrong_score_stays_unexplained): unexplained
    assert why.raw("a\r\rb", [A, CR_CR, B], [A, UNK, CR_B]) == ()


@needs_mnn
def test_mnn_follows_the_rule(tmp_path):
    """MNN 3.6.1 gives the runtime column above, HF the other (two texts differ, as predicted)."""
    from mtok_export.verify.runtime import run_runtime  # starts MNN: only in this runtime test

    tok = _tok()
    low, lw, found = _loss(tok)
    assert found
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    texts = list(EXPECTED)
    got = run_runtime(path, texts=texts).encodes
    assert dict(zip(texts, got)) == {t: r for t, (_, r) in EXPECTED.items()}
    why = Attribution(tok, low, lw)
    differ = [(t, EXPECTED[t][0], rt) for t, rt in zip(texts, got) if rt != EXPECTED[t][0]]
    assert [t for t, _, _ in differ] == ["\u2581#\r", "a\rb"]
    for text, want, rt in differ:
        assert [x.code for x in why.raw(text, want, rt)] == ["unigram-unk-node"], text


@needs_mnn
def test_a_wrong_score_stays_unexplained(tmp_path):
    """Mutant: the file scores \\r\\r -30 (the source -3).  MNN then gives a + unk + \\rb for a\\r\\rb
    (a + \\r\\r = -31 is forced at its end, then unk + \\rb = -6 beats -32), which no recorded loss
    reproduces from the source."""
    from mtok_export.verify.runtime import run_runtime  # starts MNN: only in this runtime test

    tok = _tok()
    low, lw, _ = _loss(tok)
    wrong = tuple((p, -30.0 if p == "\r\r" else s) for p, s in low.model.vocab)
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(replace(low, model=replace(low.model, vocab=wrong))))
    got = run_runtime(path, texts=["a\r\rb", "a\rb"]).encodes
    assert got == [[A, UNK, CR_B], [A, UNK, B]]
    why = Attribution(tok, low, lw)
    assert why.raw("a\r\rb", [A, CR_CR, B], got[0]) == ()
    assert [x.code for x in why.raw("a\rb", [A, CR_B], got[1])] == ["unigram-unk-node"]  # unchanged there
