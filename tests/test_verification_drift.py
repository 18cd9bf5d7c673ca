"""`mtok verify FILE --template-drift` (issue 32): the chat template a file embeds (its manifest's
sha256 and Hub revision) against the one its source gives now.  Offline: a Hub cache in the layout
huggingface_hub reads (as tests/test_hub.py builds it) whose `main` ref moves to a commit with a
re-issued template is named as drift; a move that leaves the template alone is not."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.support.marks import runtime
from tests.test_hub import SAMPLES, SHA1, SHA2, add_snapshot, run

QWEN = SAMPLES / "qwen-bpe"
SHA3 = "3" * 40


def _files(template: str | None = None) -> dict:
    config = json.loads((QWEN / "tokenizer_config.json").read_text("utf-8"))
    if template is not None:
        config["chat_template"] = template
    return {"tokenizer.json": QWEN / "tokenizer.json", "config.json": QWEN / "config.json",
            "tokenizer_config.json": json.dumps(config)}


def _move_main(cache: Path, sha: str):
    (cache / "models--acme--chat" / "refs" / "main").write_text(sha)


@runtime
def test_a_reissued_template_is_named_and_an_unchanged_one_is_not(tmp_path):
    cache = tmp_path / "hub"
    add_snapshot(cache, "acme/chat", SHA1, _files())
    env = {"HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
           "PATH": "/usr/bin:/bin", "MTOK_CACHE_DIR": str(tmp_path / "mtok-cache")}
    r = run("mtok-export", "--path", "acme/chat", "--output", tmp_path / "out", "--no-verify", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out" / "tokenizer.mtok"
    manifest = json.loads((tmp_path / "out" / "tokenizer.mtok.json").read_text())
    original = json.loads(_files()["tokenizer_config.json"])["chat_template"]
    assert manifest["chat_template"]["original_sha256"] == hashlib.sha256(original.encode()).hexdigest()
    assert manifest["chat_template"]["origin"]["kind"] == "configs" and manifest["hub"]["sha"] == SHA1

    r = run("mtok", "verify", out, "--template-drift", env=env, cwd=tmp_path)
    assert r.returncode == 0 and "unchanged" in r.stdout, r.stdout + r.stderr

    add_snapshot(cache, "acme/chat", SHA3, {**_files(), "tokenizer.json": QWEN / "tokenizer.json"}, refs=())
    _move_main(cache, SHA3)  # a new commit, the same template: no drift
    r = run("mtok", "verify", out, "--template-drift", "--json", env=env, cwd=tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["current"]["revision"] == SHA3, r.stderr

    add_snapshot(cache, "acme/chat", SHA2, _files(original.replace("<|im_start|>", "<|im_start|> ")), refs=())
    _move_main(cache, SHA2)  # the template re-issued after the export
    r = run("mtok", "verify", out, "--template-drift", env=env, cwd=tmp_path)
    assert r.returncode == 1 and "re-issued" in r.stdout and SHA2 in r.stdout and SHA1 in r.stdout, r.stdout
    r = run("mtok", "verify", out, "--template-drift", "--json", env=env, cwd=tmp_path)
    d = json.loads(r.stdout)
    assert d["drift"] and d["recorded"]["revision"] == SHA1 and d["current"]["revision"] == SHA2


def test_no_manifest_is_an_error(tmp_path):
    from mtok_export.errors import InputError
    from mtok_export.verify.pipeline import template_drift

    (tmp_path / "tokenizer.mtok").write_bytes(b"x")
    with pytest.raises(InputError, match="no manifest"):
        template_drift(tmp_path / "tokenizer.mtok")
