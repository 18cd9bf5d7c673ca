"""The BERT vocab.txt reader (`readers/bert_vocab.py`): equal to the tokenizer.json beside it, its
config, malformed files."""

from __future__ import annotations

import json

import pytest

from mtok_export.errors import InputError
from mtok_export.ir import normalizers as N
from mtok_export.readers.bert_vocab import read_bert_vocab
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.verify.reference_tiktoken import hf_ir_reference

from tests.support.corpus_dirs import CORPUS
from tests.support.other_inputs import COMPARED, TEXTS, same, write

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")


@pytest.fixture(scope="module")
def bert():
    return read_bert_vocab(CORPUS / "bert-base-uncased")


def test_bert_vocab_equals_tokenizer_json(bert):
    b = read_model_dir(CORPUS / "bert-base-uncased")
    for f in ("model", "normalizer", "pre_tokenizer", "decoder", "post_processor", "added_tokens",
              "special_ids", "stop_ids", "chat"):
        assert getattr(bert, f) == getattr(b, f), f
    from mtok_export.verify.reference import hf_reference
    assert same(hf_ir_reference(bert, TEXTS), hf_reference(CORPUS / "bert-base-uncased", TEXTS, [])) == \
        {f: len(TEXTS) for f in COMPARED}


def test_bert_vocab_config_and_errors(tmp_path):
    write(tmp_path / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n##s\n")
    write(tmp_path / "tokenizer_config.json", json.dumps({"do_lower_case": False, "tokenize_chinese_chars": False}))
    tok = read_bert_vocab(tmp_path)
    assert tok.normalizer == N.BertNormalizer(True, False, None, False)
    assert tok.model.vocab["##s"] == 6 and tok.post_processor.single[0].id == "[CLS]"
    write(tmp_path / "vocab.txt", "")
    with pytest.raises(InputError, match="vocab.txt is empty"):
        read_bert_vocab(tmp_path)
    write(tmp_path / "vocab.txt", "[UNK]\n\nhello\n")
    with pytest.raises(InputError, match=r"vocab.txt line 2: blank line"):
        read_bert_vocab(tmp_path)
    write(tmp_path / "vocab.txt", b"[UNK]\n\xff\n")
    with pytest.raises(InputError, match=r"vocab.txt line 2: not UTF-8"):
        read_bert_vocab(tmp_path)
