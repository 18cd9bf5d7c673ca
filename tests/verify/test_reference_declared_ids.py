"""A ChatGLM3-shaped folder (issue 31, class 5: chat ids unexplained): a SentencePiece BPE model, a
tokenizer class that is the repository's own code (`auto_map`), and tokenizer_config.json declaring
the chat template's tokens past gaps after the model's pieces ([gMASK] n+1, sop n+3, <|user|> n+6,
<|assistant|> n+7, as ChatGLM3's code numbers its specials after [MASK], [sMASK], eop, <|system|>).

transformers, not running that code, gives those tokens the next free ids (n..n+3): its chat ids
disagreed with the declared ids the model's code and the file use, and HF built from our reading
(the projections attribution runs) renumbered them the same way.  Now the chat reference maps the
generic fallback's ids to the declared ones (`verify.reference._declared_ids`), the HF form of the IR
keeps them (`lower.hf_equivalent`), and the lowering puts them in the vocab at their ids with the
ids between filled (`lower.models`), so they decode."""

from __future__ import annotations

import io
import json

import pytest

from mtok_export.lower.hf_equivalent import hf_equivalent
from mtok_export.formats import read_source
from mtok_export.verify.reference_tiktoken import hf_from_ir

from tests.support.commands import run_process
from tests.support.corpus_dirs import SAMPLES
from tests.support.marks import needs_mnn

TEMPLATE = ("{% for message in messages %}{% if loop.first %}[gMASK]sop<|{{ message['role'] }}|>\n {{ message['content'] }}"
            "{% else %}<|{{ message['role'] }}|>\n {{ message['content'] }}{% endif %}{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")
DECLARED = {1: "[gMASK]", 3: "sop", 6: "<|user|>", 7: "<|assistant|>"}  # offsets past the model's pieces


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    import sentencepiece as spm

    lines = (SAMPLES / "text.txt").read_text(encoding="utf-8").splitlines()
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines * 3), model_writer=buf, model_type="bpe",
                                   vocab_size=2000, byte_fallback=True, character_coverage=0.9995, minloglevel=3,
                                   remove_extra_whitespaces=False, normalization_rule_name="identity")
    d = tmp_path_factory.mktemp("glm3")
    (d / "tokenizer.model").write_bytes(buf.getvalue())
    n = spm.SentencePieceProcessor(model_proto=buf.getvalue()).vocab_size()
    entry = lambda c: {"content": c, "lstrip": False, "normalized": True, "rstrip": False,  # noqa: E731
                       "single_word": False, "special": False}
    (d / "tokenizer_config.json").write_text(json.dumps({
        "added_tokens_decoder": {str(n + k): entry(c) for k, c in DECLARED.items()},
        "auto_map": {"AutoTokenizer": ["tokenization_chatglm.ChatGLMTokenizer", None]},
        "chat_template": TEMPLATE, "eos_token": "</s>", "pad_token": "<unk>", "unk_token": "<unk>",
        "padding_side": "left", "remove_space": False, "tokenizer_class": "ChatGLMTokenizer"}), encoding="utf-8")
    return d, n


def test_hf_form_keeps_declared_ids(folder):
    d, n = folder
    tok = read_source(d)
    assert {t.id: t.content for t in tok.added_tokens if t.id >= n} == {n + k: c for k, c in DECLARED.items()}
    hf = hf_from_ir(tok)  # tokenizers itself, on the HF form of our reading
    assert [hf.token_to_id(c) for c in DECLARED.values()] == [n + k for k in DECLARED]
    assert hf.encode("[gMASK]sop<|user|>\n hi<|assistant|>", add_special_tokens=False).ids[:3] == [n + 1, n + 3, n + 6]
    form = hf_equivalent(tok).model.vocab
    fillers = {i for t, i in form.items() if t not in tok.model.vocab and t not in DECLARED.values()}
    assert fillers == {n, n + 2, n + 4, n + 5}  # the ids between, unreachable entries


@pytest.mark.runtime  # transformers
def test_chat_reference_uses_declared_ids(folder):
    from mtok_export.verify.reference import _chat_tokenizer, _chats
    from mtok_export.corpus import builtin_chats

    d, n = folder
    fallback = _chat_tokenizer(d)
    assert fallback.convert_tokens_to_ids("[gMASK]") == n  # transformers' own numbering without the code
    chat = next(c for c in builtin_chats() if c.add_generation_prompt and not c.tools)
    _texts, ids = _chats(d, [chat], tok=fallback)
    assert ids[0][:3] == [n + 1, n + 3, n + 6] and ids[0][-1] == n + 7


@needs_mnn
def test_export_explains_every_mismatch(folder, tmp_path):
    """Exit 3 (not 1) naming the SentencePiece reference's known differences; accepted, exit 0 with
    every chat check passing."""
    d, _ = folder
    r = run_process("mtok-export", "--path", str(d), "--output", str(tmp_path / "a"), "--json")
    assert r.returncode == 3, r.stdout[-2000:] + r.stderr
    report = json.loads(r.stdout)
    assert report["verify"]["unexplained"] == 0
    r = run_process("mtok-export", "--path", str(d), "--output", str(tmp_path / "b"), "--json", "--allow-lossy")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    checks = {c["name"]: c for c in json.loads(r.stdout)["verify"]["checks"]}
    assert all(checks[x]["ok"] == checks[x]["total"] > 0 for x in ("chat text", "chat ids", "chat paths"))
    assert "added-not-decodable" not in r.stdout
