"""The checks `mtok doctor` runs without a source, each shown to catch what it is for on a field file
(MNN's exporter's, `field/README.md`) with the defect planted, and to pass the file as it is."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mtok_export.doctor import static
from mtok_export.model_folder import find
from mtok_export.readers.mnn_file import read_mnn_file

FIELD = Path(__file__).resolve().parent / "field" / "tiny-chatml" / "mnn" / "tokenizer.mtok"


def _tok():
    return read_mnn_file(FIELD, strict=True)[0]


def _levels(findings, what: str) -> list[str]:
    return [f.level for f in findings if f.what == what]


def test_the_field_file_passes():
    found = static.check(_tok(), None, legacy=False)
    assert not [f for f in found if f.level == "warning"], [f.cause for f in found]
    assert "needs MNN >= 3.5" in found[0].cause


def test_an_eos_that_is_no_stop_id():
    tok = _tok()
    found = static.check(replace(tok, stop_ids=()), None, legacy=False)
    assert "warning" in _levels(found, "stop ids")
    assert any("not a stop id" in f.cause for f in found)


def test_a_turn_end_the_template_writes_that_is_no_stop_id():
    tok = _tok()
    other = replace(tok, stop_ids=(357,), chat=replace(tok.chat, eos_token="<|endoftext|>"))  # <|im_end|> ends turns
    found = static.check(other, None, legacy=False)
    assert any("'<|im_end|>'" in f.cause and "runs on past its turn" in f.cause for f in found)


def test_a_template_the_runtime_renders_otherwise():
    tok = _tok()
    bad = replace(tok, chat=replace(tok.chat, text="{% for m in messages %}{{ m | tojson }}{% endfor %}"))
    assert "warning" in _levels(static.check(bad, None, legacy=False), "template")
    gone = replace(tok, chat=replace(tok.chat, text=""))
    assert "warning" in _levels(static.check(gone, None, legacy=False), "template")


def test_two_bos():
    tok = _tok()
    bos = replace(tok, prefix_ids=(357,), chat=replace(tok.chat, bos_token="<|endoftext|>",
                                                         text="{{ bos_token }}" + tok.chat.text))
    assert "warning" in _levels(static.check(bos, None, legacy=False), "bos")


def test_the_folders_jinja_block_is_what_is_linted(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"tokenizer_file": "tokenizer.mtok"}))
    (tmp_path / "llm_config.json").write_text(json.dumps({"jinja": {
        "chat_template": "{{ messages | tojson }}", "eos": "<|nothing|>"}}))
    found = static.check(_tok(), find(tmp_path), legacy=False)
    assert any("llm_config.json jinja" in f.cause for f in found if f.what == "template" and f.level == "warning")
    assert any("<|nothing|>" in f.cause and "no token" in f.cause for f in found)


@pytest.mark.runtime  # it asks an interpreter for the runtime (one without MNN)
def test_without_a_runtime_the_static_checks_still_run(tmp_path):
    """An interpreter without MNN: the special-token surface is not measured, said so, not a defect."""
    import sys

    from mtok_export.doctor import diagnose

    d = diagnose(FIELD, python=Path(sys.executable).with_name("no-such-python"))
    assert d.verdict == "healthy" and not d.surface
    assert any(f.what == "special tokens" and "not measured" in f.cause for f in d.findings)
