"""MNN model folders (issue 16): llm_config.json's jinja block is what the engine renders, so the export
keeps it consistent with the file it writes, and verification runs through it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mtok_export import model_folder
from mtok_export.errors import InputError
from tests.support.commands import run_process

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "samples" / "llama-spm"
ACCEPT = REPO / "samples" / "accept" / "llama-spm.txt"


def exporter_folder(d: Path, tokenizer_file: str = "tokenizer.mtok") -> str:
    """A folder as MNN's exporter lays it out, with an older template in llm_config.json's jinja block."""
    d.mkdir(parents=True, exist_ok=True)
    src = json.loads((SAMPLE / "tokenizer_config.json").read_text())
    old = src["chat_template"].replace("'[INST] '", "'[INST]  '")
    (d / "config.json").write_text(json.dumps({"llm_model": "llm.mnn", "llm_weight": "llm.mnn.weight",
                                               "tokenizer_file": tokenizer_file, "backend_type": "cpu"}, indent=4))
    (d / "llm_config.json").write_text(json.dumps(
        {"hidden_size": 64, "layer_nums": 2, "jinja": {"chat_template": old, "bos": "<s>", "eos": "</s>",
                                                       "context": {"date_string": "1 Dec 2026"}},
         "attention_mask": "float", "is_visual": False}, indent=4) + "\n")
    return old


def export(*args):
    """mtok-export of the sample with its accept file, in a child process."""
    return run_process("mtok-export", "--path", SAMPLE, "--accept-file", ACCEPT, *args)


def test_find_ignores_a_huggingface_config(tmp_path):
    (tmp_path / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}')
    assert model_folder.find(tmp_path) is None
    (tmp_path / "llm_config.json").write_text("{")
    with pytest.raises(InputError, match="llm_config.json: not valid JSON"):
        model_folder.find(tmp_path)


def test_with_jinja_keeps_keys_order_and_indent(tmp_path):
    exporter_folder(tmp_path)
    folder = model_folder.find(tmp_path)
    text, previous = model_folder.with_jinja(folder, "T", "", "</s>")
    data = json.loads(text)
    assert list(data) == ["hidden_size", "layer_nums", "jinja", "attention_mask", "is_visual"]
    assert data["jinja"] == {"chat_template": "T", "bos": "", "eos": "</s>", "context": {"date_string": "1 Dec 2026"}}
    assert previous["bos"] == "<s>" and text.splitlines()[1].startswith('    "hidden_size"')


def test_tokenizer_file_warnings(tmp_path):
    exporter_folder(tmp_path, "/abs/tokenizer.mtok")
    folder = model_folder.find(tmp_path)
    assert "absolute" in model_folder.check_tokenizer_file(folder, tmp_path / "tokenizer.mtok")[0]
    exporter_folder(tmp_path, "tokenizer.txt")
    folder = model_folder.find(tmp_path)
    assert "loads tokenizer_file 'tokenizer.txt'" in model_folder.check_tokenizer_file(folder, tmp_path / "tokenizer.mtok")[0]


@pytest.mark.runtime
def test_export_updates_the_jinja_block_and_verifies_through_it(tmp_path):
    old = exporter_folder(tmp_path)
    before = json.loads((tmp_path / "llm_config.json").read_text())
    r = export("--output", tmp_path, "--report", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    after = json.loads((tmp_path / "llm_config.json").read_text())
    assert list(after) == list(before) and {k: v for k, v in after.items() if k != "jinja"} == \
        {k: v for k, v in before.items() if k != "jinja"}
    template = json.loads((SAMPLE / "tokenizer_config.json").read_text())["chat_template"]
    assert after["jinja"]["chat_template"] == template and after["jinja"]["context"] == before["jinja"]["context"]
    manifest = json.loads((tmp_path / "tokenizer.mtok.json").read_text())
    assert manifest["llm_config"]["action"] == "updated"
    assert manifest["llm_config"]["previous_jinja"]["chat_template"] == old
    checks = {c["name"]: c for c in json.loads((tmp_path / "r.json").read_text())["verify"]["checks"]}
    assert checks["chat text"]["ok"] == checks["chat text"]["total"] > 0
    inspect = run_process("mtok", "inspect", tmp_path)
    assert "engine: loads tokenizer.mtok (named by config.json)" in inspect.stdout
    assert "chat_template equals the embedded one" in inspect.stdout


@pytest.mark.runtime
def test_keep_llm_config_verifies_what_the_engine_renders(tmp_path):
    exporter_folder(tmp_path)
    before = (tmp_path / "llm_config.json").read_bytes()
    r = export("--output", tmp_path, "--keep-llm-config", "--report", tmp_path / "r.json")
    assert r.returncode == 1, r.stdout + r.stderr
    assert (tmp_path / "llm_config.json").read_bytes() == before
    report = json.loads((tmp_path / "r.json").read_text())
    chat = next(c for c in report["verify"]["classes"] if c["check"] == "chat text")
    assert chat["explanation"] == [] and "[INST]  " in chat["example"]["got"]
    assert not (tmp_path / "tokenizer.mtok").exists()


@pytest.mark.runtime
def test_verify_a_model_folder_renders_through_its_llm_config(tmp_path):
    exporter_folder(tmp_path)
    r = export("--output", tmp_path, "--keep-llm-config", "--allow-lossy")  # fails: kept as .rejected
    assert r.returncode == 1
    (tmp_path / "tokenizer.mtok.rejected").rename(tmp_path / "tokenizer.mtok")
    r = run_process("mtok", "verify", tmp_path, "--against", SAMPLE, "--allow-lossy")
    assert r.returncode == 1 and "chat text" in r.stdout and "UNEXPLAINED" in r.stdout
    model_folder_cfg = json.loads((tmp_path / "llm_config.json").read_text())
    del model_folder_cfg["jinja"]  # without the block the engine renders the embedded template
    (tmp_path / "llm_config.json").write_text(json.dumps(model_folder_cfg))
    r = run_process("mtok", "verify", tmp_path, "--against", SAMPLE, "--allow-lossy")
    assert r.returncode == 0, r.stdout + r.stderr
