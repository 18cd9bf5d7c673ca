"""The layering is a contract (see `tests/support/import_graph.py` for the layers): no module imports a
layer above its own, no import cycle (hidden in a function or not) between modules or between
packages, and our own modules are imported at the top of files except at the places `LAZY_ALLOWED`
names (the CLI's command functions, and the few modules that load a reader, the legacy format, verification or the chat package only
when they are used).  Each check is shown to catch the mistake it is for on a made-up graph."""

from __future__ import annotations

from tests.support import import_graph as G
from tests.support.import_graph import Edge

EDGES = G.edges()


def test_no_upward_import():
    assert [f"{e.source}:{e.line} -> {e.target}" for e in G.upward(EDGES)] == []


def test_no_import_cycle():
    assert G.cycles(EDGES) == []


def test_no_package_cycle():
    assert G.unit_cycles(EDGES) == []


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
    tied = [Edge("mtok_export.readers.hf_config", "mtok_export.chat.nesting", 1, False),
            Edge("mtok_export.chat.sources", "mtok_export.readers.json_value", 1, False)]
    assert G.cycles(tied) == [] and G.unit_cycles(tied) == [["chat", "readers"]]
    local = Edge("mtok_export.lower.models", "mtok_export.chat.render", 1, True)
    assert G.lazy([local, Edge("mtok_export.cli.cmd_export", "mtok_export.export", 1, True)]) == [local]


def test_lazy_imports_are_allowed_only_where_named():
    """A named place allows only its named target (by dotted prefix, not by string prefix), and an
    allowed lazy import is still checked for direction and cycles."""
    allowed = [Edge("mtok_export.readers.formats.gguf", "mtok_export.readers.gguf", 1, True),
               Edge("mtok_export.export", "mtok_export.verify.pipeline", 1, True),
               Edge("mtok_export.targets", "mtok_export.lower.legacy.type0", 1, True),
               Edge("mtok_export.lower.chat_template", "mtok_export.chat.lowering", 1, True)]
    assert G.lazy(allowed) == []
    wrong = [Edge("mtok_export.formats", "mtok_export.verify.check", 1, True),  # a target not named for it
             Edge("mtok_export.export", "mtok_export.verify.pipelinex", 1, True),  # a string prefix, not a module's
             Edge("mtok_export.readers.formatsx", "mtok_export.readers.gguf", 1, True),
             Edge("mtok_export.lower.models", "mtok_export.chat.lowering", 1, True),  # a place not named
             Edge("mtok_export.verify.check", "mtok_export.verify.pipeline", 1, True)]
    assert G.lazy(wrong) == wrong
    top = Edge("mtok_export.readers.formats.gguf", "mtok_export.readers.gguf", 1, False)
    assert G.lazy([top]) == []  # top-level: not lazy
    up = Edge("mtok_export.readers.formats.mnn", "mtok_export.legacy", 1, True)
    assert G.lazy([up]) == [] and G.upward([up]) == []  # legacy sits in the readers layer
    up = Edge("mtok_export.lower.chat_template", "mtok_export.chat", 1, True)
    assert G.upward([up]) == []
    bad = Edge("mtok_export.chat.lowering", "mtok_export.lower.chat_template", 1, True)  # lower is above chat
    assert G.upward([bad]) == [bad]
    ring = [Edge("mtok_export.readers.formats.gguf", "mtok_export.readers.gguf", 1, True),
            Edge("mtok_export.readers.gguf", "mtok_export.readers.formats.gguf", 1, False)]
    assert G.cycles(ring) == [["mtok_export.readers.formats.gguf", "mtok_export.readers.gguf"]]


def test_every_named_lazy_place_exists_and_is_used():
    """A stale entry would allow a future import nobody reviewed."""
    modules = {G.module_name(f) for f in G.PACKAGE.rglob("*.py")}
    local = [e for e in EDGES if e.local]
    for source, target in G.LAZY_ALLOWED:
        assert source in modules and target in modules, (source, target)
        assert any(G._within(e.source, source) and G._within(e.target, target) for e in local), (source, target)


def test_the_clis_function_local_imports_each_load_something():
    """LAZY_ALLOWED lets a command import the library inside its function, so `mtok --help` loads
    none of it; an import there of a module the CLI has already loaded at start-up (`errors`, the
    option table, `dump.sanitize`) defers nothing and belongs at the top.  Packages are left out: a
    `from ..compare import stats` edge names the package, whose submodule is what loads."""
    import json
    import subprocess
    import sys

    probe = ("import json, sys, typer, mtok_export.cli as c; typer.main.get_command(c.app); "
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith('mtok_export'))))")
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                           check=True, cwd=G.PACKAGE.parent).stdout))
    pointless = [e for e in G.edges() if e.local and e.source.startswith("mtok_export.cli") and e.target in loaded
                 and not (G.PACKAGE.parent / e.target.replace(".", "/") / "__init__.py").is_file()]
    assert pointless == [], "\n".join(f"{e.source}:{e.line} imports {e.target} in a function" for e in pointless)
