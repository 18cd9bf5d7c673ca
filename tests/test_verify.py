"""`mtok verify` end to end: passes on a good export, fails (exit 1, unexplained mismatches) on a
file whose vocab was tampered with, and reports k/n per check in JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "qwen-bpe"


def mtok(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtok_export", *map(str, args)], capture_output=True, text=True)


def _written(tmp_path, tamper: bool) -> Path:
    low, _ = lower(read_model_dir(SAMPLE))
    if tamper:  # swap the ids of two frequent tokens: still a valid file, but wrong ids
        vocab = dict(low.model.vocab)
        vocab["e"], vocab["t"] = vocab["t"], vocab["e"]
        low = replace(low, model=replace(low.model, vocab=vocab))
    path = tmp_path / ("bad" if tamper else "good") / "tokenizer.mtok"
    path.parent.mkdir()
    path.write_bytes(write_mtok(low))
    return path


def test_verify_passes_with_accepted_losses_and_reports_json(tmp_path):
    path = _written(tmp_path, tamper=False)
    r = mtok("verify", path, "--against", SAMPLE, "--allow-lossy", "--json", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["ok"] and report["unexplained"] == 0
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["raw ids"]["total"] >= 400 and checks["chat text"]["ok"] == checks["chat text"]["total"] > 0


def test_verify_without_accepting_losses_fails(tmp_path):
    path = _written(tmp_path, tamper=False)
    r = mtok("verify", path, "--against", SAMPLE)
    assert r.returncode == 1
    assert "losses were not accepted" in r.stdout


def test_verify_fails_on_a_tampered_vocab(tmp_path):
    path = _written(tmp_path, tamper=True)
    r = mtok("verify", path, "--against", SAMPLE, "--allow-lossy", "--json", "-")
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert not report["ok"] and report["unexplained"] > 100
    assert any(c["explanation"] is None and c["check"] == "raw ids" for c in report["classes"])
