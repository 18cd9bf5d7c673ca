"""`mtok doctor` names the defect a deployed file has, with its cause, and leaves a healthy one alone.

A file of ours (the honest lowering of Qwen2.5, the NFC + chat family) must come out healthy;
four planted defects (`tests/support/mutants.py` and one dropped merge) must come out wrong, each
named with its cause by the layer it was planted in.  The runtime and HF `tokenizers` decide what is
wrong; the doctor must say why."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.support import mutants
from tests.support.corpus_dirs import CORPUS

from mtok_export.doctor import diagnose
from mtok_export.doctor.finding import EDGE, EVERYDAY, HEALTHY
from mtok_export.ir import models as M
from mtok_export.job import Job
from mtok_export.mtok import write_mtok

QWEN = CORPUS / "qwen2.5-instruct"

pytestmark = [pytest.mark.runtime,
              pytest.mark.skipif(not QWEN.is_dir(), reason="shared corpus not found next to the repository")]


@pytest.fixture(scope="module")
def honest():
    job = Job.from_manifest({}, QWEN)
    _, low, _ = job.lower(job.read_source())
    return low


def _merge_dropped(low):
    """The first merge (the one every word with `Ġt` takes) is gone."""
    return replace(low, model=replace(low.model, merges=low.model.merges[1:]))


def _doctor(tmp_path, ir, label):
    path = tmp_path / label / "tokenizer.mtok"
    path.parent.mkdir()
    path.write_bytes(write_mtok(ir))
    return diagnose(path, QWEN, robust=None, sweep=False)


def _wrong(d):
    return [f for f in d.findings if f.level == "wrong"]


def test_a_file_of_ours_is_healthy(tmp_path, honest):
    d = _doctor(tmp_path, honest, "honest")
    assert d.verdict == HEALTHY and d.exit_code == 0 and d.identical
    assert not _wrong(d) and not d.repair


@pytest.mark.parametrize("label, mutate, layer, words, verdict", [
    ("nfc-dropped", mutants.normalizer_removed, "normalizer", "drops NFC", EDGE),
    ("wrong-eos", mutants.eos_changed, "specials", "stop ids", EVERYDAY),
    ("merge-dropped", _merge_dropped, "merges", "1 merge(s) missing", EVERYDAY),
    ("template-changed", mutants.chat_template_changed, "chat_template", "chat template's text differs", EVERYDAY),
])
def test_planted_defects_are_named_with_their_cause(tmp_path, honest, label, mutate, layer, words, verdict):
    d = _doctor(tmp_path, mutate(honest), label)
    assert d.verdict == verdict and d.exit_code == 1
    named = [f for f in _wrong(d) if f.what == layer]
    assert named, [(f.what, f.cause) for f in _wrong(d)]
    assert words in named[0].cause and "/" in named[0].effect
    assert "--fix" in d.repair


def test_the_merge_is_named(tmp_path, honest):
    """The dropped merge is the one the cause shows first."""
    d = _doctor(tmp_path, _merge_dropped(honest), "merge")
    first = " ".join(honest.model.merges[0])
    assert any(repr(first) in f.cause for f in _wrong(d) if f.what == "merges")
    assert M.vocab_of(honest.model)  # the honest model is untouched by the mutation
