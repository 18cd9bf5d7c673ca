"""The lint rules are keyed by the Jinja engine's release (`chat.rules.RULESETS`, `Target.jinja`): a
target picks the rules of its engine, and a target whose engine release has no rules is refused (exit
2, naming the engine), never linted or lowered with another release's rules by accident."""

from __future__ import annotations

import dataclasses

import pytest

from mtok_export.chat import rules
from mtok_export.chat.lint import lint_template
from mtok_export.chat.lowering import lower_template
from mtok_export.errors import UnsupportedError
from mtok_export.lower.chat_template import outcome_of
from mtok_export.target_type import MNN_JINJA, JinjaEngine, Version
from mtok_export.targets import TARGETS

# `True` is an undefined name in the runtime, `|first` passes its input through: two rules, two findings
TEMPLATE = "{% if True %}{{ messages|first }}{% endif %}"
ENGINE_37 = JinjaEngine("MNN jinja.hpp", Version.parse("3.7.0"))


def _target(engine):
    return dataclasses.replace(TARGETS["mnn-3.6"], name="x-engine", jinja=engine, default=False)


def test_the_default_engine_is_the_one_every_mtok_target_has():
    assert {t.jinja for t in TARGETS.values() if t.jinja} == {MNN_JINJA}
    assert rules.rules_for(MNN_JINJA).rules is rules.RULES


def test_the_findings_are_those_of_the_engines_release(monkeypatch):
    """A made-up release whose rules hold one check: only that rule is found, with its engine."""
    assert {f.rule for f in lint_template(TEMPLATE, MNN_JINJA)} == {"python-literal", "filter"}
    only_filters = {t: [c for c in cs if c.__name__ == "unsupported_filter"]
                    for t, cs in rules.NODE_CHECKS.items()}
    monkeypatch.setitem(rules.RULESETS, ENGINE_37.version, rules.RuleSet(rules.RULES, only_filters, ()))
    assert {f.rule for f in lint_template(TEMPLATE, ENGINE_37)} == {"filter"}
    assert {f.rule for f in lower_template(TEMPLATE, _target(ENGINE_37)).remaining} <= {"filter"}
    assert {f.rule for f in lint_template(TEMPLATE, MNN_JINJA)} == {"python-literal", "filter"}  # unchanged


def test_an_engine_with_no_rules_is_refused():
    with pytest.raises(UnsupportedError) as e:
        lint_template(TEMPLATE, ENGINE_37)
    assert e.value.exit_code == 2
    assert str(e.value).startswith("no chat lint rules for MNN jinja.hpp 3.7.0 (rules exist for jinja.hpp 3.6.1)")
    with pytest.raises(UnsupportedError, match="^no chat lint rules for MNN jinja.hpp 3.7.0"):
        lower_template(TEMPLATE, _target(ENGINE_37))
    with pytest.raises(UnsupportedError, match="^no chat lint rules for MNN jinja.hpp 3.7.0"):
        outcome_of(TEMPLATE, _target(ENGINE_37))  # what export embeds


def test_the_release_not_the_spelling_picks_the_rules():
    """3.6.1.0 is 3.6.1: the same rules."""
    same = JinjaEngine("MNN jinja.hpp", Version.parse("3.6.1.0"))
    assert rules.rules_for(same) is rules.rules_for(MNN_JINJA)
