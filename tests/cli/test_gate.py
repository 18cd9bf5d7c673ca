"""What a dead end prints (`cli/gate.py`): where two id lists first differ, with context on both
sides, and the options that act there; and the refusal hint (`policy.refusal_hint`): what the end
user would see, and the target that runs the loss exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mtok_export import losses as L
from mtok_export.cli.gate import id_window, outcome_options
from mtok_export.policy import Decision, refusal_hint

from tests.support.marks import needs_mnn

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared/corpus"
needs_corpus = pytest.mark.skipif(not (CORPUS / "tokenizers/gpt2").is_dir(), reason="shared corpus not present")


def test_a_late_difference_shows_on_both_sides():
    a = list(range(100))
    b = a[:60] + [7] + a[61:]
    k, x, y = id_window(a, b)
    assert k == 60 and x != y
    assert x == "[…, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, …]"
    assert y == "[…, 56, 57, 58, 59, 7, 61, 62, 63, 64, 65, …]"


def test_a_missing_tail_and_a_doubled_head():
    assert id_window([1, 2, 3], [1, 2]) == (2, "[1, 2, 3]", "[1, 2]")
    assert id_window([5, 6, 9], [5, 6, 5, 6, 9]) == (2, "[5, 6, 9]", "[5, 6, 5, 6, 9]")


def test_options_follow_the_shape_of_the_difference():
    head = outcome_options("chat ids", [5, 6, 9, 10], [5, 6, 5, 6, 9, 10])
    assert head[0].startswith("--bos") and any("--chat-template" in x for x in head)
    tail = outcome_options("engine ids", [15, 99, 2], [15, 99], "mnn-3.6")
    assert tail[0].startswith("--target mnn-head") and not any(x.startswith("--bos") for x in tail)
    on_head = outcome_options("engine ids", [15, 99, 2], [15, 99], "mnn-head")
    assert on_head[0].startswith("--runtime-python")
    middle = outcome_options("raw ids", [1, 2, 3, 4, 5], [1, 2, 3, 9, 5])
    assert not any(x.startswith(("--bos", "--target")) for x in middle)


def _suffix_decision() -> Decision:
    loss = L.Loss(L.SUFFIX_NOT_APPENDED, "post_processor", "$.post_processor",
                  "mnn-3.6 does not run the post program: encode() does not append [2]", "Hi")
    return Decision("suffix-not-appended", L.BOS_EOS, True, None, [loss], 3, 1)


def test_the_hint_names_the_target_that_runs_it_exactly():
    hint = refusal_hint([_suffix_decision()], "mnn-3.6").splitlines()
    assert hint[0].startswith("accept them with --accept suffix-not-appended")
    assert hint[1] == ("suffix-not-appended: the end user would see: mnn-3.6 does not run the post program: "
                       "encode() does not append [2] (e.g. 'Hi')")
    assert hint[2].startswith("suffix-not-appended: --target mnn-head runs it exactly")
    assert not any("--target" in x for x in refusal_hint([_suffix_decision()], "mnn-head").splitlines())


@needs_corpus
@needs_mnn
def test_a_refused_suffix_hints_at_mnn_head(tmp_path, cli):
    tj = json.loads((CORPUS / "tokenizers/gpt2/tokenizer.json").read_text(encoding="utf-8"))
    end = {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}
    tj["post_processor"] = {"type": "TemplateProcessing", "single": [{"Sequence": {"id": "A", "type_id": 0}}, end],
                            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                            "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [50256],
                                                                 "tokens": ["<|endoftext|>"]}}}
    (tmp_path / "src").mkdir()
    (tmp_path / "src/tokenizer.json").write_text(json.dumps(tj), encoding="utf-8")
    code, _, err = cli("mtok-export", "--path", tmp_path / "src", "-o", tmp_path / "out")
    assert code == 3
    assert "suffix-not-appended: the end user would see: mnn-3.6 does not run the post program: encode() does not " \
           "append [50256]" in err
    assert "suffix-not-appended: --target mnn-head runs it exactly" in err


@needs_corpus
@needs_mnn
def test_a_dead_end_shows_where_the_ids_part(tmp_path, cli, monkeypatch):
    """The GLM-4 shape with its fix taken out (the template renders [gMASK]<sop>, the header adds them
    again): exit 1, and the message shows the doubled head and the options acting there."""
    from tests.support.glm4 import glm4_like

    import mtok_export.lower.processors as processors
    monkeypatch.setattr(processors, "_unrender_prefix", lambda lw, chat, prefix, lead: chat)
    code, out, _ = cli("mtok-export", "--path", glm4_like(tmp_path), "-o", tmp_path / "out")
    assert code == 1
    assert "first difference at id 2 (expected 12 ids, got 14)" in out
    assert "got      [50257, 50258, 50257, 50258, 50260, 198," in out
    assert "option   --bos prefix / --bos none" in out


def test_verify_progress_without_a_terminal_prints_phases_and_counts_with_time_left(monkeypatch):
    """A log gets one line per phase and, for a phase with counts, a line every `PLAIN_EVERY`
    seconds with done/total and the time left; --json/--quiet get nothing."""
    import time

    from mtok_export.cli import console, gate

    class Log:
        quiet, is_terminal = False, False

        def __init__(self):
            self.lines = []

        def print(self, text, markup=True):
            self.lines.append(text)

    log, now = Log(), [100.0]
    monkeypatch.setattr(console, "err", log)
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    with gate.verify_progress(False) as step:
        step("runtime")
        now[0] += 1.0
        step("runtime", 10, 100)  # under PLAIN_EVERY since the phase began: not printed
        now[0] += 1.0
        step("runtime", 50, 100)
        step("runtime", 60, 100)  # right after a line: not printed
        step("vocab sweep")
    assert log.lines == ["verify: runtime", "verify: runtime 50/100 (50%), about 2 s left", "verify: vocab sweep"]
    with gate.verify_progress(True) as step:
        step("runtime")
        step("runtime", 1, 2)
    assert len(log.lines) == 3


def test_verify_progress_on_a_terminal_draws_each_phase_with_its_own_counts(monkeypatch):
    """The bar is drawn on the rich console itself (given the lazy wrapper, rich failed with an
    internal error on every terminal), and a phase's counts do not carry into the next."""
    import io

    from mtok_export.cli import console, gate

    screen = io.StringIO()
    monkeypatch.setattr(console, "err", console._Console(file=screen, force_terminal=True, width=120))
    with gate.verify_progress(False) as step:
        step("runtime")
        step("runtime", 7, 99)
        step("vocab sweep")
        step("vocab sweep", 3, 5)
    drawn = screen.getvalue()
    assert "7/99" in drawn and "3/5" in drawn and "3/99" not in drawn


@pytest.mark.parametrize("unexplained, partial", [(0, False), (0, True), (1, False), (1, True)])
def test_the_verdict_line_is_one_verdict(monkeypatch, unexplained, partial):
    """A pass prints "verify passed" and never "verify failed", a failure the other way round, with or
    without the time budget's partial note (the note once slipped into a for/else that printed
    "verify failed: 0 mismatch(es)" under every pass)."""
    from rich.console import Console

    from mtok_export.cli import console, gate
    from mtok_export.verify.check import Check, Mismatch, Report

    bad = [Mismatch("engine ids", "s1", "x", [1], [2], ())] if unexplained else []
    report = Report("f.mtok", "mnn-3.6", "3.6.1", [Check("engine ids", 1 - unexplained, 1, mismatches=bad)], [],
                    partial=[{"note": "sweep: 1 of 2 entries checked in 1 s"}] if partial else [])
    rec = Console(record=True, width=200)
    monkeypatch.setattr(console, "out", rec)
    gate.print_report(report)
    text = rec.export_text()
    assert ("verify passed" in text) == (not unexplained) and ("verify failed" in text) == bool(unexplained)
    assert ("partial: sweep: 1 of 2 entries checked" in text) == partial
