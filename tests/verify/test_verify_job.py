"""What a verification of one file is asked to do travels as one value (`check.VerifyJob`, issue 42):
`pipeline.run` hands `check.verify` the caller's own `VerifyOptions` (no field copied out and
dropped on the way), the source and its honest lowering, the inputs it built, and keeps the file,
the reference and the caller's read of the file (`checked`) as `verify`'s own arguments; `verify`
takes its budget from the job's options.  No runtime runs here: each test stops at the hand-over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mtok_export.corpus import builtin_chats
from mtok_export.formats import read_source
from mtok_export.job_options import VerifyOptions
from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify import check, pipeline
from mtok_export.verify.references import choose

QWEN = Path(__file__).resolve().parents[2] / "samples" / "qwen-bpe"


class HandedOver(Exception):
    """Raised where the value under test is handed on: nothing after it runs."""


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    tok = read_source(QWEN)
    low, lw = lower(tok, TARGETS[DEFAULT])
    path = tmp_path_factory.mktemp("job") / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    return path, tok, low, lw


def test_run_hands_verify_one_job_with_the_callers_options(written, tmp_path, monkeypatch):
    path, tok, low, lw = written
    corpus = tmp_path / "extra.jsonl"
    corpus.write_text(json.dumps("a line of the user's corpus") + "\n", encoding="utf-8")
    # every field away from its default, so that one rebuilt from defaults shows
    options = VerifyOptions(corpus=corpus, python=Path("/nowhere/python"), sweep=False, robust=2.5, seconds=7.0)
    llm_config, progress, checked = {"jinja": {}}, (lambda phase: None), pipeline.read_file(path)
    handed = []

    def verify(*args):
        handed.append(args)
        raise HandedOver
    monkeypatch.setattr(pipeline, "require_runtime", lambda target, python: None)
    monkeypatch.setattr(pipeline, "verify", verify)
    with pytest.raises(HandedOver):
        pipeline.run(path, tok, low, lw, options, progress=progress, llm_config=llm_config, checked=checked)
    [(job, file, reference, got_checked)] = handed
    assert isinstance(job, check.VerifyJob) and job.options is options
    assert (job.source, job.lowered, job.lowering) == (tok, low, lw)
    assert job.samples[-1].text == "a line of the user's corpus"  # the options' corpus, read into the samples
    assert [c.id for c in job.chats] == [c.id for c in builtin_chats()]
    assert "Hi <|im_end|> there" in job.extra  # the file's special-token surface (the sample's turn end)
    assert job.llm_config is llm_config and job.progress is progress and job.timeout == 300.0
    assert file == path and got_checked is checked and reference.library == choose(tok).library


def test_verify_takes_its_budget_from_the_jobs_options(written, monkeypatch):
    path, tok, low, lw = written
    budgets = []

    def budget(seconds):
        budgets.append(seconds)
        raise HandedOver
    monkeypatch.setattr(check, "Budget", budget)
    job = check.VerifyJob(tok, low, lw, [], [], VerifyOptions(seconds=7.0))
    with pytest.raises(HandedOver):
        check.verify(job, path, choose(tok))
    assert budgets == [7.0]
