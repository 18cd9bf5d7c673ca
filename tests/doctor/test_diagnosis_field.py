"""`mtok doctor` on field files: tokenizers MNN's own exporter wrote (`field/README.md` says how).

The committed ones run everywhere: the tiny ChatML .mtok (the exporter drops NFC and leaves the
specials out of the vocabulary, so they decode to nothing: the classes its Qwen file has) and a
legacy tokenizer.txt of SentencePiece's test model (wrong on everyday text).  Where MNN's exporter is
at hand (`MTOK_MNN_GIT`, a clone of alibaba/MNN, or the copy `scripts/bench_device.py` cached), field
files for corpus tokenizers are made here and diagnosed too; otherwise those tests skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.corpus_dirs import CORPUS

from mtok_export.doctor import diagnose
from mtok_export.doctor.finding import EDGE, EVERYDAY, HEALTHY

FIELD = Path(__file__).resolve().parent / "field"
SP_MODEL = CORPUS / "sp-test-models" / "test_model.model"
MNN_COMMIT = "4d40bdbd7efb73a58383bb5da867a6f41eb1776e"  # the exporter the committed files were made with
EXPORTER = "transformers/llm/export/utils/tokenizer.py"

pytestmark = pytest.mark.runtime


def _wrong(d) -> dict[str, str]:
    return {f.what: f.cause for f in d.findings if f.level == "wrong"}


def test_the_tiny_field_file_names_the_exporters_defects():
    d = diagnose(FIELD / "tiny-chatml" / "mnn" / "tokenizer.mtok", FIELD / "tiny-chatml" / "source", sweep=False)
    assert d.verdict == EDGE and d.exit_code == 1 and not d.identical
    wrong = _wrong(d)
    assert "drops NFC" in wrong["normalizer"]
    assert "decode to empty text" in wrong["vocab"]
    assert "--fix" in d.repair
    # the table: every special is matched inside user text by the runtime and by HF tokenizers alike
    rows = {r.text: r for r in d.surface}
    assert rows["<|im_end|>"].runtime and rows["<|im_end|>"].source and rows["<|im_end|>"].stop
    assert rows["<|im_end|>"].role == "turn end" and rows["<|im_start|>"].role == "role"


@pytest.mark.skipif(not SP_MODEL.is_file(), reason="shared corpus not found next to the repository")
def test_the_legacy_field_file_is_wrong_on_everyday_text():
    d = diagnose(FIELD / "sp-test-model" / "tokenizer.txt", SP_MODEL, robust=None, sweep=False)
    assert d.verdict == EVERYDAY
    everyday = d.measured["wrong"].get("everyday", 0)
    assert everyday > d.measured["totals"]["everyday"] // 2  # most ordinary strings come out wrong


def test_without_a_source_only_the_static_checks_run():
    d = diagnose(FIELD / "tiny-chatml" / "mnn" / "tokenizer.mtok")
    assert d.source is None and d.report is None and d.verdict == HEALTHY
    assert {f.what for f in d.findings} >= {"runtime", "template", "stop ids", "bos", "special tokens"}
    assert all(r.source is None for r in d.surface)


# ------------------------------------------------------------------ made here from a clone of MNN

def _exporter(tmp: Path) -> Path | None:
    """The folder holding MNN's exporter module at MNN_COMMIT: from `MTOK_MNN_GIT`, else the copy the
    device bench cached; None when neither is there."""
    from mtok_export.unicode.tables import cache_dir

    cached = cache_dir() / "mnn-exporter" / MNN_COMMIT
    if (cached / "tokenizer.py").is_file():
        return cached
    clone = os.environ.get("MTOK_MNN_GIT")
    if not clone:
        return None
    done = subprocess.run(["git", "-C", clone, "show", f"{MNN_COMMIT}:{EXPORTER}"], capture_output=True, timeout=60)
    if done.returncode != 0:
        return None
    (tmp / "exporter").mkdir()
    (tmp / "exporter" / "tokenizer.py").write_bytes(done.stdout)
    return tmp / "exporter"


def _field_file(exporter: Path, source: Path, out: Path) -> Path:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from tokenizer import LlmTokenizer; "
            "print(LlmTokenizer(sys.argv[2], model_type='').export(sys.argv[3]))")
    done = subprocess.run([sys.executable, "-c", code, str(exporter), str(source), str(out)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return Path(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name, verdict, causes", [
    ("qwen2.5-instruct", EDGE, ("normalizer", "vocab")),
    ("gpt2", HEALTHY, ()),
])
def test_field_files_made_here_from_corpus_tokenizers(tmp_path, name, verdict, causes):
    exporter = _exporter(tmp_path)
    if exporter is None:
        pytest.skip("MNN's exporter is not at hand: set MTOK_MNN_GIT to a clone of alibaba/MNN")
    if not (CORPUS / name).is_dir():
        pytest.skip("shared corpus not found next to the repository")
    file = _field_file(exporter, CORPUS / name, tmp_path / "out")
    d = diagnose(file, CORPUS / name, robust=None, sweep=False)
    assert d.verdict == verdict
    assert set(causes) <= set(_wrong(d))
