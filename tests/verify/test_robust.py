"""The robustness phase's arithmetic and verdict (`verify/robust.py`) and the policy on crashes, on
synthetic runs: the growth exponent against timing data made from a known law, a crash recorded
whatever else finished (a phase that ignores crashes is caught), the worker's own time-out not
taken for a crash, and a crash loss that neither --accept nor --allow-lossy ships."""

from __future__ import annotations

import dataclasses
import random

import pytest

from mtok_export import losses as L
from mtok_export.losses import Loss
from mtok_export.options import from_json, to_json
from mtok_export.policy import Policy, decide, refusal_hint
from mtok_export.verify import robust as R
from mtok_export.verify.runtime import RobustRun


@pytest.mark.parametrize("k,name", [(1.0, "linear"), (2.0, "quadratic"), (3.0, "worse than quadratic")])
def test_the_growth_exponent_of_a_known_law_with_noise(k, name):
    rng = random.Random(7)
    points = [(n, 0.01 * (n / 2_000) ** k * rng.uniform(0.9, 1.1)) for n in R.LENGTHS[3:8]]
    got = R.growth(points)
    assert abs(got - k) < 0.15 and R.growth_name(got) == name


def test_start_up_noise_below_the_floor_is_not_fitted_and_too_few_points_are_none():
    quadratic = [(1_000, 0.01), (2_000, 0.04), (5_000, 0.25)]
    noise = [(250, 0.0019), (500, 0.0001)]  # under 2 ms: a fit through them would say "linear" or less
    assert abs(R.growth(noise + quadratic) - 2.0) < 0.01
    assert R.growth(noise) is None and R.growth([(1_000, 0.5)]) is None
    assert R.growth_name(None).startswith("unmeasured")


def test_the_word_cost_is_measured_when_it_ran_else_extrapolated_along_the_fit():
    law = [(n, 1e-8 * n ** 2) for n in (1_000, 2_000, 5_000)]
    t, estimated = R.cost_at(law, 20_000)
    assert estimated and t == pytest.approx(1e-8 * 20_000 ** 2, rel=1e-6)
    assert R.cost_at(law + [(20_000, 3.0)], 20_000) == (3.0, False)
    assert R.cost_at([(250, 0.0001), (500, 0.0001)], 20_000) == (None, True)  # nothing to fit: no figure


def _run(lengths_done: int, crashed_at: int | None = None, status: str = "exited with status 0"):
    items = R.inputs()
    results = [{"seconds": 1e-7 * len(x.text) ** 2, "ids": [1]} if len(x.text) <= lengths_done else None
               for x in items]
    if crashed_at is not None:
        for i in range(crashed_at, len(items)):
            results[i] = None
    return items, RobustRun(results, crashed_at, status)


def test_a_crash_is_the_result_whatever_finished_before_it():
    items, _ = _run(0)
    at = next(i for i, x in enumerate(items) if x.group == "spaces" and len(x.text) == 1_000)
    items, run = _run(10**6, at, "was killed by SIGSEGV")
    r = R.summarize(items, run, 2.0, R.STACK)
    assert r.crash == {"group": "spaces", "length": 1_000, "status": "was killed by SIGSEGV"}
    assert r.max_length == 500  # spaces finished 500 only; every class must reach the length claimed
    assert r.groups["spaces"]["crash"] and r.verdict().startswith("CRASH: the runtime crashed (SIGSEGV) on spaces")
    assert r.to_json()["crash"]["length"] == 1_000


def test_a_phase_that_ignores_crashes_is_caught():
    """The mutant drops the crash (as a phase that only looked at the finished inputs would): the
    crash test above must fail on it."""
    items, _ = _run(0)
    items, run = _run(10**6, 5, "was killed by SIGSEGV")
    mutant = R.summarize(items, dataclasses.replace(run, crashed=None), 2.0, R.STACK)
    honest = R.summarize(items, run, 2.0, R.STACK)
    assert mutant.crash is None and honest.crash is not None


