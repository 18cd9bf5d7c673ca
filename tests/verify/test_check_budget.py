"""The time budget on the real runtime (`--verify-seconds`, issue 40): a sweep the budget ends is a
named partial result, never a silent pass of what was not checked: the report says "passed
(partial)", how many entries were checked of how many, and the runtime's worker stops encoding the
sweep's strings at the budget (`run_runtime(until=...)`).  A wrong file whose wrong ids lie beyond
the checked part passes only as partial, and with no limit it fails."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mtok_export.corpus import builtin_chats, builtin_corpus
from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify import check
from mtok_export.verify.budget import SHARES, Budget
from mtok_export.verify.references import choose
from mtok_export.verify.runtime import run_runtime
from mtok_export.verify.sweep import sweep_texts

from tests.support.corpus_dirs import CORPUS
from tests.support.verify_jobs import CORPUS_ONLY
from tests.verify.test_check_sweep import _rare_swap

pytestmark = [pytest.mark.runtime, pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")]


class ComparesOnly(Budget):
    """A budget spent once the comparison has asked `calls` times (every 64 entries): the reference
    and the runtime answer every entry, the comparison ends at `64 * calls`."""

    def __init__(self, calls: int):
        super().__init__(60)
        self.calls = calls

    def over(self, share: float = 1.0) -> bool:
        if share < SHARES["compare"]:
            return False
        self.calls -= 1
        return self.calls < 0

    def left(self, share: float = 1.0):
        return None if share < SHARES["compare"] else super().left(share)


def test_a_sweep_the_budget_ends_is_named_partial(tmp_path, monkeypatch):
    tok = read_model_dir(CORPUS / "t5-small")
    low, lw = lower(tok, TARGETS[DEFAULT])
    wrong, _ = _rare_swap(low)  # two rare ids swapped: the sweep alone sees it, late in its order
    samples, chats, reference = list(builtin_corpus()), list(builtin_chats()), choose(tok)
    job = check.VerifyJob(tok, low, lw, samples, chats, replace(CORPUS_ONLY, sweep=True, seconds=60))

    def run(ir, label, budget):
        monkeypatch.setattr(check, "Budget", lambda seconds: budget)
        path = tmp_path / label / "tokenizer.mtok"
        path.parent.mkdir()
        path.write_bytes(write_mtok(ir))
        return check.verify(job, path, reference)

    whole = run(wrong, "whole", Budget(0))  # no limit: the sweep sees the swap
    assert not whole.ok and whole.verdict == "failed" and whole.partial == []
    swept = sweep_texts(tok, {s.text for s in samples if "\x00" not in s.text})[0]
    first = min(swept.index(m.text) for m in whole.check("vocab sweep").mismatches if not m.explanation)
    assert first >= 128, "the swapped ids come first in the sweep: pick others"
    calls = first // 64 - 1  # the comparison ends before the first wrong entry
    partial = run(wrong, "partial", ComparesOnly(calls))
    sweep = partial.check("vocab sweep")
    assert sweep.total == 64 * calls < first and partial.ok and partial.verdict == "passed (partial)"
    [p] = partial.partial
    assert p["phase"] == "sweep" and p["done"] == 64 * calls and p["total"] == whole.check("vocab sweep").total
    assert f"sweep: {64 * calls:,} of {p['total']:,} entries checked" in sweep.skipped
    assert "the rest not checked" in sweep.skipped


def test_the_worker_stops_encoding_at_the_budget(tmp_path):
    tok = read_model_dir(CORPUS / "t5-small")
    low, _ = lower(tok, TARGETS[DEFAULT])
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    texts = [f"word {i}" for i in range(600)]
    assert len(run_runtime(path, texts=texts).encodes) == 600
    cut = run_runtime(path, texts=texts, until=(100, 0.0))  # past the first 100, only within 0 s
    assert len(cut.encodes) == 256  # the worker looks at its clock every 256 texts
    assert cut.encodes == run_runtime(path, texts=texts[:256]).encodes


def test_the_export_says_partial_where_the_user_reads_it(cli, tmp_path, monkeypatch):
    """Through the command: the verdict, the note and the last line all say what the budget left
    unchecked, and a partial pass is a pass (exit 0), never also "verify failed"."""
    monkeypatch.setattr(check, "Budget", lambda seconds: ComparesOnly(2))
    code, out, err = cli("mtok-export", "--path", CORPUS / "t5-small", "-o", tmp_path / "out", "--allow-lossy",
                         "--no-robust")
    assert code == 0, err
    assert "verify passed (partial)" in out and "verify failed" not in out
    assert "partial: sweep: 128 of " in out
    assert ", verified on MNN " in err and " (partial: sweep 128 of " in err
