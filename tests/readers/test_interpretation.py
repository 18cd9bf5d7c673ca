"""One interpretation of a folder (`readers/interpretation.py`), read by both sides: a bare vocab.txt's
casing is decided once, the reader and the reference (transformers' BertTokenizer) both follow it,
the manifest records it, and a reader that decides on its own is one finding with its cause (issue
31, class 2: a cased BERT read lowercased against a cased reference, 9,176 mismatches)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from mtok_export.formats import read_source
from mtok_export.readers import bert_vocab
from mtok_export.readers.interpretation import bert_casing, disagreements
from tests.support.small_tokenizers import bare_vocab

def _id(directory: Path, token: str) -> int:
    return (directory / "vocab.txt").read_text(encoding="utf-8").split("\n").index(token)


def test_casing_is_decided_once():
    assert bert_casing({"[CLS]": 0, "Hello": 1}, {}).value is False
    assert bert_casing({"[CLS]": 0, "hello": 1}, {}).value is True
    # a config that says wins over the vocabulary
    said = bert_casing({"Hello": 1}, {"do_lower_case": True})
    assert said.value is True and said.how == "do_lower_case in tokenizer_config.json"


@pytest.mark.parametrize("cased", [True, False])
def test_the_reader_and_the_reference_follow_the_same_casing(tmp_path, cased):
    from mtok_export.verify.references import choose

    folder = bare_vocab(tmp_path, cased)
    tok = read_source(folder)
    it = tok.meta.interpretation
    assert it.lowercase.value is (not cased) and "decided from the vocabulary" in it.lowercase.how
    assert it.source == str(folder / "vocab.txt") and it.format == "bert-vocab.txt"
    assert tok.normalizer.lowercase is (not cased) and not disagreements(tok)
    chosen = choose(tok)
    assert ("uncased" not in chosen.detail) is cased
    ids = chosen.run(["Hello world"], []).engine[0]
    hello = "Hello" if cased else "hello"
    assert ids == [_id(folder, "[CLS]"), _id(folder, hello), _id(folder, "world"), _id(folder, "[SEP]")]


def _decides_on_its_own(parsed):
    """A broken BERT reader: lowercases whatever the folder's interpretation says (the old reader's
    default), while the interpretation it records says cased."""
    n = parsed.normalizer
    return dataclasses.replace(parsed, normalizer=dataclasses.replace(n, lowercase=True))


def test_a_reader_deciding_on_its_own_is_named(tmp_path, monkeypatch):
    real = bert_vocab.parse_bert_vocab
    monkeypatch.setattr(bert_vocab, "parse_bert_vocab", lambda *a, **k: _decides_on_its_own(real(*a, **k)))
    tok = read_source(bare_vocab(tmp_path, cased=True))
    [(component, cause)] = disagreements(tok)
    assert component == "normalizer"
    assert "the folder's interpretation is cased" in cause and "the reader's normalizer lowercases" in cause


@pytest.mark.runtime
@pytest.mark.parametrize("cased", [True, False])
def test_bare_vocab_txt_exports_and_verifies(tmp_path, cli, cased):
    folder = bare_vocab(tmp_path / "src", cased)
    # the losses every BERT has on MNN 3.6 (stream decode, the [SEP] suffix) are accepted: the question
    # here is the casing, which no loss may explain
    code, out, err = cli("mtok-export", "--path", folder, "-o", tmp_path / "out", "--allow-lossy")
    assert code == 0, out + err
    assert "verify passed" in out
    manifest = json.loads((tmp_path / "out/tokenizer.mtok.json").read_text(encoding="utf-8"))
    assert manifest["interpretation"]["lowercase"]["value"] is (not cased)


@pytest.mark.runtime
def test_the_verification_catches_a_reader_deciding_on_its_own(tmp_path, cli, monkeypatch):
    """The mutant fails (exit 1) with one finding that names the cause, not a mismatch per input."""
    real = bert_vocab.parse_bert_vocab
    monkeypatch.setattr(bert_vocab, "parse_bert_vocab", lambda *a, **k: _decides_on_its_own(real(*a, **k)))
    code, out, err = cli("mtok-export", "--path", bare_vocab(tmp_path / "src", cased=True), "-o", tmp_path / "out",
                         "--allow-lossy", "--report", tmp_path / "report.json")
    assert code == 1, out + err
    assert "interpretation: 1 mismatch(es)" in out and "the folder's interpretation is cased" in out
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["verify"]["unexplained"] == 1


# ------------------------------------------------------------------ usage: does the model decode?
# (DESIGN 4.2, issue 39: a decode difference cannot reach the user of an encoder)

def _usage(tmp_path, mcfg=None, tcfg=None, files=(), **tokenizer):
    from mtok_export.readers.interpretation import decide_usage

    for name in files:
        (tmp_path / name).write_text("{}")
    args = {"wordpiece": False, "encoder_post": "", "clip": False, **tokenizer}
    return decide_usage(tmp_path, mcfg or {}, tcfg or {}, **args)


@pytest.mark.parametrize("mcfg, tcfg, files, tokenizer, value, how", [
    ({"model_type": "bert", "architectures": ["BertForMaskedLM"]}, {}, (), {}, "encoder", "model_type bert"),
    ({"architectures": ["XForSequenceClassification"]}, {}, (), {}, "encoder", "XForSequenceClassification"),
    ({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"]}, {}, (), {}, "generator", "Qwen2ForCausalLM"),
    # a generator's head wins over an encoder's model type (a decoder built on an encoder family)
    ({"model_type": "bert", "architectures": ["BertLMHeadModel"]}, {}, (), {}, "generator", "BertLMHeadModel"),
    ({}, {}, ("modules.json",), {}, "encoder", "sentence-transformers"),
    ({}, {"tokenizer_class": "XLMRobertaTokenizerFast"}, (), {}, "encoder", "XLMRobertaTokenizerFast"),
    ({}, {"tokenizer_class": "BartTokenizer"}, (), {"encoder_post": "RobertaProcessing"}, "generator", "Bart"),
    ({}, {"tokenizer_class": "PreTrainedTokenizerFast"}, (), {"wordpiece": True}, "encoder", "WordPiece"),
    ({}, {}, (), {"encoder_post": "BertProcessing"}, "encoder", "BertProcessing"),
    ({}, {}, (), {"clip": True}, "encoder", "CLIP"),
    ({"model_type": "t5"}, {}, (), {}, "generator", "model_type t5"),
    ({}, {}, (), {}, "generator", "nothing names an encoder"),
])
def test_usage_is_decided_from_the_folder(tmp_path, mcfg, tcfg, files, tokenizer, value, how):
    said = _usage(tmp_path, mcfg, tcfg, files, **tokenizer)
    assert said.value == value and how in said.how


@pytest.mark.parametrize("name, value", [("bert-base-uncased", "encoder"), ("roberta-base", "encoder"),
                                         ("t5-small", "generator"), ("gpt2", "generator"),
                                         ("whisper-large-v3", "generator"), ("qwen2.5-instruct", "generator")])
def test_corpus_folders_record_their_usage(corpus_dir, name, value):
    it = read_source(corpus_dir / name).meta.interpretation
    assert it.usage.value == value and it.to_json()["usage"]["value"] == value
