"""The documents slice in verification (verify/pipeline.py, documents.py): a loss that changes long
real documents is measured as everyday text, and a machine without the documents says the slice did
not run.  Shown on the two losses the issue names: a run of dashes in a markdown table changes T5's
ids (unigram-ties), code that mentions `<s>` or `<unk>` changes Llama-2's (added-normalized)."""

from __future__ import annotations

import importlib.util

import pytest

from mtok_export import documents
from mtok_export.corpus import Sample
from mtok_export.export import export
from mtok_export.job import Job
from mtok_export.verify.pipeline import DOCUMENTS_MISSING
from tests.support.corpus_dirs import CORPUS

pytestmark = [pytest.mark.runtime,
              pytest.mark.skipif(importlib.util.find_spec("MNN") is None, reason="MNN is not installed"),
              pytest.mark.skipif(not (CORPUS / "t5-small").is_dir(), reason="shared corpus not present")]

TABLE = "| option | meaning |\n|--------|---------|\n| -v | verbose |\n| -q | quiet |\n"
CODE = 'if (piece == "<unk>") return "<s>";\nstatic const char kUnk[] = "<unk>";\n'
DOCS = tuple(Sample(f"document-{name}@{k}", text, ("document",))
             for name, text in (("table", TABLE * 20), ("code", CODE * 20)) for k in range(2))


def _report(src, docs, monkeypatch, tmp_path):
    monkeypatch.setattr(documents, "load", lambda: docs)
    job = Job.build(src, allow_lossy=True, sweep=False, robust=None)
    return export(job, tmp_path / f"out-{docs is None}").verify


@pytest.mark.parametrize("name, code", [("t5-small", "unigram-ties"), ("llama2-7b-hf", "added-normalized")])
def test_documents_measure_everyday_reach(name, code, monkeypatch, tmp_path):
    with_docs = _report(CORPUS / name, DOCS, monkeypatch, tmp_path)
    reach = with_docs.reach()[code]
    assert reach["documents"] >= 2 and reach["severity"] == "text"
    assert DOCUMENTS_MISSING not in with_docs.check("raw ids").skipped
    without = _report(CORPUS / name, None, monkeypatch, tmp_path)
    assert DOCUMENTS_MISSING in without.check("raw ids").skipped
    assert without.reach()[code]["documents"] == 0
    assert with_docs.reach()[code]["everyday"] == without.reach()[code]["everyday"]  # the short samples' own count
