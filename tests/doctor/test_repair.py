"""`mtok doctor --against SRC --fix` on an MNN model folder holding a field file (MNN's exporter's,
`field/README.md`) with an llm_config.json jinja block: the verified file written in place, the old
one kept as NAME.orig (a second fix keeps it and writes NAME.orig.1), the jinja block set to what the
new file embeds, and the repaired folder diagnosed healthy; the exit codes, --json, --report and
--junit as a user gets them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.support.commands import run_here, run_process

from mtok_export.doctor import diagnose
from mtok_export.doctor.finding import HEALTHY
from mtok_export.doctor.repair import free_name, repair

FIELD = Path(__file__).resolve().parent / "field" / "tiny-chatml"
SOURCE = FIELD / "source"


def _folder(tmp_path: Path) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    shutil.copy(FIELD / "mnn" / "tokenizer.mtok", d / "tokenizer.mtok")
    (d / "config.json").write_text(json.dumps({"llm_model": "llm.mnn", "llm_weight": "llm.mnn.weight",
                                               "tokenizer_file": "tokenizer.mtok"}))
    template = json.loads((SOURCE / "tokenizer_config.json").read_text())["chat_template"]
    (d / "llm_config.json").write_text(json.dumps({"model_type": "qwen2", "jinja": {
        "chat_template": "Note: " + template, "bos": "", "eos": "<|im_end|>"}}, indent=4))  # renders differently
    return d


def test_free_name_never_clobbers(tmp_path):
    p = tmp_path / "tokenizer.mtok.orig"
    assert free_name(p) == p
    p.write_text("x")
    assert free_name(p) == tmp_path / "tokenizer.mtok.orig.1"


@pytest.mark.runtime
def test_fix_repairs_a_model_folder(tmp_path):
    d = _folder(tmp_path)
    old = (d / "tokenizer.mtok").read_bytes()
    old_llm = (d / "llm_config.json").read_text()
    sick = diagnose(d, SOURCE, robust=None, sweep=False)
    assert sick.exit_code == 1
    assert any(f.what == "chat_template" and "llm_config.json's jinja block" in f.cause
               for f in sick.findings if f.level == "wrong")
    done = repair(sick)
    assert done["verified"] and (d / "tokenizer.mtok.orig").read_bytes() == old
    assert Path(done["llm_config_kept"]).read_text() == old_llm
    jinja = json.loads((d / "llm_config.json").read_text())["jinja"]
    assert not jinja["chat_template"].startswith("Note: ") and jinja["eos"] == "<|im_end|>"
    assert json.loads((d / "llm_config.json").read_text())["model_type"] == "qwen2"  # other keys kept
    well = diagnose(d, SOURCE, robust=None, sweep=False)
    assert well.verdict == HEALTHY and well.identical and not well.repair
    again = repair(well)  # nothing clobbered: the first backup stays
    assert again["kept"].endswith("tokenizer.mtok.orig.1") and (d / "tokenizer.mtok.orig").read_bytes() == old


@pytest.mark.runtime
def test_the_command(tmp_path):
    d = _folder(tmp_path)
    r = run_process("mtok", "doctor", d / "tokenizer.mtok", "--against", SOURCE, "--json", "--no-robust", "--report",
                    tmp_path / "r.json", "--junit", tmp_path / "j.xml")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "wrong on edge inputs" and "--fix" in doc["repair"]
    assert json.loads((tmp_path / "r.json").read_text())["exit_code"] == 1
    assert "<failure" in (tmp_path / "j.xml").read_text()
    r = run_process("mtok", "doctor", d, "--against", SOURCE, "--fix", "--no-robust")
    assert r.returncode == 0, r.stderr
    assert "fixed:" in r.stdout and (d / "tokenizer.mtok.orig").is_file()
    r = run_process("mtok", "doctor", d, "--against", SOURCE, "--fix", "--no-robust")  # healthy now: left as it is
    assert r.returncode == 0 and "nothing to fix" in r.stdout, r.stdout + r.stderr
    assert not (d / "tokenizer.mtok.orig.1").exists()


def test_bad_input_is_exit_2(monkeypatch, capsys, tmp_path):
    (tmp_path / "x.mtok").write_bytes(b"not a tokenizer")
    code, _, err = run_here(monkeypatch, capsys, "mtok", "doctor", str(tmp_path / "x.mtok"))
    assert code == 2 and "error:" in err
    code, _, err = run_here(monkeypatch, capsys, "mtok", "doctor", str(tmp_path / "x.mtok"), "--fix")
    assert code == 2 and "--fix needs --against" in err
