"""`mtok verify` end to end: passes on a good export, fails (exit 1, unexplained mismatches) on a
file whose vocab was tampered with, refuses (exit 3) a loss the policy does not accept, and
reports k/n per check in JSON."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS
from tests.support.commands import run_process
from tests.support.verify_jobs import CORPUS_ONLY

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "qwen-bpe"
pytestmark = pytest.mark.runtime  # each test exports and verifies on the runtime


def _written(tmp_path, tamper: bool) -> Path:
    low, _ = lower(read_model_dir(SAMPLE), TARGETS[DEFAULT])
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
    r = run_process("mtok", "verify", path, "--against", SAMPLE, "--report", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr  # its losses are edge: accepted by default
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["ok"] and report["verify"]["unexplained"] == 0
    assert {x["accepted_by"] for x in report["losses"]} == {"edge"}
    checks = {c["name"]: c for c in report["verify"]["checks"]}
    assert checks["raw ids"]["total"] >= 400 and checks["chat text"]["ok"] == checks["chat text"]["total"] > 0


def test_verify_strict_refuses_edge_losses(tmp_path):
    path = _written(tmp_path, tamper=False)
    r = run_process("mtok", "verify", path, "--against", SAMPLE, "--strict")
    assert r.returncode == 3
    assert "REFUSED" in r.stdout
    hint = r.stderr.split("--accept ", 1)[1].split()[0]
    assert set(hint.split(",")) == {"normalizer-approx", "regex-control", "special-not-in-header", "whitespace-class"}


def test_verify_fails_on_a_tampered_vocab(tmp_path):
    path = _written(tmp_path, tamper=True)
    r = run_process("mtok", "verify", path, "--against", SAMPLE, "--allow-lossy", "--json")
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert not report["ok"] and report["exit_code"] == 1 and report["verify"]["unexplained"] > 100
    assert any(c["explanation"] == [] and c["check"] == "raw ids" for c in report["verify"]["classes"])


def test_export_strict_read_is_reused_only_for_the_same_bytes(tmp_path, monkeypatch):
    """The export passes `checked` (the bytes it wrote and the chat fields its strict read gave):
    verify reads the file on disk again only when it holds other bytes, and then strictly."""
    import pytest

    from mtok_export.corpus import builtin_chats, builtin_corpus
    from mtok_export.errors import MtokError
    from mtok_export.mtok import check_written
    from mtok_export.verify import check
    from mtok_export.verify.references import choose

    src = read_model_dir(SAMPLE)
    low, lw = lower(src, TARGETS[DEFAULT])
    data = write_mtok(low)
    path = tmp_path / "tokenizer.mtok"
    job = check.VerifyJob(src, low, lw, list(builtin_corpus())[:20], list(builtin_chats())[:2], CORPUS_ONLY)
    reference = choose(src)
    path.write_bytes(data[:-7])  # the disk holds a truncated file, not what was checked
    with pytest.raises(MtokError):
        check.verify(job, path, reference, (data, check_written(data)))
    path.write_bytes(data)
    monkeypatch.setattr(check, "read_mnn_bytes", lambda *a, **k: pytest.fail("read again"))
    report = check.verify(job, path, reference, (data, check_written(data)))
    assert report.ok and report.check("stop ids").ok == report.check("stop ids").total > 0
