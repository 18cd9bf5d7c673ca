"""The robustness phase on the real runtime: a file known to crash (o200k's case split in the exact
explicit form, which MNN runs on std::wregex) crashes on a small thread stack at a short run and is
refused by the export whatever accepts other losses, but --allow-crash; the fold form of the same
pattern runs the same inputs without a crash.  The runtime's encodes run in its worker process
under an address-space limit and a timer (`_runtime_worker.robust`)."""

from __future__ import annotations

import pytest

from mtok_export.errors import LossError
from mtok_export.ir.tokenizer import NO_CHAT
from mtok_export.lower import Forms
from mtok_export.readers.tiktoken import _O200K_PATTERN
from mtok_export.verify.runtime import RobustRequest, run_runtime
from tests.support.gpt2_patterns import gpt2_with
from tests.support.marks import needs_mnn

RUNS = ["a" * 250, " " * 250, "a" * 4_000, " " * 4_000]
SMALL_STACK = 128 * 1024  # 4,000 letters or spaces recurse deeper than this on std::wregex


def _request(texts=RUNS):
    return RobustRequest(texts, ["letters", "spaces", "letters", "spaces"][:len(texts)], 30.0, SMALL_STACK)


@needs_mnn
def test_the_explicit_case_split_crashes_on_a_small_stack_and_the_fold_form_does_not(tmp_path):
    (tmp_path / "exact").mkdir()
    (tmp_path / "fold").mkdir()
    hf, exact, _ = gpt2_with(tmp_path / "exact", [_O200K_PATTERN])
    _, fold, _ = gpt2_with(tmp_path / "fold", [_O200K_PATTERN], Forms(regex_form="fold"))
    crashed = run_runtime(exact, texts=["ok"], robust=_request())
    assert crashed.encodes == [hf.encode("ok", add_special_tokens=False).ids]  # the rest is intact
    assert crashed.robust.crashed == 2 and crashed.robust.status == "was killed by SIGSEGV"
    assert [r is not None and "ids" in r for r in crashed.robust.results] == [True, True, False, False]
    fine = run_runtime(fold, robust=_request()).robust
    assert fine.crashed is None and fine.status == "exited with status 0"
    assert [r["ids"] for r in fine.results] == [e.ids for e in hf.encode_batch(RUNS, add_special_tokens=False)]


@needs_mnn
def test_the_budget_skips_what_its_growth_says_would_not_finish(tmp_path):
    _, fold, _ = gpt2_with(tmp_path, [_O200K_PATTERN], Forms(regex_form="fold"))
    texts = ["a" * 2_000, "a" * 1_000_000]
    run = run_runtime(fold, robust=RobustRequest(texts, ["letters"] * 2, 0.5, SMALL_STACK)).robust
    assert "ids" in run.results[0] and run.results[1] == {"skipped": "time budget"} and run.crashed is None


@needs_mnn
def test_the_export_refuses_a_file_that_crashes_until_allow_crash(tmp_path):
    from mtok_export.api import export

    gpt2_with(tmp_path, [_O200K_PATTERN])  # writes tmp_path/src/tokenizer.json
    with pytest.raises(LossError) as info:
        export(tmp_path / "src", tmp_path / "refused", sweep=False, allow_lossy=True, chat_template=NO_CHAT,
               regex_form="explicit")
    refused = {d.code for d in info.value.decisions if not d.accepted}
    assert refused == {"regex-stack", "runtime-crash"}
    report = info.value.result.verify
    assert report.robustness.crash["status"] == "was killed by SIGSEGV"
    assert report.robustness.verdict().startswith("CRASH")
    assert "regex_form='fold'" in info.value.hint and "allow_crash=True" in info.value.hint
    assert not (tmp_path / "refused" / "tokenizer.mtok").exists()
    shipped = export(tmp_path / "src", tmp_path / "out", sweep=False, allow_crash=True, chat_template=NO_CHAT,
                     regex_form="explicit")
    assert shipped.written
    assert shipped.manifest["verification"]["robustness"]["crash"]["status"] == "was killed by SIGSEGV"
    assert shipped.manifest["job"]["policy"]["allow_crash"] is True


@needs_mnn
def test_the_default_export_of_a_crash_prone_split_ships_its_bounded_form(tmp_path):
    """DESIGN 4.2 (issue 39): the safe form is chosen by default.  The o200k case split, which crashes
    the runtime in its exact form (above), is written capped: no crash on the robustness phase's long
    runs, every everyday text exact, and the cap's loss measured as edge (a warning), so the plain
    export ships."""
    from mtok_export.api import export

    gpt2_with(tmp_path, [_O200K_PATTERN])  # writes tmp_path/src/tokenizer.json
    res = export(tmp_path / "src", tmp_path / "out", sweep=False)
    assert res.written and res.verify.ok and res.manifest["job"]["regex_form"] == "bounded"
    assert res.verify.robustness.crash is None
    d = {x.code: x for x in res.decisions}
    assert "regex-stack" not in d and "runtime-crash" not in d
    assert d["regex-bound"].accepted_by == "edge" and d["regex-bound"].everyday == 0
