"""The manifest as a CI artifact: it names the runtime release the file needs, and its source both
as recorded and relative to the manifest, so a model folder moved with its source still verifies and
one moved without it says how to go on (issue 25)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mtok_export.errors import InputError
from mtok_export.export import export
from mtok_export.job import Job
from mtok_export.policy import Policy
from mtok_export.verify.pipeline import prepare

CORPUS = Path(__file__).resolve().parents[1].parent / "shared/corpus/tokenizers"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")


@pytest.fixture
def model(tmp_path) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    shutil.copy(CORPUS / "gpt2/tokenizer.json", d)
    export(Job(d, policy=Policy(allow_lossy=True), verify=None), d / "mnn")
    return d


@pytest.mark.runtime
def test_manifest_names_the_runtime_and_the_source_relative_to_itself(model):
    m = json.loads((model / "mnn/tokenizer.mtok.json").read_text(encoding="utf-8"))
    assert (m["target"], m["runtime_required"]) == ("mnn-3.6", "MNN >= 3.6.0")
    assert m["source_relative"] == ".."


@pytest.mark.runtime
def test_moved_with_its_source_still_verifies(model, tmp_path):
    moved = tmp_path / "elsewhere"
    shutil.move(model, moved)
    manifest, *_ = prepare(moved / "mnn/tokenizer.mtok")  # the identity check passes on the moved source
    assert manifest["source"] == str(model.resolve())


@pytest.mark.runtime
def test_moved_without_its_source_points_at_against(model, tmp_path):
    lone = tmp_path / "artifact"
    shutil.move(model / "mnn", lone)
    shutil.rmtree(model)
    with pytest.raises(InputError, match=r"the source its manifest names, .* is not there .*--against SOURCE"):
        prepare(lone / "tokenizer.mtok")
