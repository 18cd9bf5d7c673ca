"""The added tokens a HF folder's configs declare (`readers/hf_added.py`), added as transformers adds
them on load: the reader's tokens, the reference's (`verify.reference.hf_tokenizer`) and transformers'
own `AutoTokenizer` (the independent oracle) agree on every config shape, and a tokenizer.json whose
tokenizer_config.json alone declares tokens (issue 31, class 1) exports and verifies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mtok_export.formats import read_source
from mtok_export.readers import hf_added
from tests.support.small_tokenizers import byte_level_folder


def _flags(content: str, **kw) -> dict:
    return {"content": content, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
            "special": False, **kw}


def tts_config(n: int) -> dict:
    """Issue 31's class 1 in small: seven `<tts_*>` tokens that only tokenizer_config.json's
    added_tokens_decoder lists, at the ids after the tokenizer.json's last one."""
    decoder = {str(n - 1): _flags("<|endoftext|>", special=True)}
    decoder.update({str(n + k): _flags(f"<tts_{k}>", special=k % 2 == 0) for k in range(7)})
    return {"tokenizer_class": "Qwen2Tokenizer", "eos_token": "<|endoftext|>", "added_tokens_decoder": decoder}


SHAPES = {
    "tts-only-in-config": dict(tcfg=tts_config),
    # a config id past a gap: tokenizers gives the next free id, whatever the config says
    "config-id-after-a-gap": dict(tcfg=lambda n: {"added_tokens_decoder": {str(n + 5): _flags("<x>", special=True)}}),
    # named roles, an extra special token and a model-specific `*_token` that no file lists
    "roles-not-in-the-file": dict(tcfg={"pad_token": "<pad>", "bos_token": "Hello", "image_token": "<img>",
                                        "additional_special_tokens": ["<extra>"]}),
    # the config's flags replace the tokenizer.json's for a token both hold
    "config-flags-win": dict(tcfg=lambda n: {"eos_token": "<|endoftext|>", "added_tokens_decoder": {
        str(n - 1): _flags("<|endoftext|>", lstrip=True, special=True)}}),
    # no added_tokens_decoder: special_tokens_map.json's roles and added_tokens.json
    "legacy-files": dict(tcfg={"eos_token": "<|endoftext|>"},
                         stm={"pad_token": {"content": "<pad>", "lstrip": False, "normalized": True, "rstrip": False,
                                            "single_word": False}},
                         added_json=lambda n: {"<new>": n, "<pad>": n + 1}),
    "mask-with-lstrip": dict(tcfg={"mask_token": {"__type": "AddedToken", "content": "<mask>", "lstrip": True,
                                                  "normalized": True, "rstrip": False, "single_word": False}}),
}
TEXTS = ["Hello <tts_1>world<tts_0> test", " <|endoftext|> a<|endoftext|>b", "x <pad>a Hello<extra> <img><mask> c <new>",
         "the <x> tokens"]


def _tokens(pairs) -> dict:
    return {i: (t.content, t.single_word, t.lstrip, t.rstrip, t.normalized, t.special) for i, t in pairs}


@pytest.mark.runtime  # transformers' AutoTokenizer (the oracle) is a heavy load
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_reader_reference_and_transformers_hold_the_same_added_tokens(shape, tmp_path):
    from transformers import AutoTokenizer

    from mtok_export.verify.reference import hf_tokenizer

    folder = byte_level_folder(tmp_path / shape, **SHAPES[shape])
    auto = AutoTokenizer.from_pretrained(str(folder))
    ref = hf_tokenizer(folder / "tokenizer.json")
    tok = read_source(folder)
    theirs = _tokens(auto.backend_tokenizer.get_added_tokens_decoder().items())
    assert _tokens(ref.get_added_tokens_decoder().items()) == theirs
    assert _tokens((t.id, t) for t in tok.added_tokens) == theirs
    for text in TEXTS:
        assert ref.encode(text, add_special_tokens=False).ids == auto(text, add_special_tokens=False)["input_ids"]


def test_only_the_configs_tokens_are_noted(tmp_path):
    folder = byte_level_folder(tmp_path, tcfg=lambda n: {"added_tokens_decoder": {str(n + 5): _flags("<x>")}})
    n = json.loads((folder / "tokenizer.json").read_text())["added_tokens"][0]["id"] + 1
    tok = read_source(folder)
    assert [t.id for t in tok.added_tokens if t.content == "<x>"] == [n]
    note = next(x for x in tok.meta.notes if "'<x>'" in x)
    assert f"the config says id {n + 5}" in note and "added_tokens_decoder" in note


def test_nothing_declared_adds_nothing():
    assert not hf_added.declared_added({}, {}, {}, {"<s>"})
    # a role the tokenizer.json already holds is re-added by the second call only (flags, special)
    d = hf_added.declared_added({"eos_token": "<s>"}, {}, {}, {"<s>"})
    assert not d.first and [(t.content, t.token.special, t.token.normalized) for t in d.then] == [("<s>", True, False)]


@pytest.mark.runtime
def test_tokens_only_in_the_config_export_and_verify(tmp_path, monkeypatch):
    """Class 1: the file carries the config's tokens and so does the reference; with the reference
    of the tokenizer.json alone (the old set-up, a mutant here) the same file fails verification."""
    from tokenizers import Tokenizer

    from mtok_export.errors import VerificationError
    from mtok_export.export import export
    from mtok_export.ir.tokenizer import NO_CHAT
    from mtok_export.job import Job
    from mtok_export.verify import reference

    folder = byte_level_folder(tmp_path / "src", tcfg=tts_config)
    job = Job.build(folder, chat_template=NO_CHAT)  # a tokenizer without a chat (`--no-chat`): the question is the tokens
    r = export(job, tmp_path / "out")
    assert r.verify.ok and r.verify.unexplained == 0
    assert {f"<tts_{k}>" for k in range(7)} <= {t.content for t in read_source(folder).added_tokens}

    monkeypatch.setattr(reference, "hf_tokenizer", lambda f: Tokenizer.from_file(str(f)))
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "cache"))  # the reference must be recomputed
    with pytest.raises(VerificationError) as e:
        export(job, tmp_path / "out2")
    assert e.value.result.verify.unexplained > 0
