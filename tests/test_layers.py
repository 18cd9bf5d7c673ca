"""The layering is a contract (see `tests/import_graph.py` for the layers): no module imports a
layer above its own, no import cycle (hidden in a function or not), and our own modules are
imported at the top of files except in the CLI's command functions.  Each check is shown to catch
the mistake it is for on a made-up graph."""

from __future__ import annotations

import import_graph as G
from import_graph import Edge

EDGES = G.edges()


def test_no_upward_import():
    assert [f"{e.source}:{e.line} -> {e.target}" for e in G.upward(EDGES)] == []


def test_no_import_cycle():
    assert G.cycles(EDGES) == []


def test_own_modules_are_imported_at_the_top():
    assert [f"{e.source}:{e.line} -> {e.target}" for e in G.lazy(EDGES)] == []


def test_every_unit_has_a_layer():
    assert {G.unit(e.source) for e in EDGES} | {G.unit(e.target) for e in EDGES} <= set(G.LAYER_OF)


def test_the_checks_catch_what_they_are_for():
    up = Edge("mtok_export.lower.models", "mtok_export.verify.corpus", 1, False)
    assert G.upward([up]) == [up]
    assert G.upward([Edge("mtok_export.verify.check", "mtok_export.lower", 1, False)]) == []
    ring = [Edge("mtok_export.verify.a", "mtok_export.verify.b", 1, True),
            Edge("mtok_export.verify.b", "mtok_export.verify.a", 1, False)]
    assert G.cycles(ring) == [["mtok_export.verify.a", "mtok_export.verify.b"]]
    assert G.cycles([Edge("mtok_export.lower.models", "mtok_export.lower", 1, False),
                     Edge("mtok_export.lower", "mtok_export.lower.models", 1, False)]) == []  # parent package
    local = Edge("mtok_export.lower.models", "mtok_export.chat.render", 1, True)
    assert G.lazy([local, Edge("mtok_export.cli.cmd_export", "mtok_export.export", 1, True)]) == [local]