def test_the_workers_own_time_limit_is_not_a_crash():
    items, _ = _run(0)
    items, run = _run(2_000, 60, "was killed by SIGALRM")
    r = R.summarize(items, run, 2.0, R.STACK)
    assert r.crash is None and "time limit" in r.groups[items[60].group]["skipped"]
    assert r.verdict().startswith("no crash up to 2,000 characters of one class")
    assert "a 20,000-character word costs 40.00 s CPU on the runtime (estimated from the growth)" in r.verdict()
    assert "growth quadratic" in r.verdict()


def test_the_inputs_are_every_class_at_growing_lengths_and_three_long_documents():
    items = R.inputs()
    assert items == R.inputs()  # deterministic
    for name, unit in R.CLASSES.items():
        lengths = [len(x.text) for x in items if x.group == name]
        assert lengths == list(R.LENGTHS) and all(x.text == (unit * len(x.text))[:len(x.text)]
                                                  for x in items if x.group == name)
    docs = {x.group: x.text for x in items if x.group.startswith("document")}
    assert set(docs) == {"document: prose", "document: code", "document: chat"}
    assert all(len(t) >= R.DOCUMENT_CHARS for t in docs.values())
    assert "def " in docs["document: code"] and "<|assistant|>" in docs["document: chat"]
    # the documents run after the 2,000-character round, before the long runs a budget may not reach
    first_doc = next(i for i, x in enumerate(items) if x.group.startswith("document"))
    assert max(len(x.text) for x in items[:first_doc]) == 2_000


def _crash_loss(kind=L.RUNTIME_CRASH):
    return Loss(kind, "runtime", "$", "the runtime crashed (SIGSEGV) on one run of spaces")


@pytest.mark.parametrize("kind", [L.RUNTIME_CRASH, L.REGEX_STACK])
def test_a_crash_is_refused_whatever_accepts_other_losses(kind):
    loss = _crash_loss(kind)
    reach = {kind.code: {"everyday": 0, "edge": 0, "severity": "edge"}}  # measured edge: still a crash
    for policy in (Policy(), Policy(allow_lossy=True), Policy(accept=frozenset({kind.code})),
                   Policy(accept_file_codes=frozenset({kind.code}))):
        (d,) = decide([loss], policy, reach)
        assert not d.accepted and d.severity is L.CRASH
    (d,) = decide([loss], Policy(allow_crash=True), reach)
    assert d.accepted_by == "--allow-crash"
    assert Policy(**from_json(Policy, to_json(Policy(allow_crash=True)))).allow_crash  # the manifest keeps it


def test_the_hint_names_the_form_that_does_not_crash_and_never_offers_accept_for_it():
    decisions = decide([_crash_loss(L.REGEX_STACK), _crash_loss(), Loss(L.REGEX_FOLD, "x", "$", "y")], Policy())
    hint = refusal_hint(decisions)
    assert "--accept regex-fold " in hint and "regex-stack," not in hint.splitlines()[0]
    assert "--allow-crash ships it" in hint and "--regex-form fold" in hint
    assert "allow_crash=True" in refusal_hint(decisions, api=True)


def test_a_crash_on_a_wregex_split_names_the_bounded_form():
    """The runtime-crash loss carries the std::wregex pattern the lowering left uncapped: then, and
    only then (or with regex-stack), the hint offers `--regex-form bounded`, in either vocabulary."""
    on_wregex = Loss(L.RUNTIME_CRASH, "runtime", "$", "crashed on CJK", pattern="[\u4e00-\u9fa5]+")
    hint = refusal_hint(decide([on_wregex], Policy()))
    assert "--regex-form bounded caps every repetition" in hint and "--regex-form fold" not in hint
    assert "regex_form='bounded'" in refusal_hint(decide([on_wregex], Policy()), api=True)
    assert "bounded" not in refusal_hint(decide([_crash_loss()], Policy()))
