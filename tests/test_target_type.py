"""A target's typed runtime needs (`target.Version`, `target.RuntimeRange`, `target.JinjaEngine`): release
numbers compare as numbers (the order PEP 440 gives the forms a runtime reports, written out here by
hand), a range admits exactly its inclusive ends, and its prose is what the manifest records."""

from __future__ import annotations

import pytest

from mtok_export.target_type import MNN_JINJA, JinjaEngine, RuntimeRange, Version

V = Version.parse


@pytest.mark.parametrize("low,high", [
    ("3.6.1", "3.7"), ("3.9", "3.10"), ("3.6.9", "3.6.10"), ("2.99.99", "3"),
    ("3.7.0rc1", "3.7"), ("3.7.0.dev0", "3.7.0a1"), ("3.7.0a1", "3.7.0b1"), ("3.7.0b1", "3.7.0rc1"),
    ("3.7.0rc1", "3.7.0rc2"), ("3.7", "3.7.0.post1"), ("3.6.1", "3.7.0rc1"), ("3.6.1.post9", "3.6.2.dev0"),
])
def test_versions_order_as_numbers(low, high):
    assert V(low) < V(high) and V(low) <= V(high) and not V(high) <= V(low) and V(low) != V(high)


@pytest.mark.parametrize("a,b", [("3.7", "3.7.0"), ("3.7.0", "3.7.0.0"), ("3", "3.0"), ("3.7.0+cpu", "3.7"),
                                 ("v3.6.1", "3.6.1"), (" 3.6.1\n", "3.6.1"),
                                 ("3.7.0-rc1", "3.7rc1"), ("3.7.0RC1", "3.7.0rc1")])
def test_equal_versions(a, b):
    assert V(a) == V(b) and V(a) <= V(b) and V(b) <= V(a)


@pytest.mark.parametrize("text", ["", "unknown", "?", "3..1", ".3", "x3.6", "3,6", "3.6.1foo", "3.6.1 rc1"])
def test_not_a_release_number(text):
    with pytest.raises(ValueError, match="not a release number"):
        V(text)


def test_a_version_keeps_its_text():
    assert str(V("3.6.0")) == "3.6.0" and str(V("3.7")) == "3.7"


@pytest.mark.parametrize("text,admitted,refused", [
    (">= 3.7", ["3.7", "3.7.0", "3.7.1", "3.10", "4"], ["3.6.1", "3.6.99", "3.7.0rc1"]),
    (">= 3.5, <= 3.6.1", ["3.5", "3.5.0", "3.6.1", "3.6.1+cpu"], ["3.4.1", "3.6.2", "3.6.1.post1"]),
    ("<= 3.4.1", ["0.1", "3.4.1"], ["3.4.2", "3.5"]),
    ("== 3.6.1", ["3.6.1", "3.6.1.0"], ["3.6.0", "3.6.2"]),
    ("any", ["0", "3.4.1", "3.6.1", "99"], []),
])
def test_a_range_admits_exactly_its_inclusive_ends(text, admitted, refused):
    r = RuntimeRange.parse(text)
    assert [v for v in admitted if not r.admits(V(v))] == []
    assert [v for v in refused if r.admits(V(v))] == []


@pytest.mark.parametrize("text,prose", [(">= 3.6.0", "MNN >= 3.6.0"), (">=  3.7", "MNN >= 3.7"), (">=3.7", "MNN >= 3.7"),
                                        (">= 3.5, <= 3.6.1", "MNN >= 3.5, <= 3.6.1"),
                                        ("<= 3.6.1, >= 3.5", "MNN >= 3.5, <= 3.6.1"),
                                        ("== 3.6.1", "MNN == 3.6.1"), ("any", "MNN any release")])
def test_the_prose_is_derived_from_the_range(text, prose):
    assert str(RuntimeRange.parse(text)) == prose


def test_a_note_replaces_the_prose_not_the_range():
    r = RuntimeRange.parse(">= 3.6.0", "MNN built from its main branch")
    assert str(r) == "MNN built from its main branch" and r.clauses == ">= 3.6.0"
    assert not r.admits(V("3.5.9")) and r.admits(V("3.6.1"))


@pytest.mark.parametrize("text", [">= 3.7, <= 3.6", "> 3.7", "3.7", ">= ", ">= x", "~= 3.7", "=> 3.7"])
def test_a_bad_or_empty_range_is_refused(text):
    with pytest.raises(ValueError):
        RuntimeRange.parse(text)


def test_the_jinja_engine_names_its_release():
    assert str(MNN_JINJA) == "MNN jinja.hpp 3.6.1"
    assert JinjaEngine("MNN jinja.hpp", V("3.6.1.0")) == MNN_JINJA != JinjaEngine("MNN jinja.hpp", V("3.7"))
