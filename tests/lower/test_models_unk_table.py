"""Unknown characters in BPE without byte fallback (issue 14): the runtime drops a character that is
not in the vocab, HF and sentencepiece emit unk.  Lowered as a code-point table mapping every
character outside the alphabet to the character the unk token is written as (`lower.models`)."""

from __future__ import annotations

import io
from dataclasses import replace

import pytest
import sentencepiece as spm

from mtok_export import losses as L
from mtok_export.ir import Pattern, Tokenizer
from mtok_export.ir import models as M
from mtok_export.ir import normalizers as N
from mtok_export.ir import pre_tokenizers as P
from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.sentencepiece import read_sentencepiece
from mtok_export.targets import DEFAULT, TARGETS

from tests.support.corpus_dirs import SAMPLES
from tests.support.marks import needs_mnn

TEXTS = ["Hello World", "ABC def", "a\U0001fae0b", "x \u2603\u2603\u2603 y", "tab\there", "ctrl\x01x\x02\x03y",
         "zero\u200bwidth", "MIXED case Text!", "", "   ", "\u4e00\u4e8c Z"]


@pytest.fixture(scope="module")
def bpe_model(tmp_path_factory):
    """A SentencePiece BPE model without byte fallback, trained on lowercased text: uppercase
    letters, emoji and most symbols are outside its alphabet."""
    lines = (SAMPLES / "text.txt").read_text(encoding="utf-8").lower().splitlines()
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines * 3), model_writer=buf, model_type="bpe",
                                   vocab_size=1200, byte_fallback=False, character_coverage=1.0, minloglevel=3)
    path = tmp_path_factory.mktemp("bpe") / "lower.model"
    path.write_bytes(buf.getvalue())
    return path


def test_unk_is_lowered_as_a_table(bpe_model):
    tok = read_sentencepiece(bpe_model)
    low, lw = lower(tok, TARGETS[DEFAULT])
    codes = {x.code for x in lw.losses}
    assert "unk-table" in lw.applied and "unk-drop" not in codes and {"unk-table-gaps", "unk-surface"} <= codes
    assert low.model.vocab["\u2047"] == tok.model.vocab["<unk>"] and "<unk>" not in low.model.vocab
    steps = low.normalizer.normalizers
    table = next(s for s in steps if isinstance(s, N.CodepointMap))
    mapped = dict(table.entries)
    assert mapped[ord("H")] == "\u2047" and ord("h") not in mapped and 0x1FAE0 in mapped
    assert ord("\x01") not in mapped and 0x0378 in mapped and 0x1FAE8 in mapped  # \x01: spaced by the runtime
    assert 0x2A6E0 not in mapped and 0xF0000 not in mapped and 0x20000 in mapped  # unassigned / private use beyond plane 1
    assert steps[-1] == N.Replace(steps[-1].pattern, "\u2047") and steps[-1].pattern.value == "\u2047\u2047"


@needs_mnn
def test_unknown_characters_become_unk_on_the_runtime(bpe_model, tmp_path):
    from mtok_export.verify.runtime import run_runtime

    tok = read_sentencepiece(bpe_model)
    low, _ = lower(tok, TARGETS[DEFAULT])
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    sp = spm.SentencePieceProcessor(model_file=str(bpe_model))
    want = [list(x) for x in sp.encode(TEXTS)]
    assert sum(x.count(sp.unk_id()) for x in want) >= 6
    got = run_runtime(path, texts=TEXTS).encodes
    assert got == want
    # the file as main wrote it dropped them
    plain, _ = lower(replace(tok, model=replace(tok.model, unk_token=None)), TARGETS[DEFAULT])
    path.write_bytes(write_mtok(plain))
    dropped = run_runtime(path, texts=TEXTS).encodes
    assert dropped != want and sp.unk_id() not in sum(dropped, [])


def _bpe(**kw):
    vocab = {"<unk>": 0, "a": 1, "b": 2, "ab": 3, "\u2581": 4}
    return Tokenizer(model=M.BPE(vocab, (("a", "b"),), unk_token="<unk>", **kw))


@pytest.mark.parametrize("why, tok", [
    ("byte fallback covers it", _bpe(byte_fallback=True)),
    ("byte-level BPE has no unknown characters", replace(_bpe(), pre_tokenizer=P.ByteLevel())),
    ("a pre-tokenizer may split a fused run", replace(_bpe(fuse_unk=True), pre_tokenizer=P.Whitespace())),
    ("a merge makes the unk token", replace(_bpe(), model=M.BPE({"<unk>": 0, "<un": 1, "k>": 2}, (("<un", "k>"),),
                                                                  unk_token="<unk>"))),
])
def test_no_table_where_it_would_not_be_exact(why, tok):
    low, lw = lower(tok, TARGETS[DEFAULT])
    assert "unk-table" not in lw.applied, why
    assert ("unk-drop" in {x.code for x in lw.losses}) == (not tok.model.byte_fallback), why


def test_without_fusing_any_splitting_pre_tokenizer_is_fine():
    low, lw = lower(replace(_bpe(), pre_tokenizer=P.Whitespace()), TARGETS[DEFAULT])
    assert "unk-table" in lw.applied and not any(s.pattern.value == "\u2047\u2047" for s in low.normalizer.normalizers
                                                 if isinstance(s, N.Replace))


def test_the_gap_trigger():
    gaps = L.UNK_TABLE_GAPS
    loss = L.Loss(gaps, "model BPE", "$.model.unk_token", "test")
    assert loss.spans("a\U0002a6e0b\x01c\U000f0000") == [(1, 2), (3, 4), (5, 6)]
    assert loss.spans("Hello \U0001fae0 \U0001fae8 \u0378 \U00020000") == []


@pytest.mark.parametrize("pre, removed", [
    (None, ""),
    (P.Whitespace(), " \t\n\u3000"),
    (P.WhitespaceSplit(), " \t\n\u3000"),
    (P.BertPreTokenizer(), " \t\n\u3000"),
    (P.CharDelimiterSplit(" "), " "),
    (P.Split(Pattern("-"), "Isolated"), ""),  # splits, removes nothing
])
def test_whitespace_the_pre_tokenizer_removes_stays_out_of_the_table(pre, removed):
    """The TTS model's shape (generated zoo, `gen_zoo.FOUND['unk-table-whitespace']`): a vocabulary
    trained after a Whitespace split has no ' '; HF never hands the model a space, so the table must
    not make it the unk character (it did: an unk id at every word boundary, exit 1)."""
    low, lw = lower(replace(_bpe(), pre_tokenizer=pre), TARGETS[DEFAULT])
    assert "unk-table" in lw.applied
    steps = low.normalizer.normalizers
    mapped = dict(next(s for s in steps if isinstance(s, N.CodepointMap)).entries)
    space_to_unk = any(isinstance(s, N.Replace) and s.pattern.value == " " for s in steps)
    for c in " \t\n\u3000":
        assert (ord(c) in mapped or (c == " " and space_to_unk)) == (c not in removed), repr(c)
    assert ord("x") in mapped and ord("a") not in mapped  # the rest of the table is as before
