"""`mtok verify` reads the file it checks once (`verify.pipeline.read_file`: one read, one strict parse,
handed to `prepare`, the identity check and `verify.check.verify`), and tells a `.mtok` from a
legacy `tokenizer.txt` by its header line, never by its name (issue 33)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mtok_export import api
from mtok_export.verify import pipeline as verification
from mtok_export.formats import read_source
from mtok_export.readers import mnn_file
from mtok_export.verify.pipeline import prepare
from tests.support.marks import needs_mnn

REPO = Path(__file__).resolve().parents[1]
QWEN = REPO / "samples" / "qwen-bpe"
BERT = REPO / "samples" / "bert-wordpiece"


def _exported(tmp_path: Path, sample: Path = QWEN, **options) -> Path:
    src = tmp_path / "model"
    shutil.copytree(sample, src)
    return api.export(src, src / "mnn", allow_lossy=True, verify_on_runtime=False, **options).path


def _count_parses(monkeypatch, file: Path) -> list:
    """Every strict parse of `file`'s bytes (either MNN format) and every read of the file itself."""
    data = file.read_bytes()
    seen = []
    for name in ("read_mtok", "read_legacy"):
        real = getattr(mnn_file, name)

        def counted(buf, *a, _real=real, **k):
            if bytes(buf) == data:
                seen.append("parse")
            return _real(buf, *a, **k)
        monkeypatch.setattr(mnn_file, name, counted)
    real_read = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda p: (seen.append("read") if p == file else None) or real_read(p))
    return seen


def test_prepare_parses_the_file_once(tmp_path, monkeypatch):
    out = _exported(tmp_path)
    seen = _count_parses(monkeypatch, out)
    checked = verification.read_file(out)
    prepare(out, checked=checked)  # the identity check included: the file is the source's bytes
    assert seen == ["read", "parse"]
    seen.clear()
    prepare(out)  # without the caller's read: it reads the file itself, once
    assert seen == ["read", "parse"]


@pytest.mark.runtime
@needs_mnn
def test_verify_parses_the_file_once(tmp_path, monkeypatch):
    """The whole `mtok verify`: one strict parse; the file is read again only to compare its bytes
    with what was parsed, just before the runtime loads it (before: two strict parses, three reads)."""
    out = _exported(tmp_path)
    seen = _count_parses(monkeypatch, out)
    result = api.verify(out, sweep=False, robust=None)
    assert result.report.ok
    assert seen.count("parse") == 1 and seen.count("read") == 2


@pytest.mark.parametrize("sample, fmt, written, renamed", [
    (QWEN, "mtok", "tokenizer.mtok", "tokenizer.txt"), (BERT, "txt", "tokenizer.txt", "tokenizer.mtok")])
def test_an_mnn_file_is_known_by_content_whatever_its_name(tmp_path, sample, fmt, written, renamed):
    out = _exported(tmp_path, sample, fmt=fmt)
    assert out.name == written
    moved = out.with_name(renamed)
    out.rename(moved)
    want = "mtok" if fmt == "mtok" else "legacy-txt"
    assert read_source(moved).provenance.format == want  # read
    _, _, _, _, job = prepare(moved, against=tmp_path / "model")  # verify: no manifest beside it now
    assert job.fmt == fmt
    assert verification.output_format(moved.read_bytes()) == fmt
