"""Control-piece text in a SentencePiece model (issue 14): a bare `.model` is sentencepiece's, which
encodes `<s>` typed by a user as text; with HF configs beside it, transformers' splitting applies.
Checked on the real runtime against the sentencepiece library and HF."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest
import sentencepiece as spm

from mtok_export import losses as L
from mtok_export.ir import AddedToken, Metadata, Pattern, Tokenizer
from mtok_export.ir.tokenizer import NO_CHAT
from mtok_export.ir import decoders as D
from mtok_export.ir import models as M
from mtok_export.lower import lower
from mtok_export.lower.models import UNREACHABLE
from mtok_export.mtok import write_mtok
from mtok_export.readers.sentencepiece import read_sentencepiece
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.reference_tiktoken import hf_from_ir

from tests.support.corpus_dirs import CORPUS
from tests.support.marks import needs_mnn

UNIGRAM = CORPUS / "sp-test-models/test_model.model"
BPE = CORPUS / "mistral-7b-v0.1_mistral-common/tokenizer.model.v1"
TEXTS = ["<s>", "Hello <s> world", "Hello</s>world", "</s><s>x", "   <s>   ", '["<s>", "</s>"]', "plain text"]


def _runtime_raw(tmp_path, tok, texts):
    from mtok_export.verify.runtime import run_runtime

    low, _ = lower(tok, TARGETS[DEFAULT])
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    n = len(low.prefix_ids)
    return [ids[n:] for ids in run_runtime(path, texts=texts).encodes]


# read with --no-chat: the BPE file is a mistral_common file, whose generated template, when embedded,
# splits the controls out (`chat_source.split_controls`, tests/readers/test_chat_source.py)
@pytest.fixture(params=[UNIGRAM, BPE], ids=["unigram", "bpe"])
def bare(request):
    if not request.param.is_file():
        pytest.skip("shared corpus not found next to the repository")
    return request.param


@pytest.mark.runtime
def test_bare_model_control_pieces_are_text_in_the_file(bare):
    tok = read_sentencepiece(bare, chat_template=NO_CHAT)
    assert [x.code for x in tok.meta.differences if x.code == "sp-control-text"] == ["sp-control-text"]
    low, lw = lower(tok, TARGETS[DEFAULT])
    assert "sentencepiece-controls" in lw.applied
    assert "sp-control-text" not in {x.code for x in lw.losses}  # the file follows the reference
    names = {1: "<s>", 2: "</s>"}
    assert not {t.id for t in low.added_tokens} & set(names) and not set(low.special_ids) & set(names)
    assert 2 in low.stop_ids  # </s> still stops generation
    if isinstance(low.model, M.Unigram):
        assert [low.model.vocab[i] for i in names] == [("<s>", UNREACHABLE), ("</s>", UNREACHABLE)]
    # decode drops them as sentencepiece's decode does (HF runs the lowered decoder chain as MNN does)
    sp = spm.SentencePieceProcessor(model_file=str(bare))
    ids = [1] + sp.encode("Hello world") + [2]
    assert hf_from_ir(low).decode(ids, skip_special_tokens=False) == sp.decode(ids) == "Hello world"


@needs_mnn
def test_bare_model_encodes_control_text_like_sentencepiece(bare, tmp_path):
    sp = spm.SentencePieceProcessor(model_file=str(bare))
    got = _runtime_raw(tmp_path, read_sentencepiece(bare, chat_template=NO_CHAT), TEXTS)
    assert got == [list(x) for x in sp.encode(TEXTS)]
    assert 1 not in sum(got, []) and 2 not in sum(got, [])


@needs_mnn
def test_model_with_hf_configs_splits_control_text_as_transformers(tmp_path):
    """The same Unigram model with a tokenizer_config.json beside it: transformers' reference splits
    `<s>` out, and so does the file (header special list), as HF on the IR does."""
    if not UNIGRAM.is_file():
        pytest.skip("shared corpus not found next to the repository")
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(UNIGRAM, folder / "spiece.model")
    (folder / "tokenizer_config.json").write_text('{"tokenizer_class": "T5Tokenizer", "add_eos_token": false}')
    tok = read_sentencepiece(folder / "spiece.model")
    assert "sp-control-text" not in {x.code for x in tok.meta.differences}
    low, lw = lower(tok, TARGETS[DEFAULT])
    assert "sentencepiece-controls" not in lw.applied and {1, 2} <= {t.id for t in low.added_tokens if t.special}
    got = _runtime_raw(tmp_path, tok, TEXTS)
    want = [e.ids for e in hf_from_ir(tok).encode_batch(TEXTS, add_special_tokens=False)]
    assert got == want and got[0] == [1]


def test_a_piece_holding_the_control_text_keeps_the_decoder_unchanged():
    """The decoder's Replace works inside every token: where a normal piece contains the control
    text, dropping it by Replace would cut that piece too, so no step is added for it."""
    vocab = (("<unk>", 0.0), ("<s>", 0.0), ("</s>", 0.0), ("a<s>", -1.0), ("a", -2.0))
    added = (AddedToken(1, "<s>", normalized=False, special=True), AddedToken(2, "</s>", normalized=False, special=True))
    diff = L.Loss(L.SP_CONTROL_TEXT, "reader", "$.added_tokens", "test", trigger=("<s>", "</s>"))
    tok = Tokenizer(model=M.Unigram(vocab, 0), decoder=D.Fuse(), added_tokens=added, special_ids=(1, 2),
                    meta=Metadata(differences=(diff,)))
    low, lw = lower(tok, TARGETS[DEFAULT])
    assert low.decoder == D.Sequence((D.Replace(Pattern("</s>"), ""), D.Fuse()))
    assert low.added_tokens == () and low.special_ids == ()
    # without the reader's difference (HF configs present) nothing changes
    plain, lw2 = lower(replace(tok, meta=Metadata()), TARGETS[DEFAULT])
    assert plain.added_tokens == added and "sentencepiece-controls" not in lw2.applied
