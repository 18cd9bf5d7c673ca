"""A reference's `raw_ids` (the vocabulary sweep's question, one encode per text, cached) gives what
its full `run` gives as raw ids (sentencepiece on a bare model, mistral_common on a tekken file, HF
tokenizers on a tokenizer.json), telling how far it is between batches."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mtok_export.formats import read_source
from mtok_export.verify import reference, reference_spm, references
from mtok_export.verify.references import choose

from tests.support.corpus_dirs import CORPUS

pytestmark = pytest.mark.runtime  # loads the reference libraries

TEXTS = ["Hello world", " <s> x</s>", "你好，世界", "a<unk>b", "[INST] hi [/INST]", "  two  spaces ", "ﬁ ①", "\u2581x"]


def _tekken(tmp_path: Path) -> Path | None:
    mc = pytest.importorskip("mistral_common")
    found = sorted((Path(mc.__file__).parent / "data").glob("tekken_*.json"))
    if not found:
        return None
    shutil.copyfile(found[0], tmp_path / "tekken.json")
    return tmp_path


@pytest.mark.parametrize("which", ["sp-test-models/test_model.model", "mistral-7b-v0.1_mistral-common", "tekken", "t5-small"])
def test_raw_ids_are_the_runs_raw_ids(which, tmp_path, monkeypatch):
    src = _tekken(tmp_path) if which == "tekken" else CORPUS / which
    if src is None or not src.exists():
        pytest.skip(f"{which} not here")
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "cache"))  # computed here, not answered by a cache
    monkeypatch.setattr(reference, "CHUNK", 3)
    monkeypatch.setattr(references, "CHUNK", 3)
    monkeypatch.setattr(reference_spm, "CHUNK", 3)
    chosen = choose(read_source(src))
    assert chosen.raw is not None  # its own cheaper question, not run()
    told = []
    assert chosen.raw_ids(TEXTS, lambda done, total: told.append((done, total))) == chosen.run(TEXTS, []).raw
    assert told == [(0, 8), (3, 8), (6, 8)]  # between batches of CHUNK texts
    assert chosen.raw_ids(TEXTS) == chosen.raw_ids(TEXTS)  # the cached answer
