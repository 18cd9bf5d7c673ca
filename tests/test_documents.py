"""The long real documents (mtok_export/documents.py): cut and split into pieces without losing a
character, read only when the set-up unpacked exactly the pinned ones, and counted as everyday
text whatever they hold (their own slice, "documents")."""

from __future__ import annotations

import pytest

from mtok_export import documents as D
from mtok_export.corpus import Sample, slice_of
from mtok_export.verify.check import Report, measured_severity
from mtok_export.losses import Severity


def test_pieces_are_whole_lines_and_join_back():
    text = "".join(f"line {i} " + "x" * (i * 37 % 300) + ("\r\n" if i % 3 else "\n") for i in range(400))
    text += "y" * 2500 + "\n\u2028tail"
    pieces = D.pieces(text, 1000)
    assert "".join(pieces) == text
    assert all(0 < len(p) <= 1000 for p in pieces)
    assert sum(1 for p in pieces if not p.endswith(("\n", "\u2028"))) <= 4  # the long line's cuts and the tail


def test_cut_keeps_whole_lines():
    text = ("a" * 99 + "\n") * 1000
    assert D.cut(text) == text[:D.MAX_CHARS] and D.cut(text).endswith("\n")
    assert D.cut("short") == "short"
    assert len(D.cut("b" * (D.MAX_CHARS + 5))) == D.MAX_CHARS  # no line break: cut at the limit


def _unpack(where, stamp=None, skip=()):
    where.mkdir(parents=True, exist_ok=True)
    for doc, _ in D.expected():
        if doc not in skip:
            (where / f"{doc}.txt").write_text(f"{doc}\n| a | b |\n|---|---|\n", encoding="utf-8")
    (where / D.STAMP).write_text((stamp or D.pins_digest()) + "\n")


def test_load_only_what_the_setup_unpacked(tmp_path):
    assert D.load(tmp_path / "none") is None  # a fresh machine: the slice does not run
    _unpack(tmp_path / "other", stamp="0" * 64)
    assert D.load(tmp_path / "other") is None  # other pins
    first = D.expected()[0][0]
    _unpack(tmp_path / "partial", skip=(first,))
    assert D.load(tmp_path / "partial") is None
    _unpack(tmp_path / "ok")
    docs = D.load(tmp_path / "ok")
    assert docs and {D.document_of(s.id) for s in docs} == {doc for doc, _ in D.expected()}
    assert all("document" in s.tags and slice_of(s) == "documents" for s in docs)


@pytest.mark.parametrize("text", ["plain prose", "form\x0cfeed", "decomposed e\u0301", "line\u2028separator"])
def test_a_document_is_everyday_whatever_it_holds(text):
    assert slice_of(Sample("document-x@0", text, ("document",))) == "documents"
    assert slice_of(Sample("x", text, ())) == ("everyday" if text == "plain prose" else "edge")


def _reach(everyday=0, edge=0, documents=0):
    return {"everyday": everyday, "edge": edge, "documents": documents, "sweep": 0, "checks": {"raw ids": 1}}


def test_a_loss_seen_only_in_documents_reaches_everyday_text():
    assert measured_severity(_reach(documents=1)) == Severity.TEXT
    assert measured_severity(_reach(edge=3)) == Severity.EDGE  # the mutant: without the slice it would be edge
    report = Report("f", "t", "r", [], [])
    assert "documents" in report.reach().get("x", _reach())


def test_the_pins_name_real_archives():
    """Every pin is a wheel or sdist with a sha256, every document id unique."""
    ids = [doc for doc, _ in D.expected()]
    assert len(ids) == len(set(ids)) and len(ids) >= 15
    assert all(p.registry in ("pypi-wheel", "pypi-sdist") and len(p.sha256) == 64 for p in D.PACKAGES)
